#include "kernels/embedding.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace pipesim {
namespace {

void check_ids(const BlockConfig& c, Eigen::Index vocab, const std::vector<int>& ids, const char* who) {
  if (static_cast<int>(ids.size()) != c.tokens()) {
    throw InputError(std::string("kernels: ") + who + ": " + std::to_string(ids.size()) +
                     " token ids, expected batch x seq = " + std::to_string(c.tokens()));
  }
  for (std::size_t r = 0; r < ids.size(); ++r) {
    if (ids[r] < 0 || ids[r] >= vocab) {
      throw InputError(std::string("kernels: ") + who + ": token id " + std::to_string(ids[r]) + " at " +
                       std::to_string(r) + " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
  }
}

}  // namespace

template <class T>
Embedding<T> init_embedding(const BlockConfig& c, int vocab, std::uint64_t seed) {
  check_block_config(c);
  if (vocab < 1) throw InputError("kernels: embedding: vocab = " + std::to_string(vocab) + ", expected at least 1");
  Embedding<T> e;
  e.tokens.resize(vocab, c.hidden);
  e.positions.resize(c.seq, c.hidden);
  const double r = std::sqrt(3.0 / c.hidden);  // uniform on [-r, r]: standard deviation 1/sqrt(h)
  for (KMat<T>* m : {&e.tokens, &e.positions}) {
    for (Eigen::Index k = 0; k < m->size(); ++k) m->data()[k] = static_cast<T>(r * uniform_pm1(seed));
  }
  return e;
}

template <class T>
KMat<T> embedding_forward(const Embedding<T>& e, const BlockConfig& c, const std::vector<int>& ids) {
  check_ids(c, e.tokens.rows(), ids, "embedding forward");
  KMat<T> x(c.tokens(), c.hidden);
  for (int r = 0; r < c.tokens(); ++r) x.row(r) = e.tokens.row(ids[static_cast<std::size_t>(r)]) + e.positions.row(r % c.seq);
  return x;
}

template <class T>
void embedding_backward_weight(const BlockConfig& c, const std::vector<int>& ids, const KMat<T>& dx,
                               Embedding<T>& grads) {
  check_ids(c, grads.tokens.rows(), ids, "embedding backward_weight");
  if (dx.rows() != c.tokens() || dx.cols() != c.hidden || grads.positions.rows() != c.seq) {
    throw InputError("kernels: embedding backward_weight: gradient is " + std::to_string(dx.rows()) + " x " +
                     std::to_string(dx.cols()) + ", expected tokens x hidden = " + std::to_string(c.tokens()) + " x " +
                     std::to_string(c.hidden));
  }
  for (int r = 0; r < c.tokens(); ++r) {
    grads.tokens.row(ids[static_cast<std::size_t>(r)]) += dx.row(r);
    grads.positions.row(r % c.seq) += dx.row(r);
  }
}

#define PIPESIM_INSTANTIATE_EMBEDDING(T)                                                    \
  template Embedding<T> init_embedding(const BlockConfig&, int, std::uint64_t);             \
  template KMat<T> embedding_forward(const Embedding<T>&, const BlockConfig&, const std::vector<int>&); \
  template void embedding_backward_weight(const BlockConfig&, const std::vector<int>&, const KMat<T>&, Embedding<T>&);

PIPESIM_INSTANTIATE_EMBEDDING(float)
PIPESIM_INSTANTIATE_EMBEDDING(double)

}  // namespace pipesim
