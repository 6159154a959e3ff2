// The executor's numbers: synchronous pipelining does not change the math (one stage and
// two stages give the same weights), Chimera's GradSync keeps its replicas identical, and
// training on the synthetic data lowers the loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "executor/cpu_backend.hpp"
#include "executor_helpers.hpp"

namespace pipesim {
namespace {

using namespace testing_executor;

RunOptions keep(OptimizerKind kind) {
  RunOptions o = quick(kind, kind == OptimizerKind::Sgd ? 0.1 : 1e-2);
  o.keep_final_weights = true;
  return o;
}

std::string optimizer_name(const ::testing::TestParamInfo<OptimizerKind>& param) {
  return param.param == OptimizerKind::Sgd ? "sgd" : "adam";
}

class SameMath : public ::testing::TestWithParam<OptimizerKind> {};

TEST_P(SameMath, OneStageAndTwoStagesGiveTheSameWeights) {
  const RunOptions o = keep(GetParam());
  const MeasuredRun one = run_schedule(make("1f1b", 1, 4, 2), tiny(), o);
  const MeasuredRun start = run_schedule(make("1f1b", 1, 4, 1), tiny(), [] {
    RunOptions z = keep(OptimizerKind::Sgd);
    z.optimizer.lr = 0;  // no update: the initial weights
    return z;
  }());
  ASSERT_EQ(one.final_weights[0].size(), 1u);
  // The run changed the weights, so agreeing below means something.
  EXPECT_GT(relative_difference(whole_model(start), whole_model(one)), 1e-4);
  for (const std::string name : {"1f1b", "gpipe", "zb-h1", "interleaved"}) {
    const MeasuredRun two = run_schedule(make(name, 2, 4, 2), tiny(), o);
    EXPECT_LT(relative_difference(whole_model(two), whole_model(one)), 1e-5) << name;
    ASSERT_EQ(one.losses.size(), two.losses.size());
    for (std::size_t k = 0; k < one.losses.size(); ++k) {
      EXPECT_EQ(one.losses[k].microbatch, two.losses[k].microbatch);
      EXPECT_NEAR(one.losses[k].loss, two.losses[k].loss, 1e-5 * std::abs(one.losses[k].loss)) << name << " mb " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, SameMath, ::testing::Values(OptimizerKind::Sgd, OptimizerKind::Adam),
                         optimizer_name);

TEST(ExecutorNumerics, ChimeraGradSyncKeepsReplicasIdentical) {
  const Schedule s = make("chimera", 4, 4, 2);
  ASSERT_EQ(s.num_pipelines, 2);
  const MeasuredRun run = run_schedule(s, tiny(), keep(OptimizerKind::Sgd));
  for (int st = 0; st < s.num_stages; ++st)
    EXPECT_EQ(run.final_weights[0][static_cast<std::size_t>(st)], run.final_weights[1][static_cast<std::size_t>(st)])
        << "stage " << st;
  // ... and they equal one pipeline training on all the micro-batches (up to float sums;
  // with SGD, whose update does not amplify rounding in near-zero gradients as Adam's does).
  const MeasuredRun one = run_schedule(make("1f1b", 1, s.microbatches, 2), tiny(), keep(OptimizerKind::Sgd));
  EXPECT_LT(relative_difference(whole_model(run), whole_model(one)), 1e-5);
}

// GradSync's pieces on the CPU backend: an exported gradient is one flat copy of the
// replica's gradient tensors; a gradient another backend exported is refused by name.
TEST(ExecutorNumerics, GradSyncBuffersAreTheBackendsOwn) {
  ModelSetup setup;
  setup.model = tiny();
  CpuBackend backend(setup);
  backend.create_replica(ReplicaSpec{0, 0, stage_layout(tiny().layers, 0, 1)});
  const std::unique_ptr<GradientBuffer> mine = backend.export_gradients(0, 0);
  EXPECT_EQ(mine->size(), static_cast<std::int64_t>(backend.flat_weights(0, 0).size()));
  struct Foreign final : GradientBuffer {
    std::int64_t size() const override { return 0; }
  } foreign;
  try {
    backend.add_gradients(*mine, foreign);
    FAIL() << "a foreign gradient was summed";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "GradSync: a gradient from another backend reached the CPU backend");
  }
  EXPECT_THROW(backend.import_gradients(0, 0, foreign), InputError);
}

TEST(ExecutorNumerics, AsynchronousSchedulesTrainOnStaleWeights) {
  // PipeDream's stashed versions differ from synchronous 1F1B's math: the update lands
  // between a micro-batch's forward and backward.
  const MeasuredRun sync = run_schedule(make("1f1b", 2, 4, 2), tiny(), keep(OptimizerKind::Sgd));
  const MeasuredRun async = run_schedule(make("pipedream", 2, 4, 2), tiny(), keep(OptimizerKind::Sgd));
  EXPECT_GT(relative_difference(whole_model(async), whole_model(sync)), 1e-4);
}

TEST(ExecutorNumerics, TrainingLowersTheLoss) {
  const MeasuredRun run = run_schedule(make("1f1b", 2, 4, 6), tiny(), quick(OptimizerKind::Adam, 1e-2));
  ASSERT_EQ(run.iteration_loss.size(), 6u);
  EXPECT_NEAR(run.iteration_loss.front(), std::log(256.0), 1.0);  // starts near uniform over the vocabulary
  EXPECT_LT(run.iteration_loss.back(), run.iteration_loss.front() * 0.8);
}

TEST(ExecutorNumerics, SameSeedSameNumbersOtherSeedOthers) {
  RunOptions o = keep(OptimizerKind::Adam);
  const MeasuredRun a = run_schedule(make("1f1b", 2, 2, 1), tiny(), o);
  const MeasuredRun b = run_schedule(make("1f1b", 2, 2, 1), tiny(), o);
  EXPECT_EQ(whole_model(a), whole_model(b));
  o.seed = 2;
  const MeasuredRun c = run_schedule(make("1f1b", 2, 2, 1), tiny(), o);
  EXPECT_NE(whole_model(a), whole_model(c));
}

}  // namespace
}  // namespace pipesim
