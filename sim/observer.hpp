#pragma once
// SimObserver: the engine's only output channel (it never formats anything itself).
// Override what you need; the defaults ignore the record.
#include <cstdint>
#include <vector>

#include "sim/records.hpp"

namespace pipesim {

// The kinds of record an observer reads (SimObserver::wants), as bits. Performance: the
// engine builds and passes only those; a transfer's record is kept from its start to its
// arrival, a memory record is made at every F, B, I and W.
enum RecordKinds : std::uint8_t {
  kOpRecords = 1,
  kTransferRecords = 2,
  kCollectiveRecords = 4,
  kMemoryRecords = 8,
  kHostWorkRecords = 32,  // only a cost model with host work sends any (CostModel::between_ops)
  kAllRecords = 15 | kHostWorkRecords,
  // Instead of op records, their totals (OpTotals, records.hpp): an observer that wants this
  // and not kOpRecords gets on_op_totals once at the end where the engine can add the records
  // up (the ready pass, when each (pipeline, stage, kind) takes one time), and every op
  // record otherwise. Performance: at a million ops, a call per op was a sixth of a run.
  kOpTotals = 16,
};

class SimObserver {
 public:
  virtual ~SimObserver() = default;
  // Asked once, before the run: the records this observer reads. The engine may leave out
  // the others (an observer that says it does not read them must not depend on them).
  virtual std::uint8_t wants() const { return kAllRecords; }
  // Asked once, before the run: whether the records must come in simulated-time order
  // (records.hpp). False: each device's op records in that device's order suffice, as for
  // an observer that keeps one list per device; the engine may then run its ready pass
  // (sim/ready_pass.hpp), whose records of different devices interleave in no time order.
  // An observer that says false must implement restart().
  virtual bool needs_time_order() const { return true; }
  // The ready pass gave up part-way (a schedule it cannot finish exactly): forget every
  // record so far; the event loop now runs the schedule from the start and sends them all.
  virtual void restart() {}
  virtual void on_op(const OpRecord&) {}
  virtual void on_op_totals(const OpTotals&) {}
  virtual void on_transfer(const TransferRecord&) {}
  virtual void on_collective(const CollectiveRecord&) {}
  virtual void on_memory(const MemoryRecord&) {}
  virtual void on_host_work(const HostWorkRecord&) {}
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
  std::uint8_t wants() const override {
    std::uint8_t any = 0;
    for (const SimObserver* o : list_) any = static_cast<std::uint8_t>(any | o->wants());
    return any;
  }
  bool needs_time_order() const override {
    for (const SimObserver* o : list_)
      if (o->needs_time_order()) return true;
    return false;
  }
  void restart() override {
    for (SimObserver* o : list_) o->restart();
  }
  void on_op(const OpRecord& r) override { for (SimObserver* o : list_) o->on_op(r); }
  void on_op_totals(const OpTotals& t) override { for (SimObserver* o : list_) o->on_op_totals(t); }
  void on_transfer(const TransferRecord& r) override { for (SimObserver* o : list_) o->on_transfer(r); }
  void on_collective(const CollectiveRecord& r) override { for (SimObserver* o : list_) o->on_collective(r); }
  void on_memory(const MemoryRecord& r) override { for (SimObserver* o : list_) o->on_memory(r); }
  void on_host_work(const HostWorkRecord& r) override { for (SimObserver* o : list_) o->on_host_work(r); }

 private:
  std::vector<SimObserver*> list_;
};

}  // namespace pipesim
