#include "kernels/block_config.hpp"

#include <string>

#include "core/error.hpp"

namespace pipesim {

void check_block_config(const BlockConfig& c) {
  auto fail = [](const std::string& what) { throw InputError("kernels: block config: " + what); };
  const std::array<std::pair<const char*, int>, 5> sizes = {
      {{"batch", c.batch}, {"seq", c.seq}, {"hidden", c.hidden}, {"heads", c.heads}, {"ffn", c.ffn}}};
  for (const auto& [name, value] : sizes) {
    if (value <= 0) fail(std::string(name) + " = " + std::to_string(value) + ", expected a positive size");
  }
  if (c.hidden % c.heads != 0) {
    fail("heads = " + std::to_string(c.heads) + " does not divide hidden = " + std::to_string(c.hidden));
  }
  if (!(c.ln_eps > 0)) fail("ln_eps = " + std::to_string(c.ln_eps) + ", expected a positive number");
}

std::string_view tensor_name(BlockTensor t) {
  switch (t) {
    case BlockTensor::Ln1Gain: return "ln1.gain";
    case BlockTensor::Ln1Bias: return "ln1.bias";
    case BlockTensor::QkvWeight: return "qkv.weight";
    case BlockTensor::QkvBias: return "qkv.bias";
    case BlockTensor::OutWeight: return "out.weight";
    case BlockTensor::OutBias: return "out.bias";
    case BlockTensor::Ln2Gain: return "ln2.gain";
    case BlockTensor::Ln2Bias: return "ln2.bias";
    case BlockTensor::MlpInWeight: return "mlp_in.weight";
    case BlockTensor::MlpInBias: return "mlp_in.bias";
    case BlockTensor::MlpOutWeight: return "mlp_out.weight";
    case BlockTensor::MlpOutBias: return "mlp_out.bias";
  }
  return "?";
}

TensorShape tensor_shape(const BlockConfig& c, BlockTensor t) {
  const int h = c.hidden, f = c.ffn;
  switch (t) {
    case BlockTensor::Ln1Gain:
    case BlockTensor::Ln1Bias:
    case BlockTensor::OutBias:
    case BlockTensor::Ln2Gain:
    case BlockTensor::Ln2Bias:
    case BlockTensor::MlpOutBias: return {1, h};
    case BlockTensor::QkvWeight: return {h, 3 * h};
    case BlockTensor::QkvBias: return {1, 3 * h};
    case BlockTensor::OutWeight: return {h, h};
    case BlockTensor::MlpInWeight: return {h, f};
    case BlockTensor::MlpInBias: return {1, f};
    case BlockTensor::MlpOutWeight: return {f, h};
  }
  return {};
}

std::int64_t tensor_offset(const BlockConfig& c, BlockTensor t) {
  std::int64_t offset = 0;
  for (BlockTensor u : kBlockTensors) {
    if (u == t) return offset;
    offset += tensor_shape(c, u).size();
  }
  return offset;
}

std::int64_t block_parameter_count(const BlockConfig& c) {
  std::int64_t total = 0;
  for (BlockTensor t : kBlockTensors) total += tensor_shape(c, t).size();
  return total;
}

}  // namespace pipesim
