// Traces people can open (tools/trace_recorder.hpp, tools/trace_limit.hpp): the budgeted
// trace holds whole iterations (the first, the last, then as many as fit), stays within the
// budget, is valid Trace Event JSON whose counters show the right values, says what it left
// out; a first iteration larger than the budget gives the same prefix as --max-trace-ops;
// ".gz" traces decompress to exactly the plain trace's bytes, streamed or not.
#include "tools/trace_recorder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "core/output_file.hpp"
#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"
#include "tests/cli_runner.hpp"
#include "tests/generated.hpp"
#include "tests/gunzip.hpp"
#include "tests/trace_checks.hpp"
#include "tools/trace_limit.hpp"
#include "traces/chrome_trace_stream.hpp"

namespace pipesim {
namespace {

using nlohmann::json;
using testing::HasSubstr;
using testing::Not;
using testing_gzip::gunzip;
using testing_trace::expect_valid_trace;
using testing_trace::ns_of;
using testing_schedules::generated;

UniformCostModel link_costs() {
  UniformCostConfig c;
  c.stage = StageCosts{kNsPerMs, 2 * kNsPerMs, kNsPerMs};
  c.optimizer = 100 * kNsPerUs;
  c.activation_bytes = 64 << 20;
  c.message_bytes = 16 << 20;
  c.link_latency = 5 * kNsPerUs;
  c.link_bandwidth = 100e9;
  return UniformCostModel(c);
}

TraceLimit budget_of(std::uint64_t bytes) {
  TraceLimit limit;
  limit.budget = bytes;
  return limit;
}

TraceLimit first_ops(std::size_t n) {
  TraceLimit limit;
  limit.max_ops = n;
  return limit;
}

// A run seen by a TraceRecorder and, beside it, a recorder of everything.
struct Traced {
  Traced(const Schedule& schedule, std::uint64_t budget, bool keep_all = false)
      : Traced(schedule, budget_of(budget), keep_all) {}
  Traced(const Schedule& schedule, const TraceLimit& limit, bool keep_all)
      : s(schedule), recorder(s, limit, keep_all) {
    ObserverList both;
    both.add(&recorder);
    both.add(&everything);
    simulate(s, link_costs(), &both);
  }
  const Schedule& s;
  TraceRecorder recorder;
  TimelineRecorder everything;
  const Timeline& all() const { return everything.timeline; }
};

// What --max-trace-ops n shows, by its definition: the first n op records and every other
// record the engine reported before the op after them (recorded here independently of
// TraceRecorder).
class FirstOps final : public SimObserver {
 public:
  explicit FirstOps(std::size_t n) : n_(n) {}
  void on_op(const OpRecord& r) override {
    if (t.ops.size() == n_) done_ = true;
    if (!done_) t.ops.push_back(r);
  }
  void on_transfer(const TransferRecord& r) override {
    if (!done_) t.transfers.push_back(r);
  }
  void on_collective(const CollectiveRecord& r) override {
    if (!done_) t.collectives.push_back(r);
  }
  void on_memory(const MemoryRecord& r) override {
    if (!done_) t.memory.push_back(r);
  }
  Timeline t;

