#pragma once
// BlockParams<T>: one block's parameters (or their gradients, or an optimizer moment) as
// one flat vector in the BlockConfig layout, with typed views of each tensor. One flat
// array keeps the optimizer a loop over numbers and a gradient sync one buffer.
#include <cstdint>

#include <Eigen/Dense>

#include "kernels/block_config.hpp"

namespace pipesim {

template <class T>
using KMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;  // column-major
template <class T>
using KRow = Eigen::Matrix<T, 1, Eigen::Dynamic>;
template <class T>
using KVec = Eigen::Matrix<T, Eigen::Dynamic, 1>;

template <class T>
struct BlockParams {
  BlockConfig config;
  KVec<T> data;  // block_parameter_count(config) numbers

  // All zeros (a fresh gradient buffer or optimizer moment); checks the config.
  static BlockParams zeros(const BlockConfig& c);

  Eigen::Map<KMat<T>> tensor(BlockTensor t) {
    const TensorShape s = tensor_shape(config, t);
    return Eigen::Map<KMat<T>>(data.data() + tensor_offset(config, t), s.rows, s.cols);
  }
  Eigen::Map<const KMat<T>> tensor(BlockTensor t) const {
    const TensorShape s = tensor_shape(config, t);
    return Eigen::Map<const KMat<T>>(data.data() + tensor_offset(config, t), s.rows, s.cols);
  }
  // The 1 x width tensors (gains, biases) as row vectors, for broadcasting over tokens.
  Eigen::Map<KRow<T>> row(BlockTensor t) {
    return Eigen::Map<KRow<T>>(data.data() + tensor_offset(config, t), tensor_shape(config, t).cols);
  }
  Eigen::Map<const KRow<T>> row(BlockTensor t) const {
    return Eigen::Map<const KRow<T>>(data.data() + tensor_offset(config, t), tensor_shape(config, t).cols);
  }
};

// Deterministic initialisation from `seed` (own splitmix64 generator, so the numbers are
// the same with every standard library): linear weights uniform with standard deviation
// 1/sqrt(fan_in), so activations stay O(1) at any width; gains 1, biases 0.
template <class T>
BlockParams<T> init_block_params(const BlockConfig& c, std::uint64_t seed);

// splitmix64 (Steele et al. 2014): the kernels' only random source.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
// Uniform in [-1, 1) from the top 53 bits.
inline double uniform_pm1(std::uint64_t& state) {
  return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-52 - 1.0;
}

}  // namespace pipesim
