#pragma once
// CpuBackend: the ComputeBackend of the CPU (Eigen, float) kernels in kernels/. A replica
// holds the blocks cost_models/stage_layout.hpp gives its stage, plus the embedding on stage 0
// and the LM head on the last stage.
//
//   weights   block g (global index) from splitmix64(seed + g), so a model cut into 1, 2 or
//             4 stages, and every pipeline's replica, starts from the same numbers
//   versions  the current weights carry a version (optimizer steps so far); keep_version
//             copies them for ops that still need that version after the next step
//   caches    one per micro-batch in flight: the blocks' BlockCache, the head's cache, and
//             on stage 0 the token ids and the first block's input gradient (for the
//             embedding's W)
//   gradient  accumulated (+=) over B/W ops; optimizer_step averages it over its
//             contributions (micro-batch backwards, summed over replicas by GradSync)
//
// Tied embeddings are untied here: the head has its own V x h weight. Tying across the
// first and last stage needs a gradient exchange between those two devices that no
// schedule lists, so the executor does not invent one (docs/executor.md).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "executor/backend.hpp"
#include "executor/synthetic_data.hpp"
#include "kernels/embedding.hpp"
#include "kernels/lm_head.hpp"
#include "kernels/optimizer.hpp"
#include "kernels/stage.hpp"

namespace pipesim {

// InputError unless the model is a GPT-style model the CPU kernels compute (GELU MLP,
// biases, LayerNorm, learned positions, multi-head attention) and the micro-batch size is
// a positive multiple of `microbatch_split`. `flag` names the option in the message.
void check_executor_model(const ModelSpec& model, int micro_batch_size, int microbatch_split);

// The block shape one op works on: micro_batch_size / microbatch_split sequences.
BlockConfig executor_block_config(const ModelSetup& setup);

// Bytes of float state one replica of `layout` holds (weights, gradient, two Adam
// moments), for the memory check before a run.
std::int64_t replica_state_bytes(const ModelSetup& setup, const StageLayout& layout);

class CpuPayload final : public Payload {
 public:
  explicit CpuPayload(KMat<float> m) : matrix(std::move(m)) {}
  std::int64_t bytes() const override { return static_cast<std::int64_t>(matrix.size()) * 4; }
  KMat<float> matrix;
};

// A replica's gradient exported for GradSync: a flat host copy in pack()'s layout.
class HostGradients final : public GradientBuffer {
 public:
  explicit HostGradients(KVec<float> v) : values(std::move(v)) {}
  std::int64_t size() const override { return values.size(); }
  KVec<float> values;
};

class CpuBackend : public ComputeBackend {
 public:
  explicit CpuBackend(const ModelSetup& setup);

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

  // Sets the replica's current weights from flat_weights()' layout (the reference trainer's
  // validation: a whole model put together from the stages' copies).
  void load_weights(int pipeline, int stage, const std::vector<float>& flat);
  // The mean loss of the current weights on `data` (a forward without caches or gradients);
  // the replica must hold the whole model (embedding and head).
  double evaluate(int pipeline, int stage, const MicrobatchData& data) const;

 private:
  struct Weights {
    std::int32_t version = 0;
    std::vector<BlockParams<float>> blocks;
    std::optional<Embedding<float>> embedding;
    std::optional<LmHead<float>> head;
  };
  struct Cache {
    StageCache<float> blocks;
    LmHeadCache<float> head;
    std::vector<int> ids;     // stage 0: the micro-batch's tokens, for the embedding's W
    KMat<float> embed_dx;     // stage 0: the first block's input gradient (I -> W)
    bool forward_done = false, input_grad_done = false;
    std::int64_t bytes() const;
  };
  struct Replica {
    ReplicaSpec spec;
    Weights current;
    std::map<std::int32_t, Weights> kept;  // older versions still in use
    Weights grads;                         // same shapes as the weights
    std::int64_t contributions = 0;
    std::vector<AdamState<float>> adam;    // one per tensor, in for_each_tensor's order
    std::map<std::int32_t, Cache> caches;  // by micro-batch id
  };

  Replica& replica(int pipeline, int stage);
  const Replica& replica(int pipeline, int stage) const;
  const Weights& weights(const Replica& r, std::int32_t version, const Op& op) const;
  Cache& cache(Replica& r, const Op& op, bool create);
  void account(std::int64_t before, std::int64_t after) { activation_bytes_ += after - before; }
  KMat<float> input_gradient(Replica& r, const OpArgs& a, const Payload* grad);

  ModelSetup setup_;
  BlockConfig config_;
  std::map<std::pair<int, int>, Replica> replicas_;
  std::int64_t activation_bytes_ = 0;
};

}  // namespace pipesim
