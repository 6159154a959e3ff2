#include "kernels/cuda/cuda_stage.hpp"

#include <string>

#include "core/error.hpp"

namespace pipesim {

CudaStage::CudaStage(CudaContext& ctx, const BlockConfig& c, int blocks, std::uint64_t seed, GemmPrecision precision) {
  check_block_config(c);
  if (blocks < 1) throw InputError("kernels: cuda stage: blocks = " + std::to_string(blocks) + ", expected at least 1");
  blocks_.reserve(static_cast<std::size_t>(blocks));
  for (int i = 0; i < blocks; ++i) {
    std::uint64_t state = seed + static_cast<std::uint64_t>(i);  // as Stage<T>'s constructor
    blocks_.emplace_back(ctx, init_block_params<float>(c, splitmix64(state)), precision);
  }
}

CudaStage::CudaStage(CudaContext& ctx, const std::vector<BlockParams<float>>& params, GemmPrecision precision) {
  if (params.empty()) throw InputError("kernels: cuda stage: no block parameters given, expected at least 1 block");
  blocks_.reserve(params.size());
  for (const BlockParams<float>& p : params) {
    const BlockConfig& a = params.front().config;
    const BlockConfig& b = p.config;
    if (a.batch != b.batch || a.seq != b.seq || a.hidden != b.hidden || a.heads != b.heads || a.ffn != b.ffn ||
        a.ln_eps != b.ln_eps) {
      throw InputError("kernels: cuda stage: block " + std::to_string(blocks_.size()) +
                       " has another shape than block 0; a stage's blocks share one config");
    }
    blocks_.emplace_back(ctx, p, precision);
  }
}

std::int64_t CudaStage::parameter_count() const {
  return static_cast<std::int64_t>(blocks_.size()) * block_parameter_count(config());
}

void CudaStage::check_cache(const CudaStageCache& cache, const char* who) const {
  if (cache.size() != blocks_.size()) {
    throw InputError(std::string("kernels: cuda stage ") + who + ": the cache has " + std::to_string(cache.size()) +
                     " block entries for a stage of " + std::to_string(blocks_.size()) + " blocks");
  }
}

std::vector<const void*> CudaStage::addresses() const {
  std::vector<const void*> out;
  for (const CudaBlock& b : blocks_) b.append_addresses(out);
  return out;
}

DeviceMatrix CudaStage::forward(const DeviceMatrix& x, CudaStageCache& cache) const {
  cache.resize(blocks_.size());
  DeviceMatrix y = blocks_[0].forward(x, cache[0]);
  for (std::size_t i = 1; i < blocks_.size(); ++i) y = blocks_[i].forward(y, cache[i]);
  return y;
}

DeviceMatrix CudaStage::backward_input(const DeviceMatrix& dy, CudaStageCache& cache) const {
  check_cache(cache, "backward_input");
  std::size_t i = blocks_.size() - 1;
  DeviceMatrix d = blocks_[i].backward_input(dy, cache[i]);
  while (i-- > 0) d = blocks_[i].backward_input(d, cache[i]);
  return d;
}

void CudaStage::backward_weight(CudaStageCache& cache) {
  check_cache(cache, "backward_weight");
  for (std::size_t i = blocks_.size(); i-- > 0;) blocks_[i].backward_weight(cache[i]);
}

DeviceMatrix CudaStage::backward(const DeviceMatrix& dy, CudaStageCache& cache) {
  DeviceMatrix dx = backward_input(dy, cache);
  backward_weight(cache);
  return dx;
}

void CudaStage::zero_grads() {
  for (CudaBlock& b : blocks_) b.zero_grads();
}

void CudaStage::scale_grads(float s) {
  for (CudaBlock& b : blocks_) b.scale_grads(s);
}

CudaStage CudaStage::weight_copy() const {
  CudaStage c;
  c.blocks_.reserve(blocks_.size());
  for (const CudaBlock& b : blocks_) c.blocks_.push_back(b.weight_copy());
  return c;
}

void CudaStage::sgd_step(double lr) {
  for (CudaBlock& b : blocks_) b.sgd_step(lr);
}

void CudaStage::adam_step(const AdamConfig& c) {
  for (CudaBlock& b : blocks_) b.adam_step(c);
}

std::vector<BlockParams<float>> CudaStage::params() const {
  std::vector<BlockParams<float>> out;
  for (const CudaBlock& b : blocks_) out.push_back(b.params());
  return out;
}

std::vector<BlockParams<float>> CudaStage::grads() const {
  std::vector<BlockParams<float>> out;
  for (const CudaBlock& b : blocks_) out.push_back(b.grads());
  return out;
}

}  // namespace pipesim
