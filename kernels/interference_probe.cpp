#include "kernels/interference_probe.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <thread>
#include <vector>

#include "kernels/profile_runs.hpp"

namespace pipesim {
namespace {

using profile_runs::at_least_one_ns;
using profile_runs::fixed;
using profile_runs::pass_profile;
using profile_runs::RunBudget;

// `count` neighbours looping stage passes of `blocks` blocks (as a pipeline's other devices
// run: a stage's weights and activations through the shared caches), each on a thread of
// its own, from construction (which returns once each has finished one pass: warm, in its
// steady state) to finish().
// pause() returns once none is mid-pass; resume() once every one has begun a pass again.
class Neighbours {
 public:
  Neighbours(ProfileBackend& backend, const ModelSpec& model, int b, std::uint64_t seed, int count, int blocks)
      : blocks_(blocks) {
    for (int slot = 1; slot <= count; ++slot) workloads_.push_back(backend.neighbour(model, b, seed, slot));
    try {
      for (const auto& w : workloads_) threads_.emplace_back([this, w = w.get()] { loop(*w); });
    } catch (...) {  // no thread for the next one: stop those that started
      stop();
      throw;
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return warm_ == count || error_; });
  }
  ~Neighbours() { stop(); }
  Neighbours(const Neighbours&) = delete;
  Neighbours& operator=(const Neighbours&) = delete;

  // Stops and joins them; rethrows what a neighbour threw (a GPU failure).
  void finish() {
    stop();
    if (error_) std::rethrow_exception(error_);
  }

