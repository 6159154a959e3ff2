#include "kernels/profiler.hpp"

#include <algorithm>
#include <ctime>
#include <memory>
#include <ostream>
#include <sstream>

#include "cost_models/time_fit.hpp"
#include "cost_models/transformer.hpp"
#include "core/units.hpp"
#include "kernels/cpu_profile_backend.hpp"
#include "kernels/interference_probe.hpp"
#include "kernels/shared_core_probe.hpp"
#include "kernels/profile_runs.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

using profile_runs::at_least_one_ns;
using profile_runs::pass_profile;
using profile_runs::repeat;
using profile_runs::RunBudget;

std::vector<PassTimes> passes(const ProfileOptions& o, PassTimes (ProfileWorkload::*pass)(), ProfileWorkload& w) {
  return repeat(o, [&] { return at_least_one_ns((w.*pass)()); });
}

// A block's passes within stages of `blocks` blocks: every block of a stage pass is one run
// for RunBudget, after warm-up stage passes of at least o.warmup blocks.
std::vector<PassTimes> stage_runs(const ProfileOptions& o, int blocks, ProfileWorkload& w) {
  for (int i = 0; i < o.warmup; i += blocks) (void)w.stage_passes(blocks);
  std::vector<PassTimes> out;
  for (const RunBudget budget(o); budget.more(out.size());)
    for (const PassTimes& t : w.stage_passes(blocks)) out.push_back(at_least_one_ns(t));
  return out;
}

// A group of `count` parameters stepped within a stage of `stage_count` (OptimizerProbe). With
// `between`, each step follows an untimed stage pass of `blocks` blocks on it, as a stage's F
// and B ops come between two of its steps in a pipeline: on the 2-vCPU VM a gpt-tiny stage's
// step took 48-57 us per block back to back and 56-75 us after a pass (its 1F1B run: OPT
// 10-20 % longer than a probe of back-to-back steps).
OptimizerTimes optimizer_times(const ProfileOptions& o, ProfileBackend& backend, std::int64_t count,
                               std::int64_t stage_count, ProfileWorkload* between, int blocks) {
  std::unique_ptr<OptimizerProbe> probe = backend.optimizer(count, stage_count, o.seed);
  auto step = [&](OptimizerKind kind) {
    if (between != nullptr) (void)between->stage_passes(blocks);
    return at_least_one_ns(probe->step(kind));
  };
  OptimizerTimes t;
  t.sgd = summarize_timings(repeat(o, [&] { return step(OptimizerKind::Sgd); }));
  t.adam = summarize_timings(repeat(o, [&] { return step(OptimizerKind::Adam); }));
  return t;
}

// A GradSync member's copies of a stage's gradient of `count` numbers (GradientCopyProbe),
// where the backend's executor makes them on the device; after an untimed stage pass each
// where the optimizer's steps get one (a member copies between its stage's ops).
ProfileGradientCopies gradient_copies(const ProfileOptions& o, ProfileBackend& backend, std::int64_t count,
                                      ProfileWorkload* between, int blocks) {
  ProfileGradientCopies g;
  std::unique_ptr<GradientCopyProbe> probe = backend.gradient_copies(count, o.seed);
  if (!probe) return g;
  const auto timed = [&](double (GradientCopyProbe::*copy)()) {
    return summarize_timings(repeat(o, [&] {
      if (between != nullptr) (void)between->stage_passes(blocks);
      return at_least_one_ns(((*probe).*copy)());
    }));
  };
  g.parameters = count;
  g.copy_out = timed(&GradientCopyProbe::copy_out);
  g.copy_in = timed(&GradientCopyProbe::copy_in);
  g.sum = timed(&GradientCopyProbe::sum);
  return g;
}

}  // namespace

int default_neighbours(int max_neighbours) { return std::clamp(max_neighbours, 0, 3); }

bool optimizer_between_passes(double stage_pass_s, const ProfileOptions& o) {
  // 4 groups x 2 optimizers, each warm-up and repeats, a pass before each.
  return 8.0 * (o.warmup + o.repeats) * stage_pass_s <= kOptimizerPassBudget;
}

