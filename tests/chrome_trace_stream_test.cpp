// The streaming driver of the Chrome trace writer (traces/chrome_trace_stream.hpp), checked
// against the batch driver (traces/chrome_trace.hpp) on real runs: the same bytes, no
// overlaps per thread, every flow bound inside slices, and bounded retained state on a
// large run.
#include "traces/chrome_trace_stream.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <streambuf>
#include <string>
#include <tuple>
#include <vector>

#include "both_traces.hpp"
#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace pipesim {
namespace {

using nlohmann::json;

UniformCostModel link_costs(Tick latency, double bandwidth) {
  UniformCostConfig config;
  config.stage = StageCosts{kNsPerMs, 2 * kNsPerMs, kNsPerMs};
  config.optimizer = 100 * kNsPerUs;
  config.activation_bytes = 64 << 20;
  config.message_bytes = 16 << 20;
  config.grad_bytes = 1 << 30;
  config.link_latency = latency;
  config.link_bandwidth = bandwidth;
  return UniformCostModel(config);
}

using testing_trace::both_traces;
using testing_trace::Traces;

Tick ns_of(const json& us) { return static_cast<Tick>(std::llround(us.get<double>() * 1000.0)); }

// name, cat, pid, ts, dur, args: what a slice shows, without its lane.
using SliceKey = std::tuple<std::string, std::string, int, Tick, Tick, std::string>;
std::multiset<SliceKey> slices(const json& trace) {
  std::multiset<SliceKey> out;
  for (const json& e : trace.at("traceEvents"))
    if (e.at("ph") == "X")
      out.emplace(e.at("name"), e.at("cat"), e.at("pid"), ns_of(e.at("ts")), ns_of(e.at("dur")), e.at("args").dump());
  return out;
}

std::multiset<std::string> counters(const json& trace) {
  std::multiset<std::string> out;
  for (const json& e : trace.at("traceEvents"))
    if (e.at("ph") == "C") out.insert(e.dump());
  return out;
}

// (pid, base thread) of every flow arrow's start and end slice: what the arrow connects.
using FlowKey = std::tuple<int, int, Tick, int, int, Tick>;

// Checks no overlaps per thread, each flow id has one "s" and one "f" (bp "e"), each
// inside a slice of its thread; returns the arrows by the slices they connect.
std::multiset<FlowKey> check_and_collect_flows(const json& trace) {
  std::map<std::pair<int, int>, std::vector<std::pair<Tick, Tick>>> threads;
  for (const json& e : trace.at("traceEvents"))
    if (e.at("ph") == "X")
      threads[{e.at("pid"), e.at("tid")}].emplace_back(ns_of(e.at("ts")), ns_of(e.at("ts")) + ns_of(e.at("dur")));
  for (auto& [thread, list] : threads) {
    std::sort(list.begin(), list.end());
    for (std::size_t i = 1; i < list.size(); ++i)
      EXPECT_LE(list[i - 1].second, list[i].first) << "overlap on pid " << thread.first << " tid " << thread.second;
  }
  // The slice enclosing a flow event: its start (threads are overlap-free).
  auto enclosing = [&](const json& e) -> Tick {
    const auto& list = threads[{e.at("pid"), e.at("tid")}];
    const Tick ts = ns_of(e.at("ts"));
    for (const auto& [a, b] : list)
      if (a <= ts && ts <= b) return a;
    ADD_FAILURE() << "flow event outside every slice: " << e.dump();
    return -1;
  };
  std::map<std::int64_t, std::pair<const json*, const json*>> ends;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "s") {
      EXPECT_EQ(ends[e.at("id")].first, nullptr) << "two starts " << e.dump();
      ends[e.at("id")].first = &e;
    } else if (e.at("ph") == "f") {
      EXPECT_EQ(e.at("bp"), "e");
      EXPECT_EQ(ends[e.at("id")].second, nullptr) << "two ends " << e.dump();
      ends[e.at("id")].second = &e;
    }
  }
  std::multiset<FlowKey> out;
  for (const auto& [id, pair] : ends) {
    EXPECT_TRUE(pair.first && pair.second) << "flow " << id << " lacks an end";
    if (!pair.first || !pair.second) continue;
    const json& s = *pair.first;
    const json& f = *pair.second;
    out.emplace(s.at("pid"), s.at("tid").get<int>() % 4, enclosing(s), f.at("pid"), f.at("tid").get<int>() % 4,
                enclosing(f));
  }
  return out;
}

void expect_equivalent(const Traces& t) {
  EXPECT_EQ(t.stream, t.batch);  // one writer: the same bytes from both drivers
  const json batch = json::parse(t.batch);
  const json stream = json::parse(t.stream);
  EXPECT_EQ(batch.at("otherData"), stream.at("otherData"));
  EXPECT_EQ(slices(stream), slices(batch));
  EXPECT_EQ(counters(stream), counters(batch));
  const auto stream_flows = check_and_collect_flows(stream);
  EXPECT_EQ(stream_flows, check_and_collect_flows(batch));
  EXPECT_FALSE(stream_flows.empty());
  EXPECT_EQ(t.unmatched, 0u);
  EXPECT_EQ(t.left.producers, 0u);
  EXPECT_EQ(t.left.consumers, 0u);
}

