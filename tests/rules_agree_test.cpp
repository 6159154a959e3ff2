// One rule, one place (#19): every generator, at a few sizes, through everything that asks
// the same question, checked to get the same answer.
//
//   which edges carry data   the dependency walk (schedules/dependencies.hpp's data_input
//                            and cross_device_outputs), the engine's transfers, the
//                            executor's messages, the streaming trace's flow bookkeeping
//   the Chrome trace         the streaming and the batch driver of the one writer, byte
//                            for byte
//   weight versions          the engine's (sim/versions.hpp) and the executor's, op by op
//   the stage cut            cost_models/stage_layout.hpp's layouts (executor, profiled
//                            model) and AnalyticalCostModel::layers_of, uneven counts too
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "cost_models/analytical.hpp"
#include "cost_models/catalog.hpp"
#include "cost_models/stage_layout.hpp"
#include "cost_models/uniform.hpp"
#include "both_traces.hpp"
#include "executor_helpers.hpp"
#include "schedules/dependencies.hpp"
#include "schedules/generator.hpp"
#include "schedules/lowering.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace pipesim {
namespace {

using testing_executor::quick;
using testing_executor::tiny;

// A message: (producer device, index) -> (consumer device, index).
using Edge = std::tuple<int, int, int, int>;

struct Sized {
  std::string generator;
  std::string name;  // generator and size
  Schedule schedule;
};

// Every generator at the sizes it accepts of p in {2, 4}, m in {4, 8}, three iterations
// (so versions move, 2BW's too); each generator must accept at least one.
std::vector<Sized> every_generator() {
  std::vector<Sized> out;
  for (const GeneratorInfo& g : generators()) {
    int accepted = 0;
    for (const auto& [p, m] : {std::pair{2, 4}, std::pair{4, 8}}) {
      ScheduleParams params;
      params.p = p;
      params.m = m;
      params.v = 2;
      params.iterations = 3;
      try {
        out.push_back({std::string(g.name), std::string(g.name) + " p=" + std::to_string(p) + " m=" + std::to_string(m), g.fn(params)});
        ++accepted;
      } catch (const InputError&) {
      }
    }
    EXPECT_GT(accepted, 0) << g.name;
  }
  return out;
}

// The walk's data edges that cross devices.
std::multiset<Edge> walk_messages(const Schedule& s) {
  std::vector<DependencyProblem> problems;
  const DependencyGraph g = build_dependencies(s, problems);
  EXPECT_TRUE(problems.empty());
  std::multiset<Edge> out;
  for (const GraphId id : g.all()) {
    const GraphId p = g.data_input[at(id)];
    if (p == DependencyGraph::kNoDataInput || g.device_of(p) == g.device_of(id)) continue;
    out.emplace(g.device_of(p), g.index_of(p), g.device_of(id), g.index_of(id));
  }
  return out;
}

std::multiset<Edge> messages_of(const Timeline& t) {
  std::multiset<Edge> out;
  for (const TransferRecord& r : t.transfers) out.emplace(r.from.device, r.from.index, r.to.device, r.to.index);
  return out;
}

UniformCostModel costs() {
  UniformCostConfig c;
  c.stage = StageCosts{kNsPerMs, 2 * kNsPerMs, kNsPerMs};
  c.message_bytes = 1 << 20;
  c.link_latency = 10 * kNsPerUs;
  c.link_bandwidth = 10e9;
  return UniformCostModel(c);
}

// The engine and the streaming trace on one run: the engine's messages are the walk's, the
// trace expected exactly those (cross_device_outputs), leaving nothing behind, and the batch
// driver writes the same bytes from the run's Timeline (with stacked static memory).
Timeline check_engine_and_stream(const Schedule& s) {
  TraceOptions options;
  options.static_memory_bytes.assign(static_cast<std::size_t>(s.num_devices), 1000);
  testing_trace::Traces traces = testing_trace::both_traces(s, costs(), options);
  EXPECT_EQ(traces.stream, traces.batch) << "the streaming and the batch driver differ";
  EXPECT_EQ(traces.unmatched, 0u);
  EXPECT_EQ(traces.left.producers, 0u);
  EXPECT_EQ(traces.left.consumers, 0u);
  EXPECT_EQ(messages_of(traces.timeline), walk_messages(s));
  const std::vector<std::uint8_t> outputs = cross_device_outputs(s);
  const GraphNumbering ids(s);
  std::vector<int> sent(ids.size(), 0);
  for (const TransferRecord& r : traces.timeline.transfers)
    ++sent[at(ids.id(r.from.device, static_cast<std::uint32_t>(r.from.index)))];
  for (std::size_t id = 0; id < ids.size(); ++id) EXPECT_EQ(outputs[id], sent[id]) << "op id " << id;
  return std::move(traces.timeline);
}

TEST(RulesAgree, DataEdgesInTheWalkTheEngineAndTheStreamingTrace) {
  for (const Sized& c : every_generator()) {
    SCOPED_TRACE(c.name);
    check_engine_and_stream(c.schedule);
    // With sends and receives in the lists, the messages go send -> receive.
    const Schedule lowered = add_send_recv(c.schedule);
    EXPECT_EQ(messages_of(check_engine_and_stream(lowered)).size(), walk_messages(c.schedule).size());
  }
}

// The executor's messages are the walk's (on the smaller size, real kernels), and every
// micro-batch op uses the weight version the engine gives it.
TEST(RulesAgree, ExecutorRoutesTheWalksDataAndUsesTheEnginesVersions) {
  std::set<std::string> covered;
  for (const Sized& c : every_generator()) {
    if (c.schedule.num_stages > tiny().layers || covered.count(c.generator)) continue;
    covered.insert(c.generator);
    SCOPED_TRACE(c.name);
    const MeasuredRun run = run_schedule(c.schedule, tiny(), quick());
    ASSERT_TRUE(run.complete);
    EXPECT_EQ(messages_of(run.timeline), walk_messages(c.schedule));
    const Timeline sim = check_engine_and_stream(c.schedule);
    std::map<std::pair<int, int>, std::int32_t> engine_version;
    for (const OpRecord& r : sim.ops) engine_version[{r.ref.device, r.ref.index}] = r.weight_version;
    int compared = 0;
    for (const OpRecord& r : run.timeline.ops) {
      if (!is_microbatch_op(r.op.kind)) continue;
      EXPECT_EQ(r.weight_version, (engine_version[{r.ref.device, r.ref.index}])) << "device " << r.ref.device << " op "
                                                                                 << r.ref.index;
      ++compared;
    }
    EXPECT_GT(compared, 0);
  }
  for (const GeneratorInfo& g : generators()) EXPECT_TRUE(covered.count(std::string(g.name))) << g.name;
}

// Both policies that pin versions move them: the comparison above sees versions other than 0.
TEST(RulesAgree, VersionsMoveInTheCasesCompared) {
  for (const char* name : {"pipedream", "pipedream-2bw"}) {
    ScheduleParams params;
    params.p = 2;
    params.m = 4;
    params.iterations = 3;
    const Schedule s = generate(name, params);
    TimelineRecorder recorder;
    simulate(s, costs(), &recorder);
    std::int32_t most = 0;
    for (const OpRecord& r : recorder.timeline.ops) most = std::max(most, r.weight_version);
    EXPECT_GT(most, 0) << name;
  }
}

// The executor's and the profiled model's layouts and the analytical model's layers per
// stage, for every layer count up to 13 over every stage count it allows (most of them
// uneven), and for Megatron's first/last-device layers.
TEST(RulesAgree, StageCutInTheLayoutAndTheAnalyticalModel) {
  for (int layers = 1; layers <= 13; ++layers) {
    for (int stages = 1; stages <= layers; ++stages) {
      for (const auto& [first, last] : {std::pair{-1, -1}, std::pair{1, -1}, std::pair{1, 1}, std::pair{0, 2}}) {
        if (stages < 2 && first >= 0) continue;
        AnalyticalConfig c;
        c.model = tiny();
        c.model.layers = layers;
        c.cluster = make_cluster("h100-sxm", 2, 8);
        c.pipeline_devices = stages;
        c.partition.first = first;
        c.partition.last = last;
        std::unique_ptr<AnalyticalCostModel> model;
        try {
          model = std::make_unique<AnalyticalCostModel>(c);
        } catch (const InputError& e) {  // first + last do not add up: the layout refuses it alike
          std::string layout_error;
          try {
            (void)stage_layout(layers, 0, stages, stages, c.partition);
          } catch (const InputError& le) {
            layout_error = le.what();
          }
          EXPECT_EQ(e.what(), "analytical: " + layout_error);
          continue;
        }
        SCOPED_TRACE("layers " + std::to_string(layers) + " stages " + std::to_string(stages) + " first " +
                     std::to_string(first) + " last " + std::to_string(last));
        int next = 0;
        for (int s = 0; s < stages; ++s) {
          const StageLayout l = stage_layout(layers, s, stages, stages, c.partition);
          EXPECT_EQ(l.blocks, model->layers_of(s, stages)) << "stage " << s;
          EXPECT_EQ(l.first_block, next) << "stage " << s;
          EXPECT_EQ(l.embedding, s == 0);
          EXPECT_EQ(l.head, s == stages - 1);
          next += l.blocks;
        }
        EXPECT_EQ(next, layers);
      }
    }
  }
  // The cut of an uneven model: 10 layers in 4 stages, the remainder to stages 1..2.
  EXPECT_EQ(stage_layout(10, 1, 4).blocks, 3);
  EXPECT_EQ(stage_layout(10, 3, 4).blocks, 2);
}

}  // namespace
}  // namespace pipesim
