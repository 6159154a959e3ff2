#include "traces/validation.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace pipesim {
namespace {

constexpr std::int32_t kMissing = -2;  // no record for this op

struct PerOp {
  Tick duration = -1;
  std::int32_t version = kMissing;
};

// [device][index] -> what the timeline recorded for that op.
std::vector<std::vector<PerOp>> index_ops(const Schedule& s, const Timeline& t) {
  std::vector<std::vector<PerOp>> out(s.ops.size());
  for (std::size_t d = 0; d < s.ops.size(); ++d) out[d].resize(s.ops[d].size());
  for (const OpRecord& r : t.ops) {
    PIPESIM_ASSERT(r.ref.device >= 0 && r.ref.device < static_cast<int>(out.size()));
    auto& list = out[static_cast<std::size_t>(r.ref.device)];
    PIPESIM_ASSERT(r.ref.index >= 0 && r.ref.index < static_cast<int>(list.size()));
    list[static_cast<std::size_t>(r.ref.index)] = PerOp{r.end - r.start, r.weight_version};
  }
  return out;
}

// The q-quantile (0..1) of sorted values, nearest rank.
template <class T>
T quantile(const std::vector<T>& sorted, double q) {
  PIPESIM_ASSERT(!sorted.empty());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// The mean, rounded to the nearest ns (a sum of ns durations: exact in 64 bits).
Tick mean_ticks(const std::vector<Tick>& v) {
  PIPESIM_ASSERT(!v.empty());
  Tick sum = 0;
  for (Tick t : v) sum += t;
  const auto n = static_cast<Tick>(v.size());
  return (sum + n / 2) / n;
}

double relative(Tick predicted, Tick measured) {
  return measured == 0 ? 0.0 : static_cast<double>(predicted - measured) / static_cast<double>(measured);
}

bool uses_weights(OpKind k) { return k == OpKind::F || k == OpKind::B || k == OpKind::I || k == OpKind::W; }

}  // namespace

std::int64_t max_peak_activation_bytes(const Metrics& m) {
  std::int64_t out = 0;
  for (const DeviceMetrics& d : m.per_device) out = std::max(out, d.peak_activation_bytes);
  return out;
}

PredictionReport compare_runs(const Schedule& schedule, const Timeline& predicted, const Metrics& predicted_metrics,
                              const Timeline& measured, const Metrics& measured_metrics) {
  PredictionReport r;
  r.predicted = predicted_metrics;
  r.measured = measured_metrics;
  r.time_per_iteration_error = relative(predicted_metrics.time_per_iteration, measured_metrics.time_per_iteration);
  r.makespan_error = relative(predicted_metrics.makespan, measured_metrics.makespan);

  const auto pred = index_ops(schedule, predicted);
  const auto meas = index_ops(schedule, measured);
  constexpr int kKinds = kNumOpKinds;
  std::vector<double> abs_err[kKinds], signed_err[kKinds];
  std::vector<Tick> pred_dur[kKinds], meas_dur[kKinds];
  for (std::size_t d = 0; d < schedule.ops.size(); ++d) {
    for (std::size_t i = 0; i < schedule.ops[d].size(); ++i) {
      const Op& op = schedule.ops[d][i];
      const PerOp& p = pred[d][i];
      const PerOp& m = meas[d][i];
      if ((p.duration < 0) != (m.duration < 0)) ++r.unmatched_ops;
      if (p.duration < 0 || m.duration < 0) continue;
      const auto k = static_cast<std::size_t>(op.kind);
      if (is_compute(op.kind) && m.duration > 0) {
        const double e = relative(p.duration, m.duration);
        signed_err[k].push_back(e);
        abs_err[k].push_back(std::abs(e));
        pred_dur[k].push_back(p.duration);
        meas_dur[k].push_back(m.duration);
      }
      if (!uses_weights(op.kind)) continue;
      ++r.versions_compared;
      if (p.version != m.version) {
        ++r.version_mismatch_count;
        if (r.version_mismatches.size() < kMaxListedMismatches)
          r.version_mismatches.push_back(
              VersionMismatch{OpRef{static_cast<std::int32_t>(d), static_cast<std::int32_t>(i)}, op, p.version,
                              m.version});
      }
    }
  }
  for (std::size_t k = 0; k < kKinds; ++k) {
    if (abs_err[k].empty()) continue;
    std::sort(abs_err[k].begin(), abs_err[k].end());
    std::sort(signed_err[k].begin(), signed_err[k].end());
    std::sort(pred_dur[k].begin(), pred_dur[k].end());
    std::sort(meas_dur[k].begin(), meas_dur[k].end());
    DurationError e;
    e.kind = static_cast<OpKind>(k);
    e.ops = abs_err[k].size();
    e.median = quantile(abs_err[k], 0.5);
    e.p90 = quantile(abs_err[k], 0.9);
    e.signed_median = quantile(signed_err[k], 0.5);
    e.predicted_median = quantile(pred_dur[k], 0.5);
    e.measured_median = quantile(meas_dur[k], 0.5);
    e.predicted_mean = mean_ticks(pred_dur[k]);
    e.measured_mean = mean_ticks(meas_dur[k]);
    r.per_kind.push_back(e);
  }
  return r;
}

}  // namespace pipesim
