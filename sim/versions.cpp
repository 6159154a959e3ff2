#include "sim/versions.hpp"

#include <algorithm>

#include "schedules/error.hpp"

namespace pipesim {

std::int32_t VersionTracker::Replica::held() const {
  return static_cast<std::int32_t>(in_flight.size()) + (in_flight.count(version) ? 0 : 1);
}

VersionTracker::VersionTracker(const Schedule& schedule, std::size_t num_ops)
    : s_(schedule),
      replicas_(static_cast<std::size_t>(schedule.num_pipelines) * static_cast<std::size_t>(schedule.num_stages)),
      used_(num_ops, -1),
      held_(static_cast<std::size_t>(schedule.num_devices), 0),
      peak_held_(static_cast<std::size_t>(schedule.num_devices), 0),
      stages_(static_cast<std::size_t>(schedule.num_stages)) {
  for (int d = 0; d < schedule.num_devices; ++d) {
    const auto n = static_cast<std::int32_t>(schedule.replicas_on(d).size());
    held_[static_cast<std::size_t>(d)] = peak_held_[static_cast<std::size_t>(d)] = n;
  }
  for (int st = 0; st < schedule.num_stages; ++st) stages_[static_cast<std::size_t>(st)].stage = st;
}

void VersionTracker::update_held(int device, std::int32_t before, std::int32_t after) {
  auto& held = held_[static_cast<std::size_t>(device)];
  held += after - before;
  peak_held_[static_cast<std::size_t>(device)] = std::max(peak_held_[static_cast<std::size_t>(device)], held);
}

std::int32_t VersionTracker::start(OpId id, const Op& op, OpId forward) {
  Replica& r = replica(op);
  std::int32_t v = r.version;
  switch (s_.weight_policy) {
    case WeightPolicy::Current: break;
    case WeightPolicy::Stash:
      if (op.kind != OpKind::F) v = used_[forward];
      break;
    case WeightPolicy::TwoBW:
      v = std::max(0, s_.iteration_of(op.microbatch) - 1);
      PIPESIM_ASSERT(v <= r.version);  // the generator must not run a batch before W^(t-1) exists
      break;
  }
  used_[id] = v;
  return v;
}

void VersionTracker::end(OpId id, const Op& op, OpId forward, int device) {
  Replica& r = replica(op);
  const bool pins = s_.weight_policy != WeightPolicy::Current;
  const std::int32_t before = r.held();
  if (op.kind == OpKind::OptStep) {
    StageStaleness& st = stages_[static_cast<std::size_t>(op.stage)];
    for (std::int32_t g : r.pending) {
      const std::int32_t delay = r.version - g;
      ++st.gradients;
      st.delay_sum += delay;
      st.max_delay = std::max(st.max_delay, delay);
    }
    r.pending.clear();
    ++r.version;
  } else if (op.kind == OpKind::F) {
    if (pins) ++r.in_flight[used_[id]];
  } else if (op.kind == OpKind::B || op.kind == OpKind::W) {
    // This op computes the weight gradient: measure the mismatch and queue the gradient.
    StageStaleness& st = stages_[static_cast<std::size_t>(op.stage)];
    const std::int32_t mismatch = used_[id] - used_[forward];
    ++st.backwards;
    st.mismatched += mismatch != 0;
    st.mismatch_sum += mismatch;
    st.max_mismatch = std::max(st.max_mismatch, mismatch);
    r.pending.push_back(used_[id]);
    if (pins) {
      auto it = r.in_flight.find(used_[forward]);
      PIPESIM_ASSERT(it != r.in_flight.end());
      if (--it->second == 0) r.in_flight.erase(it);
    }
  }
  update_held(device, before, r.held());
}

}  // namespace pipesim
