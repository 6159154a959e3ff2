#include "tools/sweep_ranks.hpp"

#include <mpi.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <tuple>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "tools/cli_main.hpp"
#include "tools/sweep_wire.hpp"

namespace pipesim {
namespace {

constexpr int kRequestTag = 1;  // rank -> 0: RankRequest
constexpr int kRangeTag = 2;    // 0 -> rank: GroupRange
// How often a rank's main thread looks at its messages while the threads evaluate. A request's
// round trip is two of these and the wake-ups of two busy cores: 1-5 ms on a 2-core machine.
// 0.2 ms cost 10 % more CPU time on 2 ranks (wake-ups) for nothing.
constexpr std::chrono::microseconds kPoll{1000};
// The least work a chunk holds, in seconds of rank 0's rate: towards the end the groups are
// the smallest (0.1-1 ms), and a chunk of one would leave its rank waiting for the next one
// for most of a round trip. A rank asks for the next chunk once half of its last one is
// started, so the other half (>= 3 ms) covers the round trip; at the very end a chunk is at
// most an even split of what is left, so a rank holds at most about half a chunk more.
constexpr double kLeastChunk = 0.006;
// Rank 0's, once its own threads are done: its cores are free, and the last results it waits
// for end the evaluation.
constexpr std::chrono::microseconds kIdlePoll{100};
constexpr double kProgressInterval = 0.1;  // seconds between progress calls on rank 0

// Rank 0's thread memory on every rank, so that every rank skips the same combinations.
void share_thread_memory(const MpiJob& job, SweepWork& work) {
  std::uint64_t v[5] = {0, 0, 0, 0, 0};  // present, bytes, from_flag, held, flag
  if (const auto& limit = work.thread_memory())
    v[0] = 1, v[1] = limit->bytes, v[2] = limit->from_flag, v[3] = limit->held, v[4] = limit->flag;
  MPI_Bcast(v, 5, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (job.rank() == 0) return;
  std::optional<MemoryLimit> limit;
  if (v[0] != 0) limit = MemoryLimit{v[1], v[2] != 0, v[3], v[4]};
  work.set_thread_memory(limit);
}

// ---- a rank that dies ---------------------------------------------------------------------

// "pipesim: error: rank 1 died (signal 11, Segmentation fault) on configuration 17 (...)" on
// stderr, written by the dying rank itself (the launcher then ends the job: rank 0 never
// learns why). Only async-signal-safe calls: write(2), and the text prepared before.
char death_prefix[64];  // "pipesim: error: rank 1 died (signal "
std::size_t death_prefix_size = 0;

void put(const char* text, std::size_t n) {
  while (n > 0) {
    const ssize_t k = ::write(STDERR_FILENO, text, n);
    if (k <= 0) return;
    text += k, n -= static_cast<std::size_t>(k);
  }
}
void put(std::string_view text) { put(text.data(), text.size()); }

extern "C" void report_death(int sig) {
  put(death_prefix, death_prefix_size);
  char digits[8];
  std::size_t n = 0;
  for (int v = sig; v > 0 && n < sizeof digits; v /= 10) digits[sizeof digits - 1 - n++] = static_cast<char>('0' + v % 10);
  put(digits + sizeof digits - n, n);
  put(", ");
  put(sig == SIGSEGV ? "Segmentation fault" : sig == SIGABRT ? "Aborted" : sig == SIGBUS ? "Bus error"
      : sig == SIGFPE ? "Floating point exception" : "Illegal instruction");
  const std::string_view where = SweepWork::in_progress();
  if (where.empty()) put(") between configurations\n");
  else put(") on "), put(where), put("\n");
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void report_deaths(int rank) {
  const int n = std::snprintf(death_prefix, sizeof death_prefix, "pipesim: error: rank %d died (signal ", rank);
  death_prefix_size = n > 0 ? static_cast<std::size_t>(n) : 0;
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, report_death);
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---- rank 0 ------------------------------------------------------------------------------

struct RemoteFailure {
  int rank = 0;
  RankRequest request;
};

// Each rank's share of the remaining work per chunk: a quarter of it divided by the ranks.
double chunk_share(const MpiJob& job) { return 1.0 / (4.0 * job.size()); }

SweepResult coordinate(const MpiJob& job, const SweepWork& work, const RanksProgress& progress) {
  SweepCollector results(work);
  GroupQueue queue(work);
  const double share = chunk_share(job);
  (void)queue.take_first_chunks(job.size(), share);  // the other ranks' first chunks: they know them
  std::atomic<std::size_t> done{0};
  std::atomic<double> taken{0};  // work rank 0's threads took: its rate, for the least chunk
  const double started = seconds_now();
  std::size_t remote_done = 0;
  int working = job.size() - 1;  // the other ranks that have not ended
  bool local_working = true;
  std::optional<RemoteFailure> failure;  // the first rank that failed
  double next_progress = 0;
  const auto serve = [&] {
    for (int flag = 1; working > 0;) {
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kRequestTag, MPI_COMM_WORLD, &flag, &status);
      if (!flag) break;
      int n = 0;
      MPI_Get_count(&status, MPI_BYTE, &n);
      std::string bytes(static_cast<std::size_t>(n), '\0');
      MPI_Recv(bytes.data(), n, MPI_BYTE, status.MPI_SOURCE, kRequestTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      RankRequest request = decode_request(bytes, work.grid());
      if (request.kind == RequestKind::Failure) {
        if (!failure) failure = RemoteFailure{status.MPI_SOURCE, std::move(request)};
        queue.close();  // the others get no more work, and end after their groups in flight
        --working;
        continue;
      }
      remote_done += request.outcomes.size() * work.group_size();
      if (!failure)
        for (GroupOutcome& o : request.outcomes) results.add(std::move(o));
      if (request.kind == RequestKind::Final) {
        --working;
        continue;
      }
      const double elapsed = seconds_now() - started;
      const double least = elapsed > 0 ? taken.load() / elapsed * kLeastChunk : 0;
      // at the very end, no more than an even split of what is left
      const auto [first, last] = queue.take(share, std::min(least, queue.left() / job.size()));
      const GroupRange range{first, last};
      MPI_Send(&range, 2, MPI_UINT64_T, status.MPI_SOURCE, kRangeTag, MPI_COMM_WORLD);
    }
    if (const double now = seconds_now(); progress && now >= next_progress) {
      next_progress = now + kProgressInterval;
      progress(done.load(std::memory_order_relaxed) + remote_done, work.grid().size(),
               working + (local_working ? 1 : 0));
    }
  };
  std::exception_ptr local_failure;
  try {
    evaluate_groups(
        work, work.threads(), done,
        [&]() -> std::optional<std::size_t> {
          const std::optional<std::size_t> g = queue.next();
          if (g) taken.fetch_add(work.work(*g), std::memory_order_relaxed);
          return g;
        },
        [&](GroupOutcome&& o) { results.add(std::move(o)); },
        [&] { queue.close(); }, kPoll, serve);
  } catch (const SweepFailure& e) {  // named like another rank's
    local_failure = std::make_exception_ptr(
        SweepFailure(e.index(), "rank 0 failed on " + configuration_text(work.grid(), e.index()), e.detail(), e.code()));
    queue.close();
  } catch (...) {
    local_failure = std::current_exception();
    queue.close();
  }
  local_working = false;
  while (working > 0) {  // the other ranks' last chunks
    serve();
    std::this_thread::sleep_for(kIdlePoll);
  }
  if (local_failure) std::rethrow_exception(local_failure);
  if (failure) {
    const RankRequest& r = failure->request;
    const std::string rank = "rank " + std::to_string(failure->rank);
    if (r.index >= work.grid().size()) throw ExitWith(rank + " failed: " + r.message, r.exit_code);
    throw SweepFailure(r.index, rank + " failed on " + configuration_text(work.grid(), r.index), r.message,
                       r.exit_code);
  }
  if (progress) progress(work.grid().size(), work.grid().size(), 0);
  return results.finish(work.threads());
}

// ---- the other ranks ---------------------------------------------------------------------

// The groups rank 0 gave this rank, for its threads.
class LocalGroups {
 public:
  explicit LocalGroups(const SweepWork& work) : work_(work) {}
  void add(std::size_t first, std::size_t last) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (ended_) return;
    last_chunk_ = 0;
    for (std::size_t g = first; g < last; ++g) groups_.push_back(g), last_chunk_ += work_.work(g), queued_ += work_.work(g);
    ready_.notify_all();
  }
  // Rank 0 has no more work: the threads finish the groups they hold, then end.
  void last_given() {
    const std::lock_guard<std::mutex> lock(mutex_);
    ended_ = true;
    ready_.notify_all();
  }
  // A failure: the threads end after the groups they are on.
  void close() {
    const std::lock_guard<std::mutex> lock(mutex_);
    ended_ = true;
    groups_.clear();
    queued_ = 0;
    ready_.notify_all();
  }
  // Once half of the last chunk's work is started, or only `reserve` groups are left to start:
  // the next chunk's round trip overlaps the rest.
  bool wants_more(std::size_t reserve) {
    const std::lock_guard<std::mutex> lock(mutex_);
    return !ended_ && (groups_.size() <= reserve || queued_ <= last_chunk_ / 2);
  }
  // The next group, waiting for one; empty once none is left and none will come.
  std::optional<std::size_t> next() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return ended_ || !groups_.empty(); });
    if (groups_.empty()) return std::nullopt;
    const std::size_t g = groups_.front();
    groups_.pop_front();
    queued_ -= work_.work(g);
    return g;
  }

