// assess/profiled_source: a run simulated from a GPU profile, priced on the catalog GPU it
// was measured on (--cost-hardware): peak, price and capacity of a whole GPU or of one
// virtual device's share, the memory model's persistent parts around the measured
// activations, and the refusals (a CPU profile, a virtual device larger than the GPU).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "assess/profiled_source.hpp"
#include "cost_models/catalog.hpp"
#include "cost_models/memory_model.hpp"
#include "core/error.hpp"
#include "input_error.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "synthetic_profile.hpp"

namespace pipesim {
namespace {

using ::testing::HasSubstr;

TimingStats at(double seconds) { return summarize_timings({seconds, seconds, seconds}); }

ProfiledCostModel cuda_model(int virtual_devices = 0, int sms = 0, const std::string& optimizer = "adam") {
  ProfiledCostConfig c;
  c.profile = synthetic_profile(find_model("gpt-tiny"), {1, 2, 4}, at);
  c.profile.backend = "cuda";
  c.profile.machine.device = "NVIDIA H200 (sm_90)";
  c.profile.machine.virtual_devices = virtual_devices;
  c.profile.machine.sms = sms;
  c.source = "gpu.json";
  c.micro_batch_size = 2;
  c.optimizer = optimizer;
  return ProfiledCostModel(c);
}

TEST(ProfiledSource, AWholeGpuIsTheCatalogsMachine) {
  const ProfiledCostModel model = cuda_model();
  const GpuSpec h200 = find_gpu("h200");
  const Schedule s = generate("1f1b", {.p = 2, .m = 4});
  const ProfiledSource source(model, h200, s.num_devices);
  const Deployment d = source.deployment();
  EXPECT_EQ(d.model, "gpt-tiny");
  EXPECT_EQ(d.hardware, "h200");
  EXPECT_EQ(d.nodes * d.gpus_per_node, 2);
  EXPECT_EQ(d.tp, 1);
  EXPECT_EQ(d.dp, 1);
  EXPECT_EQ(d.micro_batch_size, 2);
  EXPECT_EQ(d.seq_len, model.model().seq_len);
  EXPECT_DOUBLE_EQ(d.peak_flops, h200.peak_flops.at("bf16"));  // the CUDA backend's GEMMs
  EXPECT_EQ(d.capacity, h200.memory_bytes);
  ASSERT_TRUE(d.price_per_hour);
  EXPECT_DOUBLE_EQ(*d.price_per_hour, *h200.price_per_hour);

  // MFU and tokens/s of a run follow from the deployment's closed form.
  Simulator simulator;
  const SimResult r = simulator.run(s, model);
  const Metrics m = summarize(s, r);
  const Assessment a = assess(source, s, r, m);
  const double seconds = static_cast<double>(m.time_per_iteration) * 1e-9;
  const double sequences = 4.0 * 2;  // m x micro-batch size, dp 1
  EXPECT_DOUBLE_EQ(a.tokens_per_iteration, sequences * d.seq_len);
  EXPECT_NEAR(a.mfu, sequences * d.flops_per_sequence / (seconds * 2 * d.peak_flops), 1e-12);
  EXPECT_TRUE(a.fits);
}

TEST(ProfiledSource, AVirtualDeviceIsItsShareOfOneGpu) {
  const ProfiledCostModel model = cuda_model(4, 33);
  const GpuSpec h200 = find_gpu("h200");
  const Deployment d = ProfiledSource(model, h200, 4).deployment();
  EXPECT_DOUBLE_EQ(d.peak_flops, h200.peak_flops.at("bf16") * 33 / h200.sms);
  EXPECT_EQ(d.capacity, h200.memory_bytes / 4);
  EXPECT_DOUBLE_EQ(*d.price_per_hour, *h200.price_per_hour * 33 / h200.sms);
  EXPECT_THAT(error_of([&] { ProfiledSource(cuda_model(4, h200.sms + 1), h200, 4); }),
              HasSubstr("timed a virtual device of 133 SMs, but the catalog gives this GPU 132 SMs"));
}

TEST(ProfiledSource, AGpuWithoutThePeakOfTheGemmDtypeIsRefused) {
  GpuSpec gpu = find_gpu("h200");
  gpu.peak_flops.erase("bf16");
  EXPECT_THAT(error_of([&] { ProfiledSource(cuda_model(), gpu, 2); }),
              HasSubstr("--cost-hardware h200: the catalog gives no bf16 peak rate, the dtype of the profile's GEMMs"));
}

TEST(ProfiledSource, MemoryIsTheMixedPrecisionAccountingAroundTheMeasuredActivations) {
  const Schedule s = generate("1f1b", {.p = 2, .m = 4});
  for (const std::string optimizer : {"adam", "sgd"}) {
    const ProfiledCostModel model = cuda_model(0, 0, optimizer);
    const ProfiledSource source(model, find_gpu("h200"), 2);
    DeviceStats stats;
    stats.peak_activation_bytes = 12345;
    stats.peak_weight_versions = 1;
    for (int device = 0; device < 2; ++device) {
      const DeviceMemory mem = source.device_memory(s, device, stats);
      const std::int64_t params = model.stage_parameters(device, 2);
      EXPECT_EQ(mem.parameters, params);
      EXPECT_EQ(mem.weights, 2 * params);    // the bf16 copy the GEMMs read
      EXPECT_EQ(mem.gradients, 4 * params);  // fp32
      EXPECT_EQ(mem.optimizer, (optimizer == "adam" ? 12 : 4) * params) << optimizer;  // master (+ m, v)
      EXPECT_EQ(mem.activations, 12345);
      EXPECT_EQ(mem.workspace, 0);
      EXPECT_EQ(mem.comm_buffers, 4 * model.message_bytes(Op{}, scale_of(s)));
      EXPECT_EQ(mem.total, mem.weights + mem.gradients + mem.optimizer + mem.activations + mem.comm_buffers);
      EXPECT_TRUE(mem.fits);
    }
    stats.peak_weight_versions = 0;  // fewer copies than the replica it holds
    EXPECT_THAT(error_of([&] { source.device_memory(s, 0, stats); }), HasSubstr("at least as many weight copies"));
  }
}

TEST(ProfiledSource, ACpuProfileHasNoCatalogMachine) {
  ProfiledCostConfig c;
  c.profile = synthetic_profile(find_model("gpt-tiny"), {1, 2, 4}, at);
  c.source = "cpu.json";
  const ProfiledCostModel model(c);
  EXPECT_THAT(error_of([&] { ProfiledSource(model, find_gpu("h200"), 2); }),
              HasSubstr("--cost-hardware h200: cpu.json was measured on the CPU (Test CPU), not on a GPU"));
}

}  // namespace
}  // namespace pipesim
