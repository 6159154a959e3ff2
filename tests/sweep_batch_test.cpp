// `pipesim sweep` at equal global batch (#15): m follows from B per combination and the
// ranking equals that of individual `compare --global-batch-size` runs; schedule variants
// multiply only the generators that read them; the staleness filters; configurations with
// identical results listed once; --config / --save-config reproduce a sweep.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "tests/cli_runner.hpp"

namespace {

using testing::HasSubstr;
using testing::Not;
using namespace pipesim::testing_cli;
using nlohmann::json;

json run_json(const std::string& args, const std::string& name) {
  const std::string path = temp_path(name);
  const Result r = run(args + " --json " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  return json::parse(slurp(path));
}

const json& row_of(const json& sweep, long long index) {
  for (const auto& row : sweep["configurations"])
    if (row["index"] == index) return row;
  ADD_FAILURE() << "no row " << index;
  return sweep["configurations"][0];
}

// 8 GPUs, tp 1 and 2, pp 2 and 4, b 1 and 2: dp takes the values 1, 2 and 4, and m = B / (dp b).
const std::string kBatchGrid =
    "sweep --model gpt3-1.3b --gpus 8 --schedules 1f1b,zb-h1,chimera --tp 1,2 --pp 2,4 --micro-batch-size 1,2 "
    "--global-batch-size 32";

TEST(SweepBatch, EveryRowRunsTheGlobalBatchAndTheRankingIsCompares) {
  const json j = run_json(kBatchGrid, "batch.json");
  ASSERT_EQ(j["selections"].size(), 1u);
  EXPECT_EQ(j["selections"][0]["global_batch"], 32);
  ASSERT_FALSE(j["configurations"].empty());
  for (const auto& row : j["configurations"]) {
    EXPECT_EQ(row["global_batch"], 32) << row["index"];
    EXPECT_EQ(row["microbatches"].get<int>() * row["dp"].get<int>() * row["micro_batch_size"].get<int>(), 32)
        << row["index"];
    EXPECT_EQ(row["tokens_per_iteration"], 32 * 2048) << row["index"];
  }
  // Each configuration of the best list, run on its own at the same global batch, gives the
  // sweep's numbers, so the order of the list is the order of the compare runs.
  std::vector<double> compared;
  for (const auto& index : j["selections"][0]["best"]) {
    const json& row = row_of(j, index.get<long long>());
    const Result c = run("compare --model gpt3-1.3b --nodes 1 --gpus-per-node 8 --iterations 2 --global-batch-size 32"
                         " --schedules " + row["schedule"].get<std::string>() + " --tp " + row["tp"].dump() + " -p " +
                         row["pp"].dump() + " --micro-batch-size " + row["micro_batch_size"].dump() + " --json");
    ASSERT_EQ(c.code, 0) << c.out;
    const json s = json::parse(c.out)["schedules"][0];
    EXPECT_EQ(row["time_per_iteration_s"], s["time_per_iteration_s"]) << row["index"];
    EXPECT_EQ(row["tokens_per_s"], s["tokens_per_s"]) << row["index"];
    compared.push_back(s["tokens_per_s"].get<double>());
  }
  ASSERT_GE(compared.size(), 3u);
  EXPECT_TRUE(std::is_sorted(compared.rbegin(), compared.rend()));
}

// With several global batches the page's plots draw one batch, the first: its fronts'
// staircases are fronts only among the points of their batch (a batch-64 point above the
// batch-32 staircase was drawn as if it broke the front).
TEST(SweepBatch, ThePlotsDrawOneGlobalBatchAndSaySo) {
  const std::string page = temp_path("batches.html");
  const Result r = run(kBatchGrid + ",64 --report " + page);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string html = slurp(page);
  const json j = run_json(kBatchGrid + ",64", "batches.json");
  std::size_t at_32 = 0;
  for (const auto& row : j["configurations"]) at_32 += row["global_batch"] == 32 ? 1 : 0;
  ASSERT_LT(at_32, j["configurations"].size());
  EXPECT_THAT(html, HasSubstr("The plots show the configurations and the fronts at global batch 32 (" +
                              std::to_string(at_32) + " of " + std::to_string(j["configurations"].size()) +
                              " configurations)"));
  // A tooltip per point of batch 32 (m = 32 / (dp b)), none of batch 64 (m = 64 / (dp b)).
  for (const auto& row : j["configurations"]) {
    const std::string tip = "#" + row["index"].dump() + " ";
    EXPECT_EQ(html.find("<title>" + tip) != std::string::npos, row["global_batch"] == 32) << tip;
  }
}

TEST(SweepBatch, ABatchThatDpTimesBCannotReachIsSkippedWithTheReason) {
  // B = 2: dp 4 x b 1 and every b = 2 with dp > 1 cannot reach it.
  const Result r = run("sweep --model gpt3-1.3b --gpus 8 --schedules 1f1b --pp 2,4 --micro-batch-size 1,2 "
                       "--global-batch-size 2,32");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("the global batch is not a multiple of dp x micro-batch size (e.g. global batch 2 is "
                               "not a multiple of dp x micro-batch size = 4 x 1)"));
  EXPECT_THAT(r.out, HasSubstr("at global batch 2\n"));
  EXPECT_THAT(r.out, HasSubstr("at global batch 32\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("rows differ in global batch")));
}

TEST(SweepBatch, WithoutAGlobalBatchTheSweepSaysTheRowsDiffer) {
  const Result r = run("sweep --model gpt3-1.3b --gpus 8 --schedules 1f1b --pp 2,4 -m 8");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("the rows differ in global batch"));
  const json j = run_json("sweep --model gpt3-1.3b --gpus 8 --schedules 1f1b --pp 2,4 -m 8", "nobatch.json");
  ASSERT_EQ(j["selections"].size(), 1u);
  EXPECT_TRUE(j["selections"][0]["global_batch"].is_null());
  EXPECT_EQ(row_of(j, 0)["global_batch"], 8 * 4);  // m x b x dp with pp 2: dp 4
}

TEST(SweepBatch, BatchAndMicrobatchesExcludeEachOther) {
  const Result r = run("sweep --model gpt3-1.3b --gpus 8 -m 8 --global-batch-size 32");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--global-batch-size"));
}

TEST(SweepBatch, VariantsMultiplyOnlyTheGeneratorsThatReadThem) {
  const json j = run_json("sweep --model gpt3-1.3b --gpus 8 --schedules 1f1b,chimera,interleaved,amp --pp 4 -m 8,16 "
                          "--concat direct,doubling -v 2,4 --max-active-keys 2,4",
                          "variants.json");
  const std::vector<std::string> expected = {"1f1b",          "chimera concat=direct", "chimera concat=doubling",
                                             "interleaved v=2", "interleaved v=4",     "amp keys=2",
                                             "amp keys=4"};
  EXPECT_EQ(j["settings"]["grid"]["schedules"].get<std::vector<std::string>>(), expected);
  EXPECT_EQ(j["combinations"], 7 * 2);
  for (const auto& row : j["configurations"]) {
    const std::string variant = row["variant"];
    EXPECT_EQ(variant.rfind(row["schedule"].get<std::string>(), 0), 0u) << variant;
  }
  // Chimera's concatenations differ only for m > p: with m = 16 and p = 4 they give other times.
  EXPECT_NE(row_of(j, 3)["time_per_iteration_s"], row_of(j, 5)["time_per_iteration_s"]);
}

TEST(SweepBatch, SynchronousOnlyRanksNoStaleSchedule) {
  const std::string grid = "sweep --model gpt3-1.3b --gpus 8 --schedules 1f1b,pipedream-2bw,amp,async-1f1b --pp 2,4 "
                           "--global-batch-size 64";
  const json all = run_json(grid, "all.json");
  const json sync = run_json(grid + " --synchronous-only", "sync.json");
  EXPECT_EQ(sync["settings"]["max_mismatch"], 0);
  EXPECT_EQ(sync["settings"]["max_delay"], 0);
  ASSERT_EQ(all["configurations"].size(), sync["configurations"].size());  // filtered rows stay in the data
  bool stale_was_best = false;
  for (const auto& i : all["selections"][0]["best"]) {
    const json& row = row_of(all, i.get<long long>());
    stale_was_best = stale_was_best || row["max_delay"] != 0 || row["max_mismatch"] != 0;
  }
  EXPECT_TRUE(stale_was_best);  // without the filter, an asynchronous schedule ranks
  for (const char* list : {"best", "pareto_memory", "pareto_staleness"})
    for (const auto& i : sync["selections"][0][list]) {
      const json& row = row_of(sync, i.get<long long>());
      EXPECT_EQ(row["max_mismatch"], 0) << list << " " << i;
      EXPECT_EQ(row["max_delay"], 0) << list << " " << i;
      EXPECT_EQ(row["passes_filters"], true);
    }
  int filtered = 0;
  for (const auto& row : sync["configurations"]) filtered += row["passes_filters"] == false ? 1 : 0;
  EXPECT_GT(filtered, 0);
  const Result r = run(grid + " --synchronous-only");
  EXPECT_THAT(r.out, HasSubstr(std::to_string(filtered) + " left out of the tables by the staleness filters"));
}

TEST(SweepBatch, ConfigurationsWithIdenticalResultsAreListedOnce) {
  // With flash attention, selective recomputation rebuilds nothing: the same results as none.
  const std::string grid = "sweep --model gpt3-1.3b --gpus 8 --schedules 1f1b,zb-h1 --pp 2,4 --global-batch-size 32 "
                           "--recompute none,selective --flash-attention true";
  const json j = run_json(grid, "same.json");
  int later = 0;
  for (const auto& row : j["configurations"]) {
    if (row["recompute"] == "selective") {
      const json& first = row_of(j, row["same_as"].get<long long>());
      EXPECT_EQ(first["recompute"], "none") << row["index"];
      EXPECT_EQ(first["time_per_iteration_s"], row["time_per_iteration_s"]);
      ++later;
    } else {
      EXPECT_EQ(row["same_as"], row["index"]);
    }
  }
  EXPECT_EQ(later, 4);
  for (const auto& i : j["selections"][0]["best"]) EXPECT_EQ(row_of(j, i.get<long long>())["recompute"], "none");
  const Result r = run(grid);
  EXPECT_THAT(r.out, HasSubstr("4 give the same results as an earlier configuration"));
  EXPECT_THAT(r.out, HasSubstr("same results as"));
  // Full recomputation does cost time: no equivalents, and no such column.
  const Result full = run("sweep --model gpt3-1.3b --gpus 8 --schedules 1f1b --pp 2 --global-batch-size 32 "
                          "--recompute none,full");
  EXPECT_THAT(full.out, Not(HasSubstr("same results as")));
}

TEST(SweepBatch, SavedConfigReproducesTheSweep) {
  const std::string saved = temp_path("sweep-config.json");
  const std::string args = kBatchGrid + " --concat direct,doubling --max-delay 0";
  const Result first = run(args + " --json " + temp_path("first.json") + " --save-config " + saved);
  ASSERT_EQ(first.code, 0) << first.out;
  const Result again = run("sweep --config " + saved + " --json " + temp_path("again.json"));
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(slurp(temp_path("first.json")), slurp(temp_path("again.json")));
  const json config = json::parse(slurp(saved));
  EXPECT_THAT(config.dump(), HasSubstr("global"));
  EXPECT_THAT(config.dump(), HasSubstr("doubling"));
}

TEST(SweepBatch, WhereTheTimeGoesIsCompares) {
  const json j = run_json(kBatchGrid, "parts.json");
  const char* keys[] = {"forward", "backward", "input_grad", "weight_grad", "recompute",
                        "tp_comm", "pipeline", "dp_sync", "optimizer", "contention", "host", "idle"};
  for (const auto& row : j["configurations"]) {
    double sum = 0;
    for (const char* k : keys) sum += row["time_" + std::string(k) + "_s"].get<double>();
    EXPECT_NEAR(sum, row["time_per_iteration_s"].get<double>(), 1e-9) << row["index"];
  }
  const json& best = row_of(j, j["selections"][0]["best"][0].get<long long>());
  EXPECT_GT(best["time_pipeline_s"].get<double>(), 0);
  const Result c = run("compare --model gpt3-1.3b --nodes 1 --gpus-per-node 8 --iterations 2 --global-batch-size 32"
                       " --schedules " + best["schedule"].get<std::string>() + " --tp " + best["tp"].dump() + " -p " +
                       best["pp"].dump() + " --micro-batch-size " + best["micro_batch_size"].dump() + " --json");
  ASSERT_EQ(c.code, 0) << c.out;
  const json parts = json::parse(c.out)["schedules"][0]["time_breakdown"]["pipeline_s"];
  for (const char* k : keys) EXPECT_EQ(best["time_" + std::string(k) + "_s"], parts[k]) << k;
}

}  // namespace
