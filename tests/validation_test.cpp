// traces/validation.hpp and the predicted-vs-measured outputs (two-group Chrome trace,
// HTML error tables): two simulated runs of one schedule stand in for predicted and
// measured, so every expected number is known exactly.
#include "traces/validation.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/html_validation.hpp"

namespace pipesim {
namespace {

struct SimRun {
  Timeline timeline;
  Metrics metrics;
};

SimRun simulate_with(const Schedule& s, Tick fwd, Tick bwd, Tick wgrad = 0) {
  UniformCostConfig c;
  c.stage = StageCosts{fwd, bwd, wgrad};
  c.optimizer = 100'000;
  c.activation_bytes = 1000;
  TimelineRecorder rec;
  const SimResult result = simulate(s, UniformCostModel(c), &rec);
  return SimRun{std::move(rec.timeline), summarize(s, result)};
}

ScheduleParams params(int p, int m, int iterations = 1) {
  ScheduleParams out;
  out.p = p;
  out.m = m;
  out.iterations = iterations;
  return out;
}

TEST(Validation, IdenticalRunsHaveNoError) {
  const Schedule s = generate("1f1b", params(4, 8, 2));
  const SimRun a = simulate_with(s, kNsPerMs, 2 * kNsPerMs);
  const SimRun b = simulate_with(s, kNsPerMs, 2 * kNsPerMs);
  const PredictionReport r = compare_runs(s, a.timeline, a.metrics, b.timeline, b.metrics);
  EXPECT_EQ(r.time_per_iteration_error, 0.0);
  EXPECT_EQ(r.makespan_error, 0.0);
  EXPECT_TRUE(r.versions_match());
  EXPECT_EQ(r.unmatched_ops, 0u);
  EXPECT_EQ(r.versions_compared, 2u * 4 * 8 * 2);  // F and B of every micro-batch and stage, 2 iterations
  ASSERT_EQ(r.per_kind.size(), 3u);                // F, B, OptStep
  for (const DurationError& e : r.per_kind) {
    EXPECT_EQ(e.median, 0.0);
    EXPECT_EQ(e.p90, 0.0);
  }
}

// Every op 25 % slower in the "measured" run: 1F1B's makespan (m+p-1)(tF+tB) scales the
// same way, so the simulator is 20 % optimistic on time and on every op.
TEST(Validation, UniformlySlowerRunGivesTheExactErrors) {
  const Schedule s = generate("1f1b", params(4, 8));
  const SimRun predicted = simulate_with(s, 800'000, 1'600'000);
  const SimRun measured = simulate_with(s, 1'000'000, 2'000'000);
  const PredictionReport r = compare_runs(s, predicted.timeline, predicted.metrics, measured.timeline, measured.metrics);
  EXPECT_NEAR(r.makespan_error, -0.2, 1e-3);  // the optimizer step (100 us) is the same in both
  EXPECT_EQ(measured.metrics.makespan, (8 + 4 - 1) * 3'000'000 + 100'000);
  for (const DurationError& e : r.per_kind) {
    if (e.kind == OpKind::OptStep) continue;
    EXPECT_DOUBLE_EQ(e.median, 0.2) << op_kind_name(e.kind);
    EXPECT_DOUBLE_EQ(e.signed_median, -0.2);
    EXPECT_EQ(e.ops, 32u);
    // The tables' means over the same ops, and the medians beside them.
    EXPECT_EQ(e.predicted_mean, e.kind == OpKind::F ? 800'000 : 1'600'000) << op_kind_name(e.kind);
    EXPECT_EQ(e.measured_mean, e.kind == OpKind::F ? 1'000'000 : 2'000'000) << op_kind_name(e.kind);
    EXPECT_EQ(e.predicted_median, e.predicted_mean);
    EXPECT_EQ(e.measured_median, e.measured_mean);
  }
  EXPECT_TRUE(r.versions_match());
}

TEST(Validation, VersionMismatchesAreFoundOpByOp) {
  const Schedule s = generate("pipedream", params(2, 4, 3));
  const SimRun a = simulate_with(s, kNsPerMs, 2 * kNsPerMs);
  SimRun b = a;
  b.timeline.ops[5].weight_version += 1;
  const PredictionReport r = compare_runs(s, a.timeline, a.metrics, b.timeline, b.metrics);
  EXPECT_FALSE(r.versions_match());
  ASSERT_EQ(r.version_mismatch_count, 1u);
  EXPECT_EQ(r.version_mismatches[0].ref, a.timeline.ops[5].ref);
  EXPECT_EQ(r.version_mismatches[0].measured, r.version_mismatches[0].predicted + 1);
  EXPECT_NE(validation_html(r).find("Weight versions differ in 1 of"), std::string::npos);
}

TEST(Validation, APartialRunCountsTheOpsItLacks) {
  const Schedule s = generate("gpipe", params(2, 2));
  const SimRun a = simulate_with(s, kNsPerMs, 2 * kNsPerMs);
  SimRun b = a;
  b.timeline.ops.resize(b.timeline.ops.size() - 3);
  const PredictionReport r = compare_runs(s, a.timeline, a.metrics, b.timeline, b.metrics);
  EXPECT_EQ(r.unmatched_ops, 3u);
  EXPECT_NE(validation_html(r).find("3 ops ran in only one of the two timelines"), std::string::npos);
}

TEST(Validation, HtmlTablesCarryUnitsAndSignedErrors) {
  const Schedule s = generate("zb-h1", params(2, 4));
  const SimRun predicted = simulate_with(s, 1'100'000, 2'200'000, 1'100'000);
  const SimRun measured = simulate_with(s, 1'000'000, 2'000'000, 1'000'000);
  const std::string html = validation_html(
      compare_runs(s, predicted.timeline, predicted.metrics, measured.timeline, measured.metrics));
  EXPECT_NE(html.find("<td>time per iteration</td>"), std::string::npos);
  EXPECT_NE(html.find("+10.00 %"), std::string::npos);  // every F/I/W is 10 % longer predicted
  EXPECT_NE(html.find("<td>I</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>W</td>"), std::string::npos);
  EXPECT_NE(html.find(" ms</td>"), std::string::npos);
}

// Predicted and measured in one Chrome trace: two process groups with distinct pids,
// labelled names and distinct flow ids.
TEST(Validation, TwoGroupTraceKeepsTheGroupsApart) {
  const Schedule s = generate("1f1b", params(3, 4));
  UniformCostConfig c;
  c.link_latency = 10'000;
  TimelineRecorder rec;
  simulate(s, UniformCostModel(c), &rec);
  std::ostringstream out;
  write_chrome_trace_groups(out, {TraceGroup{"predicted", s, rec.timeline}, TraceGroup{"measured", s, rec.timeline}});
  const auto j = nlohmann::json::parse(out.str());
  std::set<std::string> names;
  std::set<int> pids;
  std::multiset<std::int64_t> flow_starts;
  for (const auto& e : j["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    if (e["ph"] == "M" && e["name"] == "process_name") names.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "s") flow_starts.insert(e["id"].get<std::int64_t>());
  }
  EXPECT_EQ(pids, (std::set<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(names, (std::set<std::string>{"predicted: device 0", "predicted: device 1", "predicted: device 2",
                                          "measured: device 0", "measured: device 1", "measured: device 2"}));
  ASSERT_FALSE(flow_starts.empty());
  for (const auto id : flow_starts) EXPECT_EQ(flow_starts.count(id), 1u) << "flow id " << id << " reused";
  // The single-run writer is the one-group case: same events, no prefix.
  std::ostringstream single;
  write_chrome_trace(single, s, rec.timeline);
  EXPECT_EQ(single.str().find("predicted"), std::string::npos);
}

}  // namespace
}  // namespace pipesim
