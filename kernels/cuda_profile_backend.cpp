#include "kernels/cuda_profile_backend.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include <cublas_v2.h>
#include <unistd.h>

#include "kernels/cpu_profile_backend.hpp"
#include "kernels/cuda/cuda_block.hpp"
#include "kernels/cuda/cuda_embedding.hpp"
#include "kernels/cuda/cuda_error.hpp"
#include "kernels/cuda/cuda_lm_head.hpp"
#include "kernels/cuda/cuda_params.hpp"
#include "kernels/cuda/event_timer.hpp"
#include "kernels/cuda/sm_partition.hpp"
#include "kernels/cuda/stage_graphs.hpp"
#include "kernels/cuda/transfer.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

constexpr GemmPrecision kPrecision = GemmPrecision::Bf16;

// A GPU failure during profiling as the one-line error the CLI prints (CudaError is not an
// InputError: pipesim's main would not catch it).
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const CudaError& e) {
    throw InputError(std::string("profile --backend cuda: ") + e.what());
  }
}

// How every probe gets its context and times its work.
struct ProbeSetup {
  bool events = false;                    // CUDA events; else host wall clock around call + synchronize
  std::shared_ptr<SmPartition> partition; // run on its group `group`; null: the whole GPU
  int group = 0;                          // 0: the timed device; 1..: the curve's neighbours
  cudaStream_t stream() const { return partition ? partition->stream(group) : nullptr; }
};

