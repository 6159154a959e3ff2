#pragma once
// BlockConfig: the shape one transformer block works on, and the layout of its parameters
// in one flat array (so the optimizer and the gradient buffer are plain vectors).
//
// Shapes (docs/kernels.md): b sequences of s tokens, hidden h, a heads of d = h / a, ffn f.
// Activations are token-major matrices: n = b·s rows (row r = sequence r / s, position
// r % s), h columns.
#include <array>
#include <cstdint>
#include <string_view>

namespace pipesim {

struct BlockConfig {
  int batch = 1;     // b
  int seq = 1;       // s
  int hidden = 1;    // h
  int heads = 1;     // a; must divide h
  int ffn = 4;       // f
  double ln_eps = 1e-5;  // LayerNorm variance epsilon (GPT-2's value)

  int tokens() const { return batch * seq; }   // n
  int head_dim() const { return hidden / heads; }  // d
};

// InputError ("kernels: block config: ...") unless every size is positive, heads divide
// hidden and ln_eps is positive.
void check_block_config(const BlockConfig& c);

// The parameter tensors of one block, in storage order. Linear weights are (in x out):
// y = x·W + b. Norm gains/biases and linear biases are 1 x width row vectors.
enum class BlockTensor : std::uint8_t {
  Ln1Gain, Ln1Bias,            // pre-attention LayerNorm, 1 x h
  QkvWeight, QkvBias,          // h x 3h, 1 x 3h: columns [Q | K | V], head i at i·d
  OutWeight, OutBias,          // attention output projection, h x h, 1 x h
  Ln2Gain, Ln2Bias,            // pre-MLP LayerNorm, 1 x h
  MlpInWeight, MlpInBias,      // h x f, 1 x f
  MlpOutWeight, MlpOutBias,    // f x h, 1 x h
};
inline constexpr int kBlockTensorCount = 12;
inline constexpr std::array<BlockTensor, kBlockTensorCount> kBlockTensors = {
    BlockTensor::Ln1Gain,     BlockTensor::Ln1Bias,     BlockTensor::QkvWeight,    BlockTensor::QkvBias,
    BlockTensor::OutWeight,   BlockTensor::OutBias,     BlockTensor::Ln2Gain,      BlockTensor::Ln2Bias,
    BlockTensor::MlpInWeight, BlockTensor::MlpInBias,   BlockTensor::MlpOutWeight, BlockTensor::MlpOutBias};

struct TensorShape {
  int rows = 0;
  int cols = 0;
  std::int64_t size() const { return static_cast<std::int64_t>(rows) * cols; }
};

std::string_view tensor_name(BlockTensor t);  // "ln1.gain", "qkv.weight", ...
TensorShape tensor_shape(const BlockConfig& c, BlockTensor t);
std::int64_t tensor_offset(const BlockConfig& c, BlockTensor t);  // into the flat array
// 4h² + 2hf + 9h + f (matches cost_models/transformer.hpp layer_parameters for a GPT
// block with f = 4h: 12h² + 13h).
std::int64_t block_parameter_count(const BlockConfig& c);

}  // namespace pipesim
