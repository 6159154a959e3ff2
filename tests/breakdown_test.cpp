// Where the time goes (sim/breakdown.hpp): the categories add up to the nanosecond to time
// per iteration x iterations counted on every device, on every generator and on a model run;
// known values on hand-checkable runs (the 1F1B / GPipe bubble (p-1)(t_F + t_B), Megatron's
// (p-1)/(m+p-1)); each cost share appears only with the setting that causes it.
#include <gtest/gtest.h>

#include <string>

#include "cost_models/analytical.hpp"
#include "cost_models/catalog.hpp"
#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "sim/breakdown.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "sim/resources.hpp"
#include "tests/forwarding_cost_model.hpp"

namespace pipesim {
namespace {

using C = TimeCategory;

struct Sim {
  SimResult result;
  Metrics metrics;
  TimeBreakdown breakdown;
};

Sim simulated(const Schedule& s, const CostModel& costs) {
  BreakdownRecorder recorder(s);
  Sim out;
  out.result = simulate(s, costs, &recorder);
  out.metrics = summarize(s, out.result);
  out.breakdown = time_breakdown(s, out.result, costs, recorder);
  return out;
}

UniformCostModel uniform(Tick f, Tick b, Tick w = 0) {
  UniformCostConfig c;
  c.stage = StageCosts{f, b, w};
  return UniformCostModel(c);
}

// Every device's categories total the window, which is time per iteration x counted.
void expect_exact(const Sim& r, int devices) {
  const TimeBreakdown& t = r.breakdown;
  ASSERT_EQ(t.per_device.size(), static_cast<std::size_t>(devices));
  EXPECT_EQ(t.window.per_iteration, r.metrics.time_per_iteration);
  EXPECT_EQ(t.window_ticks(), r.metrics.time_per_iteration * t.window.counted);
  for (int d = 0; d < devices; ++d) {
    Tick sum = 0;
    for (C c : kTimeCategories) {
      EXPECT_GE(t.per_device[static_cast<std::size_t>(d)][c], 0) << time_category_key(c);
      sum += t.per_device[static_cast<std::size_t>(d)][c];
    }
    EXPECT_EQ(sum, t.window_ticks()) << "device " << d;
  }
}

Tick at(const Sim& r, int device, C c) { return r.breakdown.per_device[static_cast<std::size_t>(device)][c]; }

TEST(Breakdown, OneF1BTwoStagesTwoMicrobatchesByHand) {
  // Device 0: F0 [0,1) F1 [1,2) B0 [4,6) B1 [7,9); device 1: F0 [1,2) B0 [2,4) F1 [4,5)
  // B1 [5,7) (ms). Device 0 waits [2,4) and [6,7) for device 1's gradients; device 1 has
  // not started in [0,1) and has finished in [7,9).
  const Sim r = simulated(generate("1f1b", ScheduleParams{.p = 2, .m = 2}), uniform(kNsPerMs, 2 * kNsPerMs));
  expect_exact(r, 2);
  EXPECT_EQ(r.breakdown.window.start, 0);
  EXPECT_EQ(r.breakdown.window.end, 9 * kNsPerMs);
  EXPECT_EQ(at(r, 0, C::Forward), 2 * kNsPerMs);
  EXPECT_EQ(at(r, 0, C::Backward), 4 * kNsPerMs);
  EXPECT_EQ(at(r, 0, C::Pipeline), 3 * kNsPerMs);
  EXPECT_EQ(at(r, 0, C::Idle), 0);
  EXPECT_EQ(at(r, 1, C::Forward), 2 * kNsPerMs);
  EXPECT_EQ(at(r, 1, C::Backward), 4 * kNsPerMs);
  EXPECT_EQ(at(r, 1, C::Pipeline), 0);
  EXPECT_EQ(at(r, 1, C::Idle), 3 * kNsPerMs);
  // The bubble, (p-1)/(m+p-1) = 1/3 of the iteration, is the pipeline's wait + idle.
  EXPECT_DOUBLE_EQ(r.breakdown.mean_share(C::Pipeline) + r.breakdown.mean_share(C::Idle), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.breakdown.mean_per_iteration_s(C::Backward), 4e-3);
  EXPECT_EQ(r.breakdown.critical_device, 0);  // equal busy time: the first
}

TEST(Breakdown, GpipeAnd1F1BBubbleIsTheClosedForm) {
  for (const char* name : {"gpipe", "1f1b"})
    for (int p : {1, 2, 4, 8})
      for (int m : {1, 3, 8}) {
        SCOPED_TRACE(std::string(name) + " p=" + std::to_string(p) + " m=" + std::to_string(m));
        const Tick f = 1000, b = 2500;
        const Sim r = simulated(generate(name, ScheduleParams{.p = p, .m = m}), uniform(f, b));
        expect_exact(r, p);
        for (int d = 0; d < p; ++d) {
          EXPECT_EQ(at(r, d, C::Forward), m * f);
          EXPECT_EQ(at(r, d, C::Backward), m * b);
          EXPECT_EQ(at(r, d, C::Pipeline) + at(r, d, C::Idle), (p - 1) * (f + b));
        }
        EXPECT_NEAR(r.breakdown.mean_share(C::Pipeline) + r.breakdown.mean_share(C::Idle),
                    static_cast<double>(p - 1) / (m + p - 1), 1e-12);
      }
}

// Links with latency and bandwidth, a split backward, an optimizer step and gradients to
// reduce: every category can appear, and the window need not divide evenly.
UniformCostConfig every_category() {
  UniformCostConfig c;
  c.stage = StageCosts{1003, 2011, 907};
  c.optimizer = 333;
  c.message_bytes = 1000;
  c.grad_bytes = 50000;
  c.link_latency = 17;
  c.link_bandwidth = 1e9;
  return c;
}

TEST(Breakdown, SumsExactlyOnEveryGenerator) {
  const UniformCostModel costs(every_category());
  for (const GeneratorInfo& g : generators())
    for (int iterations : {1, 3}) {
      SCOPED_TRACE(std::string(g.name) + " iterations=" + std::to_string(iterations));
      const Schedule s = generate(g.name, ScheduleParams{.p = 4, .m = 8, .iterations = iterations});
      const Sim r = simulated(s, costs);
      expect_exact(r, s.num_devices);
      const Sim again = simulated(s, costs);
      EXPECT_EQ(again.breakdown.per_device, r.breakdown.per_device);  // deterministic
      EXPECT_EQ(again.breakdown.critical_device, r.breakdown.critical_device);
    }
}

TEST(Breakdown, SplitBackwardCountsInputAndWeightGradients) {
  const Tick f = 1000, b = 3000, w = 1200;
  const Sim r = simulated(generate("zb-h1", ScheduleParams{.p = 4, .m = 8}), uniform(f, b, w));
  expect_exact(r, 4);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(at(r, d, C::Forward), 8 * f);
    EXPECT_EQ(at(r, d, C::InputGrad), 8 * (b - w));
    EXPECT_EQ(at(r, d, C::WeightGrad), 8 * w);
    EXPECT_EQ(at(r, d, C::Backward), 0);
  }
}

TEST(Breakdown, SteadyStateWindowLeavesOutTheFirstIteration) {
  UniformCostConfig c;
  c.stage = StageCosts{1000, 2000, 0};
  c.optimizer = 500;
  const UniformCostModel costs(c);
  const Sim r = simulated(generate("1f1b", ScheduleParams{.p = 4, .m = 4, .iterations = 3}), costs);
  expect_exact(r, 4);
  EXPECT_EQ(r.breakdown.window.counted, 2);
  EXPECT_EQ(r.breakdown.window.end, *std::max_element(r.result.iteration_end.begin(), r.result.iteration_end.end()));
  // Two iterations' worth of work in the window on each device: 2 x m forwards, backwards
  // and one optimizer step per iteration.
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(at(r, d, C::Forward), 2 * 4 * 1000) << d;
    EXPECT_EQ(at(r, d, C::Backward), 2 * 4 * 2000) << d;
    EXPECT_EQ(at(r, d, C::Optimizer), 2 * 500) << d;
  }
}

