#pragma once
// SlotTable: the engine's per-op state, half a cache line per op, numbered in OpNumbering's
// interleaved order (sim/slot_numbering.hpp: SlotId) so that ops running at about the same
// time are close together in memory, and filled straight from the dependency rules
// (schedules/dependency_walk.hpp): each op's slot, how many inputs it waits for, and which
// ops wait for it. The event loop (sim/event_loop.hpp) gives it time.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "core/units.hpp"
#include "schedules/dependency_walk.hpp"
#include "core/error.hpp"
#include "schedules/schedule.hpp"
#include "sim/slot_numbering.hpp"

namespace pipesim {

// Slots are numbered by SlotId (sim/slot_numbering.hpp: the interleaved SlotNumbering,
// index by index), its own type, so that a slot is never mixed up with the dependency
// graph's device-major GraphId (schedules/dependencies.hpp), which numbers the same ops
// differently; the walk below names the ops by SlotId from the start.

// What a receive (RECV_F, RECV_B) knows of its message before it moves (run_comm,
// sim/event_loop_transfers.cpp): nothing yet, its own op was reached (posted), or its send
// is waiting for that.
enum class RecvState : std::int32_t { Idle, Posted, SendWaiting };

// The most inputs an op may wait for: what `pending` counts. The dependency rules of today
// give at most two (its forward and the neighbouring stage's op, schedules/dependency_walk.hpp);
// a new rule may give any number up to this one without touching the engine.
inline constexpr int kMaxInputs = 0xFFFF;

// Performance: everything the event loop keeps per op is in one slot, half a cache line:
// its state, its successors and the weight versions. What the schedule already says (the
// op's stage, micro-batch and pipeline) is read from the engine's copy of the ops in id
// order (OpNumbering::copy_in_id_order), and the device is computed from the id
// (OpNumbering::device_of). Each byte per op is streamed through memory twice, by the walk
// and by the event loop: a 64-byte slot that also held the op and its device cost more at
// every size and outgrew this machine's cache share sooner (docs/performance.md). Aligned
// to its size, so no slot straddles two lines. A plain struct, written whole when the walk
// first names its op, so that the array is never zero-filled first.
//
// Every field means one thing for the op's whole life; what depends on the op's kind is in
// `of`, one member per kind.
struct alignas(32) Slot {
  // The latest of the op's constraints known so far, and when it let the op go: while the
  // op waits, the latest input to arrive (`cause` sent it); when its device reaches it, the
  // device itself (`cause` is then the device's previous compute op, if that ended no
  // earlier than the inputs). So from its start on, `released` is the start, and `cause`
  // is what let it start last: the chain the critical path follows.
  Tick released;
  SlotId cause;
  union Of {
    // F, B, I, W. `version`: the weight version the op uses (sim/versions.hpp), set when
    // it starts. `forward_version`: the version its forward used (needed for B, I and W):
    // an F sets it to its own version when it starts, and it travels along the forward
    // edges F -> B/I and I -> W (carries_forward), so a backward never looks its forward up.
    struct {
      std::int32_t version;
      std::int32_t forward_version;
    } microbatch;
    std::int32_t collective;  // GradSync: its collective (SlotTable::collectives())
    struct {
      RecvState state;
      SlotId sender;          // the send waiting for it (RecvState::SendWaiting)
    } recv;                   // RECV_F, RECV_B
  } of;
  SlotId next[2];
  OpKind kind;
  // How many ops need this one. next[] holds the first two; beyond two (never in a
  // generated schedule) the whole list is in SlotTable's overflow map. In graph order (device,
  // then index): the order the transfers to other devices are queued in.
  std::uint8_t successors;
  std::uint16_t pending;          // inputs not yet arrived (at most kMaxInputs)
};
static_assert(sizeof(Slot) == 32 && std::is_trivial_v<Slot>);

// The edge from -> to hands on the forward's version: the only F among the predecessors
// of a B or I is its forward, and a W's only predecessor is its I.
inline bool carries_forward(OpKind from, OpKind to) {
  return from == (to == OpKind::W ? OpKind::I : OpKind::F) && is_microbatch_op(to) && to != OpKind::F;
}

class SlotTable {
 public:
  // Fills `slots` (layout.size() of them, uninitialized) from the schedule's dependencies;
  // `ops` holds the schedule's ops in id order (OpNumbering::copy_in_id_order). Problems
  // found go to `problems`; the table must not be used then (the engine throws).
  SlotTable(Slot* slots, const Schedule& schedule, const SlotNumbering& layout, const Op* ops,
            std::vector<DependencyProblem>& problems)
      : slots_(slots), layout_(layout), problems_(problems) {
    Sink sink{*this};
    collectives_ = walk_dependencies(schedule, layout, problems, sink, ops);
  }

