#pragma once
// Internals of one executor run, shared by the orchestration (executor.cpp) and the device
// workers (worker.cpp): the messages on the channels, the GradSync rendezvous, what each
// worker is doing (for the watchdog) and what it recorded (for the measurement).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "executor/backend.hpp"
#include "executor/channel.hpp"
#include "executor/executor.hpp"
#include "schedules/dependencies.hpp"

namespace pipesim {

inline constexpr GraphId kNoOp = kNoGraphId;

// An activation (F -> next stage's F) or an input gradient (B/I -> previous stage's B/I),
// routed by the op that produced it: its (pipeline, stage, micro-batch) name it uniquely.
struct Message {
  GraphId from = kNoOp;
  GraphId to = kNoOp;
  std::unique_ptr<Payload> payload;
};

// One GradSync collective: the n-th GradSync of a stage in every pipeline.
struct Collective {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<GraphId> members;            // in pipeline order (dependencies.hpp)
  std::vector<std::unique_ptr<GradientBuffer>> parts;  // by member position
  // By member position, what its GradSync record spans: from before it copied its gradient
  // out (began) to when it had copied the sum back in (finished, at its OptStep; 0: not
  // yet), so the copies count as the sync's, as the cost model's allreduce does.
  std::vector<Tick> began, finished;
  // By member position, the member's own copies on its thread: its gradient out and the sum
  // back in (ns; MeasuredRun::sync_work).
  std::vector<Tick> copied_out, copied_in;
  int arrived = 0;
  bool done = false;
  std::unique_ptr<GradientBuffer> reduced;  // sum of the parts (in part 0's memory), once done
  int imported = 0;                         // members that copied it (freed after the last)
  std::int64_t bytes = 0;                   // of one part (fp32 numbers)
  Tick start = 0, end = 0;                  // the sum: from the last member's hand-over to its end

  // `member`'s position in `members` (PIPESIM_ASSERT: it is one).
  std::size_t position(GraphId member) const {
    const auto pos = static_cast<std::size_t>(std::find(members.begin(), members.end(), member) - members.begin());
    PIPESIM_ASSERT(pos < members.size());
    return pos;
  }
};

// Where a worker is, read by the watchdog (atomics: written by the worker only).
enum class Phase : int { Starting, Running, WaitInput, WaitCollective, Sending, Done, Failed };

struct WorkerStatus {
  std::atomic<int> index{0};
  std::atomic<int> phase{static_cast<int>(Phase::Starting)};
  std::atomic<GraphId> waiting_on{kNoOp};  // the producer (WaitInput) or the GradSync (WaitCollective)
  std::atomic<int> send_to{-1};
};

// A copy of one stage's weights of pipeline 0 at a validation point (validate_every): after
// `iteration` iterations' optimizer steps.
struct WeightSnapshot {
  std::int32_t stage = 0;
  std::int32_t iteration = 0;
  Tick time = 0;
  std::vector<float> weights;
};

// What one device recorded; read only after its thread has been joined.
struct DeviceLog {
  std::vector<OpRecord> ops;              // compute ops that finished, in list order
  std::vector<TransferRecord> transfers;  // messages this device sent
  std::vector<MemoryRecord> memory;       // activation memory after each change
  std::vector<LossRecord> losses;
  std::int32_t peak_weight_versions = 0;
  std::vector<WeightSnapshot> snapshots;
  ThreadCpu cpu;  // the device thread's CPU time, in all and within its compute ops
};

struct Fault {
  int device = -1;
  int index = -1;
  std::string message;  // "device D op I (OP): reason"
};

// Everything the workers share.
struct RunState {
  const Schedule& schedule;
  const DependencyGraph& graph;
  const RunOptions& options;
  std::chrono::steady_clock::time_point t0;
  StopFlag stop{false};
  std::atomic<std::uint64_t> progress{0};  // ops finished + messages moved
  std::vector<GraphId> data_pred;             // per op: the op whose output it takes, or kNoOp
  std::vector<std::vector<GraphId>> data_succ;  // per op: the ops taking its output
  std::vector<std::unique_ptr<Channel<Message>>> channels;  // [src * devices + dst], null if unused
  std::vector<std::unique_ptr<Collective>> collectives;     // by graph.collectives index
  std::vector<int> steps_per_iteration;  // by stage of pipeline 0, with validate_every

  // Completion and faults, guarded by `mutex`; the watchdog waits on `cv`.
  std::mutex mutex;
  std::condition_variable cv;
  int started = 0;  // worker threads running (the timeout counts from when all are)
  int finished = 0;
  std::optional<Fault> fault;

  RunState(const Schedule& s, const DependencyGraph& g, const RunOptions& o) : schedule(s), graph(g), options(o) {}

  Tick now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  }
  const Op& op_of(GraphId id) const {
    return schedule.ops[static_cast<std::size_t>(graph.device_of(id))][static_cast<std::size_t>(graph.index_of(id))];
  }
  OpRef ref_of(GraphId id) const { return OpRef{graph.device_of(id), graph.index_of(id)}; }
  Channel<Message>& channel(int src, int dst) {
    auto& c = channels[static_cast<std::size_t>(src) * static_cast<std::size_t>(schedule.num_devices) +
                       static_cast<std::size_t>(dst)];
    PIPESIM_ASSERT(c != nullptr);
    return *c;
  }
  // Records the first fault and wakes the watchdog.
  void report_fault(Fault f);
  // Wakes every thread blocked on a channel or a collective; they leave with ChannelAborted.
  void abort_all();
};

// Runs device `device`'s op list; records into `log`. Never throws: faults are reported
// to the state.
void run_worker(RunState& state, int device, ComputeBackend& backend, WorkerStatus& status, DeviceLog& log);

}  // namespace pipesim
