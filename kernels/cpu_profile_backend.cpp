#include "kernels/cpu_profile_backend.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

#include "kernels/cpu_block.hpp"
#include "kernels/embedding.hpp"
#include "kernels/lm_head.hpp"
#include "kernels/optimizer.hpp"
#include "core/error.hpp"
#include "core/thread_cpu_clock.hpp"

namespace pipesim {
namespace {

using Clock = std::chrono::steady_clock;
using T = float;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Times one call on this thread.
template <class F>
double timed(CpuClock clock, F&& f) {
  if (clock == CpuClock::ThreadCpu) {
    const double start = thread_cpu_seconds();
    f();
    return thread_cpu_seconds() - start;
  }
  const Clock::time_point start = Clock::now();
  f();
  return seconds_between(start, Clock::now());
}

template <class M>
std::int64_t bytes_of(const M& m) {
  return static_cast<std::int64_t>(m.size()) * static_cast<std::int64_t>(sizeof(typename M::Scalar));
}

std::int64_t head_cache_bytes(const LmHeadCache<T>& c) {
  return bytes_of(c.x) + bytes_of(c.mean) + bytes_of(c.rstd) + bytes_of(c.xn) + bytes_of(c.probs) +
         static_cast<std::int64_t>(c.targets.size() * sizeof(int)) + bytes_of(c.d_gain) + bytes_of(c.d_bias);
}

class CpuWorkload final : public ProfileWorkload {
 public:
  CpuWorkload(const ModelSpec& m, int b, std::uint64_t seed, CpuClock clock)
      : clock_(clock), vocab_(m.vocab), tied_(m.tied_embeddings) {
    config_.batch = b;
    config_.seq = m.seq_len;
    config_.hidden = m.hidden;
    config_.heads = m.heads;
    config_.ffn = m.ffn_hidden;
    check_block_config(config_);
    std::uint64_t state = seed;
    params_ = init_block_params<T>(config_, splitmix64(state));
    grads_ = BlockParams<T>::zeros(config_);
    const Eigen::Index n = config_.tokens(), h = config_.hidden;
    x_ = profile_random_matrix(n, h, state);
    dy_ = profile_random_matrix(n, h, state);
    embedding_ = init_embedding<T>(config_, vocab_, splitmix64(state));
    embedding_grads_ = Embedding<T>{KMat<T>::Zero(vocab_, h), KMat<T>::Zero(config_.seq, h)};
    ids_ = profile_random_ids(config_.tokens(), vocab_, state);
    head_ = init_lm_head<T>(config_, vocab_, tied_, splitmix64(state));
    head_grads_ = LmHead<T>{KRow<T>::Zero(h), KRow<T>::Zero(h), KMat<T>()};
    head_weight_grad_ = KMat<T>::Zero(vocab_, h);
    targets_ = profile_random_ids(config_.tokens(), vocab_, state);
  }

  PassTimes block_pass() override { return stage_passes(1).front(); }

  std::vector<PassTimes> stage_passes(int blocks) override {
    PIPESIM_ASSERT(blocks >= 1);
    while (static_cast<int>(stage_.size()) < blocks - 1) {  // blocks 1.. of the stage; block 0 is params_
      stage_.emplace_back();
      stage_.back().params = init_block_params<T>(config_, splitmix64(stage_seed_));
      stage_.back().grads = BlockParams<T>::zeros(config_);
    }
    const auto n = static_cast<std::size_t>(blocks);
    const auto params = [&](std::size_t i) -> const BlockParams<T>& { return i == 0 ? params_ : stage_[i - 1].params; };
    const auto grads = [&](std::size_t i) -> BlockParams<T>& { return i == 0 ? grads_ : stage_[i - 1].grads; };
    // The activations' caches are made by F and freed after W, as the executor's are for
    // each micro-batch (not kept warm from one pass to the next).
    std::vector<BlockCache<T>> cache(n);
    std::vector<PassTimes> t(n);
    KMat<T> y = x_;
    for (std::size_t i = 0; i < n; ++i) t[i].forward = timed(clock_, [&] { y = block_forward(params(i), y, cache[i]); });
    block_bytes_.activation = cache[0].bytes();
    message_bytes_ = bytes_of(y);
    KMat<T> d = dy_;
    for (std::size_t i = n; i-- > 0;) t[i].input_grad = timed(clock_, [&] { d = block_backward_input(params(i), d, cache[i]); });
    block_bytes_.held_after_input_grad = cache[0].bytes();
    for (std::size_t i = n; i-- > 0;) t[i].weight_grad = timed(clock_, [&] { block_backward_weight(cache[i], grads(i)); });
    return t;
  }

