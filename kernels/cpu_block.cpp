#include "kernels/cpu_block.hpp"

#include <cmath>
#include <string>

#include "kernels/layer_norm.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

std::string shape_text(Eigen::Index rows, Eigen::Index cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

template <class T>
void check_shape(const KMat<T>& m, const BlockConfig& c, const char* who, const char* what) {
  if (m.rows() != c.tokens() || m.cols() != c.hidden) {
    throw InputError(std::string("kernels: ") + who + ": " + what + " is " + shape_text(m.rows(), m.cols()) +
                     ", expected tokens x hidden = " + shape_text(c.tokens(), c.hidden));
  }
}

using kernels_detail::layer_norm;
using kernels_detail::layer_norm_backward;
using kernels_detail::normalised;

// GELU, tanh approximation (GPT-2): 0.5·u·(1 + tanh(k·(u + 0.044715·u³))), k = sqrt(2/π).
// Whole matrices through Eigen's vectorised tanh: a fixed cost per element. A scalar
// std::tanh per element took a third of a block's time, and a share that depended on the
// values (glibc's tanhf branches on them), so the profiler's random inputs and a real run's
// activations did not cost the same.
constexpr double kGeluK = 0.7978845608028654;
constexpr double kGeluC = 0.044715;

template <class T>
auto gelu_tanh(const KMat<T>& u) {
  const auto a = u.array();
  return (T(kGeluK) * (a + T(kGeluC) * a.cube())).tanh();
}

template <class T>
KMat<T> gelu(const KMat<T>& u) {
  return (T(0.5) * u.array() * (T(1) + gelu_tanh(u))).matrix();
}

template <class T>
KMat<T> gelu_grad(const KMat<T>& u) {
  const auto a = u.array();
  const auto t = gelu_tanh(u).eval();
  return (T(0.5) * (T(1) + t) + T(0.5) * a * (T(1) - t.square()) * T(kGeluK) * (T(1) + T(3 * kGeluC) * a.square()))
      .matrix();
}

template <class T>
std::int64_t held(const KMat<T>& m) { return static_cast<std::int64_t>(m.size()); }
template <class T>
std::int64_t held(const KVec<T>& m) { return static_cast<std::int64_t>(m.size()); }
template <class T>
std::int64_t held(const KRow<T>& m) { return static_cast<std::int64_t>(m.size()); }

}  // namespace

template <class T>
std::int64_t BlockCache<T>::bytes() const {
  const std::int64_t numbers = held<T>(x) + held<T>(mean1) + held<T>(rstd1) + held<T>(qkv) + held<T>(probs) +
                               held<T>(x1) + held<T>(mean2) + held<T>(rstd2) + held<T>(u) + held<T>(xn1) +
                               held<T>(attn) + held<T>(xn2) + held<T>(g) + held<T>(d_qkv) + held<T>(d_out) +
                               held<T>(d_u) + held<T>(d_y) + held<T>(d_ln1_gain) + held<T>(d_ln1_bias) +
                               held<T>(d_ln2_gain) + held<T>(d_ln2_bias);
  return numbers * static_cast<std::int64_t>(sizeof(T));
}

template <class T>
void BlockCache<T>::clear() {
  *this = BlockCache<T>{};
}

template <class T>
KMat<T> block_forward(const BlockParams<T>& p, const KMat<T>& x, BlockCache<T>& cache) {
  const BlockConfig& c = p.config;
  check_shape(x, c, "block forward", "input");
  const int s = c.seq, h = c.hidden, a = c.heads, d = c.head_dim();
  const T eps = static_cast<T>(c.ln_eps);
  const T scale = T(1) / std::sqrt(static_cast<T>(d));
  cache.clear();
  cache.x = x;

  // Attention half.
  cache.xn1 = layer_norm<T>(x, p.row(BlockTensor::Ln1Gain), p.row(BlockTensor::Ln1Bias), eps, cache.mean1, cache.rstd1);
  cache.qkv = cache.xn1 * p.tensor(BlockTensor::QkvWeight);
  cache.qkv.rowwise() += p.row(BlockTensor::QkvBias);
  cache.probs.resize(s, static_cast<Eigen::Index>(c.batch) * a * s);
  cache.attn.resize(c.tokens(), h);
  for (int i = 0; i < c.batch; ++i) {
    for (int j = 0; j < a; ++j) {
      const auto q = cache.qkv.block(i * s, j * d, s, d);
      const auto k = cache.qkv.block(i * s, h + j * d, s, d);
      const auto v = cache.qkv.block(i * s, 2 * h + j * d, s, d);
      auto prob = cache.probs.block(0, (i * a + j) * s, s, s);
      prob.noalias() = (q * k.transpose()) * scale;
      // Causal softmax: position t sees 0..t; the masked entries are exactly 0.
      for (int t = 0; t < s; ++t) {
        auto seen = prob.row(t).head(t + 1);
        const T top = seen.maxCoeff();
        seen = (seen.array() - top).exp().matrix();
        seen /= seen.sum();
        prob.row(t).tail(s - t - 1).setZero();
      }
      cache.attn.block(i * s, j * d, s, d).noalias() = prob * v;
    }
  }
  KMat<T> out = cache.attn * p.tensor(BlockTensor::OutWeight);
  out.rowwise() += p.row(BlockTensor::OutBias);
  cache.x1 = x + out;

  // MLP half.
  cache.xn2 = layer_norm<T>(cache.x1, p.row(BlockTensor::Ln2Gain), p.row(BlockTensor::Ln2Bias), eps, cache.mean2,
                            cache.rstd2);
  cache.u = cache.xn2 * p.tensor(BlockTensor::MlpInWeight);
  cache.u.rowwise() += p.row(BlockTensor::MlpInBias);
  cache.g = gelu(cache.u);
  KMat<T> y = cache.g * p.tensor(BlockTensor::MlpOutWeight);
  y.rowwise() += p.row(BlockTensor::MlpOutBias);
  y += cache.x1;
  cache.holds = BlockCache<T>::Holds::Forward;
  return y;
}

