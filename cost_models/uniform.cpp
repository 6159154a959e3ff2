#include "cost_models/uniform.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace pipesim {
namespace {

void check_stage(const StageCosts& c, const std::string& where) {
  if (c.fwd < 0 || c.bwd < 0 || c.wgrad < 0)
    throw InputError(where + ": durations must be non-negative");
  if (c.wgrad > c.bwd)
    throw InputError(where + ": weight-gradient time (" + format_duration(c.wgrad) +
                     ") must not exceed the full backward time (" + format_duration(c.bwd) + ")");
}

}  // namespace

UniformCostModel::UniformCostModel(UniformCostConfig config) : config_(std::move(config)) {
  check_stage(config_.stage, "cost model");
  for (const auto& [stage, costs] : config_.overrides) {
    if (stage < 0) throw InputError("cost model: stage override index must be >= 0, got " + std::to_string(stage));
    check_stage(costs, "cost model, stage " + std::to_string(stage));
  }
  if (config_.optimizer < 0 || config_.activation_bytes < 0 || config_.message_bytes < 0 ||
      config_.grad_bytes < 0 || config_.link_latency < 0)
    throw InputError("cost model: times and sizes must be non-negative");
  if (!(config_.link_bandwidth >= 0) || !std::isfinite(config_.link_bandwidth))
    throw InputError("cost model: link bandwidth must be a positive finite number");
  if (!(config_.input_grad_free_fraction >= 0 && config_.input_grad_free_fraction <= 1))
    throw InputError("cost model: input-gradient free fraction must lie in [0, 1]");
}

const StageCosts& UniformCostModel::costs_of(int stage) const {
  auto it = config_.overrides.find(stage);
  return it == config_.overrides.end() ? config_.stage : it->second;
}

Tick UniformCostModel::compute_time(const Op& op, OpScale scale) const {
  PIPESIM_ASSERT(scale.chunks_per_device > 0 && scale.microbatch_split > 0);
  const StageCosts& c = costs_of(op.stage);
  Tick full = 0;
  switch (op.kind) {
    case OpKind::F: full = c.fwd; break;
    case OpKind::B: full = c.bwd; break;
    case OpKind::I: full = c.bwd - c.wgrad; break;
    case OpKind::W: full = c.wgrad; break;
    case OpKind::OptStep: full = config_.optimizer; break;
    case OpKind::GradSync:
    case OpKind::SendF:
    case OpKind::RecvF:
    case OpKind::SendB:
    case OpKind::RecvB: PIPESIM_ASSERT(!"not a compute op"); break;
  }
  if (op.kind == OpKind::OptStep) return full / scale.chunks_per_device;  // weights do not shrink with the micro-batch
  return full / (std::int64_t{scale.chunks_per_device} * scale.microbatch_split);  // 64 bits: a file may say split 2^31-1
}

ActivationCost UniformCostModel::activation(const Op&, OpScale scale) const {
  const std::int64_t bytes = config_.activation_bytes / (std::int64_t{scale.chunks_per_device} * scale.microbatch_split);
  const auto freed = static_cast<std::int64_t>(std::llround(static_cast<double>(bytes) * config_.input_grad_free_fraction));
  return {bytes, freed};
}

std::int64_t UniformCostModel::message_bytes(const Op&, OpScale scale) const {
  return config_.message_bytes / scale.microbatch_split;
}

Tick UniformCostModel::occupancy(std::int64_t bytes) const {
  if (config_.link_bandwidth <= 0 || bytes <= 0) return 0;
  const double ns = std::round(static_cast<double>(bytes) / config_.link_bandwidth * 1e9);
  // llround of a value past int64 is unspecified (in practice INT64_MIN, a negative time).
  if (!(ns < 9.2e18))
    throw InputError("cost model: sending " + format_bytes(static_cast<double>(bytes)) +
                     " takes longer than 292 years at this link bandwidth");
  return static_cast<Tick>(ns);
}

TransferCost UniformCostModel::transfer(int, int, std::int64_t bytes) const {
  return {occupancy(bytes), config_.link_latency};
}

std::int64_t UniformCostModel::grad_bytes(const Op&, OpScale scale) const { return config_.grad_bytes / scale.chunks_per_device; }

Tick UniformCostModel::allreduce_time(int participants, std::int64_t bytes) const {
  if (participants <= 1) return 0;
  const double r = participants;
  const double ring_bytes = std::round(2.0 * (r - 1) / r * static_cast<double>(bytes));
  if (!(ring_bytes < 9.2e18))
    throw InputError("cost model: an allreduce of " + format_bytes(static_cast<double>(bytes)) + " over " +
                     std::to_string(participants) + " devices moves more than 8 EiB");
  const Tick volume = occupancy(static_cast<std::int64_t>(ring_bytes));
  Tick latency = 0, total = 0;
  if (__builtin_mul_overflow(Tick{2} * (participants - 1), config_.link_latency, &latency) ||
      __builtin_add_overflow(volume, latency, &total))
    throw InputError("cost model: an allreduce over " + std::to_string(participants) +
                     " devices takes longer than 292 years at this link latency");
  return total;
}

}  // namespace pipesim
