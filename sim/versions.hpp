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
#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "schedules/schedule.hpp"

namespace pipesim {

// The rules, one place for the engine (VersionTracker below) and the executor
// (executor/worker.cpp, which keeps real copies of the versions they name).

// The op that computes a micro-batch's weight gradient on its replica (B, or W for a split
// backward): its version is the one a mismatch compares, and its end releases the version
// the micro-batch's forward pinned (Stash, TwoBW).
constexpr bool computes_weight_gradient(OpKind k) { return k == OpKind::B || k == OpKind::W; }

// 2BW: the version every op of batch t uses, max(0, t-1).
inline std::int32_t two_bw_version(const Schedule& s, const Op& op) {
  return std::max(0, s.iteration_of(op.microbatch) - 1);
}
// The InputError for an op whose 2BW version its replica has not made yet (`current` OPTs
// ran): a generator never does that, an imported schedule can (a batch before its OPT).
[[noreturn]] void missing_two_bw_version(const Op& op, std::int32_t version, std::int32_t current);

// The version a micro-batch op uses when it starts, under the schedule's policy, given its
// replica's current version and the version its forward used (for F itself: ignored).
inline std::int32_t weight_version_used(const Schedule& s, const Op& op, std::int32_t current,
                                        std::int32_t forward_version) {
  switch (s.weight_policy) {
    case WeightPolicy::Current: return current;
    case WeightPolicy::Stash: return op.kind == OpKind::F ? current : forward_version;
    case WeightPolicy::TwoBW: {
      const std::int32_t v = two_bw_version(s, op);
      if (v > current) [[unlikely]]
        missing_two_bw_version(op, v, current);
      return v;
    }
  }
  return current;
}

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
  std::int32_t start(const Op& op, std::int32_t forward_version) { return start(op, replica_index(op), forward_version); }
  // The same, with op's replica index (pipeline * stages + stage) known.
  std::int32_t start(const Op& op, std::size_t replica, std::int32_t forward_version) {
    return weight_version_used(s_, op, replicas_[replica].version, forward_version);
  }
  // Call when a micro-batch op (with the versions it and its forward used) or an OptStep
  // (versions ignored) ends on `device`.
  // Performance: inline, and without held-version bookkeeping unless the policy pins
  // versions; the engine calls this for every op.
  void end(const Op& op, std::int32_t version, std::int32_t forward_version, int device) {
    end(op, replica_index(op), version, forward_version, device);
  }
  void end(const Op& op, std::size_t replica, std::int32_t version, std::int32_t forward_version, int device) {
    if (pins_) return end_pinned(op, version, forward_version, device);
    Replica& r = replicas_[replica];
    if (op.kind == OpKind::OptStep)
      apply_gradients(r, op.stage);
    else if (computes_weight_gradient(op.kind))
      add_gradient(r, op.stage, version, forward_version);
  }

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
  std::size_t replica_index(const Op& op) const {
    return static_cast<std::size_t>(op.pipeline) * static_cast<std::size_t>(s_.num_stages) + static_cast<std::size_t>(op.stage);
  }
  Replica& replica(const Op& op) { return replicas_[replica_index(op)]; }
  void update_held(int device, std::int32_t before, std::int32_t after);
  void end_pinned(const Op& op, std::int32_t version, std::int32_t forward_version, int device);
  // An OptStep: the pending gradients are applied (their delays measured), the version moves on.
  void apply_gradients(Replica& r, int stage) {
    if (r.pending_count > 0) {
      StageStaleness& st = stages_[static_cast<std::size_t>(stage)];
      st.gradients += r.pending_count;
      st.delay_sum += r.pending_count * r.version - r.pending_sum;
      st.max_delay = std::max(st.max_delay, r.version - r.pending_min);
      r.pending_count = r.pending_sum = 0;
    }
    ++r.version;
  }
  // A B or W computed a weight gradient on `version`: its mismatch, and one more pending.
  void add_gradient(Replica& r, int stage, std::int32_t version, std::int32_t forward_version) {
    StageStaleness& st = stages_[static_cast<std::size_t>(stage)];
    const std::int32_t mismatch = version - forward_version;
    ++st.backwards;
    st.mismatched += mismatch != 0;
    st.mismatch_sum += mismatch;
    st.max_mismatch = std::max(st.max_mismatch, mismatch);
    r.pending_min = r.pending_count == 0 ? version : std::min(r.pending_min, version);
    ++r.pending_count;
    r.pending_sum += version;
  }

  const Schedule& s_;
  const bool pins_;  // the policy keeps old versions alive for micro-batches in flight
  std::vector<Replica> replicas_;
  std::vector<std::int32_t> held_, peak_held_;  // per device
  std::vector<StageStaleness> stages_;
};

}  // namespace pipesim