int default_stage_blocks(const ModelSpec& m, int stages) {
  PIPESIM_ASSERT(stages >= 1);
  const std::int64_t block_bytes = 2 * 4 * layer_parameters(m);  // fp32 weights and gradients
  const auto fit = static_cast<int>(std::min<std::int64_t>(kStageGroupBytes / std::max<std::int64_t>(1, block_bytes), m.layers));
  return std::clamp((m.layers + stages - 1) / stages, 1, std::max(1, fit));
}

int profile_stage_blocks(const ModelSpec& m, const ProfileOptions& o) {
  if (o.stage_blocks == 0) return default_stage_blocks(m);
  if (o.stage_blocks < 0 || o.stage_blocks > m.layers)
    throw InputError("--stage-blocks: expected 1.." + std::to_string(m.layers) + " (" + m.name + "'s layers), got " +
                     std::to_string(o.stage_blocks));
  return o.stage_blocks;
}

int profile_neighbours(const ProfileOptions& o, const ProfileBackend& backend) {
  const int max = backend.max_neighbours();
  if (!o.neighbours) return default_neighbours(max);
  const int k = *o.neighbours;
  if (k < 0) throw InputError("--neighbours: expected 0 or more, got " + std::to_string(k));
  if (k > max) {
    const std::string why = backend.name() == "cpu"
                                ? "this machine's cores - 1 (past the cores the simulator shares them itself)"
                                : "the other SM groups of --virtual-devices (N devices have N - 1 neighbours)";
    throw InputError("--neighbours: at most " + std::to_string(max) + " here, " + why + "; got " +
                     std::to_string(k));
  }
  return k;
}

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
  if (!(o.min_time_s >= 0 && std::isfinite(o.min_time_s)))
    throw InputError("profile: the minimum time per measurement must be 0 or more seconds, got " +
                     std::to_string(o.min_time_s));
  std::vector<std::int64_t> links = o.link_sizes;
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  if (!o.link_sizes.empty() && (links.size() < 2 || links.front() < 1))
    throw InputError("profile: the link fit needs at least two distinct positive message sizes");
  const int stage_blocks = profile_stage_blocks(model, o);
  const std::int64_t need = profile_workload_bytes(model, sorted.back(), stage_blocks);
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

