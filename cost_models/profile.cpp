// Profile statistics and writing profile files (the reader is profile_json.cpp).
#include "cost_models/profile.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/percentile.hpp"

namespace pipesim {
namespace {

using ojson = nlohmann::ordered_json;

ojson stats_json(const TimingStats& s) {
  ojson j;
  j["median_s"] = s.median;
  j["p10_s"] = s.p10;
  j["p90_s"] = s.p90;
  j["min_s"] = s.min;
  j["max_s"] = s.max;
  if (s.mean > 0) j["mean_s"] = s.mean;
  j["repeats"] = s.repeats;
  if (!s.quantiles.empty()) j["quantiles_s"] = s.quantiles;
  return j;
}

ojson curve_json(const InterferenceCurve& c) {
  ojson j;
  j["slowdown"] = c.slowdown;
  ojson& times = j["times"] = ojson::array();
  for (const TimingStats& t : c.times) times.push_back(stats_json(t));
  return j;
}

ojson interference_json(const ProfileInterference& in) {
  ojson j;
  j["micro_batch_size"] = in.micro_batch_size;
  j["block"] = {{"forward", curve_json(in.block.forward)},
                {"input_grad", curve_json(in.block.input_grad)},
                {"weight_grad", curve_json(in.block.weight_grad)}};
  j["embedding"] = {{"forward", curve_json(in.embedding.forward)}, {"weight_grad", curve_json(in.embedding.weight_grad)}};
  j["head"] = {{"forward", curve_json(in.head.forward)},
               {"input_grad", curve_json(in.head.input_grad)},
               {"weight_grad", curve_json(in.head.weight_grad)}};
  return j;
}

ojson shared_core_json(const ProfileSharedCore& s) {
  ojson j;
  j["micro_batch_size"] = s.micro_batch_size;
  j["threads"] = s.threads;
  j["cores"] = s.cores;
  j["forward"] = curve_json(s.forward);
  j["input_grad"] = curve_json(s.input_grad);
  j["weight_grad"] = curve_json(s.weight_grad);
  j["optimizer"] = curve_json(s.optimizer);
  return j;
}

ojson gradient_copies_json(const ProfileGradientCopies& g) {
  ojson j;
  j["parameters"] = g.parameters;
  j["copy_out"] = stats_json(g.copy_out);
  j["copy_in"] = stats_json(g.copy_in);
  if (g.sum_measured()) j["sum"] = stats_json(g.sum);
  return j;
}

ojson optimizer_json(const OptimizerTimes& o) {
  ojson j;
  j["sgd"] = stats_json(o.sgd);
  j["adam"] = stats_json(o.adam);
  return j;
}

ojson pass_json(const PassProfile& p, bool input_grad) {
  ojson j;
  j["forward"] = stats_json(p.forward);
  if (input_grad) j["input_grad"] = stats_json(p.input_grad);
  j["weight_grad"] = stats_json(p.weight_grad);
  j["activation_bytes"] = p.activation_bytes;
  j["held_after_input_grad_bytes"] = p.held_after_input_grad_bytes;
  return j;
}

}  // namespace

TimingStats summarize_timings(std::vector<double> samples) {
  PIPESIM_ASSERT(!samples.empty());
  std::sort(samples.begin(), samples.end());
  TimingStats s;
  s.median = percentile(samples, 0.5);
  s.p10 = percentile(samples, 0.1);
  s.p90 = percentile(samples, 0.9);
  s.min = samples.front();
  s.max = samples.back();
  double sum = 0;
  for (double x : samples) sum += x;
  s.mean = std::clamp(sum / static_cast<double>(samples.size()), s.min, s.max);  // rounding stays inside
  s.repeats = static_cast<int>(samples.size());
  const int count = quantile_count(s.repeats);
  s.quantiles.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    s.quantiles.push_back(count == 1 ? samples.front() : percentile(samples, static_cast<double>(i) / (count - 1)));
  return s;
}

int quantile_count(int repeats) { return std::min(repeats, kMaxQuantiles); }

double relative_median_error(const TimingStats& t) {
  if (t.repeats < 2 || !(t.median > 0)) return 0;
  return 1.2533 * (t.p90 - t.p10) / 2.5631 / t.median / std::sqrt(static_cast<double>(t.repeats));
}

double relative_mean_error(const TimingStats& t) {
  const std::size_t n = t.quantiles.size();
  if (t.repeats < 2 || n < 2 || !(t.expected() > 0)) return 0;
  double mean = 0;
  for (double x : t.quantiles) mean += x / static_cast<double>(n);
  double squares = 0;
  for (double x : t.quantiles) squares += (x - mean) * (x - mean);
  return std::sqrt(squares / static_cast<double>(n - 1)) / t.expected() / std::sqrt(static_cast<double>(t.repeats));
}

double TimingStats::at_quantile(double q) const {
  PIPESIM_ASSERT(q >= 0 && q <= 1);
  if (!quantiles.empty()) return percentile(quantiles, q);
  // A version-1 profile: the five summary points, piecewise linear between them.
  if (q == 1) return max;
  const double qs[] = {0, 0.1, 0.5, 0.9, 1};
  const double vs[] = {min, p10, median, p90, max};
  std::size_t i = 1;
  while (i < 4 && q > qs[i]) ++i;
  return vs[i - 1] + (vs[i] - vs[i - 1]) * (q - qs[i - 1]) / (qs[i] - qs[i - 1]);
}

double LinkProfile::sender_copy(double bytes) const {
  PIPESIM_ASSERT(sender_measured() && !samples.empty());
  const auto copy = [](const LinkSample& s) { return s.copy.expected(); };
  if (bytes <= static_cast<double>(samples.front().bytes)) return copy(samples.front());
  const LinkSample& last = samples.back();
  if (bytes >= static_cast<double>(last.bytes)) return copy(last) * bytes / static_cast<double>(last.bytes);
  std::size_t i = 1;
  while (static_cast<double>(samples[i].bytes) < bytes) ++i;
  const LinkSample& a = samples[i - 1];
  const LinkSample& b = samples[i];
  const double t = (bytes - static_cast<double>(a.bytes)) / static_cast<double>(b.bytes - a.bytes);
  return copy(a) + t * (copy(b) - copy(a));
}

std::string gemm_dtype(const Profile& p) { return p.backend == "cuda" ? "bf16" : p.dtype; }

std::string profile_json_text(const Profile& p) {
  ojson j;
  j["format"] = kProfileFormat;
  j["version"] = kProfileVersion;
  j["backend"] = p.backend;
  j["date"] = p.date;
  ojson& m = j["machine"];
  m["cpu"] = p.machine.cpu;
  m["cores"] = p.machine.cores;
  if (!p.machine.hostname.empty()) m["hostname"] = p.machine.hostname;
  m["device"] = p.machine.device;
  m["device_count"] = p.machine.device_count;
  if (p.machine.virtual_devices > 0) {
    m["virtual_devices"] = p.machine.virtual_devices;
    m["sms"] = p.machine.sms;
  }
  ojson& lib = j["libraries"];
  lib["compiler"] = p.libraries.compiler;
  lib["eigen"] = p.libraries.eigen;
  lib["cuda"] = p.libraries.cuda.empty() ? ojson(nullptr) : ojson(p.libraries.cuda);
  j["settings"] = {{"repeats", p.settings.repeats},
                   {"warmup", p.settings.warmup},
                   {"min_time_s", p.settings.min_time},
                   {"stage_blocks", p.settings.stage_blocks},
                   {"threads", p.settings.threads},
                   {"clock", p.settings.clock}};
  const ModelSpec& md = p.model;
  j["model"] = {{"name", md.name},     {"family", md.family},         {"layers", md.layers},
                {"hidden", md.hidden}, {"heads", md.heads},           {"ffn_hidden", md.ffn_hidden},
                {"seq_len", md.seq_len}, {"vocab", md.vocab},         {"tied_embeddings", md.tied_embeddings}};
  j["dtype"] = p.dtype;
  j["parameters"] = {{"block", p.parameters.block},
                     {"embedding", p.parameters.embedding},
                     {"head_norm", p.parameters.head_norm},
                     {"head_weight", p.parameters.head_weight}};
  ojson& opt = j["optimizer"];
  opt["block"] = optimizer_json(p.block_optimizer);
  opt["embedding"] = optimizer_json(p.embedding_optimizer);
  opt["head_norm"] = optimizer_json(p.head_norm_optimizer);
  opt["head_weight"] = optimizer_json(p.head_weight_optimizer);
  ojson& mbs = j["micro_batches"] = ojson::array();
  for (const MicroBatchProfile& mb : p.micro_batches) {
    ojson e;
    e["size"] = mb.size;
    e["message_bytes"] = mb.message_bytes;
    e["block"] = pass_json(mb.block, true);
    e["embedding"] = pass_json(mb.embedding, false);
    e["head"] = pass_json(mb.head, true);
    mbs.push_back(std::move(e));
  }
  ojson& link = j["link"];
  link["kind"] = p.link.kind;
  link["latency_s"] = p.link.latency;
  link["bandwidth_bytes_per_s"] = p.link.bandwidth;
  link["rms_relative_residual"] = p.link.rms_relative_residual;
  link["max_relative_residual"] = p.link.max_relative_residual;
  if (p.link.sender_measured()) link["wake"] = stats_json(p.link.wake);
  ojson& samples = link["samples"] = ojson::array();
  for (const LinkSample& s : p.link.samples) {
    ojson e = {{"bytes", s.bytes}, {"time", stats_json(s.time)}};
    if (s.copy.repeats > 0) e["copy"] = stats_json(s.copy);
    samples.push_back(std::move(e));
  }
  if (p.interference.measured()) j["interference"] = interference_json(p.interference);
  if (p.shared_core.measured()) j["shared_core"] = shared_core_json(p.shared_core);
  if (p.gradient_copies.measured()) j["gradient_copies"] = gradient_copies_json(p.gradient_copies);
  if (p.executor.measured()) j["executor"] = {{"op_gap", stats_json(p.executor.op_gap)}};
  return j.dump(2) + "\n";
}

}  // namespace pipesim
