#pragma once
// OpNumbering: how the ops of a schedule are numbered, a bijection between (device, index
// in its list) and a dense id, of a type of its own per numbering so that an id of one
// cannot be used where another is meant (it does not compile). Two layouts:
//
//   device-major                       interleaved, step = devices
//   d0: 0  1  2  3                     index 0: d0 d1 d2   -> ids 0  1  2
//   d1: 4  5  6  7                     index 1: d0 d1 d2   -> ids 3  4  5
//   d2: 8  9 10 11                     ...                    id = index * 3 + d
//
// Either way id(d, i) = base(d) + i * step. Lists of unequal length leave unused ids at the
// end of the short ones in the interleaved layout.
//
// The numberings: GraphId, device-major, here (DependencyGraph, the executor, the traces);
// SlotId, the engine's, in sim/slot_numbering.hpp (interleaved where that wastes little,
// and why). An op goes from one numbering to another through its (device, index): the one
// real conversion is sim/event_loop_problems.cpp's. An id becomes an array index through
// at(), and a raw number becomes an id only where the code makes ids (the numbering itself,
// a walk reading OpIndex's raw ids back, a loop over all ids: ids_below()).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "schedules/schedule.hpp"

namespace pipesim {

// An op in the dependency graph's numbering (device-major).
enum class GraphId : std::uint32_t {};

// The largest 32-bit value marks "no op" in every numbering: fewer ops than that can be
// numbered (check_schedule_shape).
inline constexpr std::uint32_t kMaxOpIds = std::numeric_limits<std::uint32_t>::max();
inline constexpr GraphId kNoGraphId{kMaxOpIds};

// The array index of an id (every per-op array is indexed by one numbering's ids).
inline constexpr std::size_t at(GraphId id) { return static_cast<std::size_t>(id); }

// The ids 0 .. n-1 of one numbering, for a range-for: `for (GraphId id : ids_below<GraphId>(g.size()))`.
template <class Id>
class IdRange {
 public:
  class iterator {
   public:
    explicit iterator(std::uint32_t i) : i_(i) {}
    Id operator*() const { return Id{i_}; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }

   private:
    std::uint32_t i_;
  };
  explicit IdRange(std::size_t n) : n_(static_cast<std::uint32_t>(n)) {}
  iterator begin() const { return iterator(0); }
  iterator end() const { return iterator(n_); }

 private:
  std::uint32_t n_;
};
template <class Id>
IdRange<Id> ids_below(std::size_t n) {
  return IdRange<Id>(n);
}

// A numbering whose ids are Id (an enum over 32 bits of its own).
template <class Id>
class OpNumbering {
  static_assert(std::is_enum_v<Id> && std::is_same_v<std::underlying_type_t<Id>, std::uint32_t>);

 public:
  OpNumbering() = default;  // no devices, no ops
  // `schedule` must have one op list per device and fewer ops than kMaxOpIds
  // (check_schedule_shape, schedules/dependency_walk.hpp). `interleave`: the interleaved
  // layout, where there is more than one device and the padded ids fit in 32 bits; else
  // device-major.
  explicit OpNumbering(const Schedule& schedule, bool interleave = false) {
    const std::size_t devices = schedule.ops.size();
    std::size_t total = 0, longest = 0;
    for (const auto& list : schedule.ops) {
      total += list.size();
      longest = std::max(longest, list.size());
    }
    const std::size_t padded = longest * devices;
    interleaved_ = interleave && devices > 1 && padded < kMaxOpIds;
    step_ = interleaved_ ? static_cast<std::uint32_t>(devices) : 1;
    step_inverse_ = UINT64_MAX / step_ + 1;
    size_ = interleaved_ ? padded : total;
    base_.resize(devices);
    lengths_.resize(devices);
    std::uint32_t offset = 0;
    for (std::size_t d = 0; d < devices; ++d) {
      lengths_[d] = static_cast<std::uint32_t>(schedule.ops[d].size());
      base_[d] = interleaved_ ? static_cast<std::uint32_t>(d) : offset;
      offset += lengths_[d];
    }
    longest_ = static_cast<std::uint32_t>(longest);
  }

