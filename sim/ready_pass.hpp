#pragma once
// The engine's fast path: a schedule whose times need no event queue, given them in one
// ready-list pass over its op lists, like the speed-of-light replay
// (docs/performance.md). Exact where it applies, and the caller (Simulator::run,
// sim/engine.cpp) runs the event loop wherever it does not.
//
// Why it is exact. With nothing shared, no collective and no communication op, every op
// is a compute op that starts at max(its device free, its inputs ready), the inputs being
// the dependency rules' (schedules/dependency_walk.hpp, in the form written out in
// ready_pass.cpp). A link carries its transfers FIFO in the order they are sent, and a
// device sends only when one of its compute ops ends, one at a time, in list order: so
// each link's order is its sending device's list order, which a pass that runs each
// device's list in order reproduces without knowing the global order of events. What
// else the event loop decides by event order: which of two inputs arriving at the same
// time let an op go (the critical path's cause). Only B and I have two inputs, their own
// forward and the next stage's backward; the forward ran on the same device, so the device
// is free no earlier than the forward ended, and a tie with it goes to the device's previous
// op whatever the order (Slot::released). Everything else it
// reports (activation peaks, weight versions, staleness) is per device or per stage
// replica, which lives on one device, or a sum or maximum.
//
// Where it applies (else ready_pass returns false, having restarted the observer if it had
// sent it records: SimObserver::restart):
//   - hardware null or sharing nothing, and an observer that wants no transfer or memory
//     records and does not need time order (SimObserver::needs_time_order): its op records
//     come as the ops end in the pass, each device's in its order;
//   - the ops are F, B, I, W and OptStep only (no GradSync, no SEND/RECV), placed on their
//     stage's device, micro-batch ids in [0, microbatches x iterations), at most one of B
//     and I per (micro-batch, stage), no duplicates, fewer than 2^31 ops;
//   - no work of a device's own between its ops (CostModel::between_ops 0), and no message
//     is a hand-off between threads (TransferCost::hand_off: what it costs
//     depends on whether its receiver sleeps when it is sent, an order the pass does not know);
//   - the pass completes: a device waiting for an input that never comes (a missing
//     producer, a deadlock) or any InputError (overflow, a 2BW version not made yet) hands
//     the schedule to the event loop, which reports it in its own words and order.
// All generators but those with GradSync collectives or communication ops take it
// (tests/ready_pass_test.cpp runs every generator both ways). Progress (SimProgress) is
// reported by the pass with the event loop's counts; a pass that gives up leaves the event
// loop to report again from the start.
#include <cstdint>
#include <memory>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "schedules/schedule.hpp"
#include "sim/engine.hpp"
#include "sim/observer.hpp"
#include "sim/resources.hpp"

namespace pipesim {

// What a Simulator keeps between passes (grown, never shrunk), like the event loop's slots.
class ReadyPassBuffers {
 public:
  ReadyPassBuffers();
  ~ReadyPassBuffers();
  ReadyPassBuffers(ReadyPassBuffers&&) noexcept;
  ReadyPassBuffers& operator=(ReadyPassBuffers&&) noexcept;

  struct Arrays;
  std::unique_ptr<Arrays> arrays;
};

// Runs `schedule` in the ready pass into `out` and returns true, or returns false (`out`
// untouched, the observer restarted if it had records) where the pass does not apply or is
// not exact.
bool ready_pass(const Schedule& schedule, const CostModel& costs, SimObserver* observer, const SimProgress* progress,
                const SharedHardware* hardware, ReadyPassBuffers& buffers, SimResult& out);

}  // namespace pipesim
