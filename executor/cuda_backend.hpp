#pragma once
// CudaBackend: the ComputeBackend of the CUDA kernels (kernels/cuda/, docs/gpu.md) on one
// GPU, laid out like CpuBackend (executor/cpu_backend.hpp) so the two can be compared
// number for number: the same replicas, seeds, weight versions, caches, gradient
// averaging and flat layouts, with device buffers instead of Eigen matrices.
//
//   executor device d ──> GPU d % (visible GPUs); several devices on one GPU are "virtual
//                         devices": each has its own CudaContext (stream + cuBLAS handle),
//                         on its own group of SMs where an SmPartition is given (green
//                         contexts, kernels/cuda/sm_partition.hpp), else on all of them
//   replica    CudaStage (blocks) + CudaEmbedding on stage 0 + CudaLmHead on the last
//              stage, each holding its gradient and Adam moments on the device
//   versions   keep_version = a device-to-device copy of the current weights (weight_copy:
//              no gradient); F and I of an old version run on the copy, W always adds into
//              the current weights' gradient (as the CPU backend)
//   caches     one per micro-batch in flight: blocks, head, and on stage 0 the token ids
//              (host) and the first block's input gradient (device), for the embedding's W
//   payloads   CudaPayload: a device matrix plus a reference to the context that allocated
//              it, so a message outliving its sender's backend (a torn-down run) is freed
//              safely; copy_for_send is a device-to-device copy (a peer copy when the
//              producer sits on another GPU), and a receiver on another GPU peer-copies an
//              input to its own GPU before using it
//   gradients  GradSync on the GPU: export_gradients is a device copy (CudaGradients), the
//              sum is add_into kernels on the summing device's stream (a peer copy first
//              for a part on another GPU), import_gradients device-to-device copies
//   launches   each replica's block ops go through CudaStageGraphs (kernels/cuda/
//              stage_graphs.hpp): with cuda_graphs, F, I and W of the blocks are one graph
//              launch each after their first call; a micro-batch in flight holds a slot
//              (lowest free at F, freed at W) whose arenas give its cache fixed addresses
//   timing     every micro-batch op ends by waiting for its end event, so the executor's
//              clock around the call measures the GPU work (docs/executor.md's timestamps
//              hold as is); the op's GPU time between its start and end events is summed
//              in stats()
//   messages   copy_for_send records an event after the copy and returns at once; the
//              consumer's stream waits for that event (cudaStreamWaitEvent) before it reads
//              the message, so no host synchronisation carries a cross-device dependency
//
// Threads: the executor creates the backends (and with them the contexts, cuBLAS handles
// and weights) on its own thread before the clock starts, then only device d's worker
// calls backend d. Each call first binds the backend's GPU on the calling thread
// (cudaSetDevice), so which thread calls does not matter.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/backend.hpp"
#include "kernels/cuda/cuda_embedding.hpp"
#include "kernels/cuda/cuda_event.hpp"
#include "kernels/cuda/cuda_lm_head.hpp"
#include "kernels/cuda/cuda_stage.hpp"
#include "kernels/cuda/sm_partition.hpp"
#include "kernels/cuda/stage_graphs.hpp"

namespace pipesim {

struct CudaBackendOptions {
  GemmPrecision precision = GemmPrecision::Bf16;  // Fp32: for tight comparisons with the CPU
  std::shared_ptr<SmPartition> partition;         // of this device's GPU; null: all SMs
  int partition_group = 0;                        // which of its groups this device runs on
  bool cuda_graphs = true;                        // replay block ops as CUDA graphs (stage_graphs.hpp)
};

class CudaPayload final : public Payload {
 public:
  CudaPayload(std::shared_ptr<CudaContext> ctx, DeviceMatrix m) : owner(std::move(ctx)), matrix(std::move(m)) {}
  std::int64_t bytes() const override { return matrix.buf.bytes(); }
  std::shared_ptr<CudaContext> owner;  // outlives `matrix` (declared first, destroyed last)
  DeviceMatrix matrix;
  std::shared_ptr<CudaEvent> ready;    // recorded after the copy that made it; null: ready on owner's stream
};

// A replica's gradient exported for GradSync: one flat device buffer in the CPU backend's
// layout, with the context that allocated it (freed safely whoever drops it last).
class CudaGradients final : public GradientBuffer {
 public:
  CudaGradients(std::shared_ptr<CudaContext> ctx, std::int64_t n, const std::string& op)
      : owner(std::move(ctx)), values(n, owner->stream(), op) {}
  std::int64_t size() const override { return values.size(); }
  std::shared_ptr<CudaContext> owner;  // outlives `values`
  DeviceBuffer<float> values;
};

class CudaBackend : public ComputeBackend {
 public:
  // Device `device` of the run on GPU device % count. CudaError when no GPU is visible or
  // the context cannot be made; InputError for a model the kernels do not compute.
  CudaBackend(int device, const ModelSetup& setup, CudaBackendOptions options = {});
  ~CudaBackend() override;

