// The executor on the CUDA backend (executor/cuda_backend.hpp): every generator's schedule
// runs on gpt-tiny with 2-4 virtual devices sharing one GPU, uses the weight versions the
// simulator predicts, holds the same activation bytes as the CPU backend op by op, and
// computes the CPU backend's losses and weights up to GEMM rounding. Faults and timeouts
// tear a CUDA run down cleanly. Built only with PIPESIM_CUDA; the GPU tests skip where the
// runtime sees no device (PIPESIM_REQUIRE_GPU=1 makes that a failure); the no-device
// error of the backend factory is tested for real there.
//
// Tolerances against the CPU backend's run of the same schedule (SGD, lr 0.05, 2-3 steps):
//   fp32 GEMMs: each micro-batch loss within 1e-4 relative, final weights within 1e-4 of
//     the largest weight. Both sides are fp32 and differ in summation order and FMA only
//     (kernels_cuda_test: ~1e-6 per block); 8 blocks and a head, then a few SGD steps that
//     pass the differences on, stay well under 1e-4.
//   bf16 GEMMs (the default): losses within 2e-2 relative, weights within 1e-2. Every GEMM
//     operand is rounded to 8 mantissa bits (kernels_cuda_test: 2e-2 forward, 5e-2
//     gradients per block); the loss averages those errors over the tokens, and a weight
//     moves by lr x gradient, so its error is a small part of the weight.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <thread>

#include "cost_models/uniform.hpp"
#include "executor/backend_factory.hpp"
#include "executor/cpu_backend.hpp"
#include "executor/cuda_backend.hpp"
#include "executor/cuda_plugin.hpp"
#include "executor_helpers.hpp"
#include "kernels/cuda/cuda_error.hpp"
#include "require_gpu.hpp"
#include "schedules/op_text.hpp"
#include "sim/timeline.hpp"

