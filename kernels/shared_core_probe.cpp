#include "kernels/shared_core_probe.hpp"

#include <pthread.h>

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <ostream>
#include <thread>
#include <vector>

#include "core/cpu_affinity.hpp"
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

// Two threads on one core, each running only when the other waits: the timed one asks the
// other for a turn and gets the core back when it is over.
class OtherDevice {
 public:
  OtherDevice(const Device& other, int core) : thread_([this, other, core] { loop(other, core); }) {}
  ~OtherDevice() {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      cv_.notify_all();
    }
    thread_.join();
  }
  OtherDevice(const OtherDevice&) = delete;
  OtherDevice& operator=(const OtherDevice&) = delete;

  // Runs one turn of the other device and waits for it; false when its thread could not be
  // pinned to the core. Rethrows what the other device threw.
  bool turn() {
    std::unique_lock<std::mutex> lock(mu_);
    others_turn_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !others_turn_; });
    if (error_) std::rethrow_exception(error_);
    return pinned_;
  }

 private:
  void loop(const Device& other, int core) {
    const bool pinned = pin_to_core(pthread_self(), core);
    std::unique_lock<std::mutex> lock(mu_);
    pinned_ = pinned;
    for (;;) {
      cv_.wait(lock, [&] { return others_turn_ || stop_; });
      if (stop_) return;
      if (pinned_ && !error_) {
        lock.unlock();
        try {
          (void)other.run();
        } catch (...) {
          const std::lock_guard<std::mutex> again(mu_);
          error_ = std::current_exception();
        }
        lock.lock();
      }
      others_turn_ = false;
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool others_turn_ = false;
  bool stop_ = false;
  bool pinned_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: the members above exist before it runs
};

InterferenceCurve two_points(const TimingStats& alone, const TimingStats& turns) {
  return {{1.0, turns.median / alone.median}, {alone, turns}};
}

}  // namespace

ProfileSharedCore shared_core_turns(const ModelSpec& model, const ProfileOptions& o, ProfileBackend& backend,
                                    ProfileWorkload& w, int micro_batch_size, int stage_blocks,
                                    std::int64_t stage_parameters) {
  const std::vector<int> cores = usable_core_ids();
  const auto skip = [&](const char* why) {
    if (o.progress) *o.progress << "profile: no shared-core turns (" << why << ")" << std::endl;
    return ProfileSharedCore{};
  };
  if (cores.empty()) return skip("this system does not say which cores the process may use");
  const std::unique_ptr<ProfileWorkload> other_work = backend.workload(model, micro_batch_size, o.seed + 1);
  const std::unique_ptr<OptimizerProbe> mine_step = backend.optimizer(stage_parameters, stage_parameters, o.seed);
  const std::unique_ptr<OptimizerProbe> other_step = backend.optimizer(stage_parameters, stage_parameters, o.seed + 1);
  const Device mine{w, *mine_step, stage_blocks};
  const Device other{*other_work, *other_step, stage_blocks};

  // On a thread of its own, so that this one keeps its affinity (the executor's threads
  // inherit it). Turns: other, mine (after the other's: in turns), mine (after its own:
  // alone), so both sides see the same machine and a drift of the host cancels in the ratio.
  std::vector<PassTimes> alone, in_turns;
  std::vector<double> alone_step, turns_step;
  bool pinned = true;
  std::exception_ptr error;
  std::thread timed([&] {
    try {
      pinned = pin_to_core(pthread_self(), cores.front());
      if (!pinned) return;
      OtherDevice others(other, cores.front());
      for (int i = 0; i < o.warmup; ++i) {
        if (!(pinned = others.turn())) return;
        (void)mine.run();
      }
      for (const RunBudget budget(o); budget.more(alone_step.size());) {
        if (!(pinned = others.turn())) return;
        const Turn after_other = mine.run();
        const Turn after_mine = mine.run();
        in_turns.insert(in_turns.end(), after_other.passes.begin(), after_other.passes.end());
        turns_step.push_back(after_other.optimizer);
        alone.insert(alone.end(), after_mine.passes.begin(), after_mine.passes.end());
        alone_step.push_back(after_mine.optimizer);
      }
    } catch (...) {
      error = std::current_exception();
    }
  });
  timed.join();
  if (error) std::rethrow_exception(error);
  if (!pinned) return skip("a thread could not be pinned to a core");

  const PassProfile a = pass_profile(alone, {}, true), t = pass_profile(in_turns, {}, true);
  ProfileSharedCore s;
  s.micro_batch_size = micro_batch_size;
  s.forward = two_points(a.forward, t.forward);
  s.input_grad = two_points(a.input_grad, t.input_grad);
  s.weight_grad = two_points(a.weight_grad, t.weight_grad);
  s.optimizer = two_points(summarize_timings(alone_step), summarize_timings(turns_step));
  for (const InterferenceCurve* c : {&s.forward, &s.input_grad, &s.weight_grad, &s.optimizer})
    if (!(c->slowdown[1] >= kMinSlowdown && c->slowdown[1] <= kMaxSlowdown))
      return skip("a slowdown outside what a profile may hold: other load on the machine?");
  if (o.progress)
    *o.progress << "profile: in turns with another device on one core (micro-batch size " << micro_batch_size
                << "): block F x" << fixed(s.forward.slowdown[1], 3) << " I x" << fixed(s.input_grad.slowdown[1], 3)
                << " W x" << fixed(s.weight_grad.slowdown[1], 3) << "; Adam x" << fixed(s.optimizer.slowdown[1], 3)
                << std::endl;
  return s;
}

}  // namespace pipesim
