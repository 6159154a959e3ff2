#pragma once
// CudaStage: kernels/stage.hpp's Stage (a run of transformer blocks, one pipeline stage's
// work) on one GPU, with the same interface and the same initialisation: block i of a stage
// made from (config, blocks, seed) has bit for bit the parameters of Stage<float>'s block i.
// The caller owns one CudaStageCache per micro-batch in flight.
//
// The first stage's embedding and the last stage's LM head are separate objects
// (cuda_embedding.hpp, cuda_lm_head.hpp); executor/cuda_backend.hpp puts them together.
#include <cstdint>
#include <vector>

#include "kernels/cuda/cuda_block.hpp"

namespace pipesim {

using CudaStageCache = std::vector<CudaBlockCache>;  // one per block

class CudaStage {
 public:
  // `blocks` blocks initialised as Stage<float>(c, blocks, seed). InputError when blocks < 1
  // or the config is bad.
  CudaStage(CudaContext& ctx, const BlockConfig& c, int blocks, std::uint64_t seed, GemmPrecision precision);
  // The given parameters (e.g. a CPU Stage's params()), one block each. InputError when
  // empty or when the blocks' configs differ.
  CudaStage(CudaContext& ctx, const std::vector<BlockParams<float>>& params, GemmPrecision precision);

  int blocks() const { return static_cast<int>(blocks_.size()); }
  const BlockConfig& config() const { return blocks_.front().config(); }
  std::int64_t parameter_count() const;
  CudaBlock& block(int i) { return blocks_.at(static_cast<std::size_t>(i)); }
  const CudaBlock& block(int i) const { return blocks_.at(static_cast<std::size_t>(i)); }

  DeviceMatrix forward(const DeviceMatrix& x, CudaStageCache& cache) const;          // F
  DeviceMatrix backward_input(const DeviceMatrix& dy, CudaStageCache& cache) const;  // I
  void backward_weight(CudaStageCache& cache);                                       // W
  DeviceMatrix backward(const DeviceMatrix& dy, CudaStageCache& cache);              // B = I then W

  void zero_grads();
  void scale_grads(float s);  // every block's gradient *= s
  void sgd_step(double lr);
  void adam_step(const AdamConfig& c);

  // Every block's weight_copy() (device to device; no gradients): a kept weight version.
  CudaStage weight_copy() const;

  std::vector<const void*> addresses() const;  // every block's append_addresses, in order

  std::vector<BlockParams<float>> params() const;  // copies to the host
  std::vector<BlockParams<float>> grads() const;

 private:
  CudaStage() = default;
  void check_cache(const CudaStageCache& cache, const char* who) const;
  std::vector<CudaBlock> blocks_;
};

}  // namespace pipesim
