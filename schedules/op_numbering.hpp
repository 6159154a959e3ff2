#pragma once
// OpNumbering: how the ops of a schedule are numbered, a bijection between (device, index
// in its list) and a dense OpId. Two orders:
//
//   device-major (DependencyGraph)     interleaved, step = devices (the engine's slots)
//   d0: 0  1  2  3                     index 0: d0 d1 d2   -> ids 0  1  2
//   d1: 4  5  6  7                     index 1: d0 d1 d2   -> ids 3  4  5
//   d2: 8  9 10 11                     ...                    id = index * 3 + d
//
// Why interleaved: the devices of a pipeline advance through their lists at about the
// same pace, so the ops running at one moment sit at nearby indices. Numbered index by
// index, their state shares cache lines and the engine walks memory as one forward stream;
// device-major, it walks one stream per device (128 at p = 128), which the hardware
// prefetchers cannot follow (docs/performance.md).
//
// Lists of unequal length leave unused ids at the end of the short ones; when that would
// waste more than 1/8 of the ids, an interleaved numbering stays device-major (step = 1).
// Either way id(d, i) = base(d) + i * step.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "schedules/schedule.hpp"

namespace pipesim {

using OpId = std::uint32_t;

class OpNumbering {
 public:
  enum class Order { DeviceMajor, Interleaved };

  OpNumbering() = default;  // no devices, no ops
  // `schedule` must have one op list per device and fewer ops than OpId can number
  // (check_schedule_shape, schedules/dependency_walk.hpp).
  OpNumbering(const Schedule& schedule, Order order) {
    const std::size_t devices = schedule.ops.size();
    std::size_t total = 0, longest = 0;
    for (const auto& list : schedule.ops) {
      total += list.size();
      longest = std::max(longest, list.size());
    }
    const std::size_t padded = longest * devices;
    interleaved_ = order == Order::Interleaved && devices > 1 && padded - total <= total / 8 &&
                   padded < std::numeric_limits<OpId>::max();
    step_ = interleaved_ ? static_cast<OpId>(devices) : 1;
    step_inverse_ = UINT64_MAX / step_ + 1;
    size_ = interleaved_ ? padded : total;
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

  std::size_t size() const { return size_; }  // ids, used and unused
  bool interleaved() const { return interleaved_; }
  int devices() const { return static_cast<int>(base_.size()); }
  std::uint32_t length(int device) const { return lengths_[static_cast<std::size_t>(device)]; }
  OpId id(int device, std::uint32_t index) const { return id_from(base_[static_cast<std::size_t>(device)], index); }
  OpId id_from(OpId base, std::uint32_t index) const { return base + index * step_; }
  std::uint32_t index_of(OpId id, int device) const {
    const OpId rel = id - base_[static_cast<std::size_t>(device)];
    return step_ == 1 ? rel : rel / step_;
  }
  // The device of a used id. Performance: the executor asks this for every op. Device-major,
  // it guesses from the average list length first, which is exact when every device runs
  // equally many ops (every generator), and binary-searches only when the guess is wrong (a
  // branchy search over the offsets was once a quarter of the engine's instructions).
  int device_of(OpId id) const {
    if (interleaved_) return static_cast<int>(modulo_step(id));
    return device_major_device_of(id);
  }

  // id % step_ without a division (the engine asks for a device per successor):
  // Lemire, Kaser, Kurz, "Faster remainder by direct computation" (2019), exact for every
  // 32-bit id and step.
  OpId modulo_step(OpId id) const {
    __extension__ using u128 = unsigned __int128;
    return static_cast<OpId>((u128{step_inverse_ * id} * step_) >> 64);
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
    OpId id() const { return ids_.id(device_, index_); }
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
  [[gnu::noinline]] int device_major_device_of(OpId id) const {
    const std::size_t devices = base_.size();
    if (devices > 0 && size_ > 0) {
      const std::size_t guess = std::min<std::size_t>(devices - 1, std::uint64_t{id} * devices / size_);
      if (base_[guess] <= id && id - base_[guess] < lengths_[guess]) return static_cast<int>(guess);
    }
    return static_cast<int>(std::upper_bound(base_.begin(), base_.end(), id) - base_.begin()) - 1;
  }

  bool interleaved_ = false;
  OpId step_ = 1;
  std::uint64_t step_inverse_ = 0;  // 2^64 / step_, rounded up (0 for a step of 1)
  std::size_t size_ = 0;
  std::uint32_t longest_ = 0;
  std::vector<OpId> base_;               // id of each device's first op
  std::vector<std::uint32_t> lengths_;   // ops per device
};

}  // namespace pipesim
