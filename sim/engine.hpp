#pragma once
// The discrete-event engine: gives a Schedule time under a CostModel.
//
// Rules: integer-nanosecond time; events ordered by (time, insertion order), so ties are
// FIFO and runs are deterministic. Each device runs its op list in order, one compute op
// at a time. A data dependency that crosses devices becomes a transfer on the directed
// link (src, dst) when the producer finishes: the bytes/bandwidth part occupies the link
// (FIFO behind earlier transfers), the latency part is pipelined. Sends and receives
// overlap compute. GradSync is a collective on the participants' communication streams:
// it starts when every participant has reached it (and its comm stream is free), and does
// not stall its device unless the schedule says blocking_grad_sync. Where the cost model
// says a member has work of its own (CostModel::grad_sync_work: a CPU thread copying its
// gradient out and the sum back in), the member's device does it first, as a compute op
// that holds the device (and a core of its pool) but counts as no op's busy time, and joins
// the collective at its end. Where the cost model says the members' threads run the
// collective (CostModel::CollectiveStyle::MemberThreads, a CPU executor's), the last member
// makes the sum on its own device and each member copies it in after; members arriving at one
// time are settled at its end, whatever order their events came in (docs/shared-hardware.md).
// OptStep bumps the weight version of its stage replica on its device.
//
// Communication ops in a list (docs/schedule-format.md): a SEND is posted where it stands
// once its producer has ended, a RECV is posted where it stands; neither takes device time
// or stops the device. The message moves once both are posted (the transfer as above), and
// the op that uses it waits for it, as PyTorch's runtime does. Schedules without them run
// exactly as before (same records, same bytes).
//
// Two ways, one semantics: Simulator::run gives a schedule that needs no event queue (nothing
// shared, no collective, no communication op, an observer that takes each device's records
// in its order) to the ready pass (sim/ready_pass.hpp), and every other one, or one the
// pass cannot finish, to the event loop (sim/event_loop.hpp). Results and records are the same.
//
// The engine never computes a duration (it asks the CostModel) and never formats output
// (it emits records to a SimObserver).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "schedules/schedule.hpp"
#include "sim/observer.hpp"
#include "sim/resources.hpp"
#include "sim/versions.hpp"

namespace pipesim {

struct DeviceStats {
  Tick busy = 0;         // total compute time
  Tick first_start = 0;  // start of the device's first compute op
  Tick last_end = 0;     // end of its last compute op
  std::int32_t peak_activations = 0;
  std::int64_t peak_activation_bytes = 0;
  std::int64_t final_activation_bytes = 0;  // held after the last op (0 for a complete schedule)
  std::int32_t peak_weight_versions = 0;    // weight versions held at once, all replicas (sim/versions.hpp)
};

struct SimResult {
  Tick makespan = 0;  // end of the last op (compute or collective); time starts at 0
  std::vector<DeviceStats> devices;
  // The chain of ops that determined the makespan, first to last: each op started when
  // its predecessor in this chain (on its device, or through a transfer) let it.
  std::vector<OpRef> critical_path;
  std::uint64_t events = 0;  // events processed, for benchmarks
  // Per iteration t: end of the last micro-batch op of iteration t (ids t*m .. t*m+m-1).
  std::vector<Tick> iteration_end;
  std::vector<StageStaleness> staleness;  // per stage, over all pipelines
  // Something was shared (sim/resources.hpp): a compute op may have taken longer or shorter
  // than its cost model's compute_time. False: every op took exactly that.
  bool shared = false;
};

// Progress of a long run, for a caller that shows it (the engine formats nothing; the CLI's
// tools/progress.hpp draws it): `report` is called on simulate()'s thread with the number
// of ops that have ended so far, the count an observer's on_op would have seen (compute
// ops, GradSync participants, communication ops; schedule.total_ops() at the end), about
// every `every` ops and once when the run is complete. Without it (or without `report`)
// the event loop pays one counter test per op, nothing more (bench/sim_bench).
struct SimProgress {
  std::function<void(std::uint64_t ops_done)> report;
  std::uint64_t every = 1 << 16;
};

// Runs the schedule. Throws InputError if the schedule's dependencies are broken (missing
// producers, duplicates), if it deadlocks (the message names the waiting ops) or if
// `hardware` does not fit it. `hardware` (sim/resources.hpp): what the devices share; null,
// or a description that shares nothing, runs the engine's fast path, where every device and
// every link is its own.
SimResult simulate(const Schedule& schedule, const CostModel& costs, SimObserver* observer = nullptr,
                   const SimProgress* progress = nullptr, const SharedHardware* hardware = nullptr);

// Runs schedules one after another, like simulate(), but keeps the engine's per-op arrays
// (48 bytes per op) for the next run. Performance: glibc gives blocks over 32 MiB (the
// slots of a million ops) their own fresh pages and hands them back to the OS when freed,
// so each one-off simulate() of a schedule that large takes a page fault every 128 ops, a
// large part of its time on this machine (docs/performance.md); smaller arrays come back
// from the heap without. A sweep or a benchmark that simulates again and again keeps one
// Simulator per thread. The memory is held until the Simulator goes away.
// The engine's two ways of running a schedule: the ready pass (sim/ready_pass.hpp), where it
// applies and is exact, and the event loop (sim/event_loop.hpp) for everything. Same results,
// same records (the pass hands each device's op records over in its order, not in time order).
enum class EnginePath : std::uint8_t { ReadyPass, EventLoop };

class Simulator {
 public:
  // reuse_walks: also keep the last schedule's dependency walk (a copy of the schedule and of
  // its slots, 48 more bytes per op), so that a run of an equal schedule (one schedule with
  // many cost models: a sweep) copies it instead of walking the dependencies again.
  explicit Simulator(bool reuse_walks = false);
  ~Simulator();
  Simulator(Simulator&&) noexcept;
  Simulator& operator=(Simulator&&) noexcept;

  SimResult run(const Schedule& schedule, const CostModel& costs, SimObserver* observer = nullptr,
                const SimProgress* progress = nullptr, const SharedHardware* hardware = nullptr);

  // For tests that compare the two: run every schedule in the event loop (default false:
  // the ready pass wherever it applies).
  void always_event_loop(bool on);
  // The way the last run() went.
  EnginePath last_path() const;

 private:
  struct Workspace;
  std::unique_ptr<Workspace> workspace_;
};

}  // namespace pipesim
