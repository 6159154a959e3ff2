// Progress (tools/progress.hpp, sim/engine.hpp's SimProgress, TraceOptions::progress): the
// texts against hand-computed rates and ETAs, the log lines a run prints, the engine's
// callback (counts, and a run unchanged by it), the trace writer's, and the CLI: progress
// on standard error only, standard output and output files byte-identical.
#include "tools/progress.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"
#include "tests/cli_runner.hpp"
#include "tests/generated.hpp"
#include "traces/chrome_trace.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;
using testing::Not;
using testing_cli::run;
using testing_cli::run_shell;
using testing_cli::slurp;
using testing_cli::temp_path;
using testing_schedules::generated;

TEST(ProgressText, CountsAndDurations) {
  EXPECT_EQ(compact_count(0), "0");
  EXPECT_EQ(compact_count(9999), "9999");
  EXPECT_EQ(compact_count(12345), "12.3 k");
  EXPECT_EQ(compact_count(99949), "99.9 k");
  EXPECT_EQ(compact_count(99950), "100 k");  // 3 significant digits
  EXPECT_EQ(compact_count(999499), "999 k");
  EXPECT_EQ(compact_count(999500), "1.0 M");
  EXPECT_EQ(compact_count(52'400'000), "52.4 M");
  EXPECT_EQ(compact_count(128'000'000), "128 M");
  EXPECT_EQ(compact_count(1.2e9), "1.2 G");
  EXPECT_EQ(format_seconds(0.42), "0.4 s");
  EXPECT_EQ(format_seconds(12.4), "12 s");
  EXPECT_EQ(format_seconds(185), "3 min 05 s");
  EXPECT_EQ(format_seconds(7620), "2 h 07 min");
}

TEST(ProgressText, RateAndEta) {
  // 52.4 M of 128 M ops in 12 s: 4.37 M ops/s, (128 - 52.4) / 4.37 = 17.3 s left.
  EXPECT_EQ(progress_bar_text("simulating 1f1b", 52'400'000, 128'000'000, "ops", 12.0, 52.4e6 / 12),
            "[########............]  40 %  52.4 M/128 M ops  12 s, 4.4 M ops/s, ETA 17 s  simulating 1f1b");
  EXPECT_EQ(progress_line_text("simulating 1f1b", 52'400'000, 128'000'000, "ops", 12.0, 52.4e6 / 12),
            "pipesim: progress: simulating 1f1b: 40.9 % (52.4 M of 128 M ops), 12 s elapsed, 4.4 M ops/s, ETA 17 s");
  // 300 of 1200 combinations in 60 s: 5/s, 900 left: 3 min.
  EXPECT_EQ(progress_line_text("sweep", 300, 1200, "combinations", 60.0, 5.0),
            "pipesim: progress: sweep: 25.0 % (300 of 1200 combinations), 1 min 00 s elapsed, 5 combinations/s, ETA 3 min 00 s");
  // Nothing done yet: no rate.
  EXPECT_EQ(progress_line_text("sweep", 0, 1200, "combinations", 0.5, 0.0),
            "pipesim: progress: sweep: 0.0 % (0 of 1200 combinations), 0.5 s elapsed, ETA --");
  EXPECT_EQ(progress_bar_text("x", 10, 10, "ops", 2.0, 5.0), "[####################] 100 %  10/10 ops  2.0 s, 5 ops/s, ETA 0.0 s  x");
  EXPECT_EQ(progress_done_text("simulating 1f1b", 128'000'000, "ops", 29.0),
            "pipesim: progress: simulating 1f1b: done, 128 M ops in 29 s (4.4 M ops/s)");
}

// Log lines every `interval_s` on the clock `*t` (seconds the test sets by hand).
ProgressOptions log_lines(double interval_s, const double* t) {
  ProgressOptions o;
  o.asked = true;
  o.interval_s = interval_s;
  o.terminal = false;
  o.clock = [t] { return *t; };
  return o;
}

// What a step of `total` ops with log lines every `interval_s` prints when its clock starts
// at `start`, reads `done` at each (time, done) of `updates`, and ends at `end`.
std::string lines_of(double interval_s, std::uint64_t total, double start,
                     const std::vector<std::pair<double, std::uint64_t>>& updates, double end) {
  double t = start;
  testing::internal::CaptureStderr();
  {
    Progress p(log_lines(interval_s, &t), "step", total, "ops");
    EXPECT_TRUE(p.shown());
    for (const auto& [time, done] : updates) {
      t = time;
      p.update(done);
    }
    t = end;
  }
  return testing::internal::GetCapturedStderr();
}

