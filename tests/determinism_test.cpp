// Same inputs, same bytes: the real binary run twice (and a sweep on 1 and 2 threads) gives
// byte-identical Chrome traces, --json output and HTML reports. Nothing may depend on
// time, addresses, hash order or thread scheduling.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli_runner.hpp"

namespace pipesim {
namespace {

using testing_cli::Result;
using testing_cli::run;
using testing_cli::slurp;
using testing_cli::temp_path;

// Runs `args` (with FILE replaced by a per-run path prefix) twice; every output file and
// stdout must match byte for byte, and must not be empty.
void expect_identical_runs(const std::string& name, const std::string& args, const std::vector<std::string>& files) {
  std::vector<std::string> outputs[2];
  for (int i = 0; i < 2; ++i) {
    const std::string prefix = temp_path("det_" + name + "_" + std::to_string(i) + "_");
    std::string line = args;
    for (std::size_t at; (at = line.find("FILE")) != std::string::npos;) line.replace(at, 4, prefix);
    const Result r = run(line);
    ASSERT_EQ(r.code, 0) << line << "\n" << r.out;
    outputs[i].push_back(r.out);
    for (const std::string& f : files) {
      const std::string path = prefix + f;
      ASSERT_TRUE(std::filesystem::exists(path)) << path;
      outputs[i].push_back(slurp(path));
    }
  }
  // The output names the files it wrote, which differ by run: compare those lines apart.
  for (std::size_t k = 1; k < outputs[0].size(); ++k) {
    EXPECT_FALSE(outputs[0][k].empty()) << name << " " << files[k - 1];
    EXPECT_TRUE(outputs[0][k] == outputs[1][k]) << name << ": " << files[k - 1] << " differs between two runs";
  }
}

TEST(Determinism, SimulateTraceJsonAndReportAreByteIdentical) {
  expect_identical_runs("simulate",
                        "simulate --schedule zb-h1 -p 4 -m 8 --link-latency 10us --link-bandwidth 50GB/s "
                        "--activation-bytes 64MiB --grad-bytes 1GiB --trace FILEtrace.json --report FILEreport.html --json",
                        {"trace.json", "report.html"});
  // stdout is the JSON itself here: it names no file, so it is compared too.
  const std::string a = run("simulate --schedule pipedream -p 4 -m 8 --iterations 3 --json").out;
  EXPECT_EQ(a, run("simulate --schedule pipedream -p 4 -m 8 --iterations 3 --json").out);
}

TEST(Determinism, CompareOfEveryScheduleIsByteIdentical) {
  expect_identical_runs("compare",
                        "compare --schedules all -p 4 -m 8 --iterations 2 --link-latency 5us --trace-dir FILEtraces "
                        "--report FILEreport.html --json",
                        {"traces/chimera.trace.json", "traces/dualpipev.trace.json", "traces/amp.trace.json",
                         "report.html"});
  const std::string a = run("compare --schedules all -p 4 -m 8 --json").out;
  EXPECT_EQ(a, run("compare --schedules all -p 4 -m 8 --json").out);
}

TEST(Determinism, AnalyticalModelRunsAreByteIdentical) {
  expect_identical_runs("model",
                        "simulate --model gpt3-1.3b --hardware h100-sxm --schedule 1f1b -p 2 -m 4 "
                        "--trace FILEtrace.json --report FILEreport.html --json",
                        {"trace.json", "report.html"});
}

TEST(Determinism, SweepIsByteIdenticalAcrossRunsAndThreadCounts) {
  const std::string args = "sweep --model gpt3-1.3b --gpus 8 --pp 2,4 -m 8,16 --schedules 1f1b,zb-h1,interleaved ";
  std::string json[3];
  for (int i = 0; i < 3; ++i) {
    const std::string path = temp_path("det_sweep_" + std::to_string(i) + ".json");
    const Result r = run(args + "--jobs " + std::to_string(i == 0 ? 1 : 2) + " --json " + path);
    ASSERT_EQ(r.code, 0) << r.out;
    json[i] = slurp(path);
  }
  EXPECT_FALSE(json[0].empty());
  EXPECT_TRUE(json[0] == json[1]) << "1 thread vs 2 threads";
  EXPECT_TRUE(json[1] == json[2]) << "two runs on 2 threads";
}

}  // namespace
}  // namespace pipesim
