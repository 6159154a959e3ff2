// tools/cached_costs.hpp: a sweep asks the analytical model once per (kind, stage) and once per
// (source, destination, bytes). That is only right if the model's answers depend on nothing
// else: for every op of every generator (Chimera's two pipelines, AMP's and AMDP's
// asynchronous micro-batches, interleaved chunks, Chimera's halving split), on a tp, recompute
// and multi-node setting, every answer equals the model's own, asked in a scrambled order;
// and a whole simulation through it is the simulation through the model, tick for tick.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "tests/generated.hpp"
#include "tools/analytical_setup.hpp"
#include "tools/hardware_flags.hpp"
#include "tools/cached_costs.hpp"

namespace {

using namespace pipesim;

AnalyticalConfig config_for(const Schedule& s, int tp, const char* recompute) {
  HardwareOptions o;
  o.model = "gpt3-1.3b";
  o.nodes = 4;
  o.gpus_per_node = 8;
  o.recompute = recompute;
  o.tp = 1;
  return with_parallelism(make_analytical_config(o, "h100-sxm", 1), tp, s.num_devices, 2);
}

TEST(CachedCosts, EveryAnswerIsTheModelsForEveryOpOfEveryGenerator) {
  std::mt19937 rng(7);
  for (const GeneratorInfo& g : generators()) {
    ScheduleParams params = testing_schedules::shape(4, 8, 2);
    if (std::string(g.name) == "chimera") params.set("concat", "halving");  // a micro-batch split of 2
    const Schedule s = generate(g.name, params);
    for (const auto& [tp, recompute] : {std::pair{1, "none"}, std::pair{2, "full"}}) {
      const AnalyticalCostModel model(config_for(s, tp, recompute));
      const CachedCosts costs(model);
      const OpScale scale = scale_of(s);
      std::vector<Op> ops;
      for (const auto& list : s.ops) ops.insert(ops.end(), list.begin(), list.end());
      std::shuffle(ops.begin(), ops.end(), rng);  // the first question of a (kind, stage) is any op's
      std::size_t asked = 0;
      for (const Op& op : ops) {
        SCOPED_TRACE(std::string(g.name) + " tp " + std::to_string(tp) + " op " + std::string(op_kind_name(op.kind)) + " stage " +
                     std::to_string(op.stage) + " mb " + std::to_string(op.microbatch) + " pipeline " +
                     std::to_string(op.pipeline));
        if (is_compute(op.kind)) {
          ASSERT_EQ(costs.compute_time(op, scale), model.compute_time(op, scale));
          ASSERT_EQ(costs.compute_parts(op, scale), model.compute_parts(op, scale));
        }
        if (is_microbatch_op(op.kind) || is_comm(op.kind)) {
          const ActivationCost a = costs.activation(op, scale), b = model.activation(op, scale);
          ASSERT_EQ(a.bytes, b.bytes);
          ASSERT_EQ(a.freed_by_input_grad, b.freed_by_input_grad);
          ASSERT_EQ(costs.message_bytes(op, scale), model.message_bytes(op, scale));
        }
        if (op.kind == OpKind::GradSync) {
          ASSERT_EQ(costs.grad_bytes(op, scale), model.grad_bytes(op, scale));
        }
        ++asked;
      }
      EXPECT_GT(asked, 0u);
      for (int src = 0; src < s.num_devices; ++src)
        for (int dst = 0; dst < s.num_devices; ++dst)
          for (std::int64_t bytes : {std::int64_t{1} << 20, std::int64_t{3} << 20, std::int64_t{1} << 20}) {
            const TransferCost a = costs.transfer(src, dst, bytes), b = model.transfer(src, dst, bytes);
            ASSERT_EQ(a.occupancy, b.occupancy);
            ASSERT_EQ(a.latency, b.latency);
          }
    }
  }
}

TEST(CachedCosts, ASimulationThroughItIsTheModelsTickForTick) {
  for (const char* name : {"1f1b", "chimera", "interleaved", "zb-v", "amp"}) {
    const Schedule s = testing_schedules::generated(name, 4, 8, 2);
    const AnalyticalCostModel model(config_for(s, 2, "selective"));
    const SimResult direct = simulate(s, model), memo = simulate(s, CachedCosts(model));
    EXPECT_EQ(memo.makespan, direct.makespan) << name;
    ASSERT_EQ(memo.devices.size(), direct.devices.size());
    for (std::size_t d = 0; d < direct.devices.size(); ++d) {
      EXPECT_EQ(memo.devices[d].busy, direct.devices[d].busy) << name;
      EXPECT_EQ(memo.devices[d].peak_activation_bytes, direct.devices[d].peak_activation_bytes) << name;
    }
  }
}

}  // namespace