  PassTimes embedding_pass() override {
    PassTimes t;
    KMat<T> x;
    t.forward = timed(clock_, [&] { x = embedding_forward(embedding_, config_, ids_); });
    // W needs the token ids until it runs; the embedding keeps nothing else.
    embedding_bytes_.activation = embedding_bytes_.held_after_input_grad =
        static_cast<std::int64_t>(ids_.size() * sizeof(int));
    t.weight_grad = timed(clock_, [&] { embedding_backward_weight(config_, ids_, dy_, embedding_grads_); });
    return t;
  }

  PassTimes head_pass() override {
    PassTimes t;
    const KMat<T>& weight = tied_ ? embedding_.tokens : head_.weight;
    T loss = 0;
    KMat<T> dx;
    t.forward = timed(clock_, [&] { loss = lm_head_forward(head_, weight, x_, targets_, head_cache_); });
    loss_ = loss;
    head_bytes_.activation = head_cache_bytes(head_cache_);
    t.input_grad = timed(clock_, [&] { dx = lm_head_backward_input(head_, weight, head_cache_); });
    head_bytes_.held_after_input_grad = head_cache_bytes(head_cache_);
    t.weight_grad = timed(clock_, [&] { lm_head_backward_weight(head_cache_, head_grads_, head_weight_grad_); });
    return t;
  }

  WorkloadBytes block_bytes() const override { return block_bytes_; }
  WorkloadBytes embedding_bytes() const override { return embedding_bytes_; }
  WorkloadBytes head_bytes() const override { return head_bytes_; }
  std::int64_t message_bytes() const override { return message_bytes_; }

  ProfileParameters parameters() const override {
    ProfileParameters p;
    p.block = block_parameter_count(config_);
    p.embedding = embedding_.tokens.size() + embedding_.positions.size();
    p.head_norm = head_.gain.size() + head_.bias.size();
    p.head_weight = static_cast<std::int64_t>(vocab_) * config_.hidden;  // own matrix, or a tied copy
    return p;
  }

 private:
  CpuClock clock_;
  BlockConfig config_;
  int vocab_ = 0;
  bool tied_ = true;
  BlockParams<T> params_, grads_;
  struct StageBlock {
    BlockParams<T> params, grads;
  };
  std::vector<StageBlock> stage_;  // stage_passes' blocks after the first, made when first asked for
  std::uint64_t stage_seed_ = 0x57a6eb10c5ull;  // splitmix64 state of their weights
  KMat<T> x_, dy_;
  Embedding<T> embedding_, embedding_grads_;
  std::vector<int> ids_, targets_;
  LmHead<T> head_, head_grads_;
  KMat<T> head_weight_grad_;
  LmHeadCache<T> head_cache_;
  T loss_ = 0;
  WorkloadBytes block_bytes_, embedding_bytes_, head_bytes_;
  std::int64_t message_bytes_ = 0;
};

// An optimizer step is memory-bound, and a group's time depends on what the caches still
// hold of it when its turn comes, which the stage around it decides: a stage's OptStep
// steps its tensors one after another (executor/cpu_backend.cpp), so a small stage's
// moments stay in the caches from one step to the next and a large one's stream from memory.
// The probe therefore holds copies of the group adding up to the stage's parameters
// (cpu_optimizer_copies), steps them all in turn, and reports the time per group. Timed on one group
// alone, a stage of 8 gpt-small blocks (100 MB of state) took 11 % longer per block than the
// probe said, and gpt-tiny's (3.2 MB) 10-30 % less than a probe that forced the group out
// of the caches. Like the executor's OptStep, each group's gradient is zeroed right after its
// step, while still in the caches.
class CpuOptimizer final : public OptimizerProbe {
 public:
  CpuOptimizer(std::int64_t count, std::int64_t stage_count, std::uint64_t seed, CpuClock clock) : clock_(clock) {
    std::uint64_t state = seed;
    groups_.resize(static_cast<std::size_t>(cpu_optimizer_copies(count, stage_count)));
    for (Group& g : groups_) {
      g.params = profile_random_matrix(count, 1, state);
      g.grads.setZero(count);
    }
  }
  double step(OptimizerKind kind) override {
    const double seconds = timed(clock_, [&] {
      for (Group& g : groups_) {
        if (kind == OptimizerKind::Sgd)
          sgd_step(g.params, g.grads, 1e-3);
        else
          adam_step(g.params, g.grads, g.adam, AdamConfig{});
        g.grads.setZero();
      }
    });
    return seconds / static_cast<double>(groups_.size());
  }

