#pragma once
// The last stage's extra: final LayerNorm, a linear map to the vocabulary and the mean
// softmax cross entropy against target ids,
//   loss = -(1/n) Σ_r log softmax(LN(x)·Wᵀ)[r, target_r]
// W is V x h: the head's own matrix (untied), or the embedding's token matrix (tied; the
// caller passes Embedding::tokens and its gradient, and on a multi-stage pipeline sums
// the two stages' copies of that gradient, as Megatron does).
#include <cstdint>
#include <vector>

#include "kernels/block_params.hpp"

namespace pipesim {

template <class T>
struct LmHead {
  KRow<T> gain, bias;  // final LayerNorm, 1 x h
  KMat<T> weight;      // V x h when untied; empty when tied
};

// Gain 1, bias 0; an untied weight uniform with standard deviation 1/sqrt(h).
template <class T>
LmHead<T> init_lm_head(const BlockConfig& c, int vocab, bool tied, std::uint64_t seed);

template <class T>
struct LmHeadCache {
  bool holds_forward = false, holds_input_grad = false;
  KMat<T> x;             // n x h: final norm input (freed by I)
  KVec<T> mean, rstd;    // freed by I
  KMat<T> xn;            // n x h: head GEMM input, for W
  KMat<T> probs;         // n x V: softmax; I turns it into dlogits in place, for W
  std::vector<int> targets;
  KRow<T> d_gain, d_bias;  // final norm gradients, summed by I
};

// Returns the loss; fills `cache`. InputError on shapes, target count or range.
template <class T>
T lm_head_forward(const LmHead<T>& head, const KMat<T>& weight, const KMat<T>& x, const std::vector<int>& targets,
                  LmHeadCache<T>& cache);
// d loss / dx. InputError unless the cache holds a forward.
template <class T>
KMat<T> lm_head_backward_input(const LmHead<T>& head, const KMat<T>& weight, LmHeadCache<T>& cache);
// Adds the norm gradients into head_grads and dlogitsᵀ·xn into weight_grad (V x h).
// InputError unless the cache holds an input gradient.
template <class T>
void lm_head_backward_weight(LmHeadCache<T>& cache, LmHead<T>& head_grads, KMat<T>& weight_grad);

}  // namespace pipesim
