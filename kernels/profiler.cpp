#include "kernels/profiler.hpp"

#include <algorithm>
#include <ctime>
#include <ostream>
#include <sstream>

#include "cost_models/time_fit.hpp"
#include "cost_models/transformer.hpp"
#include "core/units.hpp"
#include "kernels/cpu_profile_backend.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

std::string ms(double seconds) { return format_duration(static_cast<Tick>(seconds * 1e9 + 0.5)); }

// warmup untimed calls, then `repeats` timed ones.
template <class F>
std::vector<double> repeat(const ProfileOptions& o, F&& once) {
  for (int i = 0; i < o.warmup; ++i) (void)once();
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(o.repeats));
  for (int i = 0; i < o.repeats; ++i) out.push_back(once());
  return out;
}

PassProfile pass_profile(const std::vector<PassTimes>& runs, const WorkloadBytes& bytes, bool input_grad) {
  std::vector<double> f, i, w;
  for (const PassTimes& t : runs) {
    f.push_back(t.forward);
    i.push_back(t.input_grad);
    w.push_back(t.weight_grad);
  }
  PassProfile p;
  p.forward = summarize_timings(f);
  if (input_grad) p.input_grad = summarize_timings(i);
  p.weight_grad = summarize_timings(w);
  p.activation_bytes = bytes.activation;
  p.held_after_input_grad_bytes = bytes.held_after_input_grad;
  return p;
}

// A timer's zero (a call faster than the clock) would make the profile unreadable.
double at_least_one_ns(double s) { return std::max(s, 1e-9); }

std::vector<PassTimes> passes(const ProfileOptions& o, PassTimes (ProfileWorkload::*pass)(), ProfileWorkload& w) {
  for (int i = 0; i < o.warmup; ++i) (void)(w.*pass)();
  std::vector<PassTimes> out;
  for (int i = 0; i < o.repeats; ++i) {
    PassTimes t = (w.*pass)();
    t.forward = at_least_one_ns(t.forward);
    t.input_grad = at_least_one_ns(t.input_grad);
    t.weight_grad = at_least_one_ns(t.weight_grad);
    out.push_back(t);
  }
  return out;
}

OptimizerTimes optimizer_times(const ProfileOptions& o, ProfileBackend& backend, std::int64_t count) {
  std::unique_ptr<OptimizerProbe> probe = backend.optimizer(count, o.seed);
  OptimizerTimes t;
  t.sgd = summarize_timings(repeat(o, [&] { return at_least_one_ns(probe->step(OptimizerKind::Sgd)); }));
  t.adam = summarize_timings(repeat(o, [&] { return at_least_one_ns(probe->step(OptimizerKind::Adam)); }));
  return t;
}

}  // namespace

void check_profile_options(const ModelSpec& model, const ProfileOptions& o) {
  if (o.micro_batch_sizes.empty()) throw InputError("profile: no micro-batch sizes to measure");
  std::vector<int> sorted = o.micro_batch_sizes;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 1 || sorted[i] > kMaxMicroBatchSize)
      throw InputError("profile: micro-batch size " + std::to_string(sorted[i]) + " is not in 1.." +
                       std::to_string(kMaxMicroBatchSize));
    if (i > 0 && sorted[i] == sorted[i - 1])
      throw InputError("profile: micro-batch size " + std::to_string(sorted[i]) + " is listed twice");
  }
  if (o.repeats < 1) throw InputError("profile: repeats must be at least 1, got " + std::to_string(o.repeats));
  if (o.warmup < 0) throw InputError("profile: warmup must not be negative, got " + std::to_string(o.warmup));
  std::vector<std::int64_t> links = o.link_sizes;
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  if (!o.link_sizes.empty() && (links.size() < 2 || links.front() < 1))
    throw InputError("profile: the link fit needs at least two distinct positive message sizes");
  const std::int64_t need = profile_workload_bytes(model, sorted.back());
  if (need > o.max_workload_bytes)
    throw InputError("profile: micro-batch size " + std::to_string(sorted.back()) + " of " + model.name + " needs about " +
                     format_bytes(static_cast<double>(need)) + " of memory, more than the limit of " +
                     format_bytes(static_cast<double>(o.max_workload_bytes)) + "; profile smaller sizes");
  if (!links.empty() && links.back() > o.max_workload_bytes / 3)  // three buffers of the largest message
    throw InputError("profile: link size " + format_bytes(static_cast<double>(links.back())) +
                     " needs three buffers of it, more than the limit of " +
                     format_bytes(static_cast<double>(o.max_workload_bytes)) + "; give smaller --link-sizes");
}

std::vector<std::int64_t> model_link_sizes(const ModelSpec& m, const std::vector<int>& sizes) {
  PIPESIM_ASSERT(!sizes.empty());
  const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
  const std::int64_t row = std::int64_t{4} * m.seq_len * m.hidden;  // one sequence's message
  constexpr std::int64_t kCap = kMaxLinkProbeBytes;
  const std::int64_t smallest = std::min(row * *lo / 4, kCap / 4);
  const std::int64_t largest = std::min(kCap, 4 * std::max(row * *hi, std::int64_t{4} * m.vocab * m.hidden));
  std::int64_t s = std::int64_t{4} << 10;
  while (2 * s <= smallest) s *= 2;
  std::vector<std::int64_t> out;
  for (; s <= largest || out.size() < 3; s *= 2) out.push_back(s);
  return out;
}

