#pragma once
// Checks of Chrome traces parsed back with nlohmann::json, shared by the trace writers'
// tests: events by phase, flow pairs, the slice a flow binds to (catapult's rule and
// Perfetto's importer), properly nested threads, and the Trace Event Format's required
// fields (expect_valid_trace).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/units.hpp"

namespace pipesim::testing_trace {

using nlohmann::json;

inline Tick ns_of(const json& us) { return static_cast<Tick>(std::llround(us.get<double>() * 1000.0)); }

inline std::vector<json> select(const json& trace, const std::string& ph, int pid = -1, int tid = -1) {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents"))
    if (e.at("ph") == ph && (pid < 0 || e.at("pid") == pid) && (tid < 0 || e.at("tid") == tid)) out.push_back(e);
  return out;
}

inline const json* find_slice(const json& trace, int pid, int tid, const std::string& name) {
  for (const json& e : trace.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("pid") == pid && e.at("tid") == tid && e.at("name") == name) return &e;
  return nullptr;
}

// A thread's complete slices: start, duration and name, in file order.
struct Slice {
  Tick ts = 0;
  Tick dur = 0;
  std::string name;
};
using ThreadSlices = std::map<std::pair<int, int>, std::vector<Slice>>;

inline ThreadSlices slices_by_thread(const json& trace) {
  ThreadSlices threads;
  for (const json& e : trace.at("traceEvents"))
    if (e.at("ph") == "X")
      threads[{e.at("pid"), e.at("tid")}].push_back({ns_of(e.at("ts")), ns_of(e.at("dur")), e.at("name")});
  return threads;
}

// The slice a flow event binds to: the innermost (shortest) X event on its thread that
// encloses its ts; a zero-length slice at the start of a longer one counts as inside it.
inline std::string enclosing_slice(const ThreadSlices& threads, const json& flow) {
  std::vector<std::pair<Tick, std::string>> hits;
  const Tick ts = ns_of(flow.at("ts"));
  const auto it = threads.find({flow.at("pid"), flow.at("tid")});
  if (it != threads.end())
    for (const Slice& e : it->second)
      if (e.ts <= ts && ts <= e.ts + e.dur) hits.emplace_back(e.dur, e.name);
  std::sort(hits.begin(), hits.end());
  EXPECT_TRUE(hits.size() == 1 || (hits.size() > 1 && hits[0].first < hits[1].first)) << flow.dump();
  return hits.empty() ? "" : hits.front().second;
}

// How Perfetto's JSON importer binds v1 flow events (slice_tracker / flow_tracker): events
// in timestamp order, ties in file order; a complete slice first pops the slices that ended
// before it starts (or exactly at its start, unless both are zero-length); "s" and "f" with
// bp "e" bind to the top of their thread's stack. Checks that this agrees with the
// enclosing-slice rule (catapult) for every flow event.
inline void expect_perfetto_binds_like_enclosing(const json& trace) {
  std::vector<std::size_t> order(trace.at("traceEvents").size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const json& events = trace.at("traceEvents");
  auto ts_of = [&](std::size_t i) { return events[i].contains("ts") ? ns_of(events[i].at("ts")) : Tick{-1}; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ts_of(a) < ts_of(b); });
  const ThreadSlices threads = slices_by_thread(trace);
  std::map<std::pair<int, int>, std::vector<std::size_t>> stacks;
  std::size_t flows = 0;
  for (std::size_t i : order) {
    const json& e = events[i];
    const std::string ph = e.at("ph");
    if (ph != "X" && ph != "s" && ph != "f") continue;
    auto& stack = stacks[{e.at("pid"), e.at("tid")}];
    if (ph == "X") {
      const Tick ts = ns_of(e.at("ts"));
      const Tick dur = ns_of(e.at("dur"));
      while (!stack.empty()) {
        const json& top = events[stack.back()];
        const Tick top_end = ns_of(top.at("ts")) + ns_of(top.at("dur"));
        if (top_end < ts || (top_end == ts && !(ns_of(top.at("dur")) == 0 && dur == 0)))
          stack.pop_back();
        else
          break;
      }
      stack.push_back(i);
      continue;
    }
    ++flows;
    ASSERT_FALSE(stack.empty()) << "no slice for " << e.dump();
    EXPECT_EQ(events[stack.back()].at("name"), enclosing_slice(threads, e)) << e.dump();
  }
  EXPECT_EQ(flows, select(trace, "s").size() + select(trace, "f").size());
}

// Every "s" has exactly one "f" with the same id (and bp "e"); returns id -> {s, f}.
inline std::map<std::int64_t, std::pair<json, json>> flow_pairs(const json& trace) {
  std::map<std::int64_t, std::pair<json, json>> pairs;
  for (const json& s : select(trace, "s")) {
    EXPECT_FALSE(pairs.contains(s.at("id"))) << "duplicate flow start " << s.dump();
    pairs[s.at("id")].first = s;
  }
  for (const json& f : select(trace, "f")) {
    EXPECT_EQ(f.at("bp"), "e");
    auto it = pairs.find(f.at("id"));
    EXPECT_NE(it, pairs.end()) << "flow end without start " << f.dump();
    if (it == pairs.end()) continue;
    EXPECT_TRUE(it->second.second.is_null()) << "duplicate flow end " << f.dump();
    it->second.second = f;
  }
  for (const auto& [id, pair] : pairs) EXPECT_FALSE(pair.second.is_null()) << "flow " << id << " never ends";
  return pairs;
}

// Slices on one thread must not overlap (Perfetto and catapult need proper nesting).
inline void expect_no_overlaps(const json& trace) {
  for (const auto& [thread, slices] : slices_by_thread(trace)) {
    std::vector<std::pair<Tick, Tick>> spans;
    for (const Slice& e : slices) spans.emplace_back(e.ts, e.ts + e.dur);
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i)
      EXPECT_LE(spans[i - 1].second, spans[i].first) << "pid " << thread.first << " tid " << thread.second;
  }
}

