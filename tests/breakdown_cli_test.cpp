// Where the time goes on the command line: `--breakdown` tables of simulate and compare, the
// `time_breakdown` object of --json (docs/json.md) and its exact sums, on uniform costs and
// on a model (llama2-7b on one 8-GPU H100 node).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace {

using testing::HasSubstr;
using testing::Not;
using namespace pipesim::testing_cli;

const char* kCategories[] = {"forward", "backward",  "input_grad", "weight_grad", "recompute", "tp_comm",
                             "pipeline", "dp_sync", "optimizer",  "contention",  "host", "idle"};

// Every device's window_ns adds up to the window, which is time per iteration x counted.
void expect_exact(const nlohmann::json& run) {
  const auto& b = run["time_breakdown"];
  const long long window = b["window_end_ns"].get<long long>() - b["window_start_ns"].get<long long>();
  EXPECT_NEAR(static_cast<double>(window) / b["iterations_counted"].get<int>() * 1e-9,
              run["time_per_iteration_s"].get<double>(), 1e-9);
  ASSERT_EQ(b["per_device"].size(), run["devices"].get<std::size_t>());
  for (const auto& d : b["per_device"]) {
    long long sum = 0;
    double share = 0;
    for (const char* c : kCategories) {
      sum += d["window_ns"][c].get<long long>();
      share += d["share"][c].get<double>();
    }
    EXPECT_EQ(sum, window) << d["device"];
    EXPECT_NEAR(share, 1.0, 1e-12);
  }
}

TEST(BreakdownCli, SimulateTableShowsTheBubbleAsPipelineAndIdle) {
  const Result r = run("simulate --schedule 1f1b -p 2 -m 2 --breakdown");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("time per iteration by category (the whole run, one iteration)\n"
                               "device               F               B        pipeline            idle            total\n"));
  EXPECT_THAT(r.out, HasSubstr("0 *     2.000 ms 22.2%  4.000 ms 44.4%  3.000 ms 33.3%   0.000 ms 0.0%  9.000 ms 100.0%\n"));
  EXPECT_THAT(r.out, HasSubstr("1       2.000 ms 22.2%  4.000 ms 44.4%   0.000 ms 0.0%  3.000 ms 33.3%  9.000 ms 100.0%\n"));
  EXPECT_THAT(r.out, HasSubstr("mean    2.000 ms 22.2%  4.000 ms 44.4%  1.500 ms 16.7%  1.500 ms 16.7%  9.000 ms 100.0%\n"));
  EXPECT_THAT(r.out, HasSubstr("zero everywhere: I, W, recompute, TP comm, DP sync, optimizer, contention, host\n"));
  EXPECT_THAT(run("simulate --schedule 1f1b -p 2 -m 2").out, Not(HasSubstr("by category")));
}

TEST(BreakdownCli, SimulateJsonSumsExactlyInSteadyState) {
  const Result r = run("simulate --schedule zb-h1 -p 4 -m 8 --iterations 3 --link-latency 7us --link-bandwidth 9GB/s "
                       "--activation-bytes 3MiB --optimizer-time 130us --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  expect_exact(j);
  EXPECT_EQ(j["time_breakdown"]["iterations_counted"], 2);
  EXPECT_GT(j["time_breakdown"]["pipeline_s"]["input_grad"].get<double>(), 0);
  EXPECT_GT(j["time_breakdown"]["pipeline_s"]["weight_grad"].get<double>(), 0);
  EXPECT_NEAR(j["time_breakdown"]["pipeline_s"]["optimizer"].get<double>(), 130e-6, 1e-12);
  EXPECT_EQ(run("simulate --schedule zb-h1 -p 4 -m 8 --iterations 3 --link-latency 7us --link-bandwidth 9GB/s "
                "--activation-bytes 3MiB --optimizer-time 130us --json").out,
            r.out);  // byte-identical reruns
}

TEST(BreakdownCli, CompareHasOneRowPerScheduleAndJsonForEach) {
  const Result r = run("compare --schedules gpipe,1f1b,zb-h1 -p 4 -m 8 --breakdown");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("time per iteration by category, mean over each schedule's devices\n"));
  // GPipe and 1F1B: (p-1)/(m+p-1) = 3/11 of 33 ms is bubble, 9 ms per device.
  EXPECT_THAT(r.out, HasSubstr("gpipe     8.000 ms 24.2%  16.000 ms 48.5%   0.000 ms 0.0%   0.000 ms 0.0%  4.500 ms 13.6%  "
                               "4.500 ms 13.6%  33.000 ms 100.0%  0 (computes 72.7%)\n"));
  // ZB-H1: I and W are each half of B; its bubble is (p-1)(t_F + t_I - t_W) = 3 ms per device (Qi et al. 2024).
  EXPECT_THAT(r.out, HasSubstr("zb-h1     8.000 ms 29.6%    0.000 ms 0.0%  8.000 ms 29.6%  8.000 ms 29.6%   1.500 ms 5.6%   "
                               "1.500 ms 5.6%  27.000 ms 100.0%  0 (computes 88.9%)\n"));
  const Result j = run("compare --schedules gpipe,1f1b,zb-h1 -p 4 -m 8 --json");
  ASSERT_EQ(j.code, 0) << j.out;
  const nlohmann::json parsed = nlohmann::json::parse(j.out);  // named: the loop refers into it
  for (const auto& s : parsed["schedules"]) expect_exact(s);
}

TEST(BreakdownCli, ModelRunShowsTensorParallelRecomputeAndDataParallelShares) {
  // llama2-7b (untied embeddings) on 8 H100s, p = 2: tp 2 x dp 2 with full recomputation,
  // against tp 1 x dp 1 (two GPUs of the node) without.
  const std::string base = "simulate --schedule 1f1b -p 2 -m 8 --model llama2-7b --hardware h100-sxm --json ";
  const Result on = run(base + "--tp 2 --gpus-per-node 8 --recompute full --flash-attention true");
  const Result off = run(base + "--nodes 1 --gpus-per-node 2 --flash-attention true");
  ASSERT_EQ(on.code, 0) << on.out;
  ASSERT_EQ(off.code, 0) << off.out;
  const auto a = nlohmann::json::parse(on.out), b = nlohmann::json::parse(off.out);
  ASSERT_EQ(a["tp"], 2);
  ASSERT_EQ(a["dp"], 2);
  ASSERT_EQ(b["dp"], 1);
  expect_exact(a);
  expect_exact(b);
  for (const char* c : {"tp_comm", "recompute", "dp_sync"}) {
    EXPECT_GT(a["time_breakdown"]["pipeline_s"][c].get<double>(), 0) << c;
    EXPECT_EQ(b["time_breakdown"]["pipeline_s"][c].get<double>(), 0) << c;
  }
  // The layout: every run's fields, time_breakdown, then the model's.
  const auto ordered = nlohmann::ordered_json::parse(on.out);
  std::vector<std::string> keys;
  for (const auto& [key, value] : ordered.items()) keys.push_back(key);
  const auto at = [&](const std::string& k) { return std::find(keys.begin(), keys.end(), k) - keys.begin(); };
  EXPECT_EQ(at("time_breakdown"), at("critical_path") + 1);
  EXPECT_EQ(at("model"), at("time_breakdown") + 1);
}

}  // namespace