  void pause() {
    std::unique_lock<std::mutex> lock(mu_);
    paused_ = true;
    cv_.wait(lock, [&] { return running_ == 0 || error_; });
    if (error_) std::rethrow_exception(error_);
    for (const auto& w : workloads_) w->paused(true);
  }
  void resume() {
    std::unique_lock<std::mutex> lock(mu_);
    for (const auto& w : workloads_) w->paused(false);
    paused_ = false;
    cv_.notify_all();
    cv_.wait(lock, [&] { return running_ == static_cast<int>(threads_.size()) || error_; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void loop(ProfileWorkload& w) {
    try {
      bool first = true;
      while (!stop_.load(std::memory_order_relaxed)) {
        {
          std::unique_lock<std::mutex> lock(mu_);
          cv_.wait(lock, [&] { return !paused_ || stop_.load(); });
          if (stop_.load()) break;
          ++running_;
          cv_.notify_all();
        }
        (void)w.stage_passes(blocks_);
        const std::lock_guard<std::mutex> lock(mu_);
        --running_;
        if (first) {
          first = false;
          ++warm_;
        }
        cv_.notify_all();
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      stop_ = true;
      cv_.notify_all();
    }
  }
  void stop() {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      cv_.notify_all();
    }
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }

  int blocks_ = 1;
  std::vector<std::unique_ptr<ProfileWorkload>> workloads_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  int warm_ = 0;
  int running_ = 0;  // neighbours mid-pass
  bool paused_ = false;
  std::exception_ptr error_;
};

void add_point(InterferenceCurve& c, const TimingStats& t) {
  c.times.push_back(t);
  c.slowdown.push_back(c.times.size() == 1 ? 1.0 : t.median / c.times.front().median);
}

void add_points(PassInterference& in, const PassProfile& p, bool input_grad) {
  add_point(in.forward, p.forward);
  if (input_grad) add_point(in.input_grad, p.input_grad);
  add_point(in.weight_grad, p.weight_grad);
}

}  // namespace

// The curves of workload `w` (size b): its passes timed beside 1..K neighbours, in turns
// with the same passes alone (alone, busy, alone, busy, ...) so that both sides see the same
// machine: a drift of the host between the two (a VM's steal, a clock change) is in both
// and cancels in the ratio, where timing the busy passes after the profile's own alone ones
// gave curves of 1.00 +- 0.13 on a quiet 2-core VM. Time alone (k = 0) is the turns' alone
// passes of every k. Empty (with a line on the log) when a slowdown falls outside what a
// profile may hold: a measurement the machine's other load broke.
ProfileInterference interference_curves(const ModelSpec& model, const ProfileOptions& o, ProfileBackend& backend,
                                        ProfileWorkload& w, const MicroBatchProfile& alone, int neighbours,
                                        int stage_blocks) {
  // One turn of each kind: the block's passes within a stage of `stage_blocks` (one run per
  // block), the embedding's and the head's passes.
  const std::function<std::vector<PassTimes>()> kinds[] = {
      [&] { return w.stage_passes(stage_blocks); }, [&] { return std::vector<PassTimes>{w.embedding_pass()}; },
      [&] { return std::vector<PassTimes>{w.head_pass()}; }};
  // After waiting for the neighbours to pause, the timed thread has slept (a vCPU halts,
  // its caches cool): one untimed pass first, or the turn alone came out slower than the busy
  // one (gpt-small's embedding x0.45 with a neighbour looping 150 ms stage passes).
  const std::function<void()> rewarm[] = {[&] { (void)w.block_pass(); }, [&] { (void)w.embedding_pass(); },
                                          [&] { (void)w.head_pass(); }};
  const auto add = [](std::vector<PassTimes>& to, const std::vector<PassTimes>& runs) {
    for (const PassTimes& t : runs) to.push_back(at_least_one_ns(t));
  };
  // runs[kind][k]: the pass's times with k neighbours busy.
  std::vector<std::vector<PassTimes>> runs[3];
  for (auto& r : runs) r.resize(static_cast<std::size_t>(neighbours) + 1);
  for (int k = 1; k <= neighbours; ++k) {
    Neighbours busy(backend, model, alone.size, o.seed, k, stage_blocks);
    for (std::size_t kind = 0; kind < 3; ++kind) {
      for (int i = 0; i < o.warmup; ++i) (void)kinds[kind]();
      std::vector<PassTimes>& busy_runs = runs[kind][static_cast<std::size_t>(k)];
      for (const RunBudget budget(o); budget.more(busy_runs.size());) {
        busy.pause();
        rewarm[kind]();
        add(runs[kind][0], kinds[kind]());
        busy.resume();
        add(busy_runs, kinds[kind]());
      }
    }
    busy.finish();
  }
  ProfileInterference in;
  in.micro_batch_size = alone.size;
  for (int k = 0; k <= neighbours; ++k) {
    const auto at = static_cast<std::size_t>(k);
    add_points(in.block, pass_profile(runs[0][at], {}, true), true);
    add_points(in.embedding, pass_profile(runs[1][at], {}, false), false);
    add_points(in.head, pass_profile(runs[2][at], {}, true), true);
    if (k > 0 && o.progress)
      *o.progress << "profile: " << k << " neighbour" << (k == 1 ? "" : "s") << " busy (micro-batch size "
                  << alone.size << "): block F x" << fixed(in.block.forward.slowdown.back(), 3) << " I x"
                  << fixed(in.block.input_grad.slowdown.back(), 3) << " W x"
                  << fixed(in.block.weight_grad.slowdown.back(), 3) << "; head F x"
                  << fixed(in.head.forward.slowdown.back(), 3) << std::endl;
  }
  for (const InterferenceCurve* c : {&in.block.forward, &in.block.input_grad, &in.block.weight_grad,
                                     &in.embedding.forward, &in.embedding.weight_grad, &in.head.forward,
                                     &in.head.input_grad, &in.head.weight_grad})
    for (double s : c->slowdown)
      if (!(s >= kMinSlowdown && s <= kMaxSlowdown)) {
        if (o.progress)
          *o.progress << "profile: an interference slowdown of " << fixed(s, 3) << " is outside "
                      << fixed(kMinSlowdown, 1) << ".." << fixed(kMaxSlowdown, 0)
                      << " (other load on the machine?): the profile gets no interference curve" << std::endl;
        return {};
      }
  return in;
}

}  // namespace pipesim