ScheduleParams params(int p, int m, int iterations = 1) {
  ScheduleParams out;
  out.p = p;
  out.m = m;
  out.iterations = iterations;
  return out;
}

TEST(ChromeTraceStream, SameTraceAsBatchWriterWithLinkCosts) {
  // Bandwidth-limited links (occupancy, queueing), latency-only links, free links.
  const UniformCostModel models[] = {link_costs(20 * kNsPerUs, 5e9), link_costs(50 * kNsPerUs, 0),
                                     link_costs(0, 0)};
  for (const char* name : {"1f1b", "gpipe", "interleaved", "zb-h1", "zb-h2", "chimera", "dualpipev", "pipedream"}) {
    for (const UniformCostModel& costs : models) {
      SCOPED_TRACE(name);
      const Schedule s = generate(name, params(4, 8, 2));
      expect_equivalent(both_traces(s, costs));
    }
  }
}

TEST(ChromeTraceStream, StaticMemoryAndOptions) {
  const Schedule s = generate("1f1b", params(4, 6));
  const UniformCostModel costs = link_costs(10 * kNsPerUs, 1e10);
  TraceOptions options;
  options.title = "stacked \"memory\"";
  options.static_memory_bytes = {1000, 2000, 3000, 4000};
  options.metadata = {{"cost model", "uniform"}};
  expect_equivalent(both_traces(s, costs, options));

  TraceOptions none;
  none.flows = false;
  none.memory = false;
  const Traces bare = both_traces(s, costs, none);
  const json j = json::parse(bare.stream);
  EXPECT_EQ(slices(j), slices(json::parse(bare.batch)));
  for (const json& e : j.at("traceEvents")) EXPECT_TRUE(e.at("ph") == "X" || e.at("ph") == "M") << e.dump();
}

TEST(ChromeTraceStream, ByteIdenticalAcrossRuns) {
  const Schedule s = generate("interleaved", params(4, 8, 2));
  const UniformCostModel costs = link_costs(20 * kNsPerUs, 5e9);
  const Traces a = both_traces(s, costs);
  const Traces b = both_traces(s, costs);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.stream, a.batch);
}

TEST(ChromeTraceStream, TruncatesLikeTheRecorder) {
  const Schedule s = generate("1f1b", params(4, 8));
  const UniformCostModel costs = link_costs(20 * kNsPerUs, 5e9);
  const Traces t = both_traces(s, costs, {}, 10);
  ASSERT_TRUE(t.truncated);
  EXPECT_EQ(t.ops_kept, 10u);
  EXPECT_EQ(t.cut_time, t.timeline.ops[9].end);
  const json trace = json::parse(t.stream);
  std::size_t ops = 0;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X" && e.at("tid") == kComputeTid) ++ops;
    if (e.at("ph") == "X") {
      EXPECT_LE(ns_of(e.at("ts")), t.cut_time) << e.dump();
    }
  }
  EXPECT_EQ(ops, 10u);
  check_and_collect_flows(trace);  // no arrow to an op past the cut
}

// Counts bytes, keeps none: the trace of a large run without the file.
class CountingBuf final : public std::streambuf {
 public:
  std::size_t bytes = 0;

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) ++bytes;
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += static_cast<std::size_t>(n);
    return n;
  }
};

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Sanitizers keep freed memory in quarantine and are ~10x slower: a smaller run there, and
// no RSS bound (the retained-state bounds still hold).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

TEST(ChromeTraceStream, LargeRunKeepsLittleState) {
  const Schedule s = generate("1f1b", params(64, kSanitized ? 512 : 4096));
  ASSERT_GT(s.total_ops(), kSanitized ? 60'000u : 500'000u);
  const UniformCostModel costs = link_costs(5 * kNsPerUs, 2e10);
  simulate(s, costs);  // the engine's own peak, before the trace
  const long before = peak_rss_kib();
  CountingBuf buf;
  std::ostream out(&buf);
  ChromeTraceStream stream(out, s);
  simulate(s, costs, &stream);
  stream.finish();
  const long growth_mib = (peak_rss_kib() - before) / 1024;
  // Recording the run for the batch driver would hold its records (~300 MiB here) and a
  // trace this size is ~400 MiB of text; the stream holds a byte per op and a few entries
  // per device.
  EXPECT_GT(buf.bytes, s.total_ops() * 300);
  EXPECT_LT(stream.peak_pending(), 16u * 64u);
  EXPECT_LT(stream.retained().lanes, 8u * 64u * 4u);
  EXPECT_EQ(stream.unmatched_producers(), 0u);
  if (!kSanitized) {
    EXPECT_LT(growth_mib, 32) << "peak RSS grew by " << growth_mib << " MiB while streaming";
  }
}

}  // namespace
}  // namespace pipesim
