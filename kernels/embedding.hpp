#pragma once
// The first stage's extra: token lookup plus learned positions, x[r] = E[id_r] + P[r % s].
// It has no input gradient (token ids are not differentiable), so its backward is W only:
// a scatter-add of the first block's input gradient into the rows the micro-batch used.
#include <cstdint>
#include <vector>

#include "kernels/block_params.hpp"

namespace pipesim {

template <class T>
struct Embedding {
  KMat<T> tokens;     // V x h; also the LM head's weight when the head is tied
  KMat<T> positions;  // s x h
};

// Uniform entries with standard deviation 1/sqrt(h) (splitmix64 from `seed`), so a tied
// head's logits start O(1). InputError on a bad config or vocab < 1.
template <class T>
Embedding<T> init_embedding(const BlockConfig& c, int vocab, std::uint64_t seed);

// ids: n = b·s token ids, row-major by sequence. InputError when ids has the wrong count
// or an id is outside [0, V).
template <class T>
KMat<T> embedding_forward(const Embedding<T>& e, const BlockConfig& c, const std::vector<int>& ids);

// Adds dx (n x h, the first block's input gradient) into grads (same shapes as e).
template <class T>
void embedding_backward_weight(const BlockConfig& c, const std::vector<int>& ids, const KMat<T>& dx,
                               Embedding<T>& grads);

}  // namespace pipesim
