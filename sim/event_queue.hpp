#pragma once
// EventQueue: a min-heap of (time, insertion number). Equal times pop in insertion order
// (FIFO), so a run is a pure function of its input. Like ns-3's scheduler, an event is
// identified by (time, uid); unlike ns-3 nothing is ever cancelled, so there is no lookup.
//
// Performance: this is a hand-written binary heap rather than std::priority_queue. Event
// times tie very often (uniform costs put every event on a multiple of one duration), so
// the (time, seq) comparison is a coin flip for the branch predictor; std::priority_queue's
// sift-down branched on it at every level and was about 90% of the engine's branch
// mispredictions. Here the comparison is computed without branches, and a pop moves the
// hole to the bottom along the earlier children before sifting the last event up (it
// rarely moves), so a pop costs about one misprediction instead of one per level.
//
// Performance, second part: an event pushed for the current time (the time of the last pop)
// skips the heap and goes to a FIFO lane. That is exact, not an approximation: such an
// event comes after every event already queued for the current time (those were pushed
// earlier, so have smaller insertion numbers), and before every later time. So pop takes
// the heap's top while it is at the current time, then the lane, then moves time on. Zero-
// latency transfers and zero-duration ops are all same-time events; with zero-cost links
// about half of a pipeline schedule's events never touch the heap.
#include <cstdint>
#include <vector>

#include "cost_models/units.hpp"
#include "schedules/error.hpp"

namespace pipesim {

enum class EventType : std::uint8_t { OpFinish, TransferArrive, CollectiveFinish };

struct Event {
  Tick time = 0;
  std::uint64_t seq = 0;
  std::uint32_t payload = 0;  // op id, transfer slot or collective index
  EventType type = EventType::OpFinish;
};

class EventQueue {
 public:
  void push(Tick time, EventType type, std::uint32_t payload) {
    PIPESIM_ASSERT(time >= now_);  // nothing is scheduled in the past
    const Event e{time, next_seq_++, payload, type};
    if (time == now_) {
      lane_.push_back(e);
      return;
    }
    std::size_t hole = heap_.size();
    heap_.push_back(e);
    sift_up(hole, e);
  }
  bool empty() const { return heap_.empty() && lane_head_ == lane_.size(); }
  Event pop() {
    if (lane_head_ < lane_.size() && (heap_.empty() || heap_.front().time != now_)) {
      const Event e = lane_[lane_head_++];
      if (lane_head_ == lane_.size()) {  // drained: reuse the storage from the start
        lane_.clear();
        lane_head_ = 0;
      }
      return e;
    }
    const Event top = pop_heap();
    now_ = top.time;
    return top;
  }
  std::uint64_t pushed() const { return next_seq_; }

 private:
  Event pop_heap() {
    const Event top = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return top;
    // Move the hole at the root down to a leaf, always taking the earlier child...
    std::size_t hole = 0;
    for (std::size_t child = 1; child < n; child = 2 * hole + 1) {
      if (child + 1 < n) child += static_cast<std::size_t>(earlier(heap_[child + 1], heap_[child]));
      heap_[hole] = heap_[child];
      hole = child;
    }
    // ... then put the last event there and let it rise to its place.
    sift_up(hole, last);
    return top;
  }
  // a pops before b; bitwise operators so that the compiler emits no branch.
  static bool earlier(const Event& a, const Event& b) {
    return (a.time < b.time) | ((a.time == b.time) & (a.seq < b.seq));
  }
  void sift_up(std::size_t hole, const Event& e) {
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / 2;
      if (!earlier(e, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = e;
  }

  std::vector<Event> heap_;   // events pushed before their time came
  std::vector<Event> lane_;   // events pushed for now_, in insertion order, from lane_head_ on
  std::size_t lane_head_ = 0;
  Tick now_ = 0;              // time of the last event popped from the heap
  std::uint64_t next_seq_ = 0;
};

}  // namespace pipesim
