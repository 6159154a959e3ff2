#pragma once
// Validation: a predicted run (the simulator under a cost model) against a measured run
// (the executor) of the same schedule, op by op. Both timelines index the same
// Schedule::ops, so an op is matched by its place (device, index), never by time.
//
//   time per iteration error   (predicted - measured) / measured, signed: > 0 means the
//                              simulator is pessimistic
//   duration error per kind    |predicted - measured| / measured of every compute op of
//                              that kind: median and 90th percentile, plus the signed
//                              median (a bias), over ops whose measured time is > 0
//   versions                   the weight version every F/B/I/W used: must be equal op by
//                              op (the executor really keeps, stashes and updates weights;
//                              the simulator follows the schedule's weight policy)
#include <cstddef>
#include <cstdint>
#include <vector>

#include "schedules/schedule.hpp"
#include "sim/metrics.hpp"
#include "sim/timeline.hpp"

namespace pipesim {

struct DurationError {
  OpKind kind = OpKind::F;
  std::size_t ops = 0;        // ops compared
  double median = 0;          // of |error|
  double p90 = 0;             // of |error|
  double signed_median = 0;   // of (predicted - measured) / measured
  // Each side's median duration over the ops compared. Of ops of several sizes (a stage with
  // the head beside stages without) each median is the middle of its own spread, so the two
  // medians may differ where no op does: the tables show the means.
  Tick predicted_median = 0;
  Tick measured_median = 0;
  Tick predicted_mean = 0;  // mean duration over the same ops, each side: what the tables compare
  Tick measured_mean = 0;
};

struct VersionMismatch {
  OpRef ref;
  Op op;
  std::int32_t predicted = 0;
  std::int32_t measured = 0;
};

struct PredictionReport {
  Metrics predicted;  // copies: a report outlives the runs it compared
  Metrics measured;
  double time_per_iteration_error = 0;
  double makespan_error = 0;
  std::vector<DurationError> per_kind;  // in OpKind order, kinds that occur
  std::size_t versions_compared = 0;
  std::size_t version_mismatch_count = 0;
  std::vector<VersionMismatch> version_mismatches;  // the first kMaxListedMismatches
  bool versions_match() const { return version_mismatch_count == 0; }
  // Ops one timeline has and the other lacks (a partial run): listed as a count.
  std::size_t unmatched_ops = 0;
};

inline constexpr std::size_t kMaxListedMismatches = 20;

// The largest peak activation memory of any device of a run (for "peak memory both ways").
std::int64_t max_peak_activation_bytes(const Metrics& m);

// Compares the two runs. Both timelines must belong to `schedule` (PIPESIM_ASSERT).
PredictionReport compare_runs(const Schedule& schedule, const Timeline& predicted, const Metrics& predicted_metrics,
                              const Timeline& measured, const Metrics& measured_metrics);

}  // namespace pipesim
