// The engine's two paths (sim/ready_pass.hpp): every generator, at several sizes and under
// several cost models (ties everywhere included), gives the same result and the same records
// through the ready pass as through the event loop, and takes the pass wherever it applies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "cost_models/cost_model.hpp"
#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"
#include "sim/engine.hpp"
#include "sim/observer.hpp"
#include "sim/timeline.hpp"
#include "tests/same_run.hpp"
#include "tests/forwarding_cost_model.hpp"

namespace pipesim {
namespace {

// Keeps each device's op records in its order (as the time breakdown does).
class PerDevice final : public SimObserver {
 public:
  explicit PerDevice(int devices) : ops(static_cast<std::size_t>(devices)) {}
  std::uint8_t wants() const override { return kOpRecords | kCollectiveRecords; }
  bool needs_time_order() const override { return false; }
  void on_op(const OpRecord& r) override { ops[static_cast<std::size_t>(r.ref.device)].push_back(r); }
  void on_collective(const CollectiveRecord& r) override { collectives.push_back(r); }
  void restart() override {
    for (auto& list : ops) list.clear();
    collectives.clear();
    ++restarts;
  }
  int restarts = 0;
  std::vector<std::vector<OpRecord>> ops;
  std::vector<CollectiveRecord> collectives;
};

void expect_same(const PerDevice& a, const PerDevice& b) {
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t d = 0; d < a.ops.size(); ++d) {
    ASSERT_EQ(a.ops[d].size(), b.ops[d].size()) << "device " << d;
    for (std::size_t i = 0; i < a.ops[d].size(); ++i) {
      const OpRecord &x = a.ops[d][i], &y = b.ops[d][i];
      EXPECT_TRUE(x.ref == y.ref && x.op == y.op && x.start == y.start && x.end == y.end &&
                  x.weight_version == y.weight_version)
          << "device " << d << " record " << i << ": " << to_string(x.op) << " " << x.start << ".." << x.end
          << " against " << to_string(y.op) << " " << y.start << ".." << y.end;
    }
  }
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (std::size_t c = 0; c < a.collectives.size(); ++c) {
    EXPECT_EQ(a.collectives[c].start, b.collectives[c].start);
    EXPECT_EQ(a.collectives[c].end, b.collectives[c].end);
    EXPECT_EQ(a.collectives[c].participants, b.collectives[c].participants);
  }
}

// A model whose durations and message sizes vary by micro-batch (as a sampled one's do), so
// the pass asks it for every op instead of once per (kind, pipeline, stage).
class ByMicroBatch final : public testing_costs::ForwardingCostModel {
 public:
  using ForwardingCostModel::ForwardingCostModel;
  Tick compute_time(const Op& op, OpScale scale) const override {
    return base().compute_time(op, scale) + (op.microbatch < 0 ? 0 : 3 * (op.microbatch % 5));
  }
  std::int64_t message_bytes(const Op& producer, OpScale scale) const override {
    return base().message_bytes(producer, scale) * (1 + producer.microbatch % 3);
  }
};

// The pass applies to a generated schedule exactly when it has no collective and no
// communication op (ready_pass.hpp).
bool pass_applies(const Schedule& s) {
  for (const auto& list : s.ops)
    for (const Op& op : list)
      if (!is_compute(op.kind)) return false;
  return true;
}

std::vector<UniformCostConfig> cost_models() {
  std::vector<UniformCostConfig> out;
  UniformCostConfig zero;  // every duration 0: every input of every op arrives at one time
  zero.stage = StageCosts{0, 0, 0};
  out.push_back(zero);
  UniformCostConfig plain;
  plain.stage = StageCosts{1000, 2000, 0};
  out.push_back(plain);
  UniformCostConfig links;  // links with latency and bandwidth, activations, a split backward
  links.stage = StageCosts{1003, 2011, 907};
  links.optimizer = 333;
  links.activation_bytes = 1 << 20;
  links.message_bytes = 1000;
  links.grad_bytes = 50000;
  links.link_latency = 17;
  links.link_bandwidth = 1e9;
  out.push_back(links);
  UniformCostConfig uneven = links;  // stages of different speeds, slow links: queues form
  uneven.overrides[1] = StageCosts{3000, 500, 250};
  uneven.overrides[2] = StageCosts{10, 20, 5};
  uneven.link_bandwidth = 1e7;
  uneven.link_latency = 0;
  out.push_back(uneven);
  return out;
}

TEST(ReadyPass, EveryGeneratorGivesTheEventLoopsResultsAndRecords) {
  int passes = 0, loops = 0;
  for (const GeneratorInfo& g : generators())
    for (const auto& [p, m] : {std::pair{2, 4}, std::pair{4, 8}, std::pair{8, 16}})
      for (int iterations : {1, 2}) {
        Schedule s;
        try {
          s = generate(g.name, ScheduleParams{.p = p, .m = m, .iterations = iterations});
        } catch (const InputError&) {
          continue;  // a size this generator does not take
        }
        for (const UniformCostConfig& c : cost_models()) {
          SCOPED_TRACE(std::string(g.name) + " p=" + std::to_string(p) + " m=" + std::to_string(m) +
                       " iterations=" + std::to_string(iterations) + " fwd=" + std::to_string(c.stage.fwd));
          const UniformCostModel uniform(c);
          const ByMicroBatch varying(uniform);
          for (const CostModel* model : {static_cast<const CostModel*>(&uniform), static_cast<const CostModel*>(&varying)}) {
          SCOPED_TRACE(model == &uniform ? "answers shared by every micro-batch" : "answers by micro-batch");
          const CostModel& costs = *model;
          Simulator loop, fast;
          loop.always_event_loop(true);
          PerDevice a(s.num_devices), b(s.num_devices);
          const SimResult ra = loop.run(s, costs, &a);
          const SimResult rb = fast.run(s, costs, &b);
          EXPECT_EQ(loop.last_path(), EnginePath::EventLoop);
          EXPECT_EQ(fast.last_path(), pass_applies(s) ? EnginePath::ReadyPass : EnginePath::EventLoop);
          (fast.last_path() == EnginePath::ReadyPass ? passes : loops)++;
          expect_same_result(ra, rb);
          expect_same(a, b);
          // Without an observer too, and a second run of the same Simulator (its buffers reused).
          expect_same_result(ra, fast.run(s, costs));
          expect_same_result(ra, fast.run(s, costs));
          }
        }
      }
  EXPECT_GT(passes, 200);  // most generators take the pass
  EXPECT_GT(loops, 20);    // chimera, dualpipe, ...: collectives
}

TEST(ReadyPass, ObserversThatNeedTimeOrderGetTheEventLoop) {
  const Schedule s = generate("1f1b", ScheduleParams{.p = 4, .m = 8});
  const UniformCostModel costs(cost_models()[2]);
  Simulator sim;
  TimelineRecorder timeline;
  sim.run(s, costs, &timeline);
  EXPECT_EQ(sim.last_path(), EnginePath::EventLoop);
  EXPECT_FALSE(timeline.timeline.memory.empty());
  PerDevice per_device(s.num_devices);
  sim.run(s, costs, &per_device);
  EXPECT_EQ(sim.last_path(), EnginePath::ReadyPass);
  ObserverList both;
  both.add(&per_device);
  both.add(&timeline);
  sim.run(s, costs, both.get());
  EXPECT_EQ(sim.last_path(), EnginePath::EventLoop);
}

TEST(ReadyPass, ProgressIsReportedAlike) {
  const Schedule s = generate("1f1b", ScheduleParams{.p = 4, .m = 16});
  const UniformCostModel costs(cost_models()[1]);
  std::vector<std::uint64_t> reports[2];
  for (int fast = 0; fast < 2; ++fast) {
    SimProgress progress;
    progress.every = 7;
    progress.report = [&, fast](std::uint64_t done) { reports[fast].push_back(done); };
    Simulator sim;
    sim.always_event_loop(fast == 0);
    sim.run(s, costs, nullptr, &progress);
    EXPECT_EQ(sim.last_path(), fast ? EnginePath::ReadyPass : EnginePath::EventLoop);
  }
  EXPECT_EQ(reports[0], reports[1]);
  EXPECT_EQ(reports[1].back(), s.total_ops());
}

// Builds a single-pipeline schedule from text lists, stage s on device s % devices.
Schedule from_text(int devices, int stages, const std::vector<std::vector<std::string>>& lists) {
  Schedule s;
  s.name = "hand";
  s.num_devices = devices;
  s.num_stages = stages;
  s.microbatches = 2;
  s.placement = round_robin_placement(stages, devices);
  for (const auto& list : lists) {
    s.ops.emplace_back();
    for (const auto& text : list) s.ops.back().push_back(*parse_op(text));
  }
  return s;
}

// What the event loop says of a broken schedule (its message), or "" if it runs.
std::string outcome(const Schedule& s, bool event_loop, EnginePath* path = nullptr) {
  Simulator sim;
  sim.always_event_loop(event_loop);
  PerDevice observer(s.num_devices);
  try {
    sim.run(s, UniformCostModel(cost_models()[1]), &observer);
  } catch (const InputError& e) {
    return e.what();
  }
  if (!event_loop && sim.last_path() == EnginePath::EventLoop) {
    // The pass gave up: what it sent before was taken back, and the event loop's records
    // are those of a run in the event loop alone.
    Simulator loop;
    loop.always_event_loop(true);
    PerDevice alone(s.num_devices);
    loop.run(s, UniformCostModel(cost_models()[1]), &alone);
    expect_same(alone, observer);
  }
  if (path) *path = sim.last_path();
  return "";
}

TEST(ReadyPass, BrokenSchedulesAreTheEventLoopsToReport) {
  const std::vector<Schedule> broken = {
      from_text(2, 2, {{"0F0", "0B0", "0F1", "0B1"}, {"1F0", "1B0", "1F1", "1B1"}}),   // deadlock: 0B0 before 1B0
      from_text(2, 2, {{"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1B1"}}),          // 1F1 missing
      from_text(2, 2, {{"0F0", "0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1F1", "1B1"}}),  // duplicate
      from_text(2, 2, {{"0F0", "1F1", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1B1"}}),   // misplaced
      from_text(2, 2, {{"0F0", "0F1", "0B0", "0B1", "0W0"}, {"1F0", "1B0", "1F1", "1B1"}}),  // W without its I
      from_text(2, 2, {{"0F0", "0F1", "0B0", "0I0", "0B1"}, {"1F0", "1B0", "1F1", "1B1"}}),  // both B and I
      from_text(2, 2, {{"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1F1", "1B0", "1B1", "1B1"}}),  // duplicate backward
  };
  for (std::size_t i = 0; i < broken.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const std::string expected = outcome(broken[i], true);
    EXPECT_EQ(outcome(broken[i], false), expected);
  }
  // A message to an op the schedule does not have (0F1's: nothing on device 1 needs it) is
  // sent all the same in the event loop, and holds its link: the pass hands it over.
  const Schedule lost = from_text(2, 2, {{"0F0", "0F1", "0B0"}, {"1F0", "1B0"}});
  EnginePath lost_path = EnginePath::ReadyPass;
  EXPECT_EQ(outcome(lost, false, &lost_path), "");
  EXPECT_EQ(lost_path, EnginePath::EventLoop);
  {  // the pass ran every op, sent their records, then gave up: the observer was restarted
    PerDevice taken_back(lost.num_devices);
    Simulator sim;
    sim.run(lost, UniformCostModel(cost_models()[1]), &taken_back);
    EXPECT_EQ(taken_back.restarts, 1);
    EXPECT_EQ(taken_back.ops[0].size(), 3u);
  }
  const Schedule fine = from_text(2, 2, {{"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1F1", "1B1"}});
  EnginePath path = EnginePath::EventLoop;
  EXPECT_EQ(outcome(fine, false, &path), "");
  EXPECT_EQ(path, EnginePath::ReadyPass);
}

}  // namespace
}  // namespace pipesim
