// cost_models/memory_model: per-device memory against hand-computed values, replicas and
// stashed versions, the capacity edge, and errors.
#include "input_error.hpp"
#include "cost_models/memory_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;

// h = 64, a = 4, f = 256, s = 32, V = 100, 4 layers: small enough to count by hand.
AnalyticalConfig tiny(int p = 2) {
  AnalyticalConfig c;
  c.model.name = "tiny";
  c.model.layers = 4;
  c.model.hidden = 64;
  c.model.heads = 4;
  c.model.kv_heads = 4;
  c.model.ffn_hidden = 256;
  c.model.seq_len = 32;
  c.model.vocab = 100;
  c.cluster.gpu.name = "gpu";
  c.cluster.gpu.peak_flops = {{"bf16", 100e12}};
  c.cluster.gpu.hbm_bandwidth = 1e12;
  c.cluster.gpu.memory_bytes = 1LL << 30;
  c.cluster.nodes = 1;
  c.cluster.gpus_per_node = 8;
  c.cluster.intra = LinkSpec{"link", 1000, 100e9, ""};
  c.cluster.inter = c.cluster.intra;
  c.pipeline_devices = p;
  c.micro_batch_size = 1;
  c.vocab_multiple = 1;  // the hand counts below use V = 100 as it is, unpadded
  return c;
}

// One stage per device, no schedule generator needed.
Schedule plain(int devices, int pipelines = 1) {
  Schedule s;
  s.name = "test";
  s.num_devices = devices;
  s.num_stages = devices;
  s.num_pipelines = pipelines;
  s.placement.assign(static_cast<std::size_t>(pipelines), std::vector<int>{});
  for (auto& row : s.placement)
    for (int d = 0; d < devices; ++d) row.push_back(d);
  s.ops.assign(static_cast<std::size_t>(devices), {});
  return s;
}

// A GPT layer of width 64: 12h² + 13h = 49,984 parameters.
constexpr std::int64_t kLayer = 12 * 64 * 64 + 13 * 64;

TEST(MemoryModel, HandComputedTwoStages) {
  const AnalyticalConfig c = tiny(2);
  const Schedule s = plain(2);
  // Stage 0: 2 layers + token (100 x 64) and position (32 x 64) embeddings.
  const std::int64_t params0 = 2 * kLayer + 100 * 64 + 32 * 64;
  const DeviceMemory m = device_memory(c, s, 0, 1'000'000, 1);
  EXPECT_EQ(m.parameters, params0);
  EXPECT_EQ(m.replicas, 1);
  EXPECT_EQ(m.weights, 2 * params0);     // bf16
  EXPECT_EQ(m.gradients, 4 * params0);   // fp32 main gradients
  EXPECT_EQ(m.optimizer, 12 * params0);  // fp32 master, Adam m and v
  EXPECT_EQ(m.activations, 1'000'000);
  EXPECT_EQ(m.workspace, 0);
  EXPECT_EQ(m.comm_buffers, 4 * 1 * 32 * 64 * 2);  // 4 messages of b·s·h bf16
  EXPECT_EQ(m.total, 18 * params0 + 1'000'000 + 4 * 32 * 64 * 2);
  EXPECT_EQ(m.capacity, 1LL << 30);
  EXPECT_TRUE(m.fits);
  EXPECT_EQ(m.overshoot, 0);
  // Stage 1: 2 layers, the final LayerNorm (2h) and its copy of the tied word embeddings.
  EXPECT_EQ(device_memory(c, s, 1, 0, 1).parameters, 2 * kLayer + 2 * 64 + 100 * 64);
  // One device alone: no p2p buffers.
  EXPECT_EQ(device_memory(tiny(1), plain(1), 0, 0, 1).comm_buffers, 0);
}

TEST(MemoryModel, ZeroOneShardsTheOptimizerState) {
  AnalyticalConfig c = tiny(2);
  c.dp = 4;
  c.zero1 = true;
  const DeviceMemory m = device_memory(c, plain(2), 0, 0, 1);
  EXPECT_EQ(m.optimizer, (12 * m.parameters + 3) / 4);
  EXPECT_EQ(m.gradients, 4 * m.parameters);  // not sharded by ZeRO-1
  c.dtype = "fp32";                          // no master copy: 4 + 4 + 8 bytes per parameter
  c.cluster.gpu.peak_flops["fp32"] = 20e12;
  c.zero1 = false;
  const DeviceMemory f = device_memory(c, plain(2), 0, 0, 1);
  EXPECT_EQ(f.weights + f.gradients + f.optimizer, 16 * f.parameters);
}