TEST(Progress, LogLinesEveryIntervalAndADoneLine) {
  EXPECT_EQ(lines_of(5.0, 1000, 100.0,  // any origin
                     {{100.0, 0},       // the rate's origin
                      {104.9, 10},      // before the first interval: nothing
                      {105.0, 100},     // 100 ops in 5 s: 20 ops/s, 900 left: 45 s
                      {107.0, 150},     // the next line is due at 110 s, not 5 s after this call
                      {122.0, 440},     // late: one line, and the next one due at 125 s
                      {124.0, 480},
                      {125.0, 500}},
                     140.0),
            "pipesim: progress: step: 10.0 % (100 of 1000 ops), 5.0 s elapsed, 20 ops/s, ETA 45 s\n"
            "pipesim: progress: step: 44.0 % (440 of 1000 ops), 22 s elapsed, 20 ops/s, ETA 28 s\n"
            "pipesim: progress: step: 50.0 % (500 of 1000 ops), 25 s elapsed, 20 ops/s, ETA 25 s\n"
            "pipesim: progress: step: done, 1000 ops in 40 s (25 ops/s)\n");
}

TEST(Progress, RateFromTheFirstUpdateNotCountingSetUp) {
  // 2 s of set-up before the first report; then 2000 ops in 1 s: 3.5 s left for 7000.
  EXPECT_EQ(lines_of(1.0, 10'000, 0.0, {{2.0, 1000}, {3.0, 3000}}, 5.0),
            "pipesim: progress: step: 10.0 % (1000 of 10.0 k ops), 2.0 s elapsed, ETA --\n"
            "pipesim: progress: step: 30.0 % (3000 of 10.0 k ops), 3.0 s elapsed, 2000 ops/s, ETA 3.5 s\n"
            "pipesim: progress: step: done, 10.0 k ops in 5.0 s (2000 ops/s)\n");
}

TEST(Progress, QuietUnlessAskedOrOnATerminal) {
  double t = 0;
  testing::internal::CaptureStderr();
  {
    ProgressOptions none;  // not asked, no terminal
    none.clock = [&t] { return t; };
    Progress p(none, "step", 100, "ops");
    EXPECT_FALSE(p.shown());
    t = 60;
    p.update(50);
    ProgressOptions terminal;
    terminal.terminal = true;
    EXPECT_FALSE(Progress(terminal, "small", 10, "ops", 1000).shown());  // below min_total
    EXPECT_TRUE(Progress(terminal, "large", 1000, "ops", 1000).shown());
    terminal.asked = true;
    EXPECT_TRUE(Progress(terminal, "small", 10, "ops", 1000).shown());
    // A step that ends before its first line prints nothing, not even "done".
    Progress quick(log_lines(60, &t), "quick", 10, "ops");
    t = 119.9;
    quick.update(10);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Progress, ABarOnATerminalRedrawnInPlaceAndErased) {
  double t = 0;
  ProgressOptions terminal;
  terminal.terminal = true;
  terminal.clock = [&t] { return t; };
  testing::internal::CaptureStderr();
  {
    Progress p(terminal, "simulating 1f1b", 128'000'000, "ops", kSimulateProgressOps);
    p.update(0);
    t = 0.05;
    p.update(1'000'000);  // redraws every 0.1 s
    t = 12.0;
    p.update(52'400'000);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "\r[########............]  40 %  52.4 M/128 M ops  12 s, 4.4 M ops/s, ETA 17 s  simulating 1f1b\033[K"
            "\r\033[K");
}

TEST(Progress, NoDoneLineWhenTheStepFails) {
  double t = 0;
  testing::internal::CaptureStderr();
  try {
    Progress p(log_lines(1.0, &t), "failing", 100, "ops");
    p.update(0);
    t = 3.0;
    p.update(30);
    throw std::runtime_error("failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "pipesim: progress: failing: 30.0 % (30 of 100 ops), 3.0 s elapsed, 10 ops/s, ETA 7.0 s\n");
}

UniformCostModel costs() {
  UniformCostConfig c;
  c.stage = StageCosts{kNsPerMs, 2 * kNsPerMs, kNsPerMs};
  c.link_latency = 5 * kNsPerUs;
  return UniformCostModel(c);
}

TEST(SimProgress, ReportsOpsEndedAndChangesNothing) {
  for (const char* name : {"1f1b", "chimera", "zb-h1"}) {
    const Schedule s = generated(name, 4, 64, 3);
    std::vector<std::uint64_t> seen;
    SimProgress progress;
    progress.every = 100;
    progress.report = [&](std::uint64_t done) { seen.push_back(done); };
    TimelineRecorder with, without;
    const SimResult a = simulate(s, costs(), &with, &progress);
    const SimResult b = simulate(s, costs(), &without);
    ASSERT_FALSE(seen.empty()) << name;
    EXPECT_EQ(seen.back(), s.total_ops()) << name << ": the last report counts every op";
    EXPECT_EQ(seen.size(), s.total_ops() / 100 + 1) << name << ": about every 100 ops, and at the end";
    for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i], seen[i - 1]);
    for (std::size_t i = 0; i + 1 < seen.size(); ++i) EXPECT_GE(seen[i], 100 * (i + 1));
    EXPECT_EQ(a.makespan, b.makespan);
    EXPECT_EQ(a.iteration_end, b.iteration_end);
    EXPECT_EQ(a.events, b.events);
    EXPECT_EQ(with.timeline.ops.size(), without.timeline.ops.size());
    // An empty callback is no callback.
    SimProgress empty;
    EXPECT_EQ(simulate(s, costs(), nullptr, &empty).makespan, b.makespan);
  }
}

TEST(TraceWriterProgress, CountsEventsAndWritesTheSameBytes) {
  const Schedule s = generated("1f1b", 4, 32, 1);
  TimelineRecorder recorder;
  simulate(s, costs(), &recorder);
  TraceOptions plain;
  TraceOptions watched;
  std::vector<std::pair<std::size_t, std::size_t>> calls;
  watched.progress = [&](std::size_t done, std::size_t total) { calls.emplace_back(done, total); };
  std::ostringstream a, b;
  write_chrome_trace(a, s, recorder.timeline, plain);
  write_chrome_trace(b, s, recorder.timeline, watched);
  EXPECT_EQ(a.str(), b.str());
  ASSERT_GE(calls.size(), 2u);
  EXPECT_EQ(calls.front().first, 0u);
  EXPECT_EQ(calls.back().first, calls.back().second);
  EXPECT_GT(calls.back().second, s.total_ops());  // slices, flows and counters
}

// ---- the command line ----------------------------------------------------------------------

// stdout and stderr of a command line, apart.
struct Split {
  int code = -1;
  std::string out, err;
};
Split run_split(const std::string& args, const std::string& tag) {
  const std::string err = temp_path("progress_err_" + tag);
  Split s;
  const auto r = run_shell("(" + std::string(PIPESIM_CLI) + " " + args + " 2>" + err + ")");
  s.code = r.code;
  s.out = r.out;
  s.err = slurp(err);
  return s;
}

TEST(ProgressCli, LinesOnStderrOnlyOutputsUnchanged) {
  // ~1.3 M ops: about 0.1-0.5 s, so a 1 ms interval prints several lines.
  const std::string trace = temp_path("progress.trace.json");
  const std::string args = "simulate -p 8 -m 4096 --iterations 20 --trace-budget 2MB --json --trace " + trace;
  const Split quiet = run_split(args, "a");
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  const std::string trace_quiet = slurp(trace);
  const Split shown = run_split(args + " --progress 1ms", "b");
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_EQ(shown.out, quiet.out) << "progress changed standard output";
  EXPECT_EQ(slurp(trace), trace_quiet) << "progress changed the trace";
  EXPECT_THAT(shown.err, HasSubstr("pipesim: progress: simulating 1f1b: "));
  EXPECT_THAT(shown.err, HasSubstr(" ops), "));
  EXPECT_THAT(shown.err, HasSubstr("pipesim: progress: simulating 1f1b: done, "));
  EXPECT_THAT(quiet.err, Not(HasSubstr("pipesim: progress")));
}

TEST(ProgressCli, SweepAndCompareLines) {
  const std::string sweep = "sweep --model gpt3-1.3b --gpus 8 --pp 2,4 -m 8..64 --jobs 1";
  const Split quiet = run_split(sweep, "c");
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  const Split shown = run_split(sweep + " --progress 1us", "d");
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_EQ(shown.out, quiet.out);
  EXPECT_THAT(shown.err, HasSubstr("pipesim: progress: sweep: "));
  EXPECT_THAT(shown.err, HasSubstr(" combinations/s"));
  const std::string compare = "compare --schedules 1f1b,zb-h1 -p 8 -m 2048 --iterations 8 --json";
  const Split cq = run_split(compare, "e");
  const Split cs = run_split(compare + " --progress 1us", "f");
  ASSERT_EQ(cs.code, 0) << cs.err;
  EXPECT_EQ(cs.out, cq.out);
  EXPECT_THAT(cs.err, HasSubstr("pipesim: progress: simulating 1f1b: done"));
  EXPECT_THAT(cs.err, HasSubstr("pipesim: progress: simulating zb-h1: done"));
}

}  // namespace
}  // namespace pipesim
