#include "kernels/lm_head.hpp"

#include <cmath>
#include <string>

#include "kernels/layer_norm.hpp"
#include "core/error.hpp"

namespace pipesim {

// The final norm uses GPT-2's epsilon, like the blocks' default.
constexpr double kHeadLnEps = 1e-5;

template <class T>
LmHead<T> init_lm_head(const BlockConfig& c, int vocab, bool tied, std::uint64_t seed) {
  check_block_config(c);
  if (vocab < 1) throw InputError("kernels: lm head: vocab = " + std::to_string(vocab) + ", expected at least 1");
  LmHead<T> head;
  head.gain = KRow<T>::Ones(c.hidden);
  head.bias = KRow<T>::Zero(c.hidden);
  if (!tied) {
    head.weight.resize(vocab, c.hidden);
    const double r = std::sqrt(3.0 / c.hidden);
    for (Eigen::Index k = 0; k < head.weight.size(); ++k) head.weight.data()[k] = static_cast<T>(r * uniform_pm1(seed));
  }
  return head;
}

template <class T>
T lm_head_forward(const LmHead<T>& head, const KMat<T>& weight, const KMat<T>& x, const std::vector<int>& targets,
                  LmHeadCache<T>& cache) {
  if (x.cols() != head.gain.cols() || weight.cols() != x.cols() || static_cast<Eigen::Index>(targets.size()) != x.rows()) {
    throw InputError("kernels: lm head forward: input " + std::to_string(x.rows()) + " x " + std::to_string(x.cols()) +
                     ", weight " + std::to_string(weight.rows()) + " x " + std::to_string(weight.cols()) + ", " +
                     std::to_string(targets.size()) + " targets; expected n x h, V x h and n targets (h = " +
                     std::to_string(head.gain.cols()) + ")");
  }
  for (std::size_t r = 0; r < targets.size(); ++r) {
    if (targets[r] < 0 || targets[r] >= weight.rows()) {
      throw InputError("kernels: lm head forward: target " + std::to_string(targets[r]) + " at " + std::to_string(r) +
                       " is outside the vocabulary [0, " + std::to_string(weight.rows()) + ")");
    }
  }
  cache = LmHeadCache<T>{};
  cache.x = x;
  cache.targets = targets;
  cache.xn = kernels_detail::layer_norm<T>(x, head.gain, head.bias, static_cast<T>(kHeadLnEps), cache.mean, cache.rstd);
  cache.probs = cache.xn * weight.transpose();
  double loss = 0;
  for (Eigen::Index r = 0; r < cache.probs.rows(); ++r) {
    auto row = cache.probs.row(r);
    const T top = row.maxCoeff();
    row = (row.array() - top).exp().matrix();
    const T sum = row.sum();
    // log softmax at the target = logit - top - log(sum), from the exponentials kept.
    loss -= std::log(static_cast<double>(row(targets[static_cast<std::size_t>(r)]) / sum));
    row /= sum;
  }
  cache.holds_forward = true;
  return static_cast<T>(loss / static_cast<double>(x.rows()));
}

template <class T>
KMat<T> lm_head_backward_input(const LmHead<T>& head, const KMat<T>& weight, LmHeadCache<T>& cache) {
  if (!cache.holds_forward) {
    throw InputError("kernels: lm head backward_input: the cache holds no forward; run forward first");
  }
  // dlogits = (softmax - onehot(target)) / n, in place of the probabilities.
  const T inv_n = T(1) / static_cast<T>(cache.probs.rows());
  for (Eigen::Index r = 0; r < cache.probs.rows(); ++r) cache.probs(r, cache.targets[static_cast<std::size_t>(r)]) -= T(1);
  cache.probs *= inv_n;
  const KMat<T> dxn = cache.probs * weight;
  const KMat<T> xhat = kernels_detail::normalised<T>(cache.x, cache.mean, cache.rstd);
  cache.d_gain = (dxn.array() * xhat.array()).colwise().sum().matrix();
  cache.d_bias = dxn.colwise().sum();
  KMat<T> dx = kernels_detail::layer_norm_backward<T>(dxn, xhat, cache.rstd, head.gain);
  cache.x.resize(0, 0);
  cache.mean.resize(0);
  cache.rstd.resize(0);
  cache.holds_forward = false;
  cache.holds_input_grad = true;
  return dx;
}

template <class T>
void lm_head_backward_weight(LmHeadCache<T>& cache, LmHead<T>& head_grads, KMat<T>& weight_grad) {
  if (!cache.holds_input_grad) {
    throw InputError("kernels: lm head backward_weight: the cache holds no input gradient; run backward_input first");
  }
  if (weight_grad.rows() != cache.probs.cols() || weight_grad.cols() != cache.xn.cols() ||
      head_grads.gain.cols() != cache.xn.cols()) {
    throw InputError("kernels: lm head backward_weight: weight gradient is " + std::to_string(weight_grad.rows()) +
                     " x " + std::to_string(weight_grad.cols()) + ", expected V x h = " +
                     std::to_string(cache.probs.cols()) + " x " + std::to_string(cache.xn.cols()));
  }
  weight_grad.noalias() += cache.probs.transpose() * cache.xn;
  head_grads.gain += cache.d_gain;
  head_grads.bias += cache.d_bias;
  cache = LmHeadCache<T>{};
}

#define PIPESIM_INSTANTIATE_LM_HEAD(T)                                                                       \
  template LmHead<T> init_lm_head(const BlockConfig&, int, bool, std::uint64_t);                             \
  template T lm_head_forward(const LmHead<T>&, const KMat<T>&, const KMat<T>&, const std::vector<int>&,      \
                             LmHeadCache<T>&);                                                               \
  template KMat<T> lm_head_backward_input(const LmHead<T>&, const KMat<T>&, LmHeadCache<T>&);                \
  template void lm_head_backward_weight(LmHeadCache<T>&, LmHead<T>&, KMat<T>&);

PIPESIM_INSTANTIATE_LM_HEAD(float)
PIPESIM_INSTANTIATE_LM_HEAD(double)

}  // namespace pipesim
