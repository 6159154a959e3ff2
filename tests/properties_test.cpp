// Properties every generator must have, checked over a grid of parameters: the schedule
// validates, every op runs exactly once, dependencies are respected in time, activation
// memory returns to zero, synchronous schedules see no staleness, and the same input
// gives the same timeline.
#include <gtest/gtest.h>

#include <set>

#include "cost_models/uniform.hpp"
#include "schedules/dependencies.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "sim/timeline.hpp"

namespace pipesim {
namespace {

bool synchronous(std::string_view name) {
  static const std::set<std::string_view> async = {"amp", "amdp", "pipedream", "pipedream-2bw", "async-1f1b"};
  return !async.count(name);
}

// Parameters valid for the schedule, or nullopt if this (p, m) does not apply to it.
std::optional<ScheduleParams> params_for(std::string_view name, int p, int m, int iterations) {
  ScheduleParams params;
  params.p = p;
  params.m = m;
  params.iterations = iterations;
  params.v = 2;
  try {
    generate(name, params);
  } catch (const InputError&) {
    return std::nullopt;
  }
  return params;
}

UniformCostConfig awkward_costs() {
  UniformCostConfig c;
  c.stage.fwd = 1'003;
  c.stage.bwd = 2'011;
  c.stage.wgrad = 997;
  c.optimizer = 101;
  c.activation_bytes = 1'000'000;
  c.message_bytes = 4'096;
  c.grad_bytes = 65'536;
  c.link_latency = 57;
  c.link_bandwidth = 3e9;
  return c;
}

TEST(Properties, EveryGeneratorOverAGrid) {
  int checked = 0;
  for (const auto& g : generators()) {
    for (int p : {2, 4, 8})
      for (int m : {p, 2 * p, 3 * p})
        for (int iterations : {1, 2}) {
          const auto params = params_for(g.name, p, m, iterations);
          if (!params) continue;
          SCOPED_TRACE(std::string(g.name) + " p=" + std::to_string(p) + " m=" + std::to_string(m) +
                       " T=" + std::to_string(iterations));
          const Schedule s = generate(g.name, *params);
          const ValidationReport report = validate(s);
          ASSERT_TRUE(report.ok()) << report.errors.front();

          const UniformCostModel model(awkward_costs());
          TimelineRecorder rec;
          const SimResult r = simulate(s, model, &rec);

          // Every op exactly once.
          ASSERT_EQ(rec.timeline.ops.size(), s.total_ops());
          std::set<std::pair<int, int>> seen;
          for (const auto& op : rec.timeline.ops) EXPECT_TRUE(seen.emplace(op.ref.device, op.ref.index).second);

          // Dependencies respected in time: an op starts after its producers end (plus the
          // transfer), and after the previous op on its device.
          std::vector<std::vector<OpRecord>> at(static_cast<std::size_t>(s.num_devices));
          for (int d = 0; d < s.num_devices; ++d) at[static_cast<std::size_t>(d)].resize(s.ops[static_cast<std::size_t>(d)].size());
          for (const auto& op : rec.timeline.ops) at[static_cast<std::size_t>(op.ref.device)][static_cast<std::size_t>(op.ref.index)] = op;
          std::vector<DependencyProblem> problems;
          const DependencyGraph deps = build_dependencies(s, problems);
          for (const GraphId id : deps.all()) {
            const OpRecord& rec_op = at[static_cast<std::size_t>(deps.device_of(id))][static_cast<std::size_t>(deps.index_of(id))];
            for (const GraphId producer : deps.preds_of(id)) {
              const OpRecord& pred =
                  at[static_cast<std::size_t>(deps.device_of(producer))][static_cast<std::size_t>(deps.index_of(producer))];
              EXPECT_GE(rec_op.start, pred.end) << to_string(rec_op.op) << " before " << to_string(pred.op);
            }
          }
          for (const auto& list : at) {
            for (std::size_t i = 1; i < list.size(); ++i) {
              if (is_compute(list[i].op.kind) && is_compute(list[i - 1].op.kind)) {
                EXPECT_GE(list[i].start, list[i - 1].end) << to_string(list[i].op);
              }
            }
          }

          // Memory returns to baseline; synchronous schedules are never stale.
          for (const auto& d : r.devices) EXPECT_EQ(d.final_activation_bytes, 0);
          if (synchronous(g.name))
            for (const auto& st : r.staleness) {
              EXPECT_EQ(st.max_mismatch, 0) << "stage " << st.stage;
              EXPECT_EQ(st.max_delay, 0) << "stage " << st.stage;
            }

          // Determinism: a second run gives the same timeline.
          TimelineRecorder again;
          simulate(s, model, &again);
          ASSERT_EQ(again.timeline.ops.size(), rec.timeline.ops.size());
          for (std::size_t i = 0; i < again.timeline.ops.size(); ++i) {
            EXPECT_EQ(again.timeline.ops[i].ref, rec.timeline.ops[i].ref);
            EXPECT_EQ(again.timeline.ops[i].start, rec.timeline.ops[i].start);
          }
          ++checked;
        }
  }
  EXPECT_GT(checked, 100);
}

// What one iteration of a schedule shows that two may not: the time per iteration (one
// iteration's makespan against the steady state), the staleness and the weight copies.
std::tuple<Tick, int, int, int> one_run(std::string_view name, const ScheduleParams& params,
                                        const UniformCostConfig& costs) {
  const Schedule s = generate(name, params);
  const Metrics m = summarize(s, simulate(s, UniformCostModel(costs)));
  int copies = 0;
  for (const DeviceMetrics& d : m.per_device) copies = std::max(copies, d.peak_weight_versions);
  return {m.time_per_iteration, m.staleness.max_mismatch, m.staleness.max_delay, copies};
}

// GeneratorInfo::overlaps_iterations is exactly the generators for which two iterations show
// something one does not, somewhere on the grid, with the CLI's default costs (1 ms forward,
// 2 ms backward, free links and steps) or the awkward ones: the flag behind the tables'
// one-iteration note.
TEST(Properties, OverlapsIterationsIsWhatOneIterationCannotShow) {
  UniformCostConfig defaults;
  defaults.stage.fwd = 1'000'000;
  defaults.stage.bwd = 2'000'000;
  defaults.stage.wgrad = 1'000'000;
  for (const auto& g : generators()) {
    std::string differs;  // the first (costs, p, m) where one and two iterations disagree
    for (const auto& [label, costs] : {std::pair{"default costs", defaults}, std::pair{"awkward costs", awkward_costs()}})
      for (int p : {2, 4, 8})
        for (int m : {p, 2 * p, 3 * p}) {
          const auto one = params_for(g.name, p, m, 1);
          if (!one || !differs.empty()) continue;
          ScheduleParams two = *one;
          two.iterations = 2;
          const auto a = one_run(g.name, *one, costs), b = one_run(g.name, two, costs);
          if (a != b)
            differs = std::string(label) + " p=" + std::to_string(p) + " m=" + std::to_string(m) + ": time " +
                    std::to_string(std::get<0>(a)) + " / " + std::to_string(std::get<0>(b)) + ", mismatch " +
                    std::to_string(std::get<1>(a)) + " / " + std::to_string(std::get<1>(b)) + ", delay " +
                    std::to_string(std::get<2>(a)) + " / " + std::to_string(std::get<2>(b)) + ", weight copies " +
                    std::to_string(std::get<3>(a)) + " / " + std::to_string(std::get<3>(b));
        }
    EXPECT_EQ(g.overlaps_iterations, !differs.empty()) << g.name << (differs.empty() ? "" : " differs at " + differs);
  }
}

}  // namespace
}  // namespace pipesim
