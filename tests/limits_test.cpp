// Scale limits of the CLI: the memory estimate checked before generating a schedule
// (tools/memory_guard.hpp) and --max-trace-ops (tools/trace_limit.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "tests/cli_runner.hpp"
#include "tools/memory_guard.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;
using testing_cli::expect_one_line_error;
using testing_cli::run;
using testing_cli::slurp;
using testing_cli::temp_path;

constexpr std::uint64_t kGiB = 1ull << 30;

ScheduleParams params(int p, int m, int v = 2, int iterations = 1) {
  ScheduleParams s;
  s.p = p;
  s.m = m;
  s.v = v;
  s.iterations = iterations;
  return s;
}

// The estimate must never be below the real count (the check would let too much through)
// and not far above it (it would refuse what fits).
TEST(MemoryGuard, EstimateIsAnUpperBoundCloseToTheRealOpCount) {
  for (const GeneratorInfo& g : generators())
    for (const ScheduleParams& p : {params(2, 4), params(4, 8), params(4, 8, 3, 2), params(8, 16), params(6, 12, 2, 3),
                                    params(16, 32)}) {
      Schedule s;
      try {
        s = g.fn(p);
      } catch (const InputError&) {
        continue;  // a shape this generator does not take (e.g. zb-h1 needs m >= p)
      }
      const std::uint64_t ops = s.total_ops(), estimate = estimate_ops(g.name, p);
      EXPECT_GE(estimate, ops) << g.name << " p=" << p.p << " m=" << p.m;
      EXPECT_LE(estimate, ops + ops / 4 + 64) << g.name << " p=" << p.p << " m=" << p.m;
    }
}

// Found by the cli_flags fuzzer: Chimera's backward halving runs twice the micro-batch ops
// (the estimate said 160 for 288 ops).
TEST(MemoryGuard, EstimateCoversChimeraHalving) {
  for (const char* concat : {"direct", "doubling", "halving"})
    for (ScheduleParams p : {params(8, 8), params(4, 8), params(8, 16)}) {
      p.set("concat", concat);
      for (int width : {1, 2}) {
        p.set("width", width);
        Schedule s;
        try {
          s = generate("chimera", p);
        } catch (const InputError&) {
          continue;
        }
        EXPECT_GE(estimate_ops("chimera", p), s.total_ops()) << concat << " p=" << p.p << " m=" << p.m;
        EXPECT_LE(estimate_ops("chimera", p), s.total_ops() + s.total_ops() / 4 + 64) << concat;
      }
    }
}

// Without the CLI's guard (the library, the Python module), a stage count beyond an int is
// refused where the frame is built: p = v = 65536 overflowed into a broken invariant.
TEST(MemoryGuard, StagesBeyondAnIntAreRefusedByTheGenerators) {
  ScheduleParams p;
  p.p = 65536;
  p.v = 65536;
  p.m = 1;
  try {
    generate("interleaved", p);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("interleaved: p x chunks must be at most 2^31 - 1 stages (got p=65536 and 65536 "
                                    "chunks)"));
  }
}

