#pragma once
// EventQueue: a min-heap of (time, insertion number). Equal times pop in insertion order
// (FIFO), so a run is a pure function of its input. Like ns-3's scheduler, an event is
// identified by (time, uid); unlike ns-3 nothing is ever cancelled, so there is no lookup.
#include <cstdint>
#include <queue>
#include <vector>

#include "cost_models/units.hpp"

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
  void push(Tick time, EventType type, std::uint32_t payload) { heap_.push(Event{time, next_seq_++, payload, type}); }
  bool empty() const { return heap_.empty(); }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }
  std::uint64_t pushed() const { return next_seq_; }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.time != b.time ? a.time > b.time : a.seq > b.seq; }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace pipesim