 private:
  const SweepWork& work_;
  double queued_ = 0;      // work of the groups not started
  double last_chunk_ = 0;  // work of the last chunk given
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::size_t> groups_;
  bool ended_ = false;  // no group will be added
};

void serve_rank0(const MpiJob& job, const SweepWork& work) {
  LocalGroups groups(work);
  {  // the first chunk, from the plan: the same as rank 0 took from its queue for this rank
    GroupQueue plan(work);
    const auto [first, last] = plan.take_first_chunks(job.size(), chunk_share(job))[job.rank() - 1];
    if (first == last) groups.last_given();
    else groups.add(first, last);
  }
  std::mutex finished_mutex;
  std::vector<GroupOutcome> finished;  // since the last request
  std::atomic<std::size_t> done{0};
  const auto send = [&](RankRequest request) {
    if (request.kind != RequestKind::Failure) {
      const std::lock_guard<std::mutex> lock(finished_mutex);
      request.outcomes = std::move(finished);
      finished.clear();
    }
    const std::string bytes = encode_request(request);
    MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kRequestTag, MPI_COMM_WORLD);
  };
  GroupRange range;
  MPI_Request pending = MPI_REQUEST_NULL;  // the answer to the request in flight
  const auto tick = [&] {
    if (pending != MPI_REQUEST_NULL) {
      int arrived = 0;
      MPI_Test(&pending, &arrived, MPI_STATUS_IGNORE);
      if (!arrived) return;
      if (range.first == range.last) groups.last_given();
      else groups.add(range.first, range.last);
    }
    if (groups.wants_more(work.threads())) {  // ask while the threads still have groups to start
      send(RankRequest{});
      MPI_Irecv(&range, 2, MPI_UINT64_T, 0, kRangeTag, MPI_COMM_WORLD, &pending);
    }
  };
  tick();
  try {
    evaluate_groups(
        work, work.threads(), done, [&] { return groups.next(); },
        [&](GroupOutcome&& o) {
          const std::lock_guard<std::mutex> lock(finished_mutex);
          finished.push_back(std::move(o));
        },
        [&] { groups.close(); }, kPoll, tick);
  } catch (...) {
    if (pending != MPI_REQUEST_NULL) MPI_Wait(&pending, MPI_STATUS_IGNORE);
    RankRequest failure;
    failure.kind = RequestKind::Failure;
    try {
      throw;
    } catch (const SweepFailure& e) {
      failure.exit_code = e.code();
      failure.index = e.index();
      failure.message = e.detail();
    } catch (...) {  // outside a configuration's evaluation (a schedule's generation ran out of memory)
      std::tie(failure.exit_code, failure.message) = failure_of(std::current_exception());
      failure.index = work.grid().size();
    }
    send(std::move(failure));
    return;
  }
  if (pending != MPI_REQUEST_NULL) MPI_Wait(&pending, MPI_STATUS_IGNORE);  // answered "no more" before
  RankRequest final_request;
  final_request.kind = RequestKind::Final;
  send(std::move(final_request));
}

}  // namespace

std::optional<SweepResult> run_sweep_on_ranks(const MpiJob& job, SweepWork& work, const RanksProgress& progress) {
  share_thread_memory(job, work);
  work.set_rank(job.rank());
  report_deaths(job.rank());  // after MPI_Init, whose own handlers print a stack trace instead
  if (job.rank() == 0) return coordinate(job, work, progress);
  serve_rank0(job, work);
  return std::nullopt;
}

}  // namespace pipesim