  // What the walk leaves besides the slots: the longer successor lists and the collectives.
  struct Links {
    std::unordered_map<SlotId, std::vector<SlotId>> more_successors;
    std::vector<std::vector<SlotId>> collectives;
  };
  // The table a walk of the same schedule would fill, from a copy of one it filled before:
  // `filled` (layout.size() slots, as the walk left them) and its links(). What a Simulator
  // that runs one schedule with many cost models does instead of walking again (sim/event_loop.cpp).
  SlotTable(Slot* slots, const Slot* filled, const Links& links, const SlotNumbering& layout,
            std::vector<DependencyProblem>& problems)
      : slots_(slots), layout_(layout), more_successors_(links.more_successors), collectives_(links.collectives),
        problems_(problems) {
    std::copy_n(filled, layout.size(), slots);
  }
  Links links() const { return {more_successors_, collectives_}; }

  Slot& operator[](SlotId slot) { return slots_[at(slot)]; }
  const Slot& operator[](SlotId slot) const { return slots_[at(slot)]; }
  // The ops that need `slot`, in graph order (slots_[slot].successors of them).
  const SlotId* successors(SlotId slot) const {
    const Slot& st = slots_[at(slot)];
    return st.successors <= 2 ? st.next : more_successors_.find(slot)->second.data();
  }
  // Each GradSync collective's members, in pipeline order.
  const std::vector<std::vector<SlotId>>& collectives() const { return collectives_; }

 private:
  // The walk, in slot order, hands each op to op(), which writes its slot whole, just
  // before the edges that name it (pending inputs, the producers' successor lists).
  struct Sink {
    SlotTable& table;
    void op(SlotId id, int, std::uint32_t, const Op& op) {
      Slot& slot = table.slots_[at(id)];
      slot = Slot{0, kNoSlot, {}, {kNoSlot, kNoSlot}, op.kind, 0, 0};
      if (op.kind == OpKind::GradSync)
        slot.of.collective = -1;
      else if (is_recv(op.kind))
        slot.of.recv = {RecvState::Idle, kNoSlot};
      else
        slot.of.microbatch = {-1, -1};
    }
    void begin(SlotId) {}
    void edge(SlotId to, SlotId from) { table.add_edge(to, from); }
    void collective(SlotId id, std::int32_t c) { table.slots_[at(id)].of.collective = c; }
  };

  // `to` needs `from`: one more input to wait for, one more successor.
  void add_edge(SlotId to, SlotId from) {
    Slot& consumer = slots_[at(to)];
    Slot& producer = slots_[at(from)];
    // The version tracker relies on this: the first edge of B and I comes from their F,
    // that of W from its I (dependency_walk.hpp), on the same device.
    if (consumer.pending == 0 && carries_forward(producer.kind, consumer.kind))
      PIPESIM_ASSERT(device_of(from) == device_of(to));
    else
      PIPESIM_ASSERT(!carries_forward(producer.kind, consumer.kind));
    PIPESIM_ASSERT(consumer.pending < kMaxInputs);
    ++consumer.pending;
    // The walk visits consumers in slot order, (index, device); graph order is (device,
    // index), so a new successor goes before those on higher devices.
    if (producer.successors == 0 ||
        (producer.successors == 1 && device_of(to) >= device_of(producer.next[0]))) {
      producer.next[producer.successors++] = to;
      return;
    }
    if (producer.successors == 1) {
      producer.next[1] = producer.next[0];
      producer.next[0] = to;
      producer.successors = 2;
      return;
    }
    add_more_successors(from, to);
  }
  // A third successor and beyond: only a schedule with both B and I of one micro-batch and
  // stage, or with duplicates (then the walk has reported a problem and the run stops
  // before it starts, so the count may saturate).
  [[gnu::noinline]] void add_more_successors(SlotId from, SlotId to) {
    Slot& producer = slots_[at(from)];
    if (producer.successors == 0xFF) {
      PIPESIM_ASSERT(!problems_.empty());
      return;
    }
    std::vector<SlotId>& list = more_successors_[from];
    if (list.empty()) list.assign(producer.next, producer.next + 2);
    const int d = device_of(to);
    list.insert(std::find_if(list.begin(), list.end(), [&](SlotId s) { return device_of(s) > d; }), to);
    producer.next[0] = list[0];
    producer.next[1] = list[1];
    ++producer.successors;
  }

  int device_of(SlotId s) const { return layout_.device_of(s); }

  Slot* const slots_;
  const SlotNumbering& layout_;
  std::unordered_map<SlotId, std::vector<SlotId>> more_successors_;  // slots with more than two
  std::vector<std::vector<SlotId>> collectives_;
  const std::vector<DependencyProblem>& problems_;
};

}  // namespace pipesim