 private:
  struct Group {
    KVec<T> params, grads;
    AdamState<T> adam;
  };
  CpuClock clock_;
  std::vector<Group> groups_;
};

// A gradient copied out and the sum copied in, as the executor's CpuBackend does it
// (export_gradients: into a new vector; import_gradients: into the gradient's own memory).
// In a pipeline a member copies once an iteration, and the memory its copy lands in (the
// allocator keeps freed memory, tools/allocator.cpp) and the sum it copies back (another
// member made it) were last touched about an iteration of other work before, beyond the
// caches. So the copies go round a ring of at least kHeld vectors and kColdBytes (but no
// more than kMaxRingBytes, and at least 2 vectors: a big model's stage is beyond the caches
// by itself): a copy out lands in the ring's oldest vector, a copy in reads it. The ring is
// filled before the first copy is timed: a profile's few repeats (gpt-small: 7) would
// otherwise time only first touches of fresh pages (47-62 ms for gpt-small's 25 MB stage, against 3.5-3.9 ms
// for a member's copies in the executor).
class CpuGradientCopies final : public GradientCopyProbe {
 public:
  static constexpr std::size_t kHeld = 8;
  static constexpr std::int64_t kColdBytes = std::int64_t{64} << 20;
  static constexpr std::int64_t kMaxRingBytes = std::int64_t{256} << 20;

  CpuGradientCopies(std::int64_t count, std::uint64_t seed, CpuClock clock) : clock_(clock) {
    std::uint64_t state = seed;
    grads_ = profile_random_matrix(count, 1, state);
    const std::int64_t bytes = count * static_cast<std::int64_t>(sizeof(T));
    const std::int64_t cold = std::max<std::int64_t>(kHeld, (kColdBytes + bytes - 1) / bytes);
    held_.resize(static_cast<std::size_t>(std::clamp<std::int64_t>(cold, 2, std::max<std::int64_t>(2, kMaxRingBytes / bytes))));
    for (KVec<T>& h : held_) h = grads_;  // every vector of the ring touched once
  }
  double copy_out() override {
    KVec<T>& slot = held_[next_++ % held_.size()];
    slot = KVec<T>();  // the oldest copy is done with; the new one gets memory of its own
    const double s = timed(clock_, [&] { slot = grads_; });
    sink_ = sink_ + slot[0];  // the copy is used
    return s;
  }
  double copy_in() override {
    const KVec<T>& sum = held_[cold()];  // made an iteration ago (by another thread, in the executor)
    return timed(clock_, [&] { grads_ = sum; });
  }
  // As CpuBackend::add_gradients: the newest copy out (the last member's own, just made) plus
  // an older one (another member's, made a while before).
  double sum() override {
    KVec<T>& into = held_[(next_ + held_.size() - 1) % held_.size()];
    const KVec<T>& other = held_[cold()];
    const double s = timed(clock_, [&] { into += other; });
    sink_ = sink_ + into[0];
    return s;
  }

