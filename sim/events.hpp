#pragma once
// The engine's events: one struct per kind, each with fields that mean one thing, whether
// or not an observer is attached. The event loop (sim/event_loop.hpp) hands each to the
// handler of its type (EventLoop::handle); a new kind of event is a struct here, an alternative
// of Event, and one handler there (docs/architecture.md, "Extending the engine").
#include <cstdint>
#include <variant>

#include "core/units.hpp"
#include "sim/slots.hpp"

namespace pipesim {

// A compute op (F, B, I, W, OptStep) ends on its device.
struct OpFinish {
  SlotId op;
};

// A GradSync member's own work (CostModel::grad_sync_work) ends on its device: the member
// joins its collective.
struct SyncWorkFinish {
  SlotId sync;
};

// A device thread's own work after an op (the sender's part of its hand-offs,
// TransferCost::sender and wake, and CostModel::between_ops) ends on `device`: the device
// may start its next op.
struct HostWorkFinish {
  std::int32_t device;
};

// A message from `from` (its producer: a compute op, or a send) reaches `to` (its
// consumer, or a receive) on another device. `record`: where the transfer's record waits
// for the observer (EventLoop::in_flight_), or kNoRecord when the run keeps no records.
struct TransferArrive {
  static constexpr std::uint32_t kNoRecord = 0xFFFFFFFFu;
  SlotId from;
  SlotId to;
  std::uint32_t record = kNoRecord;
};

// A GradSync collective (an index into SlotTable::collectives()) ends on its participants'
// communication streams.
struct CollectiveFinish {
  std::uint32_t collective;
};

// An activity on shared hardware (sim/sharing.hpp: a compute op, or a transfer's time on
// the wire) ends, if `generation` is still its own: a start or finish on what it shares
// since this event was pushed changed its rate and pushed a newer one (this one is stale).
struct ActivityFinish {
  std::uint32_t activity;
  std::uint32_t generation;
};

// CostModel::CollectiveStyle::MemberThreads: the devices that reached a collective at this
// time go on once no other event of this time is left (EventLoop::end_tick); pushed again
// behind those that are.
struct TickEnd {};

using Event =
    std::variant<OpFinish, TransferArrive, CollectiveFinish, ActivityFinish, SyncWorkFinish, HostWorkFinish, TickEnd>;

// An event and the simulated time it happens at (what EventQueue::pop returns).
struct TimedEvent {
  Tick time = 0;
  Event event;
};

}  // namespace pipesim