TEST(Breakdown, ExposedGradSyncIsDataParallelSync) {
  // DualPipe reduces each stage's gradients over its two replicas with GradSync.
  UniformCostConfig c;
  c.stage = StageCosts{1000, 2000, 800};
  c.link_bandwidth = 1e9;
  const Schedule s = generate("dualpipe", ScheduleParams{.p = 4, .m = 8});
  c.grad_bytes = 0;
  const Sim free = simulated(s, UniformCostModel(c));
  c.grad_bytes = 4'000'000;  // 4 ms on the link: cannot hide
  const Sim paid = simulated(s, UniformCostModel(c));
  expect_exact(free, 4);
  expect_exact(paid, 4);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(at(free, d, C::DpSync), 0) << d;
    EXPECT_GT(at(paid, d, C::DpSync), 0) << d;
  }
}

// ---- a model run: recomputation, TP and DP shares from the analytical model -----------

// gpt-small (untied: else stages 0 and p-1 reduce the embedding's gradients at any dp) on
// 2 nodes of 4 H100s, p = 2.
AnalyticalConfig small(int tp, int dp, Recompute recompute) {
  AnalyticalConfig c;
  c.model = find_model("gpt-small");
  c.model.tied_embeddings = false;
  c.cluster = make_cluster("h100-sxm", 2, 4);
  c.pipeline_devices = 2;
  c.tp = tp;
  c.dp = dp;
  c.micro_batch_size = 2;
  c.recompute = recompute;
  return c;
}

