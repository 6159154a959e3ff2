#pragma once
// Memory model: what one GPU of a pipeline device holds at its peak, against its capacity.
//
//   weights       bf16 working weights of the stage replicas the device holds, times the
//                 weight copies the schedule keeps (replicas + stashed versions, from the
//                 engine's DeviceStats::peak_weight_versions)
//   gradients     fp32 main gradients, one set per replica (Megatron mixed precision)
//   optimizer     fp32 master weights + Adam m and v, one set per replica; ZeRO-1 shards
//                 them over dp. With the weights and gradients: 2 + 4 + 12 = 18 bytes per
//                 parameter, the usual mixed-precision Adam accounting (fp32 training: no
//                 master copy, 4 + 4 + 8 = 16)
//   activations   the engine's peak activation bytes (from AnalyticalCostModel::activation)
//   workspace     what recomputation rebuilds at once: one layer's full activations (full),
//                 one layer's attention core (selective)
//   comm buffers  p2p send and receive buffers, forward and backward: 4 messages
//
// All sizes are per GPU: a pipeline device is tp GPUs, each with its own shard.
#include <cstdint>
#include <functional>

#include "cost_models/analytical.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

struct DeviceMemory {
  int device = 0;
  std::int64_t parameters = 0;  // one copy of each replica's parameters, this GPU's shard
  int replicas = 0;             // stage replicas the device holds
  int weight_copies = 0;        // replicas + stashed versions at the peak
  std::int64_t weights = 0;
  std::int64_t gradients = 0;
  std::int64_t optimizer = 0;
  std::int64_t activations = 0;
  std::int64_t workspace = 0;
  std::int64_t comm_buffers = 0;
  std::int64_t total = 0;
  std::int64_t capacity = 0;   // the GPU's memory
  bool fits = true;            // total <= capacity
  std::int64_t overshoot = 0;  // total - capacity when it does not fit, else 0
};

// InputError if `device` is not one of the schedule's or weight_copies is below the
// number of replicas the device holds.
DeviceMemory device_memory(const AnalyticalCostModel& model, const Schedule& schedule, int device,
                           std::int64_t peak_activation_bytes, int weight_copies);
DeviceMemory device_memory(const AnalyticalConfig& config, const Schedule& schedule, int device,
                           std::int64_t peak_activation_bytes, int weight_copies);

// Bytes per parameter of the three persistent parts, for `element_bytes` weights and Adam
// (fp32 master copy when the weights are narrower, m and v) or plain SGD (the master only).
struct BytesPerParam {
  int weights = 2, gradients = 4, optimizer = 12;
};
BytesPerParam bytes_per_param(int element_bytes, bool adam = true);

// The parts every cost model's memory shares, one rule for all: the device's stage replicas
// (one copy each of `stage_parameters(stage)`'s parameters) kept in `weight_copies` copies
// (stashed versions at the replicas' mean size), fp32 gradients, the optimizer state sharded
// over `optimizer_shards` (ZeRO-1's dp; 1 without), and the peak activations. InputError if
// `device` is not the schedule's, weight_copies is below its replicas or the activations are
// negative. The caller adds workspace and buffers, then settle()s.
DeviceMemory persistent_memory(const Schedule& schedule, int device,
                               const std::function<std::int64_t(int stage)>& stage_parameters, BytesPerParam per,
                               int optimizer_shards, std::int64_t peak_activation_bytes, int weight_copies);
// total = the sum of the parts; capacity, fits and overshoot against `capacity`.
void settle(DeviceMemory& m, std::int64_t capacity);

}  // namespace pipesim