// The Trace Event Format's object form (docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU):
// "traceEvents" an array of events with name, ph, pid, tid; "X" with ts and dur >= 0, "C"
// with numeric args, "s"/"f" with an id, "M" with args; plus pipesim's own promises (flows
// in pairs, no overlapping slices on a thread, and with `binding` every flow bound inside
// its slice, which takes time quadratic in the trace's size).
inline void expect_valid_trace(const json& trace, bool binding = true) {
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace.at("traceEvents").is_array());
  EXPECT_EQ(trace.at("displayTimeUnit"), "ns");
  EXPECT_TRUE(trace.at("otherData").is_object());
  for (const json& e : trace.at("traceEvents")) {
    ASSERT_TRUE(e.at("name").is_string()) << e.dump();
    ASSERT_TRUE(e.at("pid").is_number_integer()) << e.dump();
    ASSERT_TRUE(e.at("tid").is_number_integer()) << e.dump();
    const std::string ph = e.at("ph");
    if (ph == "M") {
      EXPECT_TRUE(e.at("args").is_object()) << e.dump();
      continue;
    }
    ASSERT_TRUE(e.at("ts").is_number()) << e.dump();
    EXPECT_GE(e.at("ts").get<double>(), 0.0) << e.dump();
    if (ph == "X") {
      EXPECT_GE(e.at("dur").get<double>(), 0.0) << e.dump();
    } else if (ph == "C") {
      for (const auto& item : e.at("args").items()) EXPECT_TRUE(item.value().is_number()) << e.dump();
    } else if (ph == "s" || ph == "f") {
      EXPECT_TRUE(e.at("id").is_number_integer()) << e.dump();
    } else {
      ADD_FAILURE() << "unexpected phase " << e.dump();
    }
  }
  flow_pairs(trace);
  expect_no_overlaps(trace);
  if (binding) expect_perfetto_binds_like_enclosing(trace);
}

}  // namespace pipesim::testing_trace