  int gpu() const { return gpu_; }

  void create_replica(const ReplicaSpec& spec) override;
  std::unique_ptr<Payload> forward(const OpArgs& a, const Payload* input, double* loss) override;
  std::unique_ptr<Payload> backward_input(const OpArgs& a, const Payload* grad) override;
  void backward_weight(const OpArgs& a) override;
  std::unique_ptr<Payload> backward(const OpArgs& a, const Payload* grad) override;
  void optimizer_step(int pipeline, int stage) override;
  std::unique_ptr<GradientBuffer> export_gradients(int pipeline, int stage) override;
  void add_gradients(GradientBuffer& sum, const GradientBuffer& other) override;
  void import_gradients(int pipeline, int stage, const GradientBuffer& reduced) override;
  void keep_version(int pipeline, int stage) override;
  void drop_version(int pipeline, int stage, std::int32_t version) override;
  int versions_held() const override;
  std::unique_ptr<Payload> copy_for_send(const Payload& p) override;
  std::int64_t activation_bytes() const override { return activation_bytes_; }
  int activations_held() const override;
  std::vector<float> flat_weights(int pipeline, int stage) const override;
  BackendStats stats() const override;

 private:
  struct Weights {
    std::int32_t version = 0;
    std::optional<CudaStage> blocks;
    std::optional<CudaEmbedding> embedding;
    std::optional<CudaLmHead> head;
  };
  struct Cache {
    CudaStageCache blocks;
    CudaLmHeadCache head;
    std::vector<int> ids;  // stage 0: the micro-batch's tokens, for the embedding's W
    DeviceMatrix embed_dx; // stage 0: the first block's input gradient (I -> W)
    int slot = -1;          // the micro-batch's slot of the replica's graphs (stage_graphs.hpp)
    bool forward_done = false, input_grad_done = false;
    std::int64_t bytes() const;
  };
  struct Replica {
    ReplicaSpec spec;
    Weights current;                       // holds the gradient and optimizer state too
    std::map<std::int32_t, Weights> kept;  // older versions still in use (no gradient)
    std::int64_t contributions = 0;
    std::unique_ptr<CudaStageGraphs> graphs;  // outlives the caches (their buffers live in its arenas)
    std::vector<bool> slot_used;
    std::map<std::int32_t, Cache> caches;  // by micro-batch id
  };

  void bind() const;  // cudaSetDevice(gpu_) on the calling thread
  // f(device pointer, count) for each gradient tensor of `w`, in the flat layout's order.
  template <class F>
  static void for_each_gradient(Weights& w, const BlockConfig& config, F&& f);
  Replica& replica(int pipeline, int stage);
  const Replica& replica(int pipeline, int stage) const;
  const Weights& weights(const Replica& r, std::int32_t version, const Op& op) const;
  Cache& cache(Replica& r, const Op& op, bool create);
  void account(std::int64_t before, std::int64_t after) { activation_bytes_ += after - before; }
  // The payload's matrix on this backend's GPU: itself, or a peer copy into `tmp`.
  const DeviceMatrix& local(const Payload* p, const Op& op, const char* what, DeviceMatrix& tmp);
  DeviceMatrix copy_matrix(const DeviceMatrix& from, int from_gpu, const std::string& op);
  std::unique_ptr<Payload> wrap(DeviceMatrix m) { return std::make_unique<CudaPayload>(ctx_, std::move(m)); }
  void sync(const std::string& op) const { ctx_->synchronize(op); }
  void wait_for(const Payload* p, const std::string& op);  // the consumer's side of a message's event
  void start_op(const Op& op);                     // records the start event
  void finish_op(const Op& op);                    // records the end event, waits for it, adds the time
  static int take_slot(Replica& r);

  ModelSetup setup_;
  BlockConfig config_;
  CudaBackendOptions options_;
  int device_ = 0, gpu_ = 0;
  std::shared_ptr<CudaContext> ctx_;                  // outlives the replicas (declared first)
  std::map<std::pair<int, int>, Replica> replicas_;
  std::int64_t activation_bytes_ = 0;
  std::unique_ptr<CudaEvent> op_start_, op_end_;  // timing events of the op being run
  std::int64_t timed_ops_ = 0, device_ns_ = 0;
};

}  // namespace pipesim
