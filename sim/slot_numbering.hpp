#pragma once
// SlotNumbering: the engine's numbering of a schedule's ops (its slots, sim/slots.hpp), with
// ids of a type of its own, SlotId, that cannot be mixed with the dependency graph's GraphId
// (schedules/op_numbering.hpp has the two layouts and the conversions).
//
// Interleaved (id = index * devices + device) where that wastes little: the devices of a
// pipeline advance through their lists at about the same pace, so the ops running at one
// moment sit at nearby indices. Numbered index by index, their state shares cache lines and
// the engine walks memory as one forward stream; device-major, it walks one stream per
// device (128 at p = 128), which the hardware prefetchers cannot follow
// (docs/performance.md). Lists of unequal length leave unused ids at the end of the short
// ones; when that would waste more than 1/8 of the ids, the slots stay device-major.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "schedules/op_numbering.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

// An op in the engine's numbering: its slot.
enum class SlotId : std::uint32_t {};
inline constexpr SlotId kNoSlot{kMaxOpIds};
inline constexpr std::size_t at(SlotId id) { return static_cast<std::size_t>(id); }

// Whether interleaving `schedule`'s ops wastes at most 1/8 of the ids.
inline bool worth_interleaving(const Schedule& schedule) {
  std::size_t total = 0, longest = 0;
  for (const auto& list : schedule.ops) {
    total += list.size();
    longest = std::max(longest, list.size());
  }
  return longest * schedule.ops.size() - total <= total / 8;
}

class SlotNumbering : public OpNumbering<SlotId> {
 public:
  SlotNumbering() = default;  // no devices, no ops
  explicit SlotNumbering(const Schedule& schedule) : OpNumbering<SlotId>(schedule, worth_interleaving(schedule)) {}
};

}  // namespace pipesim
