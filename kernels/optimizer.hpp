#pragma once
// The optimizer updates of the simulator's OptStep, on flat parameter vectors (a block's
// BlockParams::data, or any other tensor): plain SGD and Adam with bias correction
// (Kingma & Ba 2015, Algorithm 1).
//
//   SGD   p -= lr·g
//   Adam  t += 1;  m = β1·m + (1-β1)·g;  v = β2·v + (1-β2)·g²
//         p -= lr · (m / (1-β1^t)) / (sqrt(v / (1-β2^t)) + eps)
#include <cstdint>

#include "kernels/block_params.hpp"

namespace pipesim {

// Which update an optimizer step applies (the executor, the profiler and the cost models
// name it the same way).
enum class OptimizerKind : std::uint8_t { Sgd, Adam };

struct AdamConfig {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
};

// InputError ("kernels: adam: ...") unless lr >= 0, 0 <= beta < 1 and eps > 0.
void check_adam_config(const AdamConfig& c);

template <class T>
struct AdamState {
  KVec<T> m, v;            // first and second moments; empty = zeros of the parameters' size
  std::int64_t step = 0;   // t, the number of updates done
};

// On any contiguous vector: a tensor in place (an Eigen::Map over a matrix) or a KVec. The
// gradient used is grads x grad_scale, element by element (the executor's 1 / contributions:
// one pass over the gradients fewer than scaling them first, the same numbers).
// InputError when params and grads differ in size, or lr < 0.
void sgd_step(Eigen::Ref<KVec<float>> params, const Eigen::Ref<const KVec<float>>& grads, double lr,
              float grad_scale = 1);
void sgd_step(Eigen::Ref<KVec<double>> params, const Eigen::Ref<const KVec<double>>& grads, double lr,
              double grad_scale = 1);
// InputError when sizes differ (params, grads, non-empty moments) or the config is bad.
void adam_step(Eigen::Ref<KVec<float>> params, const Eigen::Ref<const KVec<float>>& grads, AdamState<float>& state,
               const AdamConfig& c, float grad_scale = 1);
void adam_step(Eigen::Ref<KVec<double>> params, const Eigen::Ref<const KVec<double>>& grads, AdamState<double>& state,
               const AdamConfig& c, double grad_scale = 1);

}  // namespace pipesim
