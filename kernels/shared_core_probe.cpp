#include "kernels/shared_core_probe.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <thread>
#include <utility>
#include <vector>

#include "core/cpu_affinity.hpp"
#include "core/units.hpp"
#include "kernels/profile_runs.hpp"

namespace pipesim {
namespace {

using profile_runs::at_least_one_ns;
using profile_runs::fixed;
using profile_runs::pass_profile;
using profile_runs::RunBudget;

// One device's turn: its stage passes, then its Adam step.
struct Turn {
  std::vector<PassTimes> passes;
  double optimizer = 0;
};

struct Device {
  ProfileWorkload& work;
  OptimizerProbe& optimizer;
  int blocks;
  Turn run() const {
    Turn t;
    for (const PassTimes& p : work.stage_passes(blocks)) t.passes.push_back(at_least_one_ns(p));
    t.optimizer = at_least_one_ns(optimizer.step(OptimizerKind::Adam));
    return t;
  }
};

// The devices' threads, alive for the whole measurement as the executor's are. lap(): each
// thread runs one turn, `cores` at once: the threads at 0, n / cores, 2 n / cores, ... start
// together, each other one when the thread before it has run its turn and handed it on; it
// returns the turns of the threads that waited. alone(): device 0's thread runs two turns
// back to back and returns the second.
class Ring {
 public:
  Ring(const std::vector<Device>& devices, int cores) : devices_(devices), starts_(devices.size(), 0) {
    for (int k = 0; k < cores; ++k)
      starts_[static_cast<std::size_t>(k) * devices.size() / static_cast<std::size_t>(cores)] = 1;
    turns_.resize(devices.size());
    go_.assign(devices.size(), 0);
    for (std::size_t d = 0; d < devices.size(); ++d) threads_.emplace_back([this, d] { loop(d); });
  }
  ~Ring() {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  std::vector<Turn> lap() {
    run(false);
    std::vector<Turn> waited;
    for (std::size_t d = 0; d < turns_.size(); ++d)
      if (!starts_[d]) waited.push_back(std::move(*turns_[d]));
    return waited;
  }
  Turn alone() {
    run(true);
    return std::move(*turns_.front());
  }

 private:
  void run(bool alone) {
    std::unique_lock<std::mutex> lock(mu_);
    alone_ = alone;
    if (alone) {
      go_.assign(go_.size(), 0);
      go_.front() = 1;
    } else {
      go_ = starts_;
    }
    for (auto& t : turns_) t.reset();
    finished_ = 0;
    ++job_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return finished_ == (alone ? 1 : devices_.size()); });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

  void loop(std::size_t d) {
    std::uint64_t done = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || (job_ > done && go_[d]); });
      if (stop_) return;
      done = job_;
      const bool alone = alone_;
      lock.unlock();
      std::optional<Turn> turn;
      std::exception_ptr error;
      try {
        turn = devices_[d].run();
        if (alone) turn = devices_[d].run();  // right after its own
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      turns_[d] = std::move(turn);
      if (error && !error_) error_ = error;
      if (!alone) go_[(d + 1) % go_.size()] = 1;  // handed on even after a failure: no thread waits forever
      ++finished_;
      cv_.notify_all();
    }
  }

  const std::vector<Device>& devices_;
  std::vector<char> starts_, go_;
  std::vector<std::optional<Turn>> turns_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t job_ = 0;
  std::size_t finished_ = 0;
  bool alone_ = false, stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;  // last: the members above exist before they run
};

InterferenceCurve two_points(const TimingStats& alone, const TimingStats& turns) {
  return {{1.0, turns.median / alone.median}, {alone, turns}};
}

}  // namespace

int shared_core_threads(const ProfileOptions& o) {
  return o.shared_core_threads > 0 ? o.shared_core_threads : 2 * usable_cores();
}

