#include "sim/versions.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {

std::int32_t VersionTracker::Replica::held() const {
  return static_cast<std::int32_t>(in_flight.size()) + (in_flight.count(version) ? 0 : 1);
}

VersionTracker::VersionTracker(const Schedule& schedule)
    : s_(schedule),
      pins_(schedule.weight_policy != WeightPolicy::Current),
      replicas_(static_cast<std::size_t>(schedule.num_pipelines) * static_cast<std::size_t>(schedule.num_stages)),
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

void missing_two_bw_version(const Op& op, std::int32_t version, std::int32_t current) {
  throw InputError("2bw: " + to_string(op) + " (iteration " + std::to_string(version + 1) + ") starts before weight version " +
                   std::to_string(version) + " exists: pipeline " + std::to_string(op.pipeline) + " stage " +
                   std::to_string(op.stage) + " has run " + std::to_string(current) + " OPT(s) by then");
}

void VersionTracker::end_pinned(const Op& op, std::int32_t version, std::int32_t forward_version, int device) {
  Replica& r = replica(op);
  const std::int32_t before = r.held();
  if (op.kind == OpKind::OptStep) {
    apply_gradients(r, op.stage);
  } else if (op.kind == OpKind::F) {
    ++r.in_flight[version];
  } else if (computes_weight_gradient(op.kind)) {
    add_gradient(r, op.stage, version, forward_version);
    auto it = r.in_flight.find(forward_version);
    PIPESIM_ASSERT(it != r.in_flight.end());
    if (--it->second == 0) r.in_flight.erase(it);
  }
  update_held(device, before, r.held());
}

}  // namespace pipesim
