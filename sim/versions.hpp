#pragma once
// VersionTracker: weight versions, staleness and stashed-weight memory, as the engine
// sees them happen (the generator only names a WeightPolicy).
//
//   version of a replica  OptSteps that ended on it so far (w_0, w_1, ...)
//   version an op uses    Current: the replica's version when the op starts
//                         Stash:   a backward (B, I, W) uses its forward's version
//                         TwoBW:   every op of batch t uses W^(t-1) (batch 0: W^0)
//   mismatch              version used by the op that computes the weight gradient (B, or
//                         W for a split backward) minus the forward's version
//   gradient delay        updates between the version a gradient was computed on and the
//                         update that applies it: (version when the applying OptStep runs)
//                         - (version the gradient used); 0 for synchronous schedules
//   versions held         per replica, the distinct versions kept alive: the current one
//                         plus, under Stash / TwoBW, those of micro-batches in flight
#include <cstdint>
#include <map>
#include <vector>

#include "schedules/schedule.hpp"

namespace pipesim {

struct StageStaleness {
  int stage = 0;
  std::int64_t backwards = 0;   // micro-batch backwards measured
  std::int64_t mismatched = 0;  // ... whose version differs from their forward's
  std::int64_t mismatch_sum = 0;
  std::int32_t max_mismatch = 0;
  std::int64_t gradients = 0;   // gradients applied by an OptStep
  std::int64_t delay_sum = 0;
  std::int32_t max_delay = 0;
};

class VersionTracker {
 public:
  explicit VersionTracker(const Schedule& schedule);

  // Version a micro-batch op uses; call when it starts. `forward_version` is the version
  // its forward used (for F itself: ignored).
  std::int32_t start(const Op& op, std::int32_t forward_version);
  // Call when a micro-batch op (with the versions it and its forward used) or an OptStep
  // (versions ignored) ends on `device`.
  void end(const Op& op, std::int32_t version, std::int32_t forward_version, int device);

  std::int32_t peak_versions_held(int device) const { return peak_held_[static_cast<std::size_t>(device)]; }
  const std::vector<StageStaleness>& staleness() const { return stages_; }

 private:
  struct Replica {
    std::int32_t version = 0;
    std::map<std::int32_t, std::int32_t> in_flight;  // Stash / TwoBW: version -> micro-batches holding it
    // Gradients not yet applied, kept as sums: an OptStep at version v gives each a delay
    // v - g, so their total is count*v - sum and their maximum v - min.
    std::int64_t pending_count = 0;
    std::int64_t pending_sum = 0;
    std::int32_t pending_min = 0;
    std::int32_t held() const;
  };
  Replica& replica(const Op& op) {
    return replicas_[static_cast<std::size_t>(op.pipeline) * static_cast<std::size_t>(s_.num_stages) +
                     static_cast<std::size_t>(op.stage)];
  }
  void update_held(int device, std::int32_t before, std::int32_t after);

  const Schedule& s_;
  const bool pins_;  // the policy keeps old versions alive for micro-batches in flight
  std::vector<Replica> replicas_;
  std::vector<std::int32_t> held_, peak_held_;  // per device
  std::vector<StageStaleness> stages_;
};

}  // namespace pipesim
