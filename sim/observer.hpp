#pragma once
// SimObserver: the engine's only output channel (it never formats anything itself).
// Override what you need; the defaults ignore the record.
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

// Passes every record to `a`, then to `b` when there is one (a trace writer and a
// recorder watching the same run).
class TeeObserver final : public SimObserver {
 public:
  TeeObserver(SimObserver& a, SimObserver* b) : a_(a), b_(b) {}
  void on_op(const OpRecord& r) override {
    a_.on_op(r);
    if (b_) b_->on_op(r);
  }
  void on_transfer(const TransferRecord& r) override {
    a_.on_transfer(r);
    if (b_) b_->on_transfer(r);
  }
  void on_collective(const CollectiveRecord& r) override {
    a_.on_collective(r);
    if (b_) b_->on_collective(r);
  }
  void on_memory(const MemoryRecord& r) override {
    a_.on_memory(r);
    if (b_) b_->on_memory(r);
  }

 private:
  SimObserver& a_;
  SimObserver* b_;
};

}  // namespace pipesim
