#pragma once
// Timeline: every record of one run, kept in memory, for traces, reports and tests.
#include <vector>

#include "sim/observer.hpp"

namespace pipesim {

struct Timeline {
  std::vector<OpRecord> ops;              // in order of completion
  std::vector<TransferRecord> transfers;  // in order of arrival
  std::vector<CollectiveRecord> collectives;
  std::vector<MemoryRecord> memory;       // in order of change
};

class TimelineRecorder final : public SimObserver {
 public:
  void on_op(const OpRecord& r) override { timeline.ops.push_back(r); }
  void on_transfer(const TransferRecord& r) override { timeline.transfers.push_back(r); }
  void on_collective(const CollectiveRecord& r) override { timeline.collectives.push_back(r); }
  void on_memory(const MemoryRecord& r) override { timeline.memory.push_back(r); }
  Timeline timeline;
};

}  // namespace pipesim