template <class T>
KMat<T> block_backward_input(const BlockParams<T>& p, const KMat<T>& dy, BlockCache<T>& cache) {
  const BlockConfig& c = p.config;
  if (cache.holds != BlockCache<T>::Holds::Forward) {
    throw InputError("kernels: block backward_input: the activation cache holds no forward; run forward first");
  }
  check_shape(dy, c, "block backward_input", "output gradient");
  const int s = c.seq, h = c.hidden, a = c.heads, d = c.head_dim();
  const T scale = T(1) / std::sqrt(static_cast<T>(d));

  // MLP half, backwards: y = x1 + GELU(u)·W2 + b2, u = LN2(x1)·W1 + b1.
  cache.d_y = dy;
  const KMat<T> dg = dy * p.tensor(BlockTensor::MlpOutWeight).transpose();
  cache.d_u = (dg.array() * gelu_grad(cache.u).array()).matrix();
  const KMat<T> dxn2 = cache.d_u * p.tensor(BlockTensor::MlpInWeight).transpose();
  const KMat<T> xhat2 = normalised<T>(cache.x1, cache.mean2, cache.rstd2);
  cache.d_ln2_gain = (dxn2.array() * xhat2.array()).colwise().sum().matrix();
  cache.d_ln2_bias = dxn2.colwise().sum();
  cache.d_out = dy + layer_norm_backward<T>(dxn2, xhat2, cache.rstd2, p.row(BlockTensor::Ln2Gain));

  // Attention half: x1 = x + attn·Wo + bo.
  const KMat<T> dattn = cache.d_out * p.tensor(BlockTensor::OutWeight).transpose();
  cache.d_qkv.resize(c.tokens(), 3 * h);
  for (int i = 0; i < c.batch; ++i) {
    for (int j = 0; j < a; ++j) {
      const auto q = cache.qkv.block(i * s, j * d, s, d);
      const auto k = cache.qkv.block(i * s, h + j * d, s, d);
      const auto v = cache.qkv.block(i * s, 2 * h + j * d, s, d);
      const auto prob = cache.probs.block(0, (i * a + j) * s, s, s);
      const auto dO = dattn.block(i * s, j * d, s, d);
      const KMat<T> dprob = dO * v.transpose();
      cache.d_qkv.block(i * s, 2 * h + j * d, s, d).noalias() = prob.transpose() * dO;
      // Softmax backward per row: dS = P ⊙ (dP - Σ_j P·dP); masked entries have P = 0.
      const KVec<T> dot = (prob.array() * dprob.array()).rowwise().sum().matrix();
      const KMat<T> dscore = ((prob.array() * (dprob.colwise() - dot).array()) * scale).matrix();
      cache.d_qkv.block(i * s, j * d, s, d).noalias() = dscore * k;
      cache.d_qkv.block(i * s, h + j * d, s, d).noalias() = dscore.transpose() * q;
    }
  }
  const KMat<T> dxn1 = cache.d_qkv * p.tensor(BlockTensor::QkvWeight).transpose();
  const KMat<T> xhat1 = normalised<T>(cache.x, cache.mean1, cache.rstd1);
  cache.d_ln1_gain = (dxn1.array() * xhat1.array()).colwise().sum().matrix();
  cache.d_ln1_bias = dxn1.colwise().sum();
  KMat<T> dx = cache.d_out + layer_norm_backward<T>(dxn1, xhat1, cache.rstd1, p.row(BlockTensor::Ln1Gain));

  // W needs only the GEMM inputs and output gradients: release the rest now, as a split
  // backward would (Zero Bubble's M_W).
  for (KMat<T>* m : {&cache.x, &cache.qkv, &cache.probs, &cache.x1, &cache.u}) m->resize(0, 0);
  for (KVec<T>* m : {&cache.mean1, &cache.rstd1, &cache.mean2, &cache.rstd2}) m->resize(0);
  cache.holds = BlockCache<T>::Holds::InputGrad;
  return dx;
}

