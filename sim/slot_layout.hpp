#pragma once
// SlotLayout: where the engine keeps each op's state. The schedule and the dependency graph
// number ops device by device (id = device_offset[d] + index); the engine numbers its
// per-op slots index by index when the devices' lists are about equally long:
//
//   graph ids (device-major)          slots (interleaved, step = devices)
//   d0: 0  1  2  3                    index 0: d0 d1 d2   -> slots 0  1  2
//   d1: 4  5  6  7                    index 1: d0 d1 d2   -> slots 3  4  5
//   d2: 8  9 10 11                    ...                    slot = index * 3 + d
//
// Why: the devices of a pipeline advance through their lists at about the same pace, so
// the ops running at one moment sit at nearby indices. Interleaved, their slots share
// cache lines and the engine walks memory as one forward stream; device-major, it walks
// one stream per device (128 at p = 128), which the hardware prefetchers cannot follow,
// and most slot accesses missed the caches on large schedules.
//
// Lists of unequal length leave unused slots at the end of the short ones; when that would
// waste more than 1/8 of the slots, the layout stays device-major (step = 1). Either way
// slot(d, i) = base(d) + i * step, a bijection onto the used slots; results never depend
// on it.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "schedules/dependencies.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

class SlotLayout {
 public:
  // `schedule` must have one op list per device (build_dependencies checks that first).
  explicit SlotLayout(const Schedule& schedule) {
    const std::size_t devices = schedule.ops.size();
    std::size_t total = 0, longest = 0;
    for (const auto& list : schedule.ops) {
      total += list.size();
      longest = std::max(longest, list.size());
    }
    const std::size_t padded = longest * devices;
    interleaved_ = devices > 1 && padded - total <= total / 8 && padded < std::numeric_limits<OpId>::max();
    step_ = interleaved_ ? static_cast<OpId>(devices) : 1;
    slots_ = interleaved_ ? padded : total;
    base_.resize(devices);
    lengths_.resize(devices);
    OpId offset = 0;
    for (std::size_t d = 0; d < devices; ++d) {
      lengths_[d] = static_cast<std::uint32_t>(schedule.ops[d].size());
      base_[d] = interleaved_ ? static_cast<OpId>(d) : offset;
      offset += lengths_[d];
    }
    longest_ = static_cast<std::uint32_t>(longest);
  }

  std::size_t slots() const { return slots_; }  // used and unused
  OpId slot(int device, std::uint32_t index) const { return slot_from(base_[static_cast<std::size_t>(device)], index); }
  OpId slot_from(OpId base, std::uint32_t index) const { return base + index * step_; }
  std::uint32_t index_of(OpId slot, int device) const {
    const OpId rel = slot - base_[static_cast<std::size_t>(device)];
    return step_ == 1 ? rel : rel / step_;
  }

  // Calls f(device, index, slot) for every op, in increasing slot order.
  template <class F>
  void for_each_slot(F&& f) const {
    const auto devices = static_cast<int>(base_.size());
    if (interleaved_) {
      for (std::uint32_t i = 0; i < longest_; ++i)
        for (int d = 0; d < devices; ++d)
          if (i < lengths_[static_cast<std::size_t>(d)]) f(d, i, slot(d, i));
      return;
    }
    for (int d = 0; d < devices; ++d)
      for (std::uint32_t i = 0; i < lengths_[static_cast<std::size_t>(d)]; ++i) f(d, i, slot(d, i));
  }

 private:
  bool interleaved_ = false;
  OpId step_ = 1;
  std::size_t slots_ = 0;
  std::uint32_t longest_ = 0;
  std::vector<OpId> base_;               // slot of each device's first op
  std::vector<std::uint32_t> lengths_;   // ops per device
};

}  // namespace pipesim
