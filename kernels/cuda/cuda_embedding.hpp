#pragma once
// CudaEmbedding: kernels/embedding.hpp on one GPU. The first stage's token lookup plus
// learned positions, x[r] = E[id_r] + P[r % s], and its weight gradient (a scatter-add of
// the first block's input gradient; there is no input gradient). Same numbers as the CPU:
// the gather is exact, and the scatter adds each table row's contributions in the CPU
// loop's order (ends_ops.hpp), so it is bit for bit the CPU's.
//
//   parameters  one CudaParams group: tokens (V x h) then positions (s x h), both
//               column-major as in Embedding<float> (the CPU's flat layout)
//   token ids   host vectors: checked on the host (as the CPU checks them), uploaded for
//               the gather, turned into per-id row lists on the host for the scatter
#include <vector>

#include "kernels/block_config.hpp"
#include "kernels/cuda/cuda_params.hpp"
#include "kernels/embedding.hpp"

namespace pipesim {

class CudaEmbedding {
 public:
  // Uploads `host` (InputError when its tables are not V x h and s x h for this config).
  CudaEmbedding(CudaContext& ctx, const BlockConfig& c, const Embedding<float>& host);

  int vocab() const { return vocab_; }
  const BlockConfig& config() const { return config_; }

  // x (n x h, n = b·s). InputError when ids has the wrong count or an id is outside [0, V).
  DeviceMatrix forward(const std::vector<int>& ids) const;
  // Adds dx (n x h) into the tables' gradient. InputError on ids (as forward) or dx's shape.
  void backward_weight(const std::vector<int>& ids, const DeviceMatrix& dx);

  CudaParams& params() { return params_; }
  const CudaParams& params() const { return params_; }
  Embedding<float> host_params() const;  // synchronous copies
  Embedding<float> host_grads() const;
  CudaEmbedding weight_copy() const;     // device-to-device; no gradient

 private:
  CudaEmbedding() = default;
  void check_ids(const std::vector<int>& ids, const char* who) const;
  Embedding<float> unpack(const KVec<float>& flat) const;
  CudaContext* ctx_ = nullptr;
  BlockConfig config_;
  int vocab_ = 0;
  CudaParams params_;
};

}  // namespace pipesim