TEST(MemoryModel, TwoReplicasHoldTwiceTheWeights) {
  const AnalyticalConfig c = tiny(1);
  const DeviceMemory one = device_memory(c, plain(1), 0, 0, 1);
  const DeviceMemory two = device_memory(c, plain(1, 2), 0, 0, 2);  // both pipelines' stage on device 0
  EXPECT_EQ(two.replicas, 2);
  EXPECT_EQ(two.weights, 2 * one.weights);
  EXPECT_EQ(two.gradients, 2 * one.gradients);
  EXPECT_EQ(two.optimizer, 2 * one.optimizer);
  // Stashed versions (PipeDream): more weight copies, one set of gradients and state.
  const DeviceMemory stashed = device_memory(c, plain(1), 0, 0, 3);
  EXPECT_EQ(stashed.weights, 3 * one.weights);
  EXPECT_EQ(stashed.gradients, one.gradients);
}

TEST(MemoryModel, FitsFlipsExactlyAtCapacity) {
  AnalyticalConfig c = tiny(2);
  const std::int64_t total = device_memory(c, plain(2), 0, 12345, 1).total;
  c.cluster.gpu.memory_bytes = total;
  DeviceMemory m = device_memory(c, plain(2), 0, 12345, 1);
  EXPECT_TRUE(m.fits);
  EXPECT_EQ(m.overshoot, 0);
  c.cluster.gpu.memory_bytes = total - 1;
  m = device_memory(c, plain(2), 0, 12345, 1);
  EXPECT_FALSE(m.fits);
  EXPECT_EQ(m.overshoot, 1);
  m = device_memory(c, plain(2), 0, 12345 - 1, 1);  // one activation byte less fits again
  EXPECT_TRUE(m.fits);
}

TEST(MemoryModel, RecomputationWorkspace) {
  AnalyticalConfig c = tiny(2);
  const Microbatch mb{1, 1, false, 2};
  c.recompute = Recompute::Full;
  EXPECT_EQ(device_memory(c, plain(2), 0, 0, 1).workspace, layer_activation_bytes(c.model, mb, Recompute::None));
  c.recompute = Recompute::Selective;
  const std::int64_t s = 32, a = 4;
  EXPECT_EQ(device_memory(c, plain(2), 0, 0, 1).workspace, 5 * a * s * s);  // the attention core
}

// The engine's peaks feed the memory model: 1F1B's stage 0 holds p micro-batches.
TEST(MemoryModel, FromASimulation) {
  const AnalyticalConfig c = tiny(2);
  const AnalyticalCostModel model(c);
  ScheduleParams params;
  params.p = 2;
  params.m = 4;
  const Schedule s = generate("1f1b", params);
  const SimResult r = simulate(s, model);
  const DeviceMemory m = device_memory(model, s, 0, r.devices[0].peak_activation_bytes, r.devices[0].peak_weight_versions);
  EXPECT_EQ(m.activations, 2 * model.activation(make_op(OpKind::F, 0, 0), scale_of(s)).bytes);
  EXPECT_EQ(m.weight_copies, 1);
  EXPECT_EQ(m.total, m.weights + m.gradients + m.optimizer + m.activations + m.workspace + m.comm_buffers);
}

TEST(MemoryModel, Errors) {
  const AnalyticalConfig c = tiny(2);
  EXPECT_EQ(error_of([&] { device_memory(c, plain(2), 2, 0, 1); }),
            "memory model: device 2 is not in the schedule (devices 0..1)");
  EXPECT_EQ(error_of([&] { device_memory(c, plain(1, 2), 0, 0, 1); }),
            "memory model: device 0 holds 2 stage replicas, so it keeps at least as many weight copies, got 1");
  EXPECT_EQ(error_of([&] { device_memory(c, plain(2), 0, -1, 1); }), "memory model: peak activation bytes must not be negative");
  AnalyticalConfig bad = c;
  bad.tp = 3;
  EXPECT_THAT(error_of([&] { device_memory(bad, plain(2), 0, 0, 1); }), HasSubstr("tp (3) must divide the attention heads"));
}

}  // namespace
}  // namespace pipesim