// Seconds of `f`'s work on the context's stream: GPU time between two events, or the host's
// wall clock from an idle stream to the end of the synchronize after `f` (what the executor
// measures around each op: launches, kernels and the synchronize).
template <class F>
double timed(const CudaContext& ctx, const ProbeSetup& setup, F&& f) {
  if (!setup.events) {
    ctx.synchronize("profile timing");
    const auto start = std::chrono::steady_clock::now();
    f();
    ctx.synchronize("profile timing");
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  CudaEventTimer t(ctx);
  t.start();
  f();
  return t.stop_ms() * 1e-3;
}

class CudaWorkload final : public ProfileWorkload {
 public:
  CudaWorkload(const ModelSpec& m, int b, std::uint64_t seed, ProbeSetup setup)
      : setup_(std::move(setup)), ctx_(0, setup_.stream(), setup_.partition), vocab_(m.vocab) {
    config_.batch = b;
    config_.seq = m.seq_len;
    config_.hidden = m.hidden;
    config_.heads = m.heads;
    config_.ffn = m.ffn_hidden;
    check_block_config(config_);
    std::uint64_t state = seed;
    stage_.emplace(ctx_, std::vector<BlockParams<float>>{init_block_params<float>(config_, splitmix64(state))}, kPrecision);
    graphs_.emplace(ctx_, /*enabled=*/true);
    const Eigen::Index n = config_.tokens(), h = config_.hidden;
    x_ = to_device(ctx_, profile_random_matrix(n, h, state));
    dy_ = to_device(ctx_, profile_random_matrix(n, h, state));
    embedding_.emplace(ctx_, config_, init_embedding<float>(config_, vocab_, splitmix64(state)));
    ids_ = profile_random_ids(config_.tokens(), vocab_, state);
    head_.emplace(ctx_, config_, init_lm_head<float>(config_, vocab_, /*tied=*/false, splitmix64(state)), kPrecision);
    targets_ = profile_random_ids(config_.tokens(), vocab_, state);
    ctx_.synchronize("profile workload set-up");
  }

  PassTimes block_pass() override { return guarded([&] { return block_pass_(); }); }
  PassTimes embedding_pass() override { return guarded([&] { return embedding_pass_(); }); }
  PassTimes head_pass() override { return guarded([&] { return head_pass_(); }); }

 private:
  PassTimes block_pass_() {
    PassTimes t;
    DeviceMatrix y, dx;
    // Through CudaStageGraphs as the executor's block ops go (--cuda-graphs on, its default):
    // after the warm-up each pass is one graph launch (kernels/cuda/stage_graphs.hpp).
    t.forward = timed(ctx_, setup_, [&] { y = graphs_->forward(*stage_, x_, cache_, 0); });
    block_bytes_.activation = cache_.front().bytes();
    message_bytes_ = y.buf.bytes();
    t.input_grad = timed(ctx_, setup_, [&] { dx = graphs_->backward_input(*stage_, dy_, cache_, 0); });
    block_bytes_.held_after_input_grad = cache_.front().bytes();
    t.weight_grad = timed(ctx_, setup_, [&] { graphs_->backward_weight(*stage_, cache_, 0); });
    return t;
  }

  PassTimes embedding_pass_() {
    PassTimes t;
    DeviceMatrix x;
    t.forward = timed(ctx_, setup_, [&] { x = embedding_->forward(ids_); });
    // As the CPU profile: W needs the token ids until it runs; nothing else is kept.
    embedding_bytes_.activation = embedding_bytes_.held_after_input_grad =
        static_cast<std::int64_t>(ids_.size() * sizeof(int));
    t.weight_grad = timed(ctx_, setup_, [&] { embedding_->backward_weight(ids_, dy_); });
    return t;
  }

  PassTimes head_pass_() {
    PassTimes t;
    DeviceMatrix dx;
    t.forward = timed(ctx_, setup_, [&] { loss_ = head_->forward(x_, targets_, head_cache_); });
    head_bytes_.activation = head_cache_.bytes();
    t.input_grad = timed(ctx_, setup_, [&] { dx = head_->backward_input(head_cache_); });
    head_bytes_.held_after_input_grad = head_cache_.bytes();
    t.weight_grad = timed(ctx_, setup_, [&] { head_->backward_weight(head_cache_); });
    return t;
  }

 public:
  WorkloadBytes block_bytes() const override { return block_bytes_; }
  WorkloadBytes embedding_bytes() const override { return embedding_bytes_; }
  WorkloadBytes head_bytes() const override { return head_bytes_; }
  std::int64_t message_bytes() const override { return message_bytes_; }

  ProfileParameters parameters() const override {
    ProfileParameters p;
    p.block = block_parameter_count(config_);
    p.embedding = static_cast<std::int64_t>(vocab_ + config_.seq) * config_.hidden;
    p.head_norm = 2 * static_cast<std::int64_t>(config_.hidden);
    p.head_weight = static_cast<std::int64_t>(vocab_) * config_.hidden;
    return p;
  }

 private:
  ProbeSetup setup_;
  CudaContext ctx_;  // before the buffers: every buffer below is freed on its stream
  BlockConfig config_;
  int vocab_ = 0;
  std::optional<CudaStage> stage_;          // one block
  std::optional<CudaStageGraphs> graphs_;   // before the cache: its buffers live in the arenas
  CudaStageCache cache_;
  DeviceMatrix x_, dy_;
  std::optional<CudaEmbedding> embedding_;
  std::vector<int> ids_, targets_;
  std::optional<CudaLmHead> head_;
  CudaLmHeadCache head_cache_;
  float loss_ = 0;
  WorkloadBytes block_bytes_, embedding_bytes_, head_bytes_;
  std::int64_t message_bytes_ = 0;
};

class CudaOptimizer final : public OptimizerProbe {
 public:
  CudaOptimizer(std::int64_t count, std::uint64_t seed, ProbeSetup setup)
      : setup_(std::move(setup)), ctx_(0, setup_.stream(), setup_.partition) {
    std::uint64_t state = seed;
    KVec<float> values = profile_random_matrix(count, 1, state);
    params_.emplace(ctx_, values, kPrecision == GemmPrecision::Bf16, "optimizer probe");
    // Small gradients keep many steps of either optimizer well away from overflow.
    params_->set_grads(profile_random_matrix(count, 1, state) * 1e-3f);
  }
  double step(OptimizerKind kind) override {
    return guarded([&] { return step_(kind); });
  }

 private:
  double step_(OptimizerKind kind) {
    if (kind == OptimizerKind::Sgd) return timed(ctx_, setup_, [&] { params_->sgd_step(1e-3); });
    return timed(ctx_, setup_, [&] { params_->adam_step(AdamConfig{}); });
  }

 private:
  ProbeSetup setup_;
  CudaContext ctx_;
  std::optional<CudaParams> params_;
};

// A message of `bytes` from GPU 0 to GPU 0 (another buffer) or to GPU 1 (peer).
class DeviceLink final : public LinkProbe {
 public:
  DeviceLink(std::int64_t bytes, bool peer, ProbeSetup setup)
      : setup_(std::move(setup)), ctx_(0, setup_.stream(), setup_.partition), peer_(peer) {
    const std::string op = "link probe";
    src_ = DeviceBuffer<char>(bytes, ctx_.stream(), op);
    cuda_check(cudaMemsetAsync(src_.data(), 1, static_cast<std::size_t>(bytes), ctx_.stream()), "cudaMemsetAsync", op);
    if (peer_) {
      // Allocated on GPU 1 with its own stream; peer access where the GPUs allow it.
      receiver_.emplace(1);
      int can = 0;
      cuda_check(cudaDeviceCanAccessPeer(&can, 0, 1), "cudaDeviceCanAccessPeer", op);
      if (can) {
        cuda_check(cudaSetDevice(0), "cudaSetDevice", op);
        const cudaError_t e = cudaDeviceEnablePeerAccess(1, 0);
        if (e != cudaErrorPeerAccessAlreadyEnabled) cuda_check(e, "cudaDeviceEnablePeerAccess", op);
        (void)cudaGetLastError();
      }
      dst_ = DeviceBuffer<char>(bytes, receiver_->stream(), op);
      receiver_->synchronize(op);
    } else {
      dst_ = DeviceBuffer<char>(bytes, ctx_.stream(), op);
    }
    cuda_check(cudaSetDevice(0), "cudaSetDevice", op);
    ctx_.synchronize(op);
  }
  ~DeviceLink() override {
    dst_ = DeviceBuffer<char>{};  // on its own stream, before that stream goes
  }
  DeviceLink(const DeviceLink&) = delete;
  DeviceLink& operator=(const DeviceLink&) = delete;

  double send() override {
    return guarded([&] { return send_(); });
  }

 private:
  double send_() {
    const auto bytes = static_cast<std::size_t>(src_.bytes());
    return timed(ctx_, setup_, [&] {
      if (peer_)
        cuda_check(cudaMemcpyPeerAsync(dst_.data(), 1, src_.data(), 0, bytes, ctx_.stream()), "cudaMemcpyPeerAsync",
                   "link probe");
      else
        cuda_check(cudaMemcpyAsync(dst_.data(), src_.data(), bytes, cudaMemcpyDeviceToDevice, ctx_.stream()),
                   "cudaMemcpyAsync", "link probe");
    });
  }

 private:
  ProbeSetup setup_;
  CudaContext ctx_;
  std::optional<CudaContext> receiver_;  // GPU 1 for a peer link
  bool peer_;
  DeviceBuffer<char> src_, dst_;
};

class CudaProfileBackend final : public ProfileBackend {
 public:
  CudaProfileBackend(int gpus, bool events, int virtual_devices) : gpus_(gpus) {
    setup_.events = events;
    guarded([&] {
      keep_pool_memory(0);  // each timed piece ends with a synchronize
      if (virtual_devices > 1) setup_.partition = std::make_shared<SmPartition>(0, virtual_devices);
    });
  }
  std::string name() const override { return "cuda"; }
  std::string link_kind() const override { return gpus_ >= 2 ? "peer" : "device-to-device"; }

  void describe(Profile& p) const override {
    guarded([&] { describe_(p); });
  }

 private:
  void describe_(Profile& p) const {
    cudaDeviceProp prop{};
    cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties", "profile describe");
    p.machine.cpu = cpu_model_name();
    p.machine.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) p.machine.hostname = host;
    p.machine.device = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
    if (const auto& part = setup_.partition) {
      p.machine.device += ", one of " + std::to_string(part->groups()) + " virtual devices: " +
                          std::to_string(part->sms_per_group()) + " of " + std::to_string(part->total_sms()) + " SMs";
      if (part->groups() > 1) {  // one group is the whole GPU
        p.machine.virtual_devices = part->groups();
        p.machine.sms = part->sms_per_group();
      }
    }
    p.machine.device_count = gpus_;
    p.libraries.compiler = compiler_version();
    p.libraries.eigen = eigen_version();
    int runtime = 0, driver = 0;
    cuda_check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion", "profile describe");
    cuda_check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion", "profile describe");
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    p.libraries.cuda = "runtime " + version(runtime) + ", driver " + version(driver) + ", cuBLAS " +
                       std::to_string(CUBLAS_VER_MAJOR) + "." + std::to_string(CUBLAS_VER_MINOR) + "." +
                       std::to_string(CUBLAS_VER_PATCH) + ", bf16 GEMMs, block ops replayed as CUDA graphs";
    p.settings.threads = 1;
    p.settings.clock = setup_.events ? "events" : "wall";
  }

 public:
  std::unique_ptr<ProfileWorkload> workload(const ModelSpec& model, int b, std::uint64_t seed) override {
    check_gpt_model(model, "profile");
    return guarded([&] { return std::make_unique<CudaWorkload>(model, b, seed, setup_); });
  }
  // One group alone: a stage's step streams from HBM either way past the L2; whether the
  // stage around a group matters on a GPU has not been measured.
  std::unique_ptr<OptimizerProbe> optimizer(std::int64_t count, std::int64_t stage_count, std::uint64_t seed) override {
    PIPESIM_ASSERT(count > 0 && stage_count > 0);
    return guarded([&] { return std::make_unique<CudaOptimizer>(count, seed, setup_); });
  }
  std::unique_ptr<LinkProbe> link(std::int64_t bytes) override {
    PIPESIM_ASSERT(bytes > 0);
    return guarded([&] { return std::make_unique<DeviceLink>(bytes, gpus_ >= 2, setup_); });
  }
  // The other SM groups of the partition (none without one: the whole GPU has no neighbours).
  int max_neighbours() const override { return setup_.partition ? setup_.partition->groups() - 1 : 0; }
  // Untested: no GPU has run it yet. A neighbour's passes run on their own group's stream,
  // from the profiler's neighbour thread, the only thread that uses its context while it
  // runs (device 0 is every host thread's current device unless set otherwise).
  std::unique_ptr<ProfileWorkload> neighbour(const ModelSpec& model, int b, std::uint64_t seed, int slot) override {
    PIPESIM_ASSERT(slot >= 1 && slot <= max_neighbours());
    check_gpt_model(model, "profile");
    ProbeSetup setup = setup_;
    setup.group = slot;
    return guarded([&] {
      return std::make_unique<CudaWorkload>(model, b, seed + static_cast<std::uint64_t>(slot), std::move(setup));
    });
  }

 private:
  int gpus_;
  ProbeSetup setup_;
};

}  // namespace

std::unique_ptr<ProfileBackend> make_cuda_profile_backend(bool events, int virtual_devices, int gpus) {
  PIPESIM_ASSERT(virtual_devices >= 1 && gpus >= 1);
  return std::make_unique<CudaProfileBackend>(gpus, events, virtual_devices);
}

}  // namespace pipesim
