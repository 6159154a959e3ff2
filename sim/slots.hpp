#pragma once
// SlotTable: the engine's per-op state, half a cache line per op, numbered in OpNumbering's
// interleaved order (schedules/op_numbering.hpp) so that ops running at about the same
// time are close together in memory, and filled straight from the dependency rules
// (schedules/dependency_walk.hpp): each op's slot, how many inputs it waits for, and which
// ops wait for it. The engine (sim/engine.cpp) gives it time.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "core/units.hpp"
#include "schedules/dependency_walk.hpp"
#include "core/error.hpp"
#include "schedules/op_numbering.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

constexpr OpId kNoOp = std::numeric_limits<OpId>::max();

// Performance: everything the event loop keeps per op is in one slot, half a cache line:
// its state, its successors and the weight versions. What the schedule already says (the
// op's stage, micro-batch and pipeline) is read from the engine's copy of the ops in id
// order (OpNumbering::copy_in_id_order), and the device is computed from the id
// (OpNumbering::device_of). Each byte per op is streamed through memory twice, by the walk
// and by the event loop: a 64-byte slot that also held the op and its device cost more at
// every size and outgrew this machine's cache share sooner (docs/performance.md). Aligned
// to its size, so no slot straddles two lines. A plain struct, written whole when the walk
// first names its op, so that the array is never zero-filled first.
struct alignas(32) Slot {
  Tick time;                     // before the op starts: arrival of its latest input; then its start
  // Before the op starts: the op that sent its latest input; then what let it start last
  // (its device's previous op or that input), for the critical path.
  OpId cause;
  union {
    std::int32_t version;        // weight version a micro-batch op uses
    std::int32_t collective;     // a GradSync's collective
  };
  // Version its forward used (sim/versions.hpp needs it for B, I and W). An F sets it to
  // its own version when it starts, and it travels along the forward edges F -> B/I and
  // I -> W (carries_forward), so a backward never looks its forward up.
  std::int32_t forward_version;
  OpId next[2];
  OpKind kind;
  // How many ops need this one. next[] holds the first two; beyond two (never in a
  // generated schedule) the whole list is in SlotTable's overflow map. In graph order (device,
  // then index): the order the transfers to other devices are queued in.
  std::uint8_t successors;
  std::uint8_t pending;          // inputs not yet arrived (at most two)
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
  SlotTable(Slot* slots, const Schedule& schedule, const OpNumbering& layout, const Op* ops,
            std::vector<DependencyProblem>& problems)
      : slots_(slots), layout_(layout), problems_(problems) {
    Sink sink{*this};
    collectives_ = walk_dependencies(schedule, layout, problems, sink, ops);
  }

  Slot& operator[](OpId slot) { return slots_[slot]; }
  const Slot& operator[](OpId slot) const { return slots_[slot]; }
  // The ops that need `slot`, in graph order (slots_[slot].successors of them).
  const OpId* successors(OpId slot) const {
    const Slot& st = slots_[slot];
    return st.successors <= 2 ? st.next : more_successors_.find(slot)->second.data();
  }
  // Each GradSync collective's members, in pipeline order.
  const std::vector<std::vector<OpId>>& collectives() const { return collectives_; }

 private:
  // The walk, in slot order, hands each op to op(), which writes its slot whole, just
  // before the edges that name it (pending inputs, the producers' successor lists).
  struct Sink {
    SlotTable& table;
    void op(OpId id, int, std::uint32_t, const Op& op) {
      table.slots_[id] = Slot{0, kNoOp, {-1}, -1, {kNoOp, kNoOp}, op.kind, 0, 0};
    }
    void begin(OpId) {}
    void edge(OpId to, OpId from) { table.add_edge(to, from); }
    void collective(OpId id, std::int32_t c) { table.slots_[id].collective = c; }
  };

  // `to` needs `from`: one more input to wait for, one more successor.
  void add_edge(OpId to, OpId from) {
    Slot& consumer = slots_[to];
    Slot& producer = slots_[from];
    // The version tracker relies on this: the first edge of B and I comes from their F,
    // that of W from its I (dependency_walk.hpp), on the same device.
    if (consumer.pending == 0 && carries_forward(producer.kind, consumer.kind))
      PIPESIM_ASSERT(layout_.device_of(from) == layout_.device_of(to));
    else
      PIPESIM_ASSERT(!carries_forward(producer.kind, consumer.kind));
    PIPESIM_ASSERT(consumer.pending < 2);  // the rules give at most two
    ++consumer.pending;
    // The walk visits consumers in slot order, (index, device); graph order is (device,
    // index), so a new successor goes before those on higher devices.
    if (producer.successors == 0 ||
        (producer.successors == 1 && layout_.device_of(to) >= layout_.device_of(producer.next[0]))) {
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
  [[gnu::noinline]] void add_more_successors(OpId from, OpId to) {
    Slot& producer = slots_[from];
    if (producer.successors == 0xFF) {
      PIPESIM_ASSERT(!problems_.empty());
      return;
    }
    std::vector<OpId>& list = more_successors_[from];
    if (list.empty()) list.assign(producer.next, producer.next + 2);
    const int d = layout_.device_of(to);
    list.insert(std::find_if(list.begin(), list.end(), [&](OpId s) { return layout_.device_of(s) > d; }), to);
    producer.next[0] = list[0];
    producer.next[1] = list[1];
    ++producer.successors;
  }

  Slot* const slots_;
  const OpNumbering& layout_;
  std::unordered_map<OpId, std::vector<OpId>> more_successors_;  // slots with more than two
  std::vector<std::vector<OpId>> collectives_;
  const std::vector<DependencyProblem>& problems_;
};

}  // namespace pipesim
