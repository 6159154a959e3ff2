#pragma once
// What the engine reports while it runs: plain records, emitted in simulated-time order
// of their end (ops, collectives, transfers) or of the change (memory). Sinks
// (sim/timeline.hpp, traces/, metrics) turn them into numbers and pictures.
#include <cstdint>
#include <vector>

#include "core/units.hpp"
#include "schedules/op.hpp"

namespace pipesim {

// Where an op sits in the schedule: ops[device][index].
struct OpRef {
  std::int32_t device = 0;
  std::int32_t index = 0;
  friend bool operator==(const OpRef&, const OpRef&) = default;
};

struct OpRecord {
  OpRef ref;
  Op op;
  Tick start = 0;
  Tick end = 0;
  // Updates applied to this op's stage replica on its device before the op started
  // (F/B/I/W); -1 for OptStep and GradSync.
  std::int32_t weight_version = -1;
};

// A point-to-point message from a producing op to a consuming op on another device.
struct TransferRecord {
  OpRef from;
  OpRef to;
  Tick ready = 0;       // producer finished, message queued on the link
  Tick link_start = 0;  // began to occupy the link (after earlier transfers, FIFO)
  Tick link_end = 0;    // link free again (link_start + bytes / bandwidth)
  Tick arrival = 0;     // link_end + latency: consumer may use it
  std::int64_t bytes = 0;
};

// A GradSync collective: all participants arrived, then it ran on their comm streams.
struct CollectiveRecord {
  std::vector<OpRef> participants;
  Tick start = 0;
  Tick end = 0;
  std::int64_t bytes = 0;
};

// Op records added up, for an observer that wants kOpTotals (sim/observer.hpp): one at the
// end of a run in which every op of one (pipeline, stage, kind) took the same time (the
// ready pass under a model whose answers are the same for every micro-batch). Each device's
// busy time, first start and last end are the run's own (SimResult::devices).
struct OpTotals {
  struct Group {  // `ops` ops of `kind` on replica (pipeline, stage), on `device`, each `duration` long
    std::int32_t device = 0, pipeline = 0, stage = 0;
    OpKind kind = OpKind::F;
    std::uint64_t ops = 0;
    Tick duration = 0;
  };
  std::vector<Group> groups;  // in (pipeline, stage, kind) order, only those with ops
};

// A device thread's own work between two of its compute ops (CostModel::between_ops, the
// sender's part of its messages: the event loop's start_host_work): the device is held, on
// its pool's cores where it has one, and no op runs.
struct HostWorkRecord {
  std::int32_t device = 0;
  Tick start = 0;
  Tick end = 0;
};

// Activation memory held by a device after a change at `time`.
struct MemoryRecord {
  std::int32_t device = 0;
  Tick time = 0;
  std::int64_t bytes = 0;
  std::int32_t activations = 0;  // micro-batch-stage activations held (F done, freeing op not)
};

}  // namespace pipesim
