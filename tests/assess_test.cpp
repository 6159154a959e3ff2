// assess/: the assessment of a run (tokens/s, MFU, memory against capacity, $) against its
// closed forms, the analytical model as its source, and the one "closest to fitting" rule.
#include <gtest/gtest.h>

#include <cmath>

#include "assess/analytical_source.hpp"
#include "assess/assessment.hpp"
#include "cost_models/catalog.hpp"
#include "schedules/generator.hpp"

namespace pipesim {
namespace {

// A machine of 1 node x 8 GPUs, tp 2 x pp 2 x dp 2: every number below follows from these.
class FakeSource final : public AssessmentSource {
 public:
  Deployment deployment() const override {
    Deployment d;
    d.model = "m";
    d.hardware = "g";
    d.nodes = 1;
    d.gpus_per_node = 8;
    d.tp = 2;
    d.dp = 2;
    d.micro_batch_size = 2;
    d.seq_len = 1000;
    d.flops_per_sequence = 1e12;
    d.peak_flops = 1e14;
    d.price_per_hour = price;
    d.capacity = capacity;
    return d;
  }
  // 100 bytes of weights and the engine's activations.
  DeviceMemory device_memory(const Schedule&, int device, const DeviceStats& stats) const override {
    DeviceMemory m;
    m.device = device;
    m.weights = 100;
    m.activations = stats.peak_activation_bytes;
    m.total = m.weights + m.activations;
    return m;
  }
  std::optional<double> price = 2.0;
  std::int64_t capacity = 1000;
};

struct SimulatedRun {
  Schedule schedule;
  SimResult result;
  Metrics metrics;
};

// 1F1B on 2 devices, 4 micro-batches, one second per iteration; device 1 holds 950 bytes of
// activations at its peak, device 0 holds 300.
SimulatedRun one_second_run() {
  ScheduleParams p;
  p.p = 2;
  p.m = 4;
  SimulatedRun r{generate("1f1b", p), {}, {}};
  r.result.devices.resize(2);
  r.result.devices[0].peak_activation_bytes = 300;
  r.result.devices[1].peak_activation_bytes = 950;
  r.metrics.time_per_iteration = kNsPerS;
  return r;
}

TEST(Assess, ThroughputMfuAndCostFollowTheirClosedForms) {
  const SimulatedRun r = one_second_run();
  const Assessment a = assess(FakeSource(), r.schedule, r.result, r.metrics);
  EXPECT_EQ(a.gpus, 8);
  EXPECT_EQ(a.pp, 2);
  EXPECT_EQ(a.global_batch, 4 * 2 * 2);          // m x micro-batch size x dp
  EXPECT_EQ(a.tokens_per_iteration, 16 * 1000);  // x sequence length
  EXPECT_DOUBLE_EQ(a.tokens_per_s, 16000);       // per one-second iteration
  EXPECT_DOUBLE_EQ(a.mfu, 16 * 1e12 / (1.0 * 8 * 1e14));
  ASSERT_TRUE(a.cost_per_million_tokens);
  EXPECT_DOUBLE_EQ(*a.cost_per_million_tokens, 2.0 * 8 / 3600 / 16000 * 1e6);  // $ of 8 GPU-seconds per 16k tokens
}

TEST(Assess, MemoryIsTheFullestDeviceAgainstTheCapacity) {
  const SimulatedRun r = one_second_run();
  FakeSource source;
  Assessment a = assess(source, r.schedule, r.result, r.metrics);
  ASSERT_EQ(a.memory.size(), 2u);
  EXPECT_EQ(a.peak_memory, 1050);
  EXPECT_EQ(a.peak_device, 1);
  EXPECT_FALSE(a.fits);
  EXPECT_EQ(a.overshoot, 50);
  source.capacity = 1050;  // exactly full fits
  a = assess(source, r.schedule, r.result, r.metrics);
  EXPECT_TRUE(a.fits);
  EXPECT_EQ(a.overshoot, 0);
  EXPECT_EQ(static_memory(source, r.schedule, r.result), (std::vector<std::int64_t>{100, 100}));
}

TEST(Assess, NoPriceNoCostAndNoTimeNoRates) {
  SimulatedRun r = one_second_run();
  FakeSource source;
  source.price.reset();
  EXPECT_FALSE(assess(source, r.schedule, r.result, r.metrics).cost_per_million_tokens);
  r.metrics.time_per_iteration = 0;
  const Assessment a = assess(FakeSource(), r.schedule, r.result, r.metrics);
  EXPECT_EQ(a.tokens_per_s, 0);
  EXPECT_EQ(a.mfu, 0);
  EXPECT_FALSE(a.cost_per_million_tokens);
}

AnalyticalConfig gpt3_13b(int tp, int devices) {
  AnalyticalConfig c;
  c.model = find_model("gpt3-13b");
  c.cluster = make_cluster("h100-sxm", 1, 8);
  c.tp = tp;
  c.pipeline_devices = devices;
  c.dp = 8 / (tp * devices);
  return c;
}

TEST(Assess, TheAnalyticalModelServesItsMachine) {
  const AnalyticalCostModel model(gpt3_13b(2, 4));
  const Deployment d = AnalyticalSource(model).deployment();
  const GpuSpec gpu = make_cluster("h100-sxm", 1, 8).gpu;
  EXPECT_EQ(d.model, "gpt3-13b");
  EXPECT_EQ(d.hardware, "h100-sxm");
  EXPECT_EQ(d.tp, 2);
  EXPECT_EQ(d.dp, 1);
  EXPECT_EQ(d.peak_flops, gpu.peak_flops.at("bf16"));
  EXPECT_EQ(d.capacity, gpu.memory_bytes);
  // Narayanan et al. 2021 (Megatron-LM, eq. 3 without recomputation): 72 s l h^2 (1 + s / 6h
  // + V / 12lh) per sequence.
  const ModelSpec& m = model.config().model;
  const double s = m.seq_len, l = m.layers, h = m.hidden, v = m.vocab;
  const double megatron = 72 * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
  EXPECT_NEAR(d.flops_per_sequence / megatron, 1.0, 0.01);
}

TEST(Assess, AssessConfigurationIsSimulateThenAssess) {
  const AnalyticalCostModel model(gpt3_13b(2, 4));
  ScheduleParams p;
  p.m = 8;
  const Schedule s = generate("1f1b", p);
  Simulator simulator;
  const AssessedRun run = assess_configuration(simulator, s, model, AnalyticalSource(model));
  const SimResult alone = simulate(s, model);
  EXPECT_EQ(run.result.makespan, alone.makespan);
  const Assessment a = assess(AnalyticalSource(model), s, alone, summarize(s, alone));
  EXPECT_EQ(run.assessment.tokens_per_s, a.tokens_per_s);
  EXPECT_EQ(run.assessment.peak_memory, a.peak_memory);
  EXPECT_GT(a.tokens_per_s, 0);
}

TEST(Assess, ClosestToFittingIsTheSmallestOvershootFirstTiesInOrder) {
  const std::vector<std::int64_t> over = {30, 10, 20, 10};
  const auto closest = [&](std::vector<std::size_t> among, std::size_t k) {
    return closest_to_fitting(std::move(among), [&](std::size_t i) { return over[i]; }, k);
  };
  EXPECT_EQ(closest({0, 1, 2, 3}, 3), (std::vector<std::size_t>{1, 3, 2}));
  EXPECT_EQ(closest({3, 2, 1}, 2), (std::vector<std::size_t>{3, 1}));  // ties in the order given
  EXPECT_TRUE(closest({}, 3).empty());
  std::vector<Assessment> a(2);
  a[0].fits = false, a[0].overshoot = 5;
  a[1].fits = false, a[1].overshoot = 1;
  EXPECT_EQ(closest_to_fitting(a, 3), (std::vector<std::size_t>{1, 0}));
  a[0].fits = true;  // one fits: no advice
  EXPECT_TRUE(closest_to_fitting(a, 3).empty());
}

}  // namespace
}  // namespace pipesim
