#pragma once
// Stage<T>: a run of transformer blocks, what one pipeline stage computes, with the same
// entry points as one block: F, I, W, B = I then W, and the optimizer step. It owns the
// parameters, their gradient buffers (W accumulates over micro-batches until
// zero_grads) and the Adam moments; the caller owns one StageCache per micro-batch in
// flight, so a schedule can hold several forwards before their backwards.
//
// The first stage's embedding and the last stage's LM head are separate objects
// (kernels/embedding.hpp, kernels/lm_head.hpp) the caller chains around a Stage.
#include <cstdint>
#include <vector>

#include "kernels/cpu_block.hpp"
#include "kernels/optimizer.hpp"

namespace pipesim {

template <class T>
using StageCache = std::vector<BlockCache<T>>;  // one per block

template <class T>
class Stage {
 public:
  // `blocks` blocks, block i initialised from a seed derived from (seed, i).
  // InputError when blocks < 1 or the config is bad.
  Stage(const BlockConfig& c, int blocks, std::uint64_t seed);

  int blocks() const { return static_cast<int>(params_.size()); }
  const BlockConfig& config() const { return params_.front().config; }
  std::int64_t parameter_count() const;

  // F: x (n x h) -> y (n x h) through every block; `cache` is resized to one per block.
  KMat<T> forward(const KMat<T>& x, StageCache<T>& cache) const;
  // I: dy -> dx through the blocks in reverse. InputError unless `cache` holds a forward
  // of this stage.
  KMat<T> backward_input(const KMat<T>& dy, StageCache<T>& cache) const;
  // W: accumulates every block's parameter gradients into grads(); empties `cache`.
  void backward_weight(StageCache<T>& cache);
  // B = I then W.
  KMat<T> backward(const KMat<T>& dy, StageCache<T>& cache);

  void zero_grads();
  void sgd_step(double lr);                // every block, then nothing else (grads kept)
  void adam_step(const AdamConfig& c);     // every block, one Adam state each

  std::vector<BlockParams<T>>& params() { return params_; }
  const std::vector<BlockParams<T>>& params() const { return params_; }
  std::vector<BlockParams<T>>& grads() { return grads_; }
  const std::vector<BlockParams<T>>& grads() const { return grads_; }

 private:
  void check_cache(const StageCache<T>& cache, const char* who) const;

  std::vector<BlockParams<T>> params_;
  std::vector<BlockParams<T>> grads_;
  std::vector<AdamState<T>> adam_;
};

}  // namespace pipesim