std::int64_t profile_workload_bytes(const ModelSpec& m, int b, int stage_blocks) {
  const std::int64_t n = static_cast<std::int64_t>(b) * m.seq_len, h = m.hidden, f = m.ffn_hidden, v = m.vocab;
  const std::int64_t scores = static_cast<std::int64_t>(b) * m.heads * m.seq_len * m.seq_len;
  // Each block of a stage: its weights and gradients, and a cache of its activations.
  const std::int64_t per_block = 2 * layer_parameters(m) + 12 * n * h + 2 * n * f + scores;
  return 4 * (20 * n * h + 4 * n * f + 2 * scores + 2 * n * v + 3 * v * h + stage_blocks * per_block);
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
  const int neighbours = profile_neighbours(o, backend);
  const int stage_blocks = profile_stage_blocks(model, o);
  Profile p;
  p.backend = backend.name();
  p.date = utc_now_iso8601();
  backend.describe(p);
  p.settings.repeats = o.repeats;
  p.settings.warmup = o.warmup;
  p.settings.min_time = o.min_time_s;
  p.settings.stage_blocks = stage_blocks;
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
    const std::vector<PassTimes> block = stage_runs(o, stage_blocks, *w);
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
           << "): block F " << format_duration_seconds(mb.block.forward.median) << " I "
           << format_duration_seconds(mb.block.input_grad.median) << " W "
           << format_duration_seconds(mb.block.weight_grad.median) << "; head F "
           << format_duration_seconds(mb.head.forward.median) << " I "
           << format_duration_seconds(mb.head.input_grad.median) << " W "
           << format_duration_seconds(mb.head.weight_grad.median) << std::endl;
    // The curve at the middle size, right after its passes alone, on the same (warm) workload.
    if (neighbours > 0 && k == sizes.size() / 2)
      p.interference = interference_curves(model, o, backend, *w, mb, neighbours, stage_blocks);
    if (o.shared_core && backend.name() == "cpu" && k == sizes.size() / 2)
      p.shared_core = shared_core_turns(model, o, backend, *w, b, stage_blocks, std::int64_t{stage_blocks} * p.parameters.block);
  }

  // Each group within a stage of stage_blocks blocks, as the passes are timed, and after a
  // stage pass where the passes fit kOptimizerPassBudget (optimizer_between_passes).
  const std::int64_t stage_count = std::int64_t{stage_blocks} * p.parameters.block;
  const PassProfile& smallest = p.micro_batches.front().block;
  const double pass_s = stage_blocks * (smallest.forward.median + smallest.input_grad.median + smallest.weight_grad.median);
  std::unique_ptr<ProfileWorkload> between;
  if (optimizer_between_passes(pass_s, o)) between = backend.workload(model, sizes.front(), o.seed);
  p.block_optimizer = optimizer_times(o, backend, p.parameters.block, stage_count, between.get(), stage_blocks);
  p.embedding_optimizer = optimizer_times(o, backend, p.parameters.embedding, stage_count, between.get(), stage_blocks);
  p.head_norm_optimizer = optimizer_times(o, backend, p.parameters.head_norm, stage_count, between.get(), stage_blocks);
  p.head_weight_optimizer =
      optimizer_times(o, backend, p.parameters.head_weight, stage_count, between.get(), stage_blocks);
  if (log)
    *log << "profile: optimizer per block: SGD " << format_duration_seconds(p.block_optimizer.sgd.median) << ", Adam "
         << format_duration_seconds(p.block_optimizer.adam.median) << std::endl;
  p.gradient_copies = gradient_copies(o, backend, stage_count, between.get(), stage_blocks);
  if (log && p.gradient_copies.measured())
    *log << "profile: gradient copies of a stage (" << p.gradient_copies.parameters << " parameters): out "
         << format_duration_seconds(p.gradient_copies.copy_out.median) << ", in "
         << format_duration_seconds(p.gradient_copies.copy_in.median) << ", sum "
         << format_duration_seconds(p.gradient_copies.sum.median) << std::endl;

  std::vector<std::int64_t> links = o.link_sizes.empty() ? model_link_sizes(model, sizes) : o.link_sizes;
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  p.link.kind = backend.link_kind();
  std::vector<double> bytes, seconds, wakes;
  const auto measure = [&](std::int64_t size) {
    std::unique_ptr<LinkProbe> probe = backend.link(size);
    LinkSample s;
    s.bytes = size;
    struct Run {
      double time;
      SenderParts sender;
    };
    const std::vector<Run> runs = repeat(o, [&] { return Run{at_least_one_ns(probe->send()), probe->sender_parts()}; });
    std::vector<double> times, copies;
    for (const Run& r : runs) {
      times.push_back(r.time);
      if (r.sender.copy >= 0 && r.sender.wake >= 0) {
        copies.push_back(at_least_one_ns(r.sender.copy));
        wakes.push_back(at_least_one_ns(r.sender.wake));
      }
    }
    s.time = summarize_timings(times);
    if (copies.size() == times.size()) s.copy = summarize_timings(copies);
    p.link.samples.push_back(s);
    bytes.push_back(static_cast<double>(size));
    seconds.push_back(s.time.expected());
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
  if (!wakes.empty() && std::all_of(p.link.samples.begin(), p.link.samples.end(),
                                    [](const LinkSample& s) { return s.copy.repeats > 0; }))
    p.link.wake = summarize_timings(wakes);
  else
    for (LinkSample& s : p.link.samples) s.copy = {};  // not measured: the sender's parts come together
  p.link.rms_relative_residual = fit.line.rms_relative_residual;
  p.link.max_relative_residual = fit.line.max_relative_residual;
  if (log) {
    std::ostringstream bw;
    bw.precision(3);
    bw << fit.bandwidth / 1e9;
    *log << "profile: link (" << p.link.kind << ", " << links.size() << " sizes): latency "
         << format_duration_seconds(fit.latency) << ", bandwidth " << bw.str() << " GB/s, rms residual "
         << fit.line.rms_relative_residual * 100 << " %" << std::endl;
  }
  return p;
}

}  // namespace pipesim
