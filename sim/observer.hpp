#pragma once
// SimObserver: the engine's only output channel (it never formats anything itself).
// Override what you need; the defaults ignore the record.
#include <vector>

#include "sim/records.hpp"

namespace pipesim {

class SimObserver {
 public:
  virtual ~SimObserver() = default;
  virtual void on_op(const OpRecord&) {}
  virtual void on_transfer(const TransferRecord&) {}
  virtual void on_collective(const CollectiveRecord&) {}
  virtual void on_memory(const MemoryRecord&) {}
};

// Passes every record to each of its observers, in the order they were added (a trace, a
// report's timeline, the time breakdown's records at once).
class ObserverList final : public SimObserver {
 public:
  void add(SimObserver* o) {
    if (o) list_.push_back(o);
  }
  // This, or null when it has none (the engine then keeps no records at all).
  SimObserver* get() { return list_.empty() ? nullptr : this; }
  void on_op(const OpRecord& r) override { for (SimObserver* o : list_) o->on_op(r); }
  void on_transfer(const TransferRecord& r) override { for (SimObserver* o : list_) o->on_transfer(r); }
  void on_collective(const CollectiveRecord& r) override { for (SimObserver* o : list_) o->on_collective(r); }
  void on_memory(const MemoryRecord& r) override { for (SimObserver* o : list_) o->on_memory(r); }

 private:
  std::vector<SimObserver*> list_;
};

}  // namespace pipesim
