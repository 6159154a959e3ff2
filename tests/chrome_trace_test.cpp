// The Chrome trace writer (traces/chrome_trace.hpp): parsed back with nlohmann::json and
// checked event by event, on hand-built timelines and on a real simulate() run.
#include "traces/chrome_trace.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "cost_models/uniform.hpp"
#include "core/error.hpp"
#include "sim/engine.hpp"
#include "tests/trace_checks.hpp"

namespace pipesim {
namespace {

using nlohmann::json;
using namespace testing_trace;  // NOLINT(google-build-using-namespace): this file's vocabulary

constexpr Op F(int s, int k, int p = 0) { return make_op(OpKind::F, s, k, p); }
constexpr Op B(int s, int k, int p = 0) { return make_op(OpKind::B, s, k, p); }

// 2 devices, 2 stages, 2 micro-batches, 1F1B.
Schedule tiny_1f1b() {
  Schedule s;
  s.name = "tiny-1f1b";
  s.num_devices = 2;
  s.num_stages = 2;
  s.microbatches = 2;
  s.placement = {{0, 1}};
  s.ops = {{F(0, 0), F(0, 1), B(0, 0), B(0, 1)}, {F(1, 0), B(1, 0), F(1, 1), B(1, 1)}};
  return s;
}

void add_op(Timeline& t, const Schedule& s, int device, int index, Tick start, Tick end, int version = 0) {
  const Op op = s.ops[static_cast<std::size_t>(device)][static_cast<std::size_t>(index)];
  t.ops.push_back(OpRecord{OpRef{device, index}, op, start, end, version});
}

// Forward transfers occupy the link for 250 ns and arrive 250 ns later; backward ones only
// have latency (no occupancy), so their send slice is the ready..arrival window.
Timeline tiny_timeline(const Schedule& s) {
  Timeline t;
  add_op(t, s, 0, 0, 0, 1000);
  add_op(t, s, 0, 1, 1000, 2000);
  add_op(t, s, 1, 0, 1500, 2500);
  add_op(t, s, 1, 1, 2500, 4500);
  add_op(t, s, 0, 2, 4600, 6600);
  add_op(t, s, 1, 2, 4500, 5500);
  add_op(t, s, 1, 3, 5500, 7500);
  add_op(t, s, 0, 3, 7600, 9600);
  t.transfers = {
      TransferRecord{{0, 0}, {1, 0}, 1000, 1000, 1250, 1500, 4096},
      TransferRecord{{0, 1}, {1, 2}, 2000, 2000, 2250, 2500, 4096},
      TransferRecord{{1, 1}, {0, 2}, 4500, 4500, 4500, 4600, 2048},
      TransferRecord{{1, 3}, {0, 3}, 7500, 7500, 7500, 7600, 2048},
  };
  t.memory = {{0, 1000, 100, 1}, {0, 2000, 200, 2}, {1, 2500, 100, 1}, {1, 4500, 0, 0},
              {0, 6600, 100, 1}, {1, 5500, 100, 1}, {1, 7500, 0, 0},   {0, 9600, 0, 0}};
  return t;
}

std::string trace_text(const Schedule& s, const Timeline& t, const TraceOptions& options = {}) {
  std::ostringstream out;
  write_chrome_trace(out, s, t, options);
  return out.str();
}

TEST(ChromeTrace, FormatsMicrosecondsWithNanosecondPrecision) {
  EXPECT_EQ(format_trace_us(0), "0.000");
  EXPECT_EQ(format_trace_us(1), "0.001");
  EXPECT_EQ(format_trace_us(1'234'567), "1234.567");
  EXPECT_EQ(format_trace_us(-1'500), "-1.500");
  EXPECT_EQ(format_trace_us(9'000'000'000'000), "9000000000.000");
}

TEST(ChromeTrace, HeaderAndMetadata) {
  const Schedule s = tiny_1f1b();
  TraceOptions options;
  options.title = "tiny \"run\"\n";
  options.metadata = {{"cost model", "uniform\t\x01"}};
  const std::string text = trace_text(s, tiny_timeline(s), options);
  EXPECT_EQ(text.rfind("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"title\":\"tiny \\\"run\\\"\\n\"", 0), 0u) << text;
  const json trace = json::parse(text);
  EXPECT_EQ(trace.at("otherData").at("title"), "tiny \"run\"\n");
  EXPECT_EQ(trace.at("otherData").at("schedule"), "tiny-1f1b");
  EXPECT_EQ(trace.at("otherData").at("devices"), 2);
  EXPECT_EQ(trace.at("otherData").at("cost model"), "uniform\t\x01");

  const auto meta = select(trace, "M");
  const std::vector<std::string> threads = {"compute", "send", "recv", "collective"};
  for (int pid = 0; pid < 2; ++pid) {
    std::map<std::string, std::vector<json>> by_name;
    for (const json& e : meta)
      if (e.at("pid") == pid) by_name[e.at("name")].push_back(e);
    ASSERT_EQ(by_name["process_name"].size(), 1u);
    EXPECT_EQ(by_name["process_name"][0].at("args").at("name"), "device " + std::to_string(pid));
    EXPECT_EQ(by_name["process_sort_index"][0].at("args").at("sort_index"), pid);
    ASSERT_EQ(by_name["thread_name"].size(), 4u);
    for (int tid = 0; tid < 4; ++tid) {
      EXPECT_EQ(by_name["thread_name"][static_cast<std::size_t>(tid)].at("tid"), tid);
      EXPECT_EQ(by_name["thread_name"][static_cast<std::size_t>(tid)].at("args").at("name"), threads[static_cast<std::size_t>(tid)]);
    }
  }
  // The title defaults to the schedule's name.
  EXPECT_EQ(json::parse(trace_text(s, tiny_timeline(s))).at("otherData").at("title"), "tiny-1f1b");
}

TEST(ChromeTrace, ComputeOps) {
  const Schedule s = tiny_1f1b();
  const Timeline t = tiny_timeline(s);
  const std::string text = trace_text(s, t);
  // Exact text of one event: fixed key order and number format.
  EXPECT_NE(text.find("{\"name\":\"1B0\",\"cat\":\"backward\",\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":2.500,"
                      "\"dur\":2.000,\"args\":{\"stage\":1,\"microbatch\":0,\"pipeline\":0,\"chunk\":0,"
                      "\"op\":\"1B0\",\"weight_version\":0,\"index\":1}}"),
            std::string::npos)
      << text;
  const json trace = json::parse(text);
  EXPECT_EQ(select(trace, "X", -1, kComputeTid).size(), t.ops.size());
  for (const OpRecord& r : t.ops) {
    const std::string name = std::to_string(r.op.stage) + std::string(op_kind_name(r.op.kind)) + std::to_string(r.op.microbatch);
    const json* e = find_slice(trace, r.ref.device, kComputeTid, name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->at("cat"), r.op.kind == OpKind::F ? "forward" : "backward");
    EXPECT_EQ(ns_of(e->at("ts")), r.start);
    EXPECT_EQ(ns_of(e->at("dur")), r.end - r.start);
    const json& args = e->at("args");
    EXPECT_EQ(args.at("stage"), r.op.stage);
    EXPECT_EQ(args.at("microbatch"), r.op.microbatch);
    EXPECT_EQ(args.at("pipeline"), 0);
    EXPECT_EQ(args.at("chunk"), 0);
    EXPECT_EQ(args.at("op"), name);
    EXPECT_EQ(args.at("weight_version"), 0);
  }
}

TEST(ChromeTrace, TransfersOnSendAndRecvThreads) {
  const Schedule s = tiny_1f1b();
  const json trace = json::parse(trace_text(s, tiny_timeline(s)));
  // With occupancy: the link window on the sender, link_start..arrival on the receiver.
  const json* send = find_slice(trace, 0, kSendTid, "0F0 -> 1F0");
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(send->at("cat"), "send");
  EXPECT_EQ(ns_of(send->at("ts")), 1000);
  EXPECT_EQ(ns_of(send->at("dur")), 250);
  EXPECT_EQ(send->at("args"), json::parse(R"({"bytes":4096,"from":"0F0","to":"1F0","peer":1})"));
  const json* recv = find_slice(trace, 1, kRecvTid, "0F0 -> 1F0");
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->at("cat"), "recv");
  EXPECT_EQ(ns_of(recv->at("ts")), 1000);
  EXPECT_EQ(ns_of(recv->at("dur")), 500);
  EXPECT_EQ(recv->at("args").at("peer"), 0);
  // Latency only: the sender shows ready..arrival.
  const json* latency_only = find_slice(trace, 1, kSendTid, "1B0 -> 0B0");
  ASSERT_NE(latency_only, nullptr);
  EXPECT_EQ(ns_of(latency_only->at("ts")), 4500);
  EXPECT_EQ(ns_of(latency_only->at("dur")), 100);
  EXPECT_EQ(latency_only->at("args").at("bytes"), 2048);
  EXPECT_EQ(select(trace, "X", -1, kSendTid).size(), 4u);
  EXPECT_EQ(select(trace, "X", -1, kRecvTid).size(), 4u);
  expect_no_overlaps(trace);
}

TEST(ChromeTrace, FlowsChainProducerSendConsumer) {
  const Schedule s = tiny_1f1b();
  const Timeline t = tiny_timeline(s);
  const json trace = json::parse(trace_text(s, t));
  const auto pairs = flow_pairs(trace);
  ASSERT_EQ(pairs.size(), 2 * t.transfers.size());
  // Each (start slice, end slice) as "pid/tid/name".
  std::multiset<std::pair<std::string, std::string>> hops;
  const ThreadSlices threads = slices_by_thread(trace);
  auto where = [&](const json& e) {
    return std::to_string(e.at("pid").get<int>()) + "/" + std::to_string(e.at("tid").get<int>()) + "/" +
           enclosing_slice(threads, e);
  };
  for (const auto& [id, pair] : pairs) hops.emplace(where(pair.first), where(pair.second));
  const std::multiset<std::pair<std::string, std::string>> expected = {
      {"0/0/0F0", "0/1/0F0 -> 1F0"}, {"0/1/0F0 -> 1F0", "1/0/1F0"},
      {"0/0/0F1", "0/1/0F1 -> 1F1"}, {"0/1/0F1 -> 1F1", "1/0/1F1"},
      {"1/0/1B0", "1/1/1B0 -> 0B0"}, {"1/1/1B0 -> 0B0", "0/0/0B0"},
      {"1/0/1B1", "1/1/1B1 -> 0B1"}, {"1/1/1B1 -> 0B1", "0/0/0B1"},
  };
  EXPECT_EQ(hops, expected);
  expect_perfetto_binds_like_enclosing(trace);
  for (const auto& [id, pair] : pairs) {
    EXPECT_EQ(pair.first.at("cat"), pair.second.at("cat"));
    EXPECT_EQ(pair.first.at("name"), pair.second.at("name"));
  }
  TraceOptions no_flows;
  no_flows.flows = false;
  const json plain = json::parse(trace_text(s, t, no_flows));
  EXPECT_TRUE(select(plain, "s").empty());
  EXPECT_TRUE(select(plain, "f").empty());
}

TEST(ChromeTrace, ActivationMemoryCounters) {
  const Schedule s = tiny_1f1b();
  const Timeline t = tiny_timeline(s);
  const json trace = json::parse(trace_text(s, t));
  const std::vector<std::vector<std::pair<Tick, std::int64_t>>> expected = {
      {{0, 0}, {1000, 100}, {2000, 200}, {6600, 100}, {9600, 0}},
      {{0, 0}, {2500, 100}, {4500, 0}, {5500, 100}, {7500, 0}},
  };
  for (int pid = 0; pid < 2; ++pid) {
    std::vector<std::pair<Tick, std::int64_t>> seen;
    for (const json& e : select(trace, "C", pid)) {
      EXPECT_EQ(e.at("name"), "activation memory");
      EXPECT_EQ(e.at("args").size(), 1u);
      seen.emplace_back(ns_of(e.at("ts")), e.at("args").at("bytes").get<std::int64_t>());
    }
    EXPECT_EQ(seen, expected[static_cast<std::size_t>(pid)]) << "device " << pid;
  }
  // A record at t=0 replaces the initial zero instead of doubling it.
  Timeline at_zero = t;
  at_zero.memory.insert(at_zero.memory.begin(), MemoryRecord{1, 0, 7, 1});
  const json trace0 = json::parse(trace_text(s, at_zero));
  EXPECT_EQ(select(trace0, "C", 1).front().at("args").at("bytes"), 7);
  EXPECT_EQ(select(trace0, "C", 1).size(), 5u);
  TraceOptions no_memory;
  no_memory.memory = false;
  EXPECT_TRUE(select(json::parse(trace_text(s, t, no_memory)), "C").empty());
}

// Two transfers on one link whose latency windows overlap: the second recv slice goes to
// a second lane thread instead of overlapping the first.
TEST(ChromeTrace, OverlappingTransfersGetExtraLanes) {
  const Schedule s = tiny_1f1b();
  Timeline t = tiny_timeline(s);
  t.transfers[0] = TransferRecord{{0, 0}, {1, 0}, 1000, 1000, 1250, 2250, 4096};
  t.transfers[1] = TransferRecord{{0, 1}, {1, 2}, 2000, 2000, 2250, 3250, 4096};
  const json trace = json::parse(trace_text(s, t));
  expect_no_overlaps(trace);
  EXPECT_NE(find_slice(trace, 1, kRecvTid, "0F0 -> 1F0"), nullptr);
  EXPECT_NE(find_slice(trace, 1, kRecvTid + 4, "0F1 -> 1F1"), nullptr);
  bool named = false;
  for (const json& e : select(trace, "M", 1, kRecvTid + 4))
    named = named || (e.at("name") == "thread_name" && e.at("args").at("name") == "recv 2");
  EXPECT_TRUE(named);
  EXPECT_EQ(select(trace, "M", 0, kRecvTid + 4).size(), 0u);  // device 0 needs no extra lane
}

// A zero-length send slice starting where a longer one starts, on the same thread: the
// one written second takes a lane of its own, so Perfetto never nests them (and binds no
// flow of the zero-length slice to the longer one). 0F1 lasts 0 ns at 1000 and sends over
// a free link at once; 0F0's message occupies the link from 1000.
TEST(ChromeTrace, ZeroLengthSliceBesideLongerOne) {
  const Schedule s = tiny_1f1b();
  Timeline t = tiny_timeline(s);
  t.ops[1] = OpRecord{OpRef{0, 1}, s.ops[0][1], 1000, 1000, 0};
  t.transfers[1] = TransferRecord{{0, 1}, {1, 2}, 1000, 1000, 1000, 1000, 0};
  const json trace = json::parse(trace_text(s, t));
  expect_no_overlaps(trace);
  ASSERT_NE(find_slice(trace, 0, kSendTid, "0F1 -> 1F1"), nullptr);
  EXPECT_EQ(ns_of(find_slice(trace, 0, kSendTid, "0F1 -> 1F1")->at("dur")), 0);
  EXPECT_NE(find_slice(trace, 0, kSendTid + 4, "0F0 -> 1F0"), nullptr);
  EXPECT_EQ(select(trace, "M", 0, kSendTid + 4).size(), 2u);  // "send 2": thread_name, thread_sort_index
  EXPECT_EQ(flow_pairs(trace).size(), 8u);
  expect_perfetto_binds_like_enclosing(trace);
}

TEST(ChromeTrace, CollectivesOnEveryParticipant) {
  Schedule s;
  s.name = "two-pipelines";
  s.num_devices = 2;
  s.num_stages = 1;
  s.num_pipelines = 2;
  s.microbatches = 1;
  s.placement = {{0}, {1}};
  s.ops = {{F(0, 0), B(0, 0), grad_sync(0), opt_step(0)}, {F(0, 0, 1), B(0, 0, 1), grad_sync(0, 1), opt_step(0, 1)}};
  Timeline t;
  for (int d = 0; d < 2; ++d) {
    add_op(t, s, d, 0, 0, 1000);
    add_op(t, s, d, 1, 1000, 3000);
    add_op(t, s, d, 2, 3000, 3000, -1);  // GradSync: drawn through its collective
    add_op(t, s, d, 3, 3000, 3500, -1);
  }
  t.collectives.push_back(CollectiveRecord{{{0, 2}, {1, 2}}, 3000, 4000, 64});
  const json trace = json::parse(trace_text(s, t));
  for (int d = 0; d < 2; ++d) {
    const auto slices = select(trace, "X", d, kCollectiveTid);
    ASSERT_EQ(slices.size(), 1u);
    EXPECT_EQ(slices[0].at("name"), d == 0 ? "0GRADSYNC" : "1:0GRADSYNC");
    EXPECT_EQ(slices[0].at("cat"), "grad-sync");
    EXPECT_EQ(ns_of(slices[0].at("ts")), 3000);
    EXPECT_EQ(ns_of(slices[0].at("dur")), 1000);
    EXPECT_EQ(slices[0].at("args"), json::parse(R"({"bytes":64,"participants":2})"));
    const auto compute = select(trace, "X", d, kComputeTid);
    ASSERT_EQ(compute.size(), 3u);  // F, B, OPT
    EXPECT_EQ(compute[2].at("name"), d == 0 ? "0OPT" : "1:0OPT");
    EXPECT_EQ(compute[2].at("cat"), "optimizer");
    EXPECT_EQ(compute[2].at("args").at("microbatch"), -1);
    EXPECT_EQ(compute[2].at("args").at("pipeline"), d);
  }
}

TEST(ChromeTrace, Deterministic) {
  const Schedule s = tiny_1f1b();
  EXPECT_EQ(trace_text(s, tiny_timeline(s)), trace_text(s, tiny_timeline(s)));
}

// A real run: every record shows up, flows bind, threads stay properly nested.
TEST(ChromeTrace, SimulatedTiny1f1b) {
  const Schedule s = tiny_1f1b();
  UniformCostConfig config;
  config.stage = StageCosts{kNsPerMs, 2 * kNsPerMs, 0};
  config.activation_bytes = 1 << 20;
  config.message_bytes = 1 << 16;
  config.link_bandwidth = 1e9;
  config.link_latency = 10 * kNsPerUs;
  const UniformCostModel costs(config);
  TimelineRecorder recorder;
  simulate(s, costs, &recorder);
  const Timeline& t = recorder.timeline;
  ASSERT_EQ(t.ops.size(), 8u);
  ASSERT_FALSE(t.transfers.empty());

  const std::string text = trace_text(s, t);
  TimelineRecorder again;
  simulate(s, costs, &again);
  EXPECT_EQ(trace_text(s, again.timeline), text);  // byte-identical across runs

  const json trace = json::parse(text);
  EXPECT_EQ(select(trace, "X", -1, kComputeTid).size(), t.ops.size());
  for (const OpRecord& r : t.ops) {
    const json* e = find_slice(trace, r.ref.device, kComputeTid, std::to_string(r.op.stage) +
                                   std::string(op_kind_name(r.op.kind)) + std::to_string(r.op.microbatch));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(ns_of(e->at("ts")), r.start);
    EXPECT_EQ(ns_of(e->at("dur")), r.end - r.start);
  }
  std::size_t sends = 0, recvs = 0;
  for (const json& e : select(trace, "X")) {
    sends += e.at("cat") == "send";
    recvs += e.at("cat") == "recv";
  }
  EXPECT_EQ(sends, t.transfers.size());
  EXPECT_EQ(recvs, t.transfers.size());
  const auto pairs = flow_pairs(trace);
  EXPECT_EQ(pairs.size(), 2 * t.transfers.size());
  const ThreadSlices threads = slices_by_thread(trace);
  for (const auto& [id, pair] : pairs) {
    EXPECT_FALSE(enclosing_slice(threads, pair.first).empty());
    EXPECT_FALSE(enclosing_slice(threads, pair.second).empty());
  }
  expect_no_overlaps(trace);
  expect_perfetto_binds_like_enclosing(trace);
  // Each device's counter starts at t=0: with the initial 0, or with the engine's own
  // record when its first change happens at t=0 (device 0 allocates as 0F0 starts).
  std::size_t initial_zeros = 0;
  for (int d = 0; d < 2; ++d) {
    const auto counters = select(trace, "C", d);
    std::vector<std::int64_t> recorded;
    for (const MemoryRecord& m : t.memory)
      if (m.device == d) recorded.push_back(m.bytes);
    ASSERT_FALSE(recorded.empty());
    ASSERT_FALSE(counters.empty());
    EXPECT_EQ(ns_of(counters.front().at("ts")), 0);
    const bool initial = counters.size() == recorded.size() + 1;
    initial_zeros += initial;
    if (initial) {
      EXPECT_EQ(counters.front().at("args").at("bytes"), 0);
    }
    for (std::size_t i = 0; i < recorded.size(); ++i)
      EXPECT_EQ(counters[i + (initial ? 1 : 0)].at("args").at("bytes"), recorded[i]);
  }
  EXPECT_EQ(select(trace, "C").size(), t.memory.size() + initial_zeros);
  EXPECT_GE(initial_zeros, 1u);  // device 1 starts idle
}

}  // namespace
}  // namespace pipesim

namespace pipesim {
namespace {

// Free links and a zero-length optimizer step: every send slice lasts 0 ns and starts where
// other slices start or end. Flows must still bind to the right slices.
TEST(ChromeTrace, SimulatedZeroLengthSlicesStillBind) {
  Schedule s = tiny_1f1b();
  s.ops[0].push_back(opt_step(0));
  s.ops[1].push_back(opt_step(1));
  UniformCostConfig config;
  config.stage = StageCosts{kNsPerMs, 2 * kNsPerMs, 0};
  TimelineRecorder recorder;
  simulate(s, UniformCostModel(config), &recorder);
  const json trace = json::parse(trace_text(s, recorder.timeline));
  for (const json& e : select(trace, "X", -1, kSendTid)) EXPECT_EQ(ns_of(e.at("dur")), 0) << e.dump();
  EXPECT_EQ(flow_pairs(trace).size(), 2 * recorder.timeline.transfers.size());
  expect_no_overlaps(trace);
  expect_perfetto_binds_like_enclosing(trace);
  EXPECT_NE(find_slice(trace, 1, kComputeTid, "1OPT"), nullptr);
}

}  // namespace
}  // namespace pipesim