ProfileSharedCore shared_core_turns(const ModelSpec& model, const ProfileOptions& o, ProfileBackend& backend,
                                    ProfileWorkload& w, int micro_batch_size, int stage_blocks,
                                    std::int64_t stage_parameters) {
  const int cores = usable_cores();
  const int threads = shared_core_threads(o);
  const auto skip = [&](const std::string& why) {
    if (o.progress) *o.progress << "profile: no shared-core turns (" << why << ")" << std::endl;
    return ProfileSharedCore{};
  };
  if (threads <= cores)
    return skip(std::to_string(threads) + " device threads do not outnumber the " + std::to_string(cores) + " cores");
  if (const std::int64_t need = threads * profile_workload_bytes(model, micro_batch_size, stage_blocks);
      need > o.max_workload_bytes)
    return skip("the " + std::to_string(threads) + " devices' workloads need about " +
                format_bytes(static_cast<double>(need)) + ", more than the limit of " +
                format_bytes(static_cast<double>(o.max_workload_bytes)));
  std::vector<std::unique_ptr<ProfileWorkload>> works;
  std::vector<std::unique_ptr<OptimizerProbe>> steps;
  std::vector<Device> devices;
  for (int d = 0; d < threads; ++d) {
    if (d > 0) works.push_back(backend.workload(model, micro_batch_size, o.seed + static_cast<std::uint64_t>(d)));
    steps.push_back(backend.optimizer(stage_parameters, stage_parameters, o.seed + static_cast<std::uint64_t>(d)));
    devices.push_back(Device{d == 0 ? w : *works.back(), *steps.back(), stage_blocks});
  }

  // Alone: device 0's turn right after its own, on its thread; in turns: a lap's turns that
  // waited for theirs; taken in alternation.
  std::vector<PassTimes> alone, in_turns;
  std::vector<double> alone_step, turns_step;
  Ring ring(devices, cores);
  for (int i = 0; i < std::max(1, o.warmup); ++i) {  // every device's first turn allocates
    (void)ring.lap();
    (void)ring.alone();
  }
  ProfileOptions budget_options = o;
  budget_options.min_time_s = o.min_time_s > 0 ? std::max(o.min_time_s, kSharedCoreMinTime) : 0;
  for (const RunBudget budget(budget_options); budget.more(alone_step.size());) {
    const Turn mine = ring.alone();
    alone.insert(alone.end(), mine.passes.begin(), mine.passes.end());
    alone_step.push_back(mine.optimizer);
    for (const Turn& t : ring.lap()) {
      in_turns.insert(in_turns.end(), t.passes.begin(), t.passes.end());
      turns_step.push_back(t.optimizer);
    }
  }

  const PassProfile a = pass_profile(alone, {}, true), t = pass_profile(in_turns, {}, true);
  ProfileSharedCore s;
  s.micro_batch_size = micro_batch_size;
  s.threads = threads;
  s.cores = cores;
  s.forward = two_points(a.forward, t.forward);
  s.input_grad = two_points(a.input_grad, t.input_grad);
  s.weight_grad = two_points(a.weight_grad, t.weight_grad);
  s.optimizer = two_points(summarize_timings(alone_step), summarize_timings(turns_step));
  for (const InterferenceCurve* c : {&s.forward, &s.input_grad, &s.weight_grad, &s.optimizer})
    if (!(c->slowdown[1] >= kMinSlowdown && c->slowdown[1] <= kMaxSlowdown))
      return skip("a slowdown outside what a profile may hold: other load on the machine?");
  if (o.progress)
    *o.progress << "profile: " << threads << " device threads taking turns on " << cores << " cores (micro-batch size "
                << micro_batch_size << "), means: block F x" << fixed(expected_ratio(s.forward), 3) << " I x"
                << fixed(expected_ratio(s.input_grad), 3) << " W x" << fixed(expected_ratio(s.weight_grad), 3)
                << "; Adam x" << fixed(expected_ratio(s.optimizer), 3) << std::endl;
  return s;
}

}  // namespace pipesim
