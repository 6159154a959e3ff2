#pragma once
// LayerNorm over each row of a token-major matrix, forward and input gradient; shared by
// the blocks and the LM head's final norm (internal to kernels/).
#include "kernels/block_params.hpp"

namespace pipesim::kernels_detail {

// xhat = (x - mean)·rstd, rstd = 1/sqrt(var + eps); returns xhat ⊙ gain + bias.
template <class T, class Row>
KMat<T> layer_norm(const KMat<T>& x, const Row& gain, const Row& bias, T eps, KVec<T>& mean, KVec<T>& rstd) {
  mean = x.rowwise().mean();
  KMat<T> xc = x.colwise() - mean;
  const KVec<T> var = xc.array().square().rowwise().mean().matrix();
  rstd = (var.array() + eps).rsqrt().matrix();
  KMat<T> xhat = (xc.array().colwise() * rstd.array()).matrix();
  return ((xhat.array().rowwise() * gain.array()).rowwise() + bias.array()).matrix();
}

template <class T>
KMat<T> normalised(const KMat<T>& x, const KVec<T>& mean, const KVec<T>& rstd) {
  return ((x.colwise() - mean).array().colwise() * rstd.array()).matrix();
}

// Gradient at the input, given dout at the output:
//   dxhat = dout ⊙ gain;  dx = rstd·(dxhat - mean(dxhat) - xhat·mean(dxhat ⊙ xhat))  per row.
template <class T, class Row>
KMat<T> layer_norm_backward(const KMat<T>& dout, const KMat<T>& xhat, const KVec<T>& rstd, const Row& gain) {
  const KMat<T> dxhat = (dout.array().rowwise() * gain.array()).matrix();
  const KVec<T> m1 = dxhat.rowwise().mean();
  const KVec<T> m2 = (dxhat.array() * xhat.array()).rowwise().mean().matrix();
  KMat<T> dx = dxhat.colwise() - m1;
  dx -= (xhat.array().colwise() * m2.array()).matrix();
  return (dx.array().colwise() * rstd.array()).matrix();
}

}  // namespace pipesim::kernels_detail
