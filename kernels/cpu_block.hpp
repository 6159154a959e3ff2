#pragma once
// One pre-LayerNorm GPT block on the CPU (Eigen), split the way the simulator splits a
// layer's work (schedules/op.hpp): forward F, input gradient I, weight gradient W, and
// the full backward B = I then W. docs/kernels.md has the equations.
//
//   y = x1 + MLP(LN2(x1)),  x1 = x + Attn(LN1(x)),  MLP(z) = GELU(z·W1 + b1)·W2 + b2
//
// T is float (the backend) or double (the finite-difference reference in the tests);
// both are compiled in cpu_block.cpp.
#include <cstdint>

#include "kernels/block_params.hpp"

namespace pipesim {

// What F keeps for I, and what I keeps for W. I releases what W does not need, so
// bytes() after I is what a split backward holds between I and W.
template <class T>
struct BlockCache {
  enum class Holds : std::uint8_t { Nothing, Forward, InputGrad };
  Holds holds = Holds::Nothing;
  // Kept by F for I (cleared by I once used).
  KMat<T> x;             // n x h: block input (LN1 input)
  KVec<T> mean1, rstd1;  // n: LN1 statistics
  KMat<T> qkv;           // n x 3h: [Q | K | V]
  KMat<T> probs;         // s x (b·a·s): softmax P of (sequence i, head j) at column block i·a + j
  KMat<T> x1;            // n x h: LN2 input (residual after attention)
  KVec<T> mean2, rstd2;  // n: LN2 statistics
  KMat<T> u;             // n x f: GELU input
  // Kept by F for W (inputs of the four weight GEMMs).
  KMat<T> xn1;   // n x h: LN1 output = QKV GEMM input
  KMat<T> attn;  // n x h: concatenated heads = output projection input
  KMat<T> xn2;   // n x h: LN2 output = MLP-in GEMM input
  KMat<T> g;     // n x f: GELU output = MLP-out GEMM input
  // Produced by I for W: gradients at the four weight GEMMs' outputs ...
  KMat<T> d_qkv;   // n x 3h
  KMat<T> d_out;   // n x h: at the attention output projection (= dx1)
  KMat<T> d_u;     // n x f: at the MLP-in GEMM output
  KMat<T> d_y;     // n x h: at the MLP-out GEMM output (= dy)
  // ... and the LayerNorm gain/bias gradients (column sums I already has in hand: keeping
  // 4h numbers instead of the normalised inputs and their gradients, 4·n·h).
  KRow<T> d_ln1_gain, d_ln1_bias, d_ln2_gain, d_ln2_bias;

  std::int64_t bytes() const;  // every matrix and vector held, sizeof(T) each
  void clear();
};

// F: x (n x h) -> y (n x h); fills `cache` (overwriting it). InputError when x is not n x h.
template <class T>
KMat<T> block_forward(const BlockParams<T>& p, const KMat<T>& x, BlockCache<T>& cache);

// I: dy (n x h) -> dx (n x h), with the same parameters F used. Keeps in `cache` what W
// needs. InputError unless the cache holds a forward and dy is n x h.
template <class T>
KMat<T> block_backward_input(const BlockParams<T>& p, const KMat<T>& dy, BlockCache<T>& cache);

// W: adds every parameter's gradient to `grads` (same config) and empties the cache.
// InputError unless the cache holds an input gradient (I ran) and grads has p's layout.
template <class T>
void block_backward_weight(BlockCache<T>& cache, BlockParams<T>& grads);

// B = I then W.
template <class T>
KMat<T> block_backward(const BlockParams<T>& p, const KMat<T>& dy, BlockCache<T>& cache, BlockParams<T>& grads);

}  // namespace pipesim
