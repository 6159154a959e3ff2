#include "kernels/stage.hpp"

#include <string>

#include "core/error.hpp"

namespace pipesim {

template <class T>
Stage<T>::Stage(const BlockConfig& c, int blocks, std::uint64_t seed) {
  check_block_config(c);
  if (blocks < 1) throw InputError("kernels: stage: blocks = " + std::to_string(blocks) + ", expected at least 1");
  for (int i = 0; i < blocks; ++i) {
    // Distinct, well-mixed seeds per block, so block i does not depend on how many follow.
    std::uint64_t state = seed + static_cast<std::uint64_t>(i);
    params_.push_back(init_block_params<T>(c, splitmix64(state)));
    grads_.push_back(BlockParams<T>::zeros(c));
  }
  adam_.resize(params_.size());
}

template <class T>
std::int64_t Stage<T>::parameter_count() const {
  return static_cast<std::int64_t>(params_.size()) * block_parameter_count(config());
}

template <class T>
void Stage<T>::check_cache(const StageCache<T>& cache, const char* who) const {
  if (cache.size() != params_.size()) {
    throw InputError(std::string("kernels: stage ") + who + ": the cache has " + std::to_string(cache.size()) +
                     " block entries for a stage of " + std::to_string(params_.size()) + " blocks");
  }
}

template <class T>
KMat<T> Stage<T>::forward(const KMat<T>& x, StageCache<T>& cache) const {
  cache.resize(params_.size());
  KMat<T> y = x;
  for (std::size_t i = 0; i < params_.size(); ++i) y = block_forward(params_[i], y, cache[i]);
  return y;
}

template <class T>
KMat<T> Stage<T>::backward_input(const KMat<T>& dy, StageCache<T>& cache) const {
  check_cache(cache, "backward_input");
  KMat<T> d = dy;
  for (std::size_t i = params_.size(); i-- > 0;) d = block_backward_input(params_[i], d, cache[i]);
  return d;
}

template <class T>
void Stage<T>::backward_weight(StageCache<T>& cache) {
  check_cache(cache, "backward_weight");
  for (std::size_t i = params_.size(); i-- > 0;) block_backward_weight(cache[i], grads_[i]);
}

template <class T>
KMat<T> Stage<T>::backward(const KMat<T>& dy, StageCache<T>& cache) {
  KMat<T> dx = backward_input(dy, cache);
  backward_weight(cache);
  return dx;
}

template <class T>
void Stage<T>::zero_grads() {
  for (BlockParams<T>& g : grads_) g.data.setZero();
}

template <class T>
void Stage<T>::sgd_step(double lr) {
  for (std::size_t i = 0; i < params_.size(); ++i) pipesim::sgd_step(params_[i].data, grads_[i].data, lr);
}

template <class T>
void Stage<T>::adam_step(const AdamConfig& c) {
  for (std::size_t i = 0; i < params_.size(); ++i) pipesim::adam_step(params_[i].data, grads_[i].data, adam_[i], c);
}

template class Stage<float>;
template class Stage<double>;

}  // namespace pipesim