 private:
  // A vector of the ring other than the newest, each call the next: each copy in or sum reads
  // memory not touched since the ring last came round, as the executor's do. (Read from one
  // slot every repeat, the copies in timed a copy from the caches: gpt-tiny's stage 21 us on
  // the 2-vCPU VM against 30-65 us in its Chimera runs, 55 us from memory.)
  std::size_t cold() {
    const std::size_t older = held_.size() - 1;  // the slots before the newest
    return (next_ + read_++ % older) % held_.size();
  }

  CpuClock clock_;
  KVec<T> grads_;
  std::vector<KVec<T>> held_;  // copies out still held by their collective
  std::size_t next_ = 0;
  std::size_t read_ = 0;  // cold()'s count
  volatile float sink_ = 0;
};

// A message from one device thread to another, as the executor hands it on (a copy into
// the channel, a condition variable, a copy out), to a receiver that has waited as long as a
// device waits for its input in a pipeline. The sender is busy before and after, as a device
// thread is (it computed the message and goes on to its next op), so the receiver's core has
// been idle kIdleBefore and the receiver wakes there. What that costs is the host's: an idle
// core polls for a while (Linux cpuidle-haltpoll in a guest: 200 us) and then halts, and
// waking a halted core takes an interrupt (through the hypervisor on a VM). Measured on a
// 2-vCPU KVM guest: 10 us within the poll window, 40-50 us after it. A sender that blocked
// instead, as this probe once did, let the receiver take the sender's core in 3-10 us, which
// no pipeline does: the executor's device threads waited 60 us (median) for a message there.
// The sender's own parts (sender_parts) are timed too: its copy, into a fresh buffer as the
// executor's copy_for_send, and the enqueue and the call that wakes the sleeping receiver
// (16-17 us on that guest: the executor's device threads began their next op 20-35 us
// later after a send to a sleeping thread than after an op that sent nothing).
class ThreadHandoff final : public LinkProbe {
 public:
  static constexpr std::chrono::microseconds kIdleBefore{1000};

  explicit ThreadHandoff(std::int64_t bytes)
      : size_(static_cast<std::size_t>(bytes)), src_(size_, 1), shared_(size_, 0), dst_(size_, 0) {
    receiver_ = std::thread([this] { receive_loop(); });
  }
  ~ThreadHandoff() override {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      state_ = State::Quit;
    }
    cv_.notify_all();
    receiver_.join();
  }
  ThreadHandoff(const ThreadHandoff&) = delete;
  ThreadHandoff& operator=(const ThreadHandoff&) = delete;

  double send() override {
    for (const Clock::time_point until = Clock::now() + kIdleBefore; Clock::now() < until;) {
    }
    const Clock::time_point start = Clock::now();
    std::vector<char> message(src_);  // a fresh copy, as the executor's copy_for_send makes one
    const Clock::time_point copied = Clock::now();
    {
      const std::lock_guard<std::mutex> lock(mu_);
      shared_ = std::move(message);
      state_ = State::Sent;
    }
    cv_.notify_one();
    const Clock::time_point woken = Clock::now();
    while (!received_.load(std::memory_order_acquire)) std::this_thread::yield();  // busy, as a sender is
    const std::lock_guard<std::mutex> lock(mu_);
    received_.store(false, std::memory_order_relaxed);
    state_ = State::Idle;
    ++src_[0];  // a new message each time
    parts_ = {seconds_between(start, copied), seconds_between(copied, woken)};
    return seconds_between(start, received_at_);
  }
  SenderParts sender_parts() const override { return parts_; }

 private:
  enum class State { Idle, Sent, Received, Quit };
  void receive_loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return state_ == State::Sent || state_ == State::Quit; });
      if (state_ == State::Quit) return;
      lock.unlock();
      std::memcpy(dst_.data(), shared_.data(), size_);
      const Clock::time_point done = Clock::now();
      lock.lock();
      received_at_ = done;
      state_ = State::Received;
      received_.store(true, std::memory_order_release);
    }
  }

  std::size_t size_;
  std::vector<char> src_, shared_, dst_;
  std::mutex mu_;
  std::condition_variable cv_;
  State state_ = State::Idle;
  std::atomic<bool> received_{false};
  Clock::time_point received_at_;
  SenderParts parts_;
  std::thread receiver_;
};

}  // namespace

