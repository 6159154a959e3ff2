#include "kernels/optimizer.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace pipesim {
namespace {

template <class P, class G>
void check_sizes(const char* who, const P& params, const G& grads) {
  if (params.size() != grads.size()) {
    throw InputError(std::string("kernels: ") + who + ": " + std::to_string(grads.size()) + " gradients for " +
                     std::to_string(params.size()) + " parameters");
  }
}

}  // namespace

void check_adam_config(const AdamConfig& c) {
  auto fail = [](const std::string& what) { throw InputError("kernels: adam: " + what); };
  if (!(c.lr >= 0)) fail("lr = " + std::to_string(c.lr) + ", expected >= 0");
  if (!(c.beta1 >= 0 && c.beta1 < 1)) fail("beta1 = " + std::to_string(c.beta1) + ", expected in [0, 1)");
  if (!(c.beta2 >= 0 && c.beta2 < 1)) fail("beta2 = " + std::to_string(c.beta2) + ", expected in [0, 1)");
  if (!(c.eps > 0)) fail("eps = " + std::to_string(c.eps) + ", expected > 0");
}

namespace {

template <class T>
void sgd(Eigen::Ref<KVec<T>> params, const Eigen::Ref<const KVec<T>>& grads, double lr, T grad_scale) {
  check_sizes("sgd", params, grads);
  if (!(lr >= 0)) throw InputError("kernels: sgd: lr = " + std::to_string(lr) + ", expected >= 0");
  params -= static_cast<T>(lr) * (grads * grad_scale);
}

template <class T>
void adam(Eigen::Ref<KVec<T>> params, const Eigen::Ref<const KVec<T>>& grads, AdamState<T>& state, const AdamConfig& c,
          T grad_scale) {
  check_adam_config(c);
  check_sizes("adam", params, grads);
  if (state.m.size() == 0) state.m = KVec<T>::Zero(params.size());
  if (state.v.size() == 0) state.v = KVec<T>::Zero(params.size());
  if (state.m.size() != params.size() || state.v.size() != params.size()) {
    throw InputError("kernels: adam: moments of " + std::to_string(state.m.size()) + " / " +
                     std::to_string(state.v.size()) + " numbers for " + std::to_string(params.size()) + " parameters");
  }
  state.step += 1;
  const T b1 = static_cast<T>(c.beta1), b2 = static_cast<T>(c.beta2);
  // The bias corrections in double: 1 - β^t loses digits in float for β2 near 1.
  const double t = static_cast<double>(state.step);
  const T correction1 = static_cast<T>(1.0 - std::pow(c.beta1, t));
  const T correction2 = static_cast<T>(1.0 - std::pow(c.beta2, t));
  const T lr = static_cast<T>(c.lr), eps = static_cast<T>(c.eps);
  const auto g = grads * grad_scale;  // each element rounded once, as a scaled copy would hold it
  state.m = b1 * state.m + (T(1) - b1) * g;
  state.v = b2 * state.v + (T(1) - b2) * g.cwiseProduct(g);
  params.array() -= lr * (state.m.array() / correction1) / ((state.v.array() / correction2).sqrt() + eps);
}

}  // namespace

void sgd_step(Eigen::Ref<KVec<float>> params, const Eigen::Ref<const KVec<float>>& grads, double lr, float grad_scale) {
  sgd<float>(params, grads, lr, grad_scale);
}
void sgd_step(Eigen::Ref<KVec<double>> params, const Eigen::Ref<const KVec<double>>& grads, double lr,
              double grad_scale) {
  sgd<double>(params, grads, lr, grad_scale);
}
void adam_step(Eigen::Ref<KVec<float>> params, const Eigen::Ref<const KVec<float>>& grads, AdamState<float>& state,
               const AdamConfig& c, float grad_scale) {
  adam<float>(params, grads, state, c, grad_scale);
}
void adam_step(Eigen::Ref<KVec<double>> params, const Eigen::Ref<const KVec<double>>& grads, AdamState<double>& state,
               const AdamConfig& c, double grad_scale) {
  adam<double>(params, grads, state, c, grad_scale);
}

}  // namespace pipesim