std::int64_t profile_workload_bytes(const ModelSpec& m, int b) {
  const std::int64_t n = static_cast<std::int64_t>(b) * m.seq_len, h = m.hidden, f = m.ffn_hidden, v = m.vocab;
  const std::int64_t scores = static_cast<std::int64_t>(b) * m.heads * m.seq_len * m.seq_len;
  return 4 * (20 * n * h + 4 * n * f + 2 * scores + 2 * n * v + 3 * v * h);
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

Profile profile_model(const ModelSpec& model, const ProfileOptions& o, ProfileBackend& backend) {
  check_gpt_model(model, "profile");
  check_model(model, 1, "profile");
  check_profile_options(model, o);
  Profile p;
  p.backend = backend.name();
  p.date = utc_now_iso8601();
  backend.describe(p);
  p.settings.repeats = o.repeats;
  p.settings.warmup = o.warmup;
  p.model = model;
  p.model.family = "gpt";
  p.dtype = "fp32";
  std::ostream* log = o.progress;

  std::vector<int> sizes = o.micro_batch_sizes;
  std::sort(sizes.begin(), sizes.end());
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const int b = sizes[k];
    std::unique_ptr<ProfileWorkload> w = backend.workload(model, b, o.seed);
    MicroBatchProfile mb;
    mb.size = b;
    // The bytes are known once the passes ran (separate statements: argument order is unspecified).
    const std::vector<PassTimes> block = passes(o, &ProfileWorkload::block_pass, *w);
    mb.block = pass_profile(block, w->block_bytes(), true);
    const std::vector<PassTimes> embedding = passes(o, &ProfileWorkload::embedding_pass, *w);
    mb.embedding = pass_profile(embedding, w->embedding_bytes(), false);
    const std::vector<PassTimes> head = passes(o, &ProfileWorkload::head_pass, *w);
    mb.head = pass_profile(head, w->head_bytes(), true);
    mb.message_bytes = w->message_bytes();
    if (k == 0) p.parameters = w->parameters();
    p.micro_batches.push_back(mb);
    if (log)
      *log << "profile: " << model.name << " micro-batch size " << b << " (" << k + 1 << "/" << sizes.size()
           << "): block F " << ms(mb.block.forward.median) << " I " << ms(mb.block.input_grad.median) << " W "
           << ms(mb.block.weight_grad.median) << "; head F " << ms(mb.head.forward.median) << " I "
           << ms(mb.head.input_grad.median) << " W " << ms(mb.head.weight_grad.median) << std::endl;
  }

  p.block_optimizer = optimizer_times(o, backend, p.parameters.block);
  p.embedding_optimizer = optimizer_times(o, backend, p.parameters.embedding);
  p.head_norm_optimizer = optimizer_times(o, backend, p.parameters.head_norm);
  p.head_weight_optimizer = optimizer_times(o, backend, p.parameters.head_weight);
  if (log)
    *log << "profile: optimizer per block: SGD " << ms(p.block_optimizer.sgd.median) << ", Adam "
         << ms(p.block_optimizer.adam.median) << std::endl;

  std::vector<std::int64_t> links = o.link_sizes.empty() ? model_link_sizes(model, sizes) : o.link_sizes;
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  p.link.kind = backend.link_kind();
  std::vector<double> bytes, seconds;
  const auto measure = [&](std::int64_t size) {
    std::unique_ptr<LinkProbe> probe = backend.link(size);
    LinkSample s;
    s.bytes = size;
    s.time = summarize_timings(repeat(o, [&] { return at_least_one_ns(probe->send()); }));
    p.link.samples.push_back(s);
    bytes.push_back(static_cast<double>(size));
    seconds.push_back(s.time.median);
  };
  for (std::int64_t size : links) measure(size);
  // A fast link (a GPU's copy engine) moves every model-sized message in its latency: then
  // the sizes go on doubling, up to kMaxLinkProbeBytes, until the largest message takes
  // twice the smallest's time, so that the bandwidth is measured too.
  if (o.link_sizes.empty())
    while (seconds.back() < 2 * seconds.front() && p.link.samples.back().bytes * 2 <= kMaxLinkProbeBytes) {
      if (log)
        *log << "profile: link time does not grow up to " << p.link.samples.back().bytes
             << " bytes: measuring twice that" << std::endl;
      measure(p.link.samples.back().bytes * 2);
    }
  // On a loaded machine the receiver's wake-up can take longer than a small copy: when the
  // medians do not grow with the size, the fastest runs (the least disturbed) are fitted;
  // when even those do not, a bandwidth alone (a line through the origin, latency 0). The
  // residuals in the file say how well the line describes the samples.
  const std::string what = "profile: link (" + p.link.kind + ")";
  LinkFit fit;
  try {
    fit = fit_link(bytes, seconds, what);
  } catch (const InputError&) {
    seconds.clear();
    for (const LinkSample& s : p.link.samples) seconds.push_back(s.time.min);
    if (log) *log << "profile: link medians do not grow with the size (a busy machine?): fitting the fastest runs" << std::endl;
    try {
      fit = fit_link(bytes, seconds, what);
    } catch (const InputError&) {
      if (log) *log << "profile: the fastest runs do not grow with the size either: fitting a bandwidth only" << std::endl;
      fit.line = fit_line(bytes, seconds, true);
      fit.latency = 0;
      fit.bandwidth = 1 / fit.line.c1;
    }
  }
  p.link.latency = fit.latency;
  p.link.bandwidth = fit.bandwidth;
  p.link.rms_relative_residual = fit.line.rms_relative_residual;
  p.link.max_relative_residual = fit.line.max_relative_residual;
  if (log) {
    std::ostringstream bw;
    bw.precision(3);
    bw << fit.bandwidth / 1e9;
    *log << "profile: link (" << p.link.kind << ", " << links.size() << " sizes): latency " << ms(fit.latency)
         << ", bandwidth " << bw.str() << " GB/s, rms residual " << fit.line.rms_relative_residual * 100 << " %"
         << std::endl;
  }
  return p;
}

}  // namespace pipesim
