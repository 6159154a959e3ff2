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

}  // namespace pipesim