Tick summed(const Sim& r, C c) {
  Tick sum = 0;
  for (const CategoryTicks& d : r.breakdown.per_device) sum += d[c];
  return sum;
}

TEST(Breakdown, ModelRunSharesOnlyWithTheirSetting) {
  for (const char* name : {"1f1b", "zb-h1", "interleaved"})
    for (int tp : {1, 2})
      for (int dp : {1, 2})
        for (Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full}) {
          SCOPED_TRACE(std::string(name) + " tp=" + std::to_string(tp) + " dp=" + std::to_string(dp) +
                       " recompute=" + std::to_string(static_cast<int>(rc)));
          const AnalyticalCostModel model(small(tp, dp, rc));
          const Schedule s = generate(name, ScheduleParams{.p = 2, .m = 4, .iterations = 2});
          const Sim r = simulated(s, model);
          expect_exact(r, 2);
          EXPECT_EQ(summed(r, C::Recompute) > 0, rc != Recompute::None);
          EXPECT_EQ(summed(r, C::TpComm) > 0, tp > 1);
          EXPECT_EQ(summed(r, C::DpSync) > 0, dp > 1);
          EXPECT_GT(summed(r, C::Optimizer), 0);
          EXPECT_EQ(summed(r, C::Pipeline) > 0 || summed(r, C::Idle) > 0, true);  // p = 2 has a bubble
        }
}

TEST(Breakdown, TiedEmbeddingsGradientSumIsGradientSync) {
  // Megatron's embedding-gradient allreduce between the first and the last stage: in the
  // OptStep of the devices holding them (1F1B p=4: devices 0 and 3), none elsewhere.
  AnalyticalConfig c = small(1, 1, Recompute::None);
  c.model.tied_embeddings = true;
  c.pipeline_devices = 4;
  const AnalyticalCostModel model(c);
  const Sim r = simulated(generate("1f1b", ScheduleParams{.p = 4, .m = 4}), model);
  expect_exact(r, 4);
  EXPECT_GT(at(r, 0, C::DpSync), 0);
  EXPECT_EQ(at(r, 1, C::DpSync), 0);
  EXPECT_EQ(at(r, 2, C::DpSync), 0);
  EXPECT_GT(at(r, 3, C::DpSync), 0);
}

// A uniform model that does not claim its answers are the same for every micro-batch: the
// ready pass gives op records, not their totals.
class UnsharedUniform final : public testing_costs::ForwardingCostModel {
 public:
  using ForwardingCostModel::ForwardingCostModel;
};

bool has_grad_sync(const Schedule& s) {
  for (const auto& list : s.ops)
    for (const Op& op : list)
      if (op.kind == OpKind::GradSync) return true;
  return false;
}