template <class T>
void block_backward_weight(BlockCache<T>& cache, BlockParams<T>& grads) {
  if (cache.holds != BlockCache<T>::Holds::InputGrad) {
    throw InputError("kernels: block backward_weight: the activation cache holds no input gradient; run "
                     "backward_input first");
  }
  const BlockConfig& c = grads.config;
  if (grads.data.size() != block_parameter_count(c) || cache.xn1.rows() != c.tokens() ||
      cache.xn1.cols() != c.hidden || cache.g.cols() != c.ffn) {
    throw InputError("kernels: block backward_weight: the gradient buffer holds " + std::to_string(grads.data.size()) +
                     " numbers (hidden " + std::to_string(c.hidden) + ", ffn " + std::to_string(c.ffn) +
                     ") but the cache is of a block with hidden " + std::to_string(cache.xn1.cols()) + ", ffn " +
                     std::to_string(cache.g.cols()));
  }
  grads.tensor(BlockTensor::MlpOutWeight).noalias() += cache.g.transpose() * cache.d_y;
  grads.row(BlockTensor::MlpOutBias) += cache.d_y.colwise().sum();
  grads.tensor(BlockTensor::MlpInWeight).noalias() += cache.xn2.transpose() * cache.d_u;
  grads.row(BlockTensor::MlpInBias) += cache.d_u.colwise().sum();
  grads.tensor(BlockTensor::OutWeight).noalias() += cache.attn.transpose() * cache.d_out;
  grads.row(BlockTensor::OutBias) += cache.d_out.colwise().sum();
  grads.tensor(BlockTensor::QkvWeight).noalias() += cache.xn1.transpose() * cache.d_qkv;
  grads.row(BlockTensor::QkvBias) += cache.d_qkv.colwise().sum();
  grads.row(BlockTensor::Ln1Gain) += cache.d_ln1_gain;
  grads.row(BlockTensor::Ln1Bias) += cache.d_ln1_bias;
  grads.row(BlockTensor::Ln2Gain) += cache.d_ln2_gain;
  grads.row(BlockTensor::Ln2Bias) += cache.d_ln2_bias;
  cache.clear();
}

template <class T>
KMat<T> block_backward(const BlockParams<T>& p, const KMat<T>& dy, BlockCache<T>& cache, BlockParams<T>& grads) {
  KMat<T> dx = block_backward_input(p, dy, cache);
  block_backward_weight(cache, grads);
  return dx;
}

template <class T>
BlockParams<T> BlockParams<T>::zeros(const BlockConfig& c) {
  check_block_config(c);
  BlockParams<T> p;
  p.config = c;
  p.data = KVec<T>::Zero(block_parameter_count(c));
  return p;
}

template <class T>
BlockParams<T> init_block_params(const BlockConfig& c, std::uint64_t seed) {
  BlockParams<T> p = BlockParams<T>::zeros(c);
  std::uint64_t state = seed;
  for (BlockTensor t : {BlockTensor::QkvWeight, BlockTensor::OutWeight, BlockTensor::MlpInWeight,
                        BlockTensor::MlpOutWeight}) {
    auto w = p.tensor(t);
    // Uniform on [-r, r] has standard deviation r/sqrt(3).
    const double r = std::sqrt(3.0 / static_cast<double>(w.rows()));
    for (Eigen::Index k = 0; k < w.size(); ++k) w.data()[k] = static_cast<T>(r * uniform_pm1(state));
  }
  p.row(BlockTensor::Ln1Gain).setOnes();
  p.row(BlockTensor::Ln2Gain).setOnes();
  return p;
}

#define PIPESIM_INSTANTIATE_BLOCK(T)                                                                    \
  template struct BlockCache<T>;                                                                        \
  template struct BlockParams<T>;                                                                       \
  template KMat<T> block_forward(const BlockParams<T>&, const KMat<T>&, BlockCache<T>&);                \
  template KMat<T> block_backward_input(const BlockParams<T>&, const KMat<T>&, BlockCache<T>&);         \
  template void block_backward_weight(BlockCache<T>&, BlockParams<T>&);                                 \
  template KMat<T> block_backward(const BlockParams<T>&, const KMat<T>&, BlockCache<T>&, BlockParams<T>&); \
  template BlockParams<T> init_block_params(const BlockConfig&, std::uint64_t);

PIPESIM_INSTANTIATE_BLOCK(float)
PIPESIM_INSTANTIATE_BLOCK(double)

}  // namespace pipesim