  std::size_t size() const { return size_; }  // ids, used and unused
  bool interleaved() const { return interleaved_; }
  int devices() const { return static_cast<int>(base_.size()); }
  std::uint32_t length(int device) const { return lengths_[static_cast<std::size_t>(device)]; }
  Id id(int device, std::uint32_t index) const { return Id{base_[static_cast<std::size_t>(device)] + index * step_}; }
  // The id of op `index` of the device whose first op is `base` (id(d, 0)).
  Id id_from(Id base, std::uint32_t index) const { return Id{raw(base) + index * step_}; }
  std::uint32_t index_of(Id id, int device) const {
    const std::uint32_t rel = raw(id) - base_[static_cast<std::size_t>(device)];
    return step_ == 1 ? rel : rel / step_;
  }
  // The device of a used id. Performance: the executor asks this for every op. Device-major,
  // it guesses from the average list length first, which is exact when every device runs
  // equally many ops (every generator), and binary-searches only when the guess is wrong (a
  // branchy search over the offsets was once a quarter of the engine's instructions).
  int device_of(Id id) const {
    if (interleaved_) return static_cast<int>(modulo_step(raw(id)));
    return device_major_device_of(raw(id));
  }

  // Copies the schedule's ops to out[id] (size() of them; unused ids are left as they
  // are). Performance: read in id order, an interleaved numbering reads every device's list
  // in step, and lists big enough to get their own pages from the allocator (128 KiB: 8 192
  // ops) all start at the same offset in a page, so the ops the walk and the engine read
  // together fall in one set of the L1 cache and evict each other (callgrind: 3.1 -> 5.9 L1
  // misses per op from m = 2048 to 4096 at p = 64). This copy reads each list in blocks
  // of 16 ops and writes one contiguous run of ids per block; everything after it reads
  // one forward stream.
  void copy_in_id_order(const Schedule& schedule, Op* out) const {
    const std::size_t devices = base_.size();
    if (!interleaved_) {
      for (std::size_t d = 0; d < devices; ++d) std::copy(schedule.ops[d].begin(), schedule.ops[d].end(), out + base_[d]);
      return;
    }
    constexpr std::uint32_t kBlock = 16;
    for (std::uint32_t first = 0; first < longest_; first += kBlock) {
      for (std::size_t d = 0; d < devices; ++d) {
        const std::uint32_t end = std::min(first + kBlock, lengths_[d]);
        for (std::uint32_t i = first; i < end; ++i) out[std::size_t{i} * devices + d] = schedule.ops[d][i];
      }
    }
  }

  // Walks the ops one at a time, in increasing id order.
  class Cursor {
   public:
    explicit Cursor(const OpNumbering& ids) : ids_(ids) { skip_unused(); }
    bool done() const { return ids_.interleaved_ ? index_ >= ids_.longest_ : device_ >= ids_.devices(); }
    int device() const { return device_; }
    std::uint32_t index() const { return index_; }
    Id id() const { return ids_.id(device_, index_); }
    void advance() {
      if (ids_.interleaved_) {
        if (++device_ == ids_.devices()) device_ = 0, ++index_;
      } else {
        ++index_;
      }
      skip_unused();
    }

   private:
    void skip_unused() {
      if (ids_.interleaved_) {
        while (index_ < ids_.longest_ && index_ >= ids_.length(device_))
          if (++device_ == ids_.devices()) device_ = 0, ++index_;
        return;
      }
      while (device_ < ids_.devices() && index_ >= ids_.length(device_)) ++device_, index_ = 0;
    }
    const OpNumbering& ids_;
    int device_ = 0;
    std::uint32_t index_ = 0;
  };

  // Calls f(device, index, id) for every op, in increasing id order.
  template <class F>
  void for_each(F&& f) const {
    for (Cursor c(*this); !c.done(); c.advance()) f(c.device(), c.index(), c.id());
  }

 private:
  static std::uint32_t raw(Id id) { return static_cast<std::uint32_t>(id); }

  // id % step_ without a division (the engine asks for a device per successor):
  // Lemire, Kaser, Kurz, "Faster remainder by direct computation" (2019), exact for every
  // 32-bit id and step.
  std::uint32_t modulo_step(std::uint32_t id) const {
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::uint32_t>((u128{step_inverse_ * id} * step_) >> 64);
  }

  [[gnu::noinline]] int device_major_device_of(std::uint32_t id) const {
    const std::size_t devices = base_.size();
    if (devices > 0 && size_ > 0) {
      const std::size_t guess = std::min<std::size_t>(devices - 1, std::uint64_t{id} * devices / size_);
      if (base_[guess] <= id && id - base_[guess] < lengths_[guess]) return static_cast<int>(guess);
    }
    return static_cast<int>(std::upper_bound(base_.begin(), base_.end(), id) - base_.begin()) - 1;
  }

  bool interleaved_ = false;
  std::uint32_t step_ = 1;
  std::uint64_t step_inverse_ = 0;  // 2^64 / step_, rounded up (0 for a step of 1)
  std::size_t size_ = 0;
  std::uint32_t longest_ = 0;
  std::vector<std::uint32_t> base_;     // id of each device's first op
  std::vector<std::uint32_t> lengths_;  // ops per device
};

using GraphNumbering = OpNumbering<GraphId>;  // device-major

}  // namespace pipesim