CpuProfileBackend::CpuProfileBackend(CpuClock clock) : clock_(clock) { Eigen::setNbThreads(1); }

KMat<float> profile_random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t& state) {
  KMat<float> m(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = static_cast<float>(uniform_pm1(state));
  return m;
}

std::vector<int> profile_random_ids(int count, int vocab, std::uint64_t& state) {
  std::vector<int> ids(static_cast<std::size_t>(count));
  for (int& id : ids) id = static_cast<int>(splitmix64(state) % static_cast<std::uint64_t>(vocab));
  return ids;
}

void check_gpt_model(const ModelSpec& m, const std::string& who) {
  const bool gpt = (m.family.empty() || m.family == "gpt") && m.mlp == MlpKind::Gelu && !m.rms_norm &&
                   m.linear_bias && m.learned_positions && (m.kv_heads == 0 || m.kv_heads == m.heads) &&
                   (m.head_dim == 0 || m.head_dim * m.heads == m.hidden);
  if (!gpt)
    throw InputError(who + ": model " + quote(m.name) + " (family '" + m.family +
                     "') is not a GPT block; the kernels implement LayerNorm, a GELU MLP and multi-head attention "
                     "with biases and learned positions only");
}

void CpuProfileBackend::describe(Profile& p) const {
  p.machine.cpu = cpu_model_name();
  p.machine.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) p.machine.hostname = host;
  p.machine.device = "cpu";
  p.machine.device_count = 1;
  p.libraries.compiler = compiler_version();
  p.libraries.eigen = eigen_version();
  p.libraries.cuda.clear();
  p.settings.threads = 1;
  p.settings.clock = clock_ == CpuClock::Wall ? "wall" : "thread-cpu";
}

std::unique_ptr<ProfileWorkload> CpuProfileBackend::workload(const ModelSpec& model, int b, std::uint64_t seed) {
  check_gpt_model(model, "profile");
  return std::make_unique<CpuWorkload>(model, b, seed, clock_);
}

std::int64_t cpu_optimizer_copies(std::int64_t count, std::int64_t stage_count) {
  PIPESIM_ASSERT(count > 0 && stage_count > 0);
  const std::int64_t per_parameter = 4 * static_cast<std::int64_t>(sizeof(T));  // weight, gradient, 2 moments
  const std::int64_t most = std::max<std::int64_t>(1, kCpuOptimizerMaxBytes / per_parameter / count);
  return std::clamp<std::int64_t>(stage_count / count + (stage_count % count != 0 ? 1 : 0), 1, most);
}

std::unique_ptr<OptimizerProbe> CpuProfileBackend::optimizer(std::int64_t count, std::int64_t stage_count,
                                                             std::uint64_t seed) {
  PIPESIM_ASSERT(count > 0 && stage_count > 0);
  return std::make_unique<CpuOptimizer>(count, stage_count, seed, clock_);
}

std::unique_ptr<GradientCopyProbe> CpuProfileBackend::gradient_copies(std::int64_t count, std::uint64_t seed) {
  PIPESIM_ASSERT(count > 0);
  return std::make_unique<CpuGradientCopies>(count, seed, clock_);
}

std::unique_ptr<LinkProbe> CpuProfileBackend::link(std::int64_t bytes) {
  PIPESIM_ASSERT(bytes > 0);
  return std::make_unique<ThreadHandoff>(bytes);
}

int CpuProfileBackend::max_neighbours() const {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) - 1;
}

std::unique_ptr<ProfileWorkload> CpuProfileBackend::neighbour(const ModelSpec& model, int b, std::uint64_t seed,
                                                              int slot) {
  PIPESIM_ASSERT(slot >= 1 && slot <= max_neighbours());
  check_gpt_model(model, "profile");
  return std::make_unique<CpuWorkload>(model, b, seed + static_cast<std::uint64_t>(slot), clock_);
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(colon + 1);
    const std::size_t first = name.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    name = name.substr(first);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    if (!name.empty()) return name;
  }
  return "unknown";
}

std::string compiler_version() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "GCC " __VERSION__;
#else
  return "unknown";
#endif
}

std::string eigen_version() {
  return std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION);
}

}  // namespace pipesim
