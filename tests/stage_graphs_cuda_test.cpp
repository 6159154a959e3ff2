// CUDA graphs of a stage's block ops (kernels/cuda/stage_graphs.hpp) and the executor with
// them (executor/cuda_backend.hpp, --cuda-graphs): a replayed F, I and W give bit for bit
// the numbers of the direct launches (the same kernels on the same data in the same order;
// the cuBLAS workspace is the context's in both), each replayed op is one cudaGraphLaunch,
// and a run with graphs has the same losses, weights, weight versions and staleness as one
// without. The arena's layout (device_arena.hpp) is tested on the host, GPU or not; the
// rest skips where no GPU is visible (PIPESIM_REQUIRE_GPU=1 makes that a failure).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "executor/backend_factory.hpp"
#include "executor/cuda_backend.hpp"
#include "executor_helpers.hpp"
#include "kernels/cuda/device_arena.hpp"
#include "kernels/cuda/stage_graphs.hpp"
#include "kernels/cuda/transfer.hpp"
#include "require_gpu.hpp"

namespace pipesim {
namespace {

using namespace testing_executor;
using ::testing::HasSubstr;

// ---- the arena's layout, on paper (no GPU needed) ----------------------------------------

char* fake(std::uintptr_t at) { return reinterpret_cast<char*>(at); }  // a pool pointer, never dereferenced

TEST(DeviceArenaLayout, FirstFitAlignedFreesReusedPeakRecorded) {
  DeviceArena paper;
  ASSERT_FALSE(paper.reserved());
  {
    ArenaScope scope(paper);
    EXPECT_EQ(DeviceArena::current(), &paper);
    EXPECT_EQ(paper.place(100, fake(0x1000), "a"), fake(0x1000));  // [0, 256)
    EXPECT_EQ(paper.place(300, fake(0x2000), "b"), fake(0x2000));  // [256, 768)
    EXPECT_EQ(paper.peak(), 768);
    paper.release(fake(0x1000));                                   // [0, 256) free again
    paper.place(200, fake(0x3000), "c");                           // fits in it: peak unchanged
    EXPECT_EQ(paper.peak(), 768);
    paper.place(10, fake(0x4000), "d");                            // after b
    EXPECT_EQ(paper.peak(), 1024);
    paper.release(fake(0x9999));  // unknown: nothing happens
    EXPECT_EQ(paper.peak(), 1024);
  }
  EXPECT_EQ(DeviceArena::current(), nullptr);
  paper.reset();
  EXPECT_EQ(paper.peak(), 0);
}

// ---- graphs of one stage ------------------------------------------------------------------

struct StageRun {
  KMat<float> y, dx;
  std::vector<BlockParams<float>> grads;
};

// F, I and W of one micro-batch through `g` on `slot`, from a zero gradient.
StageRun run_once(CudaContext& ctx, CudaStage& stage, CudaStageGraphs& g, const KMat<float>& x, const KMat<float>& dy,
                  int slot) {
  stage.zero_grads();
  CudaStageCache cache;
  StageRun r;
  const DeviceMatrix dx_in = to_device(ctx, x), dy_in = to_device(ctx, dy);
  r.y = to_host(ctx, g.forward(stage, dx_in, cache, slot));
  r.dx = to_host(ctx, g.backward_input(stage, dy_in, cache, slot));
  g.backward_weight(stage, cache, slot);
  ctx.synchronize("test");
  r.grads = stage.grads();
  return r;
}

void expect_identical(const StageRun& a, const StageRun& b, const std::string& what) {
  ASSERT_EQ(a.y.size(), b.y.size());
  EXPECT_EQ(std::memcmp(a.y.data(), b.y.data(), sizeof(float) * static_cast<std::size_t>(a.y.size())), 0) << what << ": F";
  EXPECT_EQ(std::memcmp(a.dx.data(), b.dx.data(), sizeof(float) * static_cast<std::size_t>(a.dx.size())), 0)
      << what << ": I";
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (std::size_t i = 0; i < a.grads.size(); ++i) EXPECT_TRUE(a.grads[i].data == b.grads[i].data) << what << ": W, block " << i;
}

KMat<float> random(int rows, int cols, std::uint64_t seed) {
  KMat<float> m(rows, cols);
  for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = static_cast<float>(uniform_pm1(seed));
  return m;
}

TEST(StageGraphsCuda, ReplayIsBitIdenticalToDirectLaunchesAndOneLaunchPerOp) {
  PIPESIM_SKIP_WITHOUT_GPU();
  for (const GemmPrecision p : {GemmPrecision::Bf16, GemmPrecision::Fp32}) {
    CudaContext ctx(0);
    const BlockConfig c{.batch = 2, .seq = 16, .hidden = 64, .heads = 4, .ffn = 256};  // gpt-tiny's block shape class
    CudaStage stage(ctx, c, 2, 7, p);
    const KMat<float> x = random(c.tokens(), c.hidden, 11), dy = random(c.tokens(), c.hidden, 12);

    CudaStageGraphs direct(ctx, false);
    const StageRun reference = run_once(ctx, stage, direct, x, dy, 0);
    EXPECT_EQ(direct.counts().direct_ops, 3);
    EXPECT_EQ(direct.counts().graph_launches, 0);

    CudaStageGraphs graphs(ctx, true);
    expect_identical(run_once(ctx, stage, graphs, x, dy, 0), reference, "first call (sized, direct)");
    expect_identical(run_once(ctx, stage, graphs, x, dy, 0), reference, "captured");
    expect_identical(run_once(ctx, stage, graphs, x, dy, 0), reference, "replayed");
    expect_identical(run_once(ctx, stage, graphs, x, dy, 1), reference, "another slot");
    ASSERT_EQ(graphs.fallback(), "") << precision_name(p);
    const LaunchCounts& n = graphs.counts();
    EXPECT_EQ(n.stage_ops, 12);
    EXPECT_EQ(n.direct_ops, 3) << "only the first F, I and W";
    EXPECT_EQ(n.graph_launches, 9) << "one launch per replayed op";
    EXPECT_EQ(n.captures, 6) << "one per (op, slot)";
    EXPECT_EQ(n.instantiations, 6);
  }
}

TEST(StageGraphsCuda, AnotherWeightVersionRecapturesAndStillMatches) {
  PIPESIM_SKIP_WITHOUT_GPU();
  CudaContext ctx(0);
  const BlockConfig c{.batch = 1, .seq = 8, .hidden = 32, .heads = 4, .ffn = 64};
  CudaStage stage(ctx, c, 1, 3, GemmPrecision::Bf16);
  const KMat<float> x = random(c.tokens(), c.hidden, 5), dy = random(c.tokens(), c.hidden, 6);
  CudaStageGraphs graphs(ctx, true);
  for (int k = 0; k < 2; ++k) run_once(ctx, stage, graphs, x, dy, 0);
  CudaStage kept = stage.weight_copy();  // other addresses: F and I on it must not replay `stage`'s graph
  CudaStageGraphs direct(ctx, false);
  CudaStageCache a, b;
  const KMat<float> want = to_host(ctx, direct.forward(kept, to_device(ctx, x), a, 0));
  const KMat<float> got = to_host(ctx, graphs.forward(kept, to_device(ctx, x), b, 0));
  EXPECT_EQ(std::memcmp(want.data(), got.data(), sizeof(float) * static_cast<std::size_t>(want.size())), 0);
  EXPECT_EQ(graphs.counts().captures, 4);
  EXPECT_EQ(graphs.counts().instantiations + graphs.counts().updates, 4);
}

TEST(StageGraphsCuda, AFullArenaIsOneLineAndACaptureThatFailsFallsBackToDirectLaunches) {
  PIPESIM_SKIP_WITHOUT_GPU();
  CudaContext ctx(0);
  {
    DeviceArena arena;
    arena.reserve(512, "test");
    ArenaScope scope(arena);
    const DeviceBuffer<float> fits(64, ctx.stream(), "fits");  // 256 bytes
    EXPECT_TRUE(fits.borrowed());
    try {
      const DeviceBuffer<float> too_big(200, ctx.stream(), "too big");
      FAIL() << "800 more bytes fitted in a 512-byte arena";
    } catch (const CudaError& e) {
      EXPECT_STREQ(e.what(), "cuda: too big: the graph arena of 512 bytes is full (1056 needed)");
    }
  }
  // Sized on a 1-block stage, then asked to capture a 2-block one: the arena is too small,
  // the capture fails, and the op (and every later one) runs directly, with the same numbers.
  const BlockConfig c{.batch = 1, .seq = 8, .hidden = 32, .heads = 4, .ffn = 64};
  CudaStage small(ctx, c, 1, 3, GemmPrecision::Bf16), big(ctx, c, 2, 4, GemmPrecision::Bf16);
  const KMat<float> x = random(c.tokens(), c.hidden, 5), dy = random(c.tokens(), c.hidden, 6);
  CudaStageGraphs direct(ctx, false), graphs(ctx, true);
  const StageRun reference = run_once(ctx, big, direct, x, dy, 0);
  run_once(ctx, small, graphs, x, dy, 0);
  expect_identical(run_once(ctx, big, graphs, x, dy, 0), reference, "after the fallback");
  EXPECT_FALSE(graphs.enabled());
  EXPECT_THAT(graphs.fallback(), HasSubstr("forward of slot 0: cuda: block forward"));
  EXPECT_THAT(graphs.fallback(), HasSubstr("is full"));
  EXPECT_EQ(graphs.counts().graph_launches, 0);
  EXPECT_EQ(graphs.counts().direct_ops, 6);
}

// ---- the executor with and without graphs -------------------------------------------------

MeasuredRun run_with(const Schedule& s, bool graphs) {
  RunOptions o = quick();
  o.keep_final_weights = true;
  o.backend = [graphs](int device, const ModelSetup& setup, const StopFlag&) -> std::unique_ptr<ComputeBackend> {
    CudaBackendOptions b;
    b.cuda_graphs = graphs;
    return std::make_unique<CudaBackend>(device, setup, b);
  };
  return run_schedule(s, tiny(), o);
}

void expect_same_run(const MeasuredRun& on, const MeasuredRun& off) {
  ASSERT_TRUE(on.complete);
  ASSERT_EQ(on.losses.size(), off.losses.size());
  for (std::size_t k = 0; k < on.losses.size(); ++k) EXPECT_EQ(on.losses[k].loss, off.losses[k].loss) << "loss " << k;
  EXPECT_TRUE(whole_model(on) == whole_model(off)) << "final weights differ";
  const auto a = by_ref(on.timeline), b = by_ref(off.timeline);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [ref, op] : a) EXPECT_EQ(op.weight_version, b.at(ref).weight_version) << "weight version of an op";
  for (std::size_t d = 0; d < on.result.devices.size(); ++d) {
    EXPECT_EQ(on.result.devices[d].peak_weight_versions, off.result.devices[d].peak_weight_versions);
    EXPECT_EQ(on.result.devices[d].peak_activation_bytes, off.result.devices[d].peak_activation_bytes);
  }
  ASSERT_EQ(on.result.staleness.size(), off.result.staleness.size());
  for (std::size_t st = 0; st < on.result.staleness.size(); ++st) {
    EXPECT_EQ(on.result.staleness[st].mismatch_sum, off.result.staleness[st].mismatch_sum);
    EXPECT_EQ(on.result.staleness[st].delay_sum, off.result.staleness[st].delay_sum);
  }
}

TEST(StageGraphsCuda, ExecutorRunWithGraphsMatchesDirectBitForBit) {
  PIPESIM_SKIP_WITHOUT_GPU();
  // p = 3: device 1 holds blocks only, so every one of its micro-batch ops is a block op.
  for (const char* name : {"1f1b", "zb-h1", "pipedream"}) {
    SCOPED_TRACE(name);
    const Schedule s = make(name, 3, 6, 2);
    const MeasuredRun on = run_with(s, true), off = run_with(s, false);
    expect_same_run(on, off);
    const BackendStats& mid = on.backend_stats.at(1);
    EXPECT_EQ(mid.path, "graphs");
    EXPECT_EQ(mid.launches.direct_ops, 3) << "the first F, I and W of the stage";
    EXPECT_EQ(mid.launches.graph_launches, mid.launches.stage_ops - 3);
    EXPECT_GT(mid.device_ns, 0);
    EXPECT_EQ(off.backend_stats.at(1).path, "direct (graphs off)");
    EXPECT_EQ(off.backend_stats.at(1).launches.graph_launches, 0);
  }
}

TEST(StageGraphsCuda, CudaGraphsFlagReachesTheBackend) {
  PIPESIM_SKIP_WITHOUT_GPU();
  RunOptions o = quick();
  o.backend = make_backend_factory("cuda", "off", false);
  const MeasuredRun off = run_schedule(make("1f1b", 2, 4), tiny(), o);
  for (const BackendStats& b : off.backend_stats) EXPECT_EQ(b.path, "direct (graphs off)");
  o.backend = make_backend_factory("cuda", "off", true);
  const MeasuredRun on = run_schedule(make("1f1b", 2, 4), tiny(), o);
  for (const BackendStats& b : on.backend_stats) EXPECT_THAT(b.path, HasSubstr("graphs"));
}

}  // namespace
}  // namespace pipesim
