#pragma once
// CudaBlock: kernels/cpu_block.hpp's pre-LayerNorm GPT block on one GPU, with the same
// entry points (F, I, W, B = I then W) and optimizer steps, and the same numbers up to
// rounding: same flat parameter layout (BlockParams), LayerNorm epsilon, GELU (tanh form),
// causal mask, and the same split of the cache between I and W. docs/gpu.md.
//
//   GEMMs       cuBLAS, fp32 accumulation; operands bf16 (GemmPrecision::Bf16) or fp32
//   own kernels LayerNorm F/B, causal softmax F/B, bias + GELU F/B, bias + residual, SGD, Adam
//   attention   per sequence, one strided-batched GEMM over the heads for each product
//
// The block owns its parameters (fp32 master copy), their gradient buffer (W accumulates
// until zero_grads), the Adam moments, and in Bf16 mode a bf16 copy of the parameters that
// every write of the master copy refreshes (upload and both optimizer kernels), so the
// GEMMs never cast weights. Activations and everything in the cache are fp32; a GEMM's bf16
// activation operand is a temporary copy (gemm.hpp GemmInput).
#include <cuda_bf16.h>

#include <cstdint>
#include <vector>

#include "kernels/block_params.hpp"
#include "kernels/cuda/cuda_context.hpp"
#include "kernels/cuda/gemm.hpp"
#include "kernels/optimizer.hpp"

namespace pipesim {

// What F keeps for I and I for W: BlockCache's fields, on the device, row-major. One
// difference of layout: probs is [sequence][head][query t][key u] (b·a·s·s numbers, each
// s x s block row-major) instead of the CPU's s x (b·a·s) columns; transfer.hpp converts.
struct CudaBlockCache {
  enum class Holds : std::uint8_t { Nothing, Forward, InputGrad };
  Holds holds = Holds::Nothing;
  DeviceBuffer<float> x, mean1, rstd1, qkv, probs, x1, mean2, rstd2, u;  // F for I (freed by I)
  DeviceBuffer<float> xn1, attn, xn2, g;                                 // F for W
  DeviceBuffer<float> d_qkv, d_out, d_u, d_y;                            // I for W
  DeviceBuffer<float> d_ln1_gain, d_ln1_bias, d_ln2_gain, d_ln2_bias;    // I for W

  std::int64_t bytes() const;  // every buffer held: equals BlockCache<float>::bytes() at each point
  void clear();                // stream-ordered frees
  CudaBlockCache view() const;  // borrowed aliases of every buffer (device_buffer.hpp)
  bool borrowed() const;        // every buffer held is borrowed (an arena's or a view)
};

class CudaBlock {
 public:
  // Uploads `params` (InputError on a bad config). The context must outlive the block.
  CudaBlock(CudaContext& ctx, const BlockParams<float>& params, GemmPrecision precision);

  const BlockConfig& config() const { return config_; }
  GemmPrecision precision() const { return precision_; }

  // F: x (n x h) -> y. InputError when x is not n x h.
  DeviceMatrix forward(const DeviceMatrix& x, CudaBlockCache& cache) const;
  // I: dy -> dx. InputError unless the cache holds a forward and dy is n x h.
  DeviceMatrix backward_input(const DeviceMatrix& dy, CudaBlockCache& cache) const;
  // W: adds every parameter gradient into the block's gradient buffer; empties the cache.
  // InputError unless the cache holds an input gradient of a block of this shape.
  void backward_weight(CudaBlockCache& cache);
  DeviceMatrix backward(const DeviceMatrix& dy, CudaBlockCache& cache);  // B = I then W

  void zero_grads();
  void scale_grads(float s);            // gradient *= s (averaging before an optimizer step)
  void sgd_step(double lr);             // InputError when lr < 0 (kernels/optimizer.hpp's rule)
  void adam_step(const AdamConfig& c);  // InputError on a bad config; moments start at 0

  // A device-to-device copy (stream-ordered) of the parameters and their bf16 copy: a kept
  // weight version (PipeDream's stash, 2BW) that runs F and I. It has no gradient or
  // optimizer state; W, zero_grads, scale_grads, the optimizer steps, set_grads and grads()
  // on it are InputErrors (the micro-batch's W goes to the current weights' block).
  CudaBlock weight_copy() const;
  bool has_grads() const { return !grads_.empty(); }

  // Copies between the host layout and the device (synchronous; for tests and set-up).
  void set_params(const BlockParams<float>& p);  // InputError when the config differs
  void set_grads(const BlockParams<float>& g);
  BlockParams<float> params() const;
  BlockParams<float> grads() const;
  AdamState<float> adam_state() const;
  // The gradient in place on the device (block_parameter_count numbers, the host layout's
  // order), for device-to-device gradient exchange. InputError on a weight copy.
  float* grad_data();  // empty moments before the first Adam step
  // The device addresses F, I and W read and write besides their cache (parameters, their
  // bf16 copy, the gradient), appended to `out`: what a captured graph of them depends on.
  void append_addresses(std::vector<const void*>& out) const {
    out.insert(out.end(), {params_.data(), params_bf16_.data(), grads_.data()});
  }

 private:
  CudaBlock(CudaContext& ctx, const BlockConfig& c, GemmPrecision precision)
      : ctx_(&ctx), config_(c), precision_(precision) {}  // weight_copy(): buffers filled there
  void check_grads(const char* who) const;    // InputError on a weight copy
  const float* param(BlockTensor t) const;    // fp32 master copy of tensor t
  GemmOperand weight(BlockTensor t) const;    // tensor t as a GEMM operand in the block's precision
  void check_activation(const DeviceMatrix& m, const char* who, const char* what) const;  // n x h
  CudaContext* ctx_;
  BlockConfig config_;
  GemmPrecision precision_;
  DeviceBuffer<float> params_, grads_, adam_m_, adam_v_;
  DeviceBuffer<__nv_bfloat16> params_bf16_;  // Bf16 only
  std::int64_t adam_steps_ = 0;
};

}  // namespace pipesim