TEST(MemoryGuard, RefusesWithTheEstimateAndTheLimit) {
  const MemoryUse use = simulate_memory_use(false, false, 0);
  const auto refusal = [&](const char* g, const ScheduleParams& p, std::optional<MemoryLimit> limit) {
    return memory_refusal(describe_generation(g, p), estimate_ops(g, p), use, limit);
  };
  EXPECT_EQ(refusal("1f1b", params(1024, 65536), MemoryLimit{7 * kGiB + kGiB / 10, false, 0}),
            "1f1b with p=1024, m=65536 has ~1.3e8 ops and needs ~10.0 GiB (available: 7.1 GiB); reduce p or m, "
            "or pass --max-memory to override");
  EXPECT_EQ(refusal("1f1b", params(1024, 65536), MemoryLimit{11 * kGiB, false, 0}), std::nullopt);
  // --max-memory counts what the process holds already.
  EXPECT_EQ(refusal("interleaved", params(64, 4096, 4, 2), MemoryLimit{kGiB / 8 - (32ull << 20), true, 32ull << 20, kGiB / 8}),
            "interleaved with p=64, m=4096, v=4, iterations=2 has ~4.2e6 ops and needs ~320.0 MiB (--max-memory: "
            "128.0 MiB, of which this process already holds 32.0 MiB); reduce p or m, or raise --max-memory");
  // The engine numbers ops with 32 bits: no limit lifts that.
  EXPECT_EQ(refusal("1f1b", params(1'000'000'000, 1000), std::nullopt),
            "1f1b with p=1000000000, m=1000 has ~2.0e12 ops; pipesim numbers ops with 32 bits (at most 4.3e9 ops per "
            "schedule); reduce p or m");
  // A trace adds its records, up to the --max-trace-ops limit.
  EXPECT_EQ(estimate_bytes(1000, simulate_memory_use(true, false, 100)), 1000 * kSimulateBytesPerOp + 100 * kTraceBytesPerOp);
  EXPECT_EQ(estimate_bytes(1000, simulate_memory_use(true, true, 0)), 1000 * (kReportBytesPerOp + kTraceBytesPerOp));
  EXPECT_GT(available_memory().value_or(1), 0u);
}

TEST(MemoryGuard, TheCliRefusesBeforeGenerating) {
  // --max-memory counts what the process already holds (its libraries, with CUDA ~150 MiB).
  const auto big = run("simulate -p 1024 -m 65536 --max-memory 1GiB");
  expect_one_line_error(big, "pipesim: error: 1f1b with p=1024, m=65536 has ~1.3e8 ops and needs ~10.0 GiB (--max-memory: "
                             "1.0 GiB, of which this process already holds ");
  EXPECT_THAT(big.out, HasSubstr("); reduce p or m, or raise --max-memory"));
  expect_one_line_error(run("check --schedule zb-h1 -p 1000000000 -m 4"), "pipesim numbers ops with 32 bits");
  expect_one_line_error(run("schedule -p 64 -m 64 --max-memory 1KiB --format csv"), "(--max-memory: 1.0 KiB, of which");
  // Each schedule of a comparison is checked before it is generated.
  expect_one_line_error(run("compare --schedules interleaved,1f1b -p 64 -m 65536 --max-memory 1GiB"),
                        "pipesim: error: interleaved with p=64, m=65536, v=2 has ~1.7e7 ops and needs ~1.3 GiB "
                        "(--max-memory: 1.0 GiB, of which");
  // Each format at its own bytes per op (export_bytes_per_op): the lowered ops of
  // pytorch-comms take about ten times what csv's lines do. (The estimates only: what the
  // process holds at start differs between builds, 14 MiB here, 190 MiB under ASan.)
  for (const auto& [format, needs] : {std::pair{"csv", "20.0 MiB"}, {"pytorch", "20.0 MiB"}, {"json", "48.0 MiB"},
                                      {"pytorch-comms", "192.0 MiB"}, {"text", "160.0 MiB"}})
    expect_one_line_error(run(std::string("schedule -p 64 -m 4096 --max-memory 1KiB --format ") + format),
                          std::string("pipesim: error: 1f1b with p=64, m=4096 has ~5.2e5 ops and needs ~") + needs +
                              " (--max-memory: 1.0 KiB");
  expect_one_line_error(run("simulate --max-memory lots"),
                        "--max-memory: expected a size with a unit such as 512B, 64MiB, 1.5GB; got 'lots'");
}

TEST(TraceLimit, TruncatesTheTraceWithANotice) {
  const std::string path = temp_path("limited.trace.json");
  const auto r = run("simulate -p 4 -m 8 --trace " + path + " --max-trace-ops 10");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pipesim: note: trace " + path +
                               " truncated to the first 10 of 68 ops (until 4.000 ms); pass --max-trace-ops to change "
                               "the limit"));
  const auto trace = nlohmann::json::parse(slurp(path));
  EXPECT_EQ(trace["otherData"]["truncated"],
            "truncated to the first 10 of 68 ops (until 4.000 ms); pass --max-trace-ops to change the limit");
  int slices = 0;
  for (const auto& e : trace["traceEvents"]) slices += e["ph"] == "X" && e["tid"] == 0;
  EXPECT_EQ(slices, 10);
  // No limit (0), or a limit the run stays under: the whole trace, no notice.
  for (const char* limit : {"0", "68"}) {
    const auto all = run("simulate -p 4 -m 8 --trace " + path + " --max-trace-ops " + limit);
    EXPECT_THAT(all.out, testing::Not(HasSubstr("truncated"))) << limit;
    EXPECT_FALSE(nlohmann::json::parse(slurp(path))["otherData"].contains("truncated")) << limit;
  }
  // With a report the whole run is still recorded for it; only the trace is cut.
  const std::string report = temp_path("limited.html");
  const auto both = run("simulate -p 4 -m 8 --trace " + path + " --max-trace-ops 10 --report " + report);
  ASSERT_EQ(both.code, 0) << both.out;
  EXPECT_THAT(both.out, HasSubstr("truncated to the first 10 of 68 ops"));
  const std::string whole = temp_path("whole.html");
  ASSERT_EQ(run("simulate -p 4 -m 8 --report " + whole).code, 0);
  EXPECT_TRUE(slurp(report) == slurp(whole)) << "the report of a run with a truncated trace is not the whole run's";
}

}  // namespace
}  // namespace pipesim