 private:
  std::size_t n_;
  bool done_ = false;
};

// The records of `all` whose iteration is in `kept`, in order; memory: each device's
// records while it runs a kept iteration (from its first op's start to its last op's end),
// and the one before each such window.
Timeline only(const Schedule& s, const Timeline& all, const std::set<int>& kept) {
  Timeline t;
  std::map<std::pair<int, int>, std::pair<Tick, Tick>> window;  // (device, iteration) -> [start, end]
  for (const OpRecord& r : all.ops) {
    const int it = op_iteration(s, r.ref);
    if (!kept.contains(it)) continue;
    t.ops.push_back(r);
    auto [w, fresh] = window.try_emplace({r.ref.device, it}, r.start, r.end);
    w->second = {std::min(w->second.first, r.start), std::max(w->second.second, r.end)};
  }
  for (const TransferRecord& r : all.transfers)
    if (kept.contains(op_iteration(s, r.to))) t.transfers.push_back(r);
  for (const CollectiveRecord& r : all.collectives)
    if (kept.contains(op_iteration(s, r.participants.front()))) t.collectives.push_back(r);
  std::set<std::size_t> memory;
  for (const auto& [key, w] : window) {
    std::optional<std::size_t> before;
    for (std::size_t i = 0; i < all.memory.size(); ++i) {
      const MemoryRecord& m = all.memory[i];
      if (m.device != key.first) continue;
      if (m.time < w.first) before = i;
      if (m.time >= w.first && m.time <= w.second) memory.insert(i);
    }
    if (before) memory.insert(*before);
  }
  for (std::size_t i : memory) t.memory.push_back(all.memory[i]);
  return t;
}

std::set<int> iterations_of(const Schedule& s, const Timeline& t) {
  std::set<int> out;
  for (const OpRecord& r : t.ops) out.insert(op_iteration(s, r.ref));
  return out;
}

std::string trace_text(const Schedule& s, const Timeline& t, const TraceOptions& options) {
  std::ostringstream out;
  write_chrome_trace(out, s, t, options);
  return out.str();
}

TEST(OpIteration, MicroBatchOpsByTheirIdStageOpsByTheOpBefore) {
  for (const char* name : {"1f1b", "chimera", "zb-h1", "interleaved"}) {
    const Schedule s = generated(name, 4, 8, 3);
    std::vector<std::size_t> per_iteration(3, 0);
    for (int d = 0; d < s.num_devices; ++d) {
      int before = -1;
      const auto& list = s.ops[static_cast<std::size_t>(d)];
      for (int i = 0; i < static_cast<int>(list.size()); ++i) {
        const Op& op = list[static_cast<std::size_t>(i)];
        const int it = op_iteration(s, OpRef{d, i});
        if (has_microbatch(op.kind)) {
          EXPECT_EQ(it, op.microbatch / s.microbatches) << name;
          before = it;
        } else if (before >= 0) {
          EXPECT_EQ(it, before) << name << ": " << d << "/" << i;
        }
        ++per_iteration[static_cast<std::size_t>(it)];
      }
    }
    // Every iteration of these schedules has the same ops.
    EXPECT_EQ(per_iteration[0], s.total_ops() / 3) << name;
    EXPECT_EQ(per_iteration[1], per_iteration[0]) << name;
    EXPECT_EQ(per_iteration[2], per_iteration[0]) << name;
  }
  // 1F1B: 2pm micro-batch ops and one optimizer step per device per iteration.
  const Schedule s = generated("1f1b", 4, 8, 3);
  std::size_t first = 0;
  for (int d = 0; d < 4; ++d)
    for (int i = 0; i < static_cast<int>(s.ops[static_cast<std::size_t>(d)].size()); ++i)
      first += op_iteration(s, OpRef{d, i}) == 0;
  EXPECT_EQ(first, 2u * 4 * 8 + 4);
}

// The memory a device holds at time t: its last record at or before t (0 before any).
std::int64_t memory_at(const std::vector<std::pair<Tick, std::int64_t>>& changes, Tick t) {
  std::int64_t bytes = 0;
  for (const auto& [time, b] : changes)
    if (time <= t) bytes = b;
  return bytes;
}

// Each device's counter in `trace` shows its real memory (from `all`) at the start and in
// the middle of every op the trace shows (at an op's end the next one, maybe left out, starts).
void expect_real_memory(const Schedule& s, const Timeline& all, const Timeline& shown_ops, const json& trace) {
  for (int d = 0; d < s.num_devices; ++d) {
    std::vector<std::pair<Tick, std::int64_t>> real, shown;
    for (const MemoryRecord& m : all.memory)
      if (m.device == d) real.emplace_back(m.time, m.bytes);
    for (const json& e : testing_trace::select(trace, "C", d))
      shown.emplace_back(ns_of(e.at("ts")), e.at("args").at("bytes").get<std::int64_t>());
    for (const OpRecord& r : shown_ops.ops) {
      if (r.ref.device != d) continue;
      for (const Tick t : {r.start, r.start + (r.end - r.start) / 2})
        EXPECT_EQ(memory_at(shown, t), memory_at(real, t)) << "device " << d << " at " << t;
    }
  }
}

class BudgetedSchedule : public testing::TestWithParam<const char*> {};

// Synchronous and asynchronous (iterations overlap in time: the counters must still show
// the real memory).
INSTANTIATE_TEST_SUITE_P(Schedules, BudgetedSchedule, testing::Values("1f1b", "zb-h1", "pipedream-2bw", "amp"));

TEST_P(BudgetedSchedule, KeepsTheFirstTheLastAndWholeIterationsThatFit) {
  const Schedule s = generated(GetParam(), 4, 16, 10);
  const TraceOptions options;
  // One iteration's trace alone, to set a budget of about three and a half.
  const Traced probe(s, 1'000'000'000);
  const std::uint64_t one = chrome_trace_bytes(s, only(s, probe.all(), {0}), options);
  const std::uint64_t budget = one * 7 / 2;
  const Traced run(s, budget);
  const TraceRecorder::Selection sel = run.recorder.select(options);
  const std::set<int> kept = iterations_of(s, sel.trace);
  // 0 and 9, then 1, 2, ... : contiguous from the start.
  EXPECT_TRUE(kept.contains(0) && kept.contains(9));
  const int k = static_cast<int>(kept.size()) - 2;
  ASSERT_GE(k, 1) << sel.note;
  for (int i = 1; i <= k; ++i) EXPECT_TRUE(kept.contains(i)) << i;
  // Whole iterations, in the engine's order, and nothing else.
  const Timeline expected = only(s, run.all(), kept);
  ASSERT_EQ(sel.trace.ops.size(), expected.ops.size());
  for (std::size_t i = 0; i < expected.ops.size(); ++i) EXPECT_EQ(sel.trace.ops[i].ref, expected.ops[i].ref);
  EXPECT_EQ(sel.trace.transfers.size(), expected.transfers.size());
  // Within the budget, which one more iteration would break.
  TraceOptions with = options;
  with.metadata = sel.metadata;
  const std::string text = trace_text(s, sel.trace, with);
  EXPECT_EQ(text.size(), sel.bytes);
  EXPECT_LE(sel.bytes, budget);
  std::set<int> more = kept;
  more.insert(k + 1);
  EXPECT_GT(chrome_trace_bytes(s, only(s, run.all(), more), with), budget);
  // What it says.
  const std::string kept_text = "0-" + std::to_string(k) + ", 9 of 10";
  const std::string left = "left out iterations " + std::to_string(k + 1) + "-8 (" +
                           std::to_string(s.total_ops() - sel.trace.ops.size()) + " of " +
                           std::to_string(s.total_ops()) + " ops) to stay within --trace-budget " +
                           format_trace_bytes(budget) + "; pass --trace-budget to change it (0 = no limit)";
  ASSERT_EQ(sel.metadata.size(), 2u);
  EXPECT_EQ(sel.metadata[0], (std::pair<std::string, std::string>{"iterations shown", kept_text}));
  EXPECT_EQ(sel.metadata[1], (std::pair<std::string, std::string>{"truncated", left}));
  EXPECT_THAT(sel.note, HasSubstr("keeps iterations " + kept_text + " ("));
  // Valid, and every counter shows the device's real memory wherever the trace has ops.
  const json trace = json::parse(text);
  expect_valid_trace(trace);
  EXPECT_EQ(trace.at("otherData").at("iterations shown"), kept_text);
  expect_real_memory(s, run.all(), sel.trace, trace);
}

TEST_P(BudgetedSchedule, RecordsOnlyWhatTheBudgetCouldHold) {
  const Schedule s = generated(GetParam(), 2, 8, 60);
  const std::size_t per_iteration = s.total_ops() / 60;
  const std::uint64_t budget = 500 * kMinTraceBytesPerOp;  // at most 500 ops: ~3 iterations fit
  ASSERT_EQ(budget_record_ops(budget), 500u);
  const Traced run(s, budget);
  // The first 500 ops, and the last iteration's.
  EXPECT_EQ(run.recorder.timeline.ops.size(), 500u + per_iteration);
  const TraceRecorder::Selection sel = run.recorder.select({});
  EXPECT_LE(sel.bytes, budget);
  const std::set<int> kept = iterations_of(s, sel.trace);
  ASSERT_FALSE(kept.empty());
  EXPECT_TRUE(kept.contains(0) && kept.contains(59));
  EXPECT_GE(kept.size(), 3u);
  EXPECT_EQ(sel.trace.ops.size(), per_iteration * kept.size()) << "whole iterations";
  const json trace = json::parse(trace_text(s, sel.trace, {}));
  expect_valid_trace(trace);
  expect_real_memory(s, run.all(), sel.trace, trace);
  EXPECT_EQ(budget_record_ops(1), 1u);
  EXPECT_EQ(budget_record_ops(std::uint64_t{1} << 50), 1'000'000u);
}

TEST(TraceRecorder, AFirstIterationLargerThanTheBudgetGivesThePrefixOfMaxTraceOps) {
  const Schedule s = generated("1f1b", 4, 64, 1);  // 516 ops
  const std::uint64_t budget = 100'000;
  const Traced run(s, budget);
  const TraceRecorder::Selection sel = run.recorder.select({});
  const std::size_t n = sel.trace.ops.size();
  ASSERT_GT(n, 0u);
  ASSERT_LT(n, s.total_ops());
  EXPECT_LE(sel.bytes, budget);
  EXPECT_GT(sel.bytes, budget * 8 / 10) << "about as many ops as fit";
  // The same trace as --max-trace-ops n.
  FirstOps prefix(n);
  simulate(s, link_costs(), &prefix);
  const Timeline& p = prefix.t;
  ASSERT_EQ(p.ops.size(), n);
  EXPECT_EQ(trace_text(s, sel.trace, {}), trace_text(s, p, {}));
  const Tick until = p.ops.back().end;
  ASSERT_EQ(sel.metadata.size(), 1u);
  EXPECT_EQ(sel.metadata[0].second, "truncated to the first " + std::to_string(n) + " of 516 ops (until " +
                                        format_duration(until) + "); iteration 0 alone is larger than --trace-budget "
                                        "100.0 kB; pass --trace-budget to change it (0 = no limit)");
  TraceOptions with;
  with.metadata = sel.metadata;
  EXPECT_EQ(trace_text(s, sel.trace, with).size(), sel.bytes);
}

TEST(TraceRecorder, MaxTraceOpsKeepsTheFirstOpsAndSaysSo) {
  const Schedule s = generated("zb-h1", 4, 16, 3);
  for (const std::size_t n : {std::size_t{1}, std::size_t{37}, s.total_ops() - 1}) {
    FirstOps expected(n);
    simulate(s, link_costs(), &expected);
    for (const bool keep_all : {false, true}) {
      const Traced run(s, first_ops(n), keep_all);
      const TraceRecorder::Selection sel = run.recorder.select({});
      EXPECT_EQ(trace_text(s, sel.trace, {}), trace_text(s, expected.t, {})) << n << " " << keep_all;
      const Tick until = expected.t.ops.back().end;
      const std::string notice = "truncated to the first " + std::to_string(n) + " of " + std::to_string(s.total_ops()) +
                                 " ops (until " + format_duration(until) + "); pass --max-trace-ops to change the limit";
      EXPECT_EQ(sel.note, notice);
      EXPECT_EQ(sel.metadata, (std::vector<std::pair<std::string, std::string>>{{"truncated", notice}}));
      if (keep_all) {
        EXPECT_EQ(run.recorder.timeline.ops.size(), s.total_ops()) << "the report's whole run";
      } else {
        EXPECT_EQ(run.recorder.timeline.ops.size(), n) << "nothing recorded past the limit";
      }
    }
  }
  // 0, as many as the run has, or more: everything, without a notice.
  for (const std::size_t n : {std::size_t{0}, s.total_ops(), s.total_ops() + 5}) {
    const Traced run(s, first_ops(n), false);
    const TraceRecorder::Selection sel = run.recorder.select({});
    EXPECT_TRUE(sel.note.empty() && sel.metadata.empty()) << n;
    EXPECT_EQ(trace_text(s, sel.trace, {}), trace_text(s, run.all(), {})) << n;
  }
  // --trace-budget 0: everything too.
  const Traced unlimited(s, budget_of(0), false);
  EXPECT_EQ(trace_text(s, unlimited.recorder.select({}).trace, {}), trace_text(s, unlimited.all(), {}));
}

TEST(TraceRecorder, KeepAllRecordsTheWholeRunAndSelectsTheSame) {
  const Schedule s = generated("zb-h1", 4, 16, 12);
  const std::uint64_t budget = 200'000;
  const Traced lean(s, budget);
  const Traced full(s, budget, true);
  EXPECT_LT(lean.recorder.timeline.ops.size(), s.total_ops());
  const Timeline& t = full.recorder.timeline;
  ASSERT_EQ(t.ops.size(), full.all().ops.size());
  for (std::size_t i = 0; i < t.ops.size(); ++i) EXPECT_EQ(t.ops[i].ref, full.all().ops[i].ref);
  EXPECT_EQ(t.transfers.size(), full.all().transfers.size());
  ASSERT_EQ(t.memory.size(), full.all().memory.size());
  for (std::size_t i = 0; i < t.memory.size(); ++i) EXPECT_EQ(t.memory[i].time, full.all().memory[i].time);
  const auto a = lean.recorder.select({});
  const auto b = full.recorder.select({});
  EXPECT_EQ(trace_text(s, a.trace, {}), trace_text(s, b.trace, {}));
  EXPECT_EQ(a.metadata, b.metadata);
}

TEST(TraceRecorder, EverythingThatFitsIsKeptWithoutANotice) {
  for (int iterations : {1, 3}) {
    const Schedule s = generated("chimera", 4, 8, iterations);
    const Traced run(s, 100'000'000);
    const auto sel = run.recorder.select({});
    EXPECT_TRUE(sel.metadata.empty());
    EXPECT_TRUE(sel.note.empty());
    EXPECT_EQ(trace_text(s, sel.trace, {}), trace_text(s, run.all(), {}));
  }
}

TEST(TraceLimit, BudgetFlagAndWarning) {
  EXPECT_EQ(parse_trace_budget("0"), 0u);
  EXPECT_EQ(parse_trace_budget("100MB"), 100'000'000u);
  EXPECT_EQ(parse_trace_budget("1.5GiB"), 1'610'612'736u);
  EXPECT_THROW(parse_trace_budget("999KB"), InputError);
  TraceLimit everything;
  everything.budget = 0;
  EXPECT_EQ(trace_size_warning(everything, 50'000, "t.json"), "");  // ~50 MB: under the default 100 MB
  EXPECT_EQ(trace_size_warning(everything, 8'388'864, "t.json"),
            "trace 't.json' will hold all 8388864 ops, ~8.39 GB of JSON, above the 100.0 MB trace budget: Perfetto's UI "
            "may not open it (trace_processor --httpd can); without --trace-budget 0, the trace keeps whole iterations "
            "within --trace-budget");
  TraceLimit first;
  first.budget = 2'000'000;
  first.max_ops = 5000;
  EXPECT_EQ(trace_size_warning(first, 100'000, "t.json"),
            "trace 't.json' will hold the first 5000 of 100000 ops, ~5.0 MB of JSON, above the 2.0 MB trace budget: "
            "Perfetto's UI may not open it (trace_processor --httpd can); without --max-trace-ops, the trace keeps "
            "whole iterations within --trace-budget");
  EXPECT_EQ(trace_size_warning(TraceLimit{}, 100'000'000, "t.json"), "") << "the budget applies: no warning";
  EXPECT_EQ(recorded_trace_ops(TraceLimit{}), 1'000'000u);
}

// The streaming driver through a ".gz" OutputFile: the plain bytes, compressed.
TEST(GzipTrace, StreamedTraceDecompressesToThePlainOne) {
  const Schedule s = generated("interleaved", 4, 16, 2);
  std::ostringstream plain;
  {
    ChromeTraceStream stream(plain, s);
    simulate(s, link_costs(), &stream);
    stream.finish();
  }
  const std::string path = testing_cli::temp_path("streamed.trace.json.gz");
  {
    OutputFile file(path, "--trace");
    ChromeTraceStream stream(file.stream(), s);
    simulate(s, link_costs(), &stream);
    stream.finish();
    file.commit();
  }
  const std::string packed = testing_cli::slurp(path);
  EXPECT_EQ(gunzip(packed), plain.str());
  EXPECT_LT(packed.size(), plain.str().size() / 4);
}

// ---- the command line ----------------------------------------------------------------------

using testing_cli::run;
using testing_cli::slurp;
using testing_cli::temp_path;

TEST(TraceBudgetCli, GzipIsThePlainTraceCompressed) {
  const std::string plain = temp_path("same.trace.json"), packed = temp_path("same.trace.json.gz");
  const std::string args = "simulate --schedule zb-h1 -p 4 -m 16 --iterations 3 --link-latency 5us --trace ";
  const auto a = run(args + plain);
  const auto b = run(args + packed);
  ASSERT_EQ(a.code, 0) << a.out;
  ASSERT_EQ(b.code, 0) << b.out;
  EXPECT_EQ(gunzip(slurp(packed)), slurp(plain));
  // Reruns: the same compressed bytes.
  const std::string first = slurp(packed);
  ASSERT_EQ(run(args + packed).code, 0);
  EXPECT_EQ(slurp(packed), first);
}

TEST(TraceBudgetCli, WholeIterationsWithANoteAndTheSameReport) {
  const std::string trace = temp_path("budget.trace.json.gz");
  const std::string args = "simulate -p 4 -m 32 --iterations 60 --link-latency 5us --trace-budget 1MB";
  const auto r = run(args + " --trace " + trace);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pipesim: note: trace " + trace + " keeps iterations 0-"));
  EXPECT_THAT(r.out, HasSubstr(", 59 of 60 ("));
  EXPECT_THAT(r.out, HasSubstr(" to stay within --trace-budget 1.0 MB; pass --trace-budget to change it (0 = no limit)"));
  const std::string text = gunzip(slurp(trace));
  EXPECT_LE(text.size(), 1'000'000u) << "the budget counts the JSON bytes";
  const json t = json::parse(text);
  expect_valid_trace(t, false);  // the binding of its flows: TraceRecorder's tests
  EXPECT_THAT(t.at("otherData").at("truncated").get<std::string>(), HasSubstr("left out iterations "));
  // Whole iterations: every kept micro-batch has its 2 x 4 compute slices.
  std::map<int, int> per_microbatch;
  for (const json& e : testing_trace::select(t, "X", -1, kComputeTid))
    if (e.at("args").contains("microbatch") && e.at("args").at("microbatch") >= 0)
      ++per_microbatch[e.at("args").at("microbatch").get<int>()];
  std::set<int> iterations;
  for (const auto& [mb, n] : per_microbatch) {
    EXPECT_EQ(n, 8) << "micro-batch " << mb;
    iterations.insert(mb / 32);
  }
  EXPECT_TRUE(iterations.contains(0) && iterations.contains(59));
  for (int i : iterations)
    for (int mb = i * 32; mb < (i + 1) * 32; ++mb) EXPECT_TRUE(per_microbatch.contains(mb)) << mb;
  // The report still shows the whole run, as without a trace.
  const std::string with = temp_path("budget_with.html"), without = temp_path("budget_without.html");
  ASSERT_EQ(run(args + " --trace " + trace + " --report " + with).code, 0);
  ASSERT_EQ(run("simulate -p 4 -m 32 --iterations 60 --link-latency 5us --report " + without).code, 0);  // no trace, no budget
  EXPECT_TRUE(slurp(with) == slurp(without)) << "the report of a run with a budgeted trace is not the whole run's";
}

TEST(TraceBudgetCli, AskingForMoreThanTheBudgetWarnsFirst) {
  const std::string trace = temp_path("warned.trace.json");
  const auto r = run("simulate -p 4 -m 64 --iterations 20 --trace " + trace + " --max-trace-ops 5000 --trace-budget 2MB");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, testing::StartsWith("pipesim: warning: trace '" + trace +
                                         "' will hold the first 5000 of 10320 ops, ~5.0 MB of JSON, above the 2.0 MB "
                                         "trace budget: "));
  EXPECT_THAT(r.out, HasSubstr("pipesim: note: trace " + trace + " truncated to the first 5000 of 10320 ops"));
  const auto quiet = run("simulate -p 4 -m 64 --iterations 20 --trace " + trace + " --max-trace-ops 1000 --trace-budget 2MB");
  EXPECT_THAT(quiet.out, Not(HasSubstr("warning")));
  // compare's traces too.
  const std::string dir = temp_path("warned_dir");
  const auto c = run("compare --schedules 1f1b -p 4 -m 64 --iterations 20 --trace-dir " + dir + " --trace-budget 0");
  ASSERT_EQ(c.code, 0) << c.out;
  EXPECT_THAT(c.out, Not(HasSubstr("warning"))) << "~10 MB: under the default 100 MB";
}

}  // namespace
}  // namespace pipesim