// The recorder's two ways (the ready pass's totals, spans cut to the window afterwards) give
// the same breakdown to the nanosecond: every generator, one and three iterations, a model
// with every part (recompute, TP, DP sync, blocking p2p), shared cores that slow ops down
// (contention) and an interference factor below 1 that speeds them up (parts shrink); the
// totals come exactly where the ready pass runs under shared answers over one iteration.
TEST(Breakdown, EngineTotalsEqualSpansOnEveryGenerator) {
  AnalyticalConfig parts = small(2, 2, Recompute::Full);
  parts.blocking_p2p = true;
  const AnalyticalCostModel analytical(parts);
  const UniformCostModel uniform_model(every_category());
  const UnsharedUniform unshared(uniform_model);
  for (const GeneratorInfo& g : generators())
    for (int iterations : {1, 3})
      for (int hw = 0; hw < 3; ++hw)
        for (const CostModel* costs : {static_cast<const CostModel*>(&uniform_model),
                                       static_cast<const CostModel*>(&analytical),
                                       static_cast<const CostModel*>(&unshared)}) {
          SCOPED_TRACE(std::string(g.name) + " iterations=" + std::to_string(iterations) + " hardware=" +
                       std::to_string(hw) + (costs == &analytical ? " analytical" : costs == &unshared ? " unshared" : ""));
          const Schedule s = generate(g.name, ScheduleParams{.p = 4, .m = 8, .iterations = iterations});
          SharedHardware shared;
          ComputePool pool;
          for (int d = 0; d < s.num_devices; ++d) pool.devices.push_back(d);
          pool.cores = hw == 1 ? 1.5 : 0;  // 1: processor sharing slows ops (contention)
          if (hw == 2)                      // 2: neighbours speed a forward up (its parts shrink)
            pool.slowdown[static_cast<std::size_t>(OpKind::F)] = std::vector<double>(static_cast<std::size_t>(s.num_devices), 0.8);
          if (hw > 0) shared.pools.push_back(pool);
          BreakdownRecorder totals(s), spans(s, true);
          const SimResult a = simulate(s, *costs, &totals, nullptr, hw > 0 ? &shared : nullptr);
          const SimResult b = simulate(s, *costs, &spans, nullptr, hw > 0 ? &shared : nullptr);
          EXPECT_EQ(totals.totals().has_value(), iterations == 1 && costs != &unshared && !has_grad_sync(s) && hw == 0);
          EXPECT_FALSE(spans.totals().has_value());
          const TimeBreakdown x = time_breakdown(s, a, *costs, totals), y = time_breakdown(s, b, *costs, spans);
          EXPECT_EQ(x.per_device, y.per_device);
          EXPECT_EQ(x.busy, y.busy);
          EXPECT_EQ(x.critical_device, y.critical_device);
          if (hw == 1) {
            Tick contention = 0;
            for (const CategoryTicks& d : x.per_device) contention += d[C::Contention];
            EXPECT_GT(contention, 0);
          }
        }
}

// A schedule whose device runs no compute op at all (a lone gradient reduction): no op
// record comes, so the recorder holds no spans, and the device's window is all DP sync and idle.
TEST(Breakdown, NoComputeOpAnywhere) {
  Schedule s;
  s.name = "sync only";
  s.num_devices = 1;
  s.num_stages = 1;
  s.microbatches = 1;
  s.placement = {{0}};
  s.ops = {{grad_sync(0)}};
  UniformCostConfig c;
  c.grad_bytes = 1000000;
  c.link_bandwidth = 1e9;
  const UniformCostModel costs(c);
  BreakdownRecorder recorder(s);
  const SimResult result = simulate(s, costs, &recorder);
  EXPECT_FALSE(recorder.totals().has_value());
  EXPECT_TRUE(recorder.ops(0).empty());
  const TimeBreakdown t = time_breakdown(s, result, costs, recorder);
  ASSERT_EQ(t.per_device.size(), 1u);
  EXPECT_EQ(t.per_device[0].total(), t.window_ticks());
  EXPECT_EQ(t.busy[0], 0);
}

TEST(Breakdown, ComputePartsFitInTheOpAndFollowTheModel) {
  AnalyticalConfig c = small(2, 2, Recompute::Full);
  c.blocking_p2p = true;
  const AnalyticalCostModel model(c);
  const OpScale scale{1, 1, 2};
  for (OpKind k : {OpKind::F, OpKind::B, OpKind::I, OpKind::W, OpKind::OptStep})
    for (int stage : {0, 1}) {
      const Op op = k == OpKind::OptStep ? opt_step(stage) : make_op(k, stage, 0);
      const ComputeParts parts = model.compute_parts(op, scale);
      EXPECT_LE(parts.total(), model.compute_time(op, scale));
      EXPECT_EQ(parts.recompute > 0, k == OpKind::B || k == OpKind::I);
      EXPECT_EQ(parts.tp_comm > 0, k == OpKind::F || k == OpKind::B || k == OpKind::I);
      // The blocking send: F on the first stage (to the second), I or B on the second.
      EXPECT_EQ(parts.p2p > 0, (k == OpKind::F && stage == 0) || ((k == OpKind::B || k == OpKind::I) && stage == 1));
      EXPECT_EQ(parts.grad_sync > 0, k == OpKind::OptStep);
    }
  // The uniform model knows no parts: all of an op is its own work.
  EXPECT_EQ(uniform(1000, 2000).compute_parts(make_op(OpKind::B, 0, 0), scale), ComputeParts{});
}

}  // namespace
}  // namespace pipesim
