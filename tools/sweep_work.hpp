#pragma once
// The work of `pipesim sweep` (tools/sweep.hpp) cut into groups: the combinations that share
// one schedule (variant, pp, batch), evaluated together on one thread. run_sweep evaluates
// every group on the threads of one process; under MPI (tools/sweep_ranks.hpp) rank 0 hands
// groups out to the other ranks, which send each group's outcome back (tools/sweep_wire.hpp).
// Either way the outcomes land in a SweepCollector, whose result does not depend on who
// computed what or in which order.
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/exit_codes.hpp"
#include "tools/memory_guard.hpp"
#include "tools/sweep.hpp"

namespace pipesim {

struct SkipExample {
  std::size_t index = 0;  // the lowest-numbered combination skipped for the reason
  std::string message;
};

// What the combinations of one group gave.
struct GroupOutcome {
  std::vector<SweepRow> rows;                              // evaluated, in index order
  std::vector<std::pair<std::size_t, SkipReason>> skips;   // skipped: index, reason
  std::array<std::optional<SkipExample>, kNumSkipReasons> examples;  // the group's lowest-numbered per reason
};

// A combination whose evaluation failed for a reason that is not the combination's (a bug, or
// memory), with the line that names it: "internal error: configuration 17 (h100-sxm, 1f1b,
// tp 1, pp 2, m 8, b 1, recompute none): <detail> (a bug in pipesim; ...)". Under MPI, rank 0
// reports another rank's as "rank 1 failed on configuration 17 (...)".
class SweepFailure : public ExitWith {
 public:
  // `where`: configuration_text(), or that with the rank; `code`: kOutOfMemory or kInternalError.
  SweepFailure(std::size_t index, const std::string& where, std::string detail, int code);
  std::size_t index() const { return index_; }
  const std::string& detail() const { return detail_; }

 private:
  std::size_t index_;
  std::string detail_;
};

// "configuration 17 (h100-sxm, 1f1b, tp 1, pp 2, m 8, b 1, recompute none)"; the batch as
// "global batch 256" with --global-batch-size.
std::string configuration_text(const SweepGrid& grid, std::size_t index);

class SweepWork {
 public:
  // InputError for settings no combination could use (see run_sweep). `threads_per_process`:
  // the threads that share this process's memory.
  SweepWork(const SweepSettings& settings, const SweepGrid& grid, int threads_per_process);
  ~SweepWork();
  SweepWork(const SweepWork&) = delete;
  SweepWork& operator=(const SweepWork&) = delete;

  const SweepGrid& grid() const;
  const SweepSettings& settings() const;
  std::size_t groups() const;  // numbered in the order to hand them out: the most work first
  std::size_t group_size() const;  // combinations per group
  double work(std::size_t group) const;  // an estimate, in ops (pp x batch)
  std::size_t threads() const;  // --jobs, at most one per group
  // What one thread's schedule may use (empty: no bound). Ranks of one job use rank 0's, so
  // that a combination is skipped as too large on every rank or on none.
  const std::optional<MemoryLimit>& thread_memory() const;
  void set_thread_memory(const std::optional<MemoryLimit>& limit);
  // The MPI rank of this process (0 alone); PIPESIM_SWEEP_TEST_FAIL=R makes rank R fail on
  // every combination it evaluates, R:abort makes it abort (tests/sweep_ranks_test.cpp).
  void set_rank(int rank);

  // Evaluates one group, adding one to `done` per combination. Thread-safe. SweepFailure when
  // a combination fails for a reason of its own making (bad input skips it instead).
  GroupOutcome evaluate(std::size_t group, std::atomic<std::size_t>& done) const;

  // configuration_text() of the combination this thread evaluates now, empty between them:
  // what a rank that dies of a signal names (tools/sweep_ranks.cpp reads it in its handler).
  static std::string_view in_progress();

  struct Plan;  // tools/sweep_work.cpp's

 private:
  std::unique_ptr<Plan> plan_;
};

// Slots for every combination: outcomes arrive in any order, the result is in index order.
class SweepCollector {
 public:
  explicit SweepCollector(const SweepWork& work);
  void add(GroupOutcome&& outcome);  // thread-safe
  // The result (SweepResult::threads set to `threads`), with equivalents and filters marked.
  SweepResult finish(std::size_t threads);

 private:
  const SweepWork& work_;
  std::vector<std::optional<SweepRow>> rows_;
  std::vector<std::int8_t> reason_;  // SkipReason of a skipped combination, -1 if not
  std::array<std::optional<SkipExample>, kNumSkipReasons> examples_;
  std::mutex mutex_;
};

// Groups in hand-out order, taken one at a time by local threads or in chunks of about
// `share` of the remaining work by another rank. Thread-safe.
class GroupQueue {
 public:
  explicit GroupQueue(const SweepWork& work);
  std::optional<std::size_t> next();
  // [first, last): at least one group while any is left, then groups while their work stays
  // under `share` of what was left, or under `at_least` (work, SweepWork::work's unit) where
  // that is more; empty when none is left.
  std::pair<std::size_t, std::size_t> take(double share, double at_least = 0);
  void close();  // hands nothing out from now on
  double left();  // the work of the groups not handed out
  // The first chunk of each of ranks 1 .. ranks - 1, in rank order, each `take(share)`: what
  // every rank of an MPI job computes from the plan alone, so that no rank waits for a first
  // answer (rank 0 takes them from its queue, rank r keeps the r-th, empty when none was left).
  std::vector<std::pair<std::size_t, std::size_t>> take_first_chunks(int ranks, double share);

 private:
  std::vector<double> work_after_;  // work_after_[g]: work of groups g, g+1, ...
  std::size_t next_ = 0;
  std::mutex mutex_;
};

// run_sweep (tools/sweep.hpp) on a work already planned.
SweepResult run_sweep(const SweepWork& work, const SweepProgress& progress = {});

// Evaluates groups on `threads` threads: each takes the next group from `next` (empty: none
// left; it may wait for one) and hands its outcome to `collect`. The calling thread calls
// `tick` every `tick_every` until all have ended. The first failure calls `on_failure` (to
// wake a `next` that waits) and stops the others at their next group; it is rethrown after
// the join.
void evaluate_groups(const SweepWork& work, std::size_t threads, std::atomic<std::size_t>& done,
                     const std::function<std::optional<std::size_t>()>& next,
                     const std::function<void(GroupOutcome&&)>& collect, const std::function<void()>& on_failure,
                     std::chrono::microseconds tick_every, const std::function<void()>& tick);

}  // namespace pipesim