namespace pipesim {
namespace {

using namespace testing_executor;
using ::testing::HasSubstr;
using ::testing::StartsWith;

BackendFactory cuda(GemmPrecision p) {
  return [p](int device, const ModelSetup& setup, const StopFlag&) -> std::unique_ptr<ComputeBackend> {
    CudaBackendOptions o;
    o.precision = p;
    return std::make_unique<CudaBackend>(device, setup, o);
  };
}

// Per device, the activation bytes and entries after each change, in order.
std::map<int, std::vector<std::pair<std::int64_t, int>>> memory_steps(const Timeline& t) {
  std::map<int, std::vector<std::pair<std::int64_t, int>>> out;
  for (const MemoryRecord& m : t.memory) out[m.device].emplace_back(m.bytes, m.activations);
  return out;
}

class CudaEveryGenerator : public ::testing::TestWithParam<Case> {};

TEST_P(CudaEveryGenerator, MatchesTheSimulatorAndTheCpuBackend) {
  PIPESIM_SKIP_WITHOUT_GPU();
  const Case& c = GetParam();
  const Schedule s = make(c.name, c.p, c.m, c.iterations);
  TimelineRecorder sim;
  simulate(s, UniformCostModel(UniformCostConfig{}), &sim);
  RunOptions o = quick();
  o.keep_final_weights = true;
  const MeasuredRun cpu = run_schedule(s, tiny(), o);
  for (const GemmPrecision p : {GemmPrecision::Fp32, GemmPrecision::Bf16}) {
    SCOPED_TRACE(precision_name(p));
    const double loss_tol = p == GemmPrecision::Fp32 ? 1e-4 : 2e-2;
    const double weight_tol = p == GemmPrecision::Fp32 ? 1e-4 : 1e-2;
    o.backend = cuda(p);
    const MeasuredRun gpu = run_schedule(s, tiny(), o);
    ASSERT_TRUE(gpu.complete);
    ASSERT_EQ(gpu.timeline.ops.size(), s.total_ops());
    const auto measured = by_ref(gpu.timeline);
    for (const OpRecord& r : sim.timeline.ops) {
      const OpRecord& m = measured.at({r.ref.device, r.ref.index});
      ASSERT_EQ(m.op, r.op);
      EXPECT_EQ(m.weight_version, r.weight_version) << to_string(r.op) << " on device " << r.ref.device;
      EXPECT_LE(m.start, m.end);
    }
    EXPECT_EQ(memory_steps(gpu.timeline), memory_steps(cpu.timeline)) << "activation bytes differ from the CPU's";
    ASSERT_EQ(gpu.result.devices.size(), cpu.result.devices.size());
    for (std::size_t d = 0; d < cpu.result.devices.size(); ++d)
      EXPECT_EQ(gpu.result.devices[d].peak_weight_versions, cpu.result.devices[d].peak_weight_versions) << "device " << d;
    ASSERT_EQ(gpu.losses.size(), cpu.losses.size());
    for (std::size_t k = 0; k < cpu.losses.size(); ++k) {
      EXPECT_EQ(gpu.losses[k].microbatch, cpu.losses[k].microbatch);
      EXPECT_TRUE(std::isfinite(gpu.losses[k].loss));
      EXPECT_NEAR(gpu.losses[k].loss, cpu.losses[k].loss, loss_tol * std::abs(cpu.losses[k].loss))
          << "micro-batch " << cpu.losses[k].microbatch << " pipeline " << cpu.losses[k].pipeline;
    }
    for (int pl = 0; pl < s.num_pipelines; ++pl)
      EXPECT_LT(relative_difference(whole_model(gpu, pl), whole_model(cpu, pl)), weight_tol) << "pipeline " << pl;
  }
}

// Every generator (executor_helpers.hpp's list, executor_test's too), on 2 to 4 virtual devices.
INSTANTIATE_TEST_SUITE_P(Generators, CudaEveryGenerator, ::testing::ValuesIn(every_generator()), case_name);

// Adam on every group (blocks, embedding, head: CudaParams), against the CPU's. An Adam
// update moves a number by at most about lr per step, so even where rounding flips the sign
// of a near-zero gradient the weights stay within steps x lr = 3e-3 of the CPU's, against a
// largest weight of 1 (the norm gains): 1e-2 holds in both precisions.
TEST(ExecutorCuda, AdamTrainsLikeTheCpu) {
  PIPESIM_SKIP_WITHOUT_GPU();
  const Schedule s = make("1f1b", 2, 4, 3);
  RunOptions o = quick(OptimizerKind::Adam, 1e-3);
  o.keep_final_weights = true;
  const MeasuredRun cpu = run_schedule(s, tiny(), o);
  RunOptions frozen = o;
  frozen.optimizer.lr = 0;  // no update: the initial weights
  const std::vector<float> initial = whole_model(run_schedule(s, tiny(), frozen), 0);
  for (const GemmPrecision p : {GemmPrecision::Fp32, GemmPrecision::Bf16}) {
    SCOPED_TRACE(precision_name(p));
    o.backend = cuda(p);
    const MeasuredRun gpu = run_schedule(s, tiny(), o);
    ASSERT_EQ(gpu.losses.size(), cpu.losses.size());
    const double tol = p == GemmPrecision::Fp32 ? 1e-3 : 2e-2;
    for (std::size_t k = 0; k < cpu.losses.size(); ++k)
      EXPECT_NEAR(gpu.losses[k].loss, cpu.losses[k].loss, tol * std::abs(cpu.losses[k].loss)) << "micro-batch " << k;
    EXPECT_LT(relative_difference(whole_model(gpu, 0), whole_model(cpu, 0)), 1e-2);
    EXPECT_GT(relative_difference(whole_model(gpu, 0), initial), 1e-4) << "the weights moved";
  }
}

TEST(ExecutorCuda, VirtualDevicesShareTheVisibleGpus) {
  PIPESIM_SKIP_WITHOUT_GPU();
  const int count = cuda_device_count();
  ModelSetup setup{tiny(), 1, 1, 2, 1, {}, 4, nullptr};
  for (int d = 0; d < 4; ++d) EXPECT_EQ(CudaBackend(d, setup).gpu(), d % count);
}

// Green contexts (kernels/cuda/sm_partition.hpp): 4 virtual devices on their own SMs each
// train the same model as 4 sharing all SMs (cuBLAS may pick other GEMM algorithms for
// fewer SMs, so bf16 tolerances).
TEST(ExecutorCuda, SmPartitionedRunMatchesTheShared) {
  PIPESIM_SKIP_WITHOUT_GPU();
  {
    const SmPartition part(0, 4);
    EXPECT_EQ(part.groups(), 4);
    EXPECT_GE(part.sms_per_group(), 8);
    EXPECT_LE(4 * part.sms_per_group(), part.total_sms());
    for (int g = 0; g < 4; ++g) EXPECT_NE(part.stream(g), nullptr);
  }
  const Schedule s = make("1f1b", 4, 4, 2);
  RunOptions o = quick();
  o.keep_final_weights = true;
  o.backend = make_backend_factory("cuda", "off");
  const MeasuredRun shared = run_schedule(s, tiny(), o);
  o.backend = make_backend_factory("cuda", "on");
  const MeasuredRun parted = run_schedule(s, tiny(), o);
  ASSERT_TRUE(parted.complete);
  ASSERT_EQ(parted.losses.size(), shared.losses.size());
  for (std::size_t k = 0; k < shared.losses.size(); ++k)
    EXPECT_NEAR(parted.losses[k].loss, shared.losses[k].loss, 2e-2 * std::abs(shared.losses[k].loss));
  EXPECT_LT(relative_difference(whole_model(parted, 0), whole_model(shared, 0)), 1e-2);
}

enum class Fault { Throw, WrongPayload, Hang };

// The CUDA backend, except on one op.
class FaultyCuda final : public CudaBackend {
 public:
  FaultyCuda(int device, const ModelSetup& setup, const StopFlag& stop, Op target, Fault fault)
      : CudaBackend(device, setup), stop_(stop), target_(target), fault_(fault) {}
  std::unique_ptr<Payload> forward(const OpArgs& a, const Payload* input, double* loss) override {
    if (!(a.op == target_)) return CudaBackend::forward(a, input, loss);
    if (fault_ == Fault::Throw) throw CudaError("cuda: injected failure");
    if (fault_ == Fault::Hang) {
      while (!stop_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      throw InputError("gave up after the abort");
    }
    CudaBackend::forward(a, input, loss);
    return std::make_unique<CpuPayload>(KMat<float>::Zero(3, 5));  // a host matrix where a device one belongs
  }

 private:
  const StopFlag& stop_;
  Op target_;
  Fault fault_;
};

ExecutionError failure(const Schedule& s, Op target, Fault fault, std::chrono::milliseconds timeout) {
  RunOptions o = quick();
  o.timeout = timeout;
  o.backend = [=](int device, const ModelSetup& setup, const StopFlag& stop) -> std::unique_ptr<ComputeBackend> {
    return std::make_unique<FaultyCuda>(device, setup, stop, target, fault);
  };
  try {
    run_schedule(s, tiny(), o);
  } catch (const ExecutionError& e) {
    return e;
  }
  ADD_FAILURE() << "the run did not fail";
  return ExecutionError("none", -1, -1, std::make_shared<MeasuredRun>());
}

TEST(ExecutorCuda, FaultsEndTheRunAndTheNextRunWorks) {
  PIPESIM_SKIP_WITHOUT_GPU();
  const Schedule s = make("1f1b", 2, 4, 2);
  Op target;
  target.kind = OpKind::F;
  target.stage = 0;
  target.microbatch = 2;
  {
    const ExecutionError e = failure(s, target, Fault::Throw, std::chrono::seconds(30));
    EXPECT_EQ(e.device(), 0);
    EXPECT_THAT(e.what(), StartsWith("device 0 op "));
    EXPECT_THAT(e.what(), HasSubstr("cuda: injected failure"));
    EXPECT_FALSE(e.partial().complete);
    EXPECT_FALSE(e.partial().timeline.ops.empty());
  }
  {
    const ExecutionError e = failure(s, target, Fault::WrongPayload, std::chrono::seconds(30));
    EXPECT_EQ(e.device(), 0) << "the sender's copy names the foreign payload";
    EXPECT_THAT(e.what(), HasSubstr("copy for send: the output is not a CUDA tensor"));
  }
  {
    const ExecutionError e = failure(s, target, Fault::Hang, std::chrono::milliseconds(300));
    EXPECT_THAT(e.what(), HasSubstr("no op finished and no message moved"));
  }
  RunOptions o = quick();
  o.backend = make_backend_factory("cuda");
  const MeasuredRun again = run_schedule(s, tiny(), o);
  EXPECT_TRUE(again.complete);
  EXPECT_EQ(again.timeline.ops.size(), s.total_ops());
}

// Runs everywhere: the factory's answers without a GPU (or with one: a working factory).
TEST(ExecutorCudaFactory, NamesTheBackendsAndTheMissingDevice) {
  EXPECT_TRUE(cuda_plugin_built());
  try {
    make_backend_factory("tpu");
    FAIL() << "an unknown backend";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--backend: expected cpu or cuda, got 'tpu'");
  }
  try {
    make_backend_factory("cpu", "half");
    FAIL() << "an unknown --sm-partition";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--sm-partition: expected auto, on or off, got 'half'");
  }
  RunOptions o = quick();
  o.backend = make_backend_factory("cpu");
  EXPECT_TRUE(run_schedule(make("1f1b", 2, 2, 1), tiny(), o).complete);
  std::string why;
  if (cuda_device_count(&why) > 0) {
    EXPECT_TRUE(static_cast<bool>(make_backend_factory("cuda")));
    return;
  }
  try {
    make_backend_factory("cuda");
    FAIL() << "a CUDA backend without a device";
  } catch (const CudaUnavailable& e) {  // through the plugin (executor/cuda_plugin.hpp): exit code 6 in the CLI
    EXPECT_THAT(e.what(), StartsWith("--backend cuda: no CUDA device is visible ("));
    EXPECT_THAT(e.what(), HasSubstr("use --backend cpu"));
  }
}

}  // namespace
}  // namespace pipesim
