#pragma once
// CudaLmHead: kernels/lm_head.hpp on one GPU, untied (the head has its own V x h matrix, as
// the executor uses it): final LayerNorm, logits = LN(x)·Wᵀ, mean softmax cross entropy
// against target ids; I gives dx, W the gain, bias and weight gradients. Same split of the
// cache between I and W as LmHeadCache, and the same bytes at each point.
//
//   parameters  one CudaParams group: gain (h), bias (h), weight (V x h column-major), the
//               CPU's flat order (cpu_backend.cpp packs the head so); bf16 mirror in Bf16
//   logits      GEMM in the head's precision (cuda_context.hpp), fp32 output n x V
//   softmax     one warp per row (ends_ops.hpp); per-row loss terms in double, summed on
//               the host in row order and divided by n, as the CPU does
//
// The stored V x h column-major weight read row-major is the h x V matrix Wᵀ, so
// logits = xn·Wᵀ is gemm(xn, Wview), dxn = dlogits·W is gemm(dlogits, Wview, trans_b) and
// dW += dlogitsᵀ·xn is dWview += xnᵀ·dlogits.
#include <cstdint>
#include <vector>

#include "kernels/block_config.hpp"
#include "kernels/cuda/cuda_params.hpp"
#include "kernels/cuda/gemm.hpp"
#include "kernels/lm_head.hpp"

namespace pipesim {

struct CudaLmHeadCache {
  enum class Holds : std::uint8_t { Nothing, Forward, InputGrad };
  Holds holds = Holds::Nothing;
  DeviceBuffer<float> x, mean, rstd;  // F for I (freed by I)
  DeviceBuffer<float> xn;             // n x h: for W
  DeviceBuffer<float> probs;          // n x V: softmax; I turns it into dlogits in place
  DeviceBuffer<int> targets;          // n
  DeviceBuffer<float> d_gain, d_bias; // summed by I, for W

  std::int64_t bytes() const;  // equals LmHeadCache<float>'s count (targets as 4 bytes each)
  void clear();                // stream-ordered frees
};

class CudaLmHead {
 public:
  // Uploads `host` (untied: weight V x h). InputError on shapes or a tied (empty) weight.
  CudaLmHead(CudaContext& ctx, const BlockConfig& c, const LmHead<float>& host, GemmPrecision precision);

  int vocab() const { return vocab_; }
  GemmPrecision precision() const { return precision_; }

  // Returns the mean loss (synchronises: the loss comes to the host). InputError when x is
  // not n x h or a target is outside [0, V).
  float forward(const DeviceMatrix& x, const std::vector<int>& targets, CudaLmHeadCache& cache) const;
  // d loss / dx. InputError unless the cache holds a forward.
  DeviceMatrix backward_input(CudaLmHeadCache& cache) const;
  // Adds the gain, bias and weight gradients into the head's gradient; empties the cache.
  // InputError unless the cache holds an input gradient.
  void backward_weight(CudaLmHeadCache& cache);

  CudaParams& params() { return params_; }
  const CudaParams& params() const { return params_; }
  LmHead<float> host_params() const;  // synchronous copies
  LmHead<float> host_grads() const;
  CudaLmHead weight_copy() const;     // device-to-device; no gradient

 private:
  CudaLmHead() = default;
  LmHead<float> unpack(const KVec<float>& flat) const;
  GemmOperand weight() const;  // the V x h matrix as a GEMM operand in the head's precision
  CudaContext* ctx_ = nullptr;
  BlockConfig config_;
  int vocab_ = 0;
  GemmPrecision precision_ = GemmPrecision::Bf16;
  CudaParams params_;
};

}  // namespace pipesim
