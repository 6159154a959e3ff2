#pragma once
// From what the device threads recorded to what the simulator would have reported: one
// Timeline (records sorted like the engine emits them) and a SimResult (makespan,
// per-device busy time and peaks, iteration ends, the critical path, staleness), so that
// sim/metrics.hpp, traces/ and the reports treat a measured run like a simulated one.
//
//   busy          sum of the device's compute op durations (GradSync excluded, as in sim/)
//   critical path from the compute op that ended last, back through whichever let each op
//                 start last: the device's previous compute op, or its latest input (the
//                 transfer's arrival, the producing op on the same device, the collective)
//   staleness     sim/versions.hpp's VersionTracker fed with the measured order (per device
//                 in list order, devices merged by time); the versions it derives must be
//                 the versions the backend really used, or an invariant is broken
#include <vector>

#include "executor/run_state.hpp"

namespace pipesim {

// `logs` per device; `collectives` as the run left them (only finished ones are recorded).
// Works on partial runs too (a fault): it measures what finished.
void assemble_measurement(const Schedule& schedule, const DependencyGraph& graph, std::vector<DeviceLog>& logs,
                          const std::vector<std::unique_ptr<Collective>>& collectives, Timeline& timeline,
                          SimResult& result);

}  // namespace pipesim
