// `pipesim run` (tools/cmd_run.cpp) end to end: the table, --json, the measured Chrome
// trace, a run stopped by --timeout (partial trace written) and bad flags.
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace pipesim {
namespace {

using namespace testing_cli;
using ::testing::HasSubstr;

TEST(RunCli, TableWithLossAndDevices) {
  const Result r = run("run --schedule 1f1b -p 2 -m 2 --iterations 2 --optimizer sgd --lr 0.1");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pipesim run: 1f1b on gpt-tiny, cpu backend, 2 device threads on "));
  EXPECT_THAT(r.out, HasSubstr("shape         2 devices, 2 stages, 2 micro-batches x 2 iteration(s), 20 ops\n"));
  EXPECT_THAT(r.out, HasSubstr("loss          iteration 0: "));
  EXPECT_THAT(r.out, HasSubstr(", iteration 1: "));
  EXPECT_THAT(r.out, HasSubstr("device  "));
  EXPECT_THAT(r.out, HasSubstr("weight copies"));
}

TEST(RunCli, JsonAndMeasuredTrace) {
  const std::string trace = temp_path("run_trace.json");
  std::filesystem::remove(trace);
  const Result r = run("run --schedule pipedream -p 2 -m 2 --iterations 2 --json --trace " + trace);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schedule"], "pipedream");
  EXPECT_FALSE(j.contains("launch")) << "the CPU backend has no launch path to report (docs/gpu.md)";
  EXPECT_EQ(j["measured"], true);
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["iteration_loss"].size(), 2u);
  EXPECT_EQ(j["losses"].size(), 4u);
  EXPECT_GT(j["makespan_ns"].get<long long>(), 0);
  EXPECT_EQ(j["staleness"]["max_mismatch"], 0);  // stashing: a backward uses its forward's weights ...
  EXPECT_EQ(j["staleness"]["max_delay"], 1);     // ... which an update has overtaken by then (observed)
  const auto t = nlohmann::json::parse(slurp(trace));
  EXPECT_THAT(t["otherData"]["measured"].get<std::string>(), HasSubstr("cpu backend, model gpt-tiny"));
  int ops = 0;
  for (const auto& e : t["traceEvents"]) ops += e["ph"] == "X" && e["tid"] == 0;
  EXPECT_EQ(ops, j["ops"].get<int>());  // every op of the run (PipeDream has no GradSync)
}

// --data: a text file's bytes are the tokens; --validate-every: the validation loss in the
// table, the JSON and the trace's counters, the same on a rerun.
TEST(RunCli, TextDataAndValidationLoss) {
  const std::string text = temp_path("run_corpus.txt");
  {
    std::ofstream out(text);
    for (int k = 0; k < 60; ++k) out << "The quick brown fox jumps over the lazy dog, " << k << " times. Ünïcödé.\n";
  }
  const std::string trace = temp_path("run_losses.json");
  std::filesystem::remove(trace);
  const std::string args = "run -p 2 -m 2 --iterations 4 --validate-every 2 --data " + text;
  const std::string report = temp_path("run_losses.html");
  std::filesystem::remove(report);
  const Result r = run(args + " --trace " + trace + " --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("report written to " + report));
  const std::string html = slurp(report);
  EXPECT_THAT(html, HasSubstr("aria-label=\"loss against iterations\""));
  EXPECT_THAT(html, HasSubstr("aria-label=\"loss against wall time\""));
  EXPECT_THAT(html, HasSubstr("<title>validation loss</title>"));  // the series' hover title
  EXPECT_THAT(r.out, HasSubstr("seed 1, data '" + text + "' (byte-level tokens)\n"));
  EXPECT_THAT(r.out, HasSubstr("validation    after 0 iterations: "));
  EXPECT_THAT(r.out, HasSubstr("(3 points)\n"));
  EXPECT_THAT(r.out, HasSubstr("iteration  training loss  validation loss  wall time\n"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\n +4 +- +[0-9.]+ +[0-9.]+ s\n"));  // after the last step
  const auto j = nlohmann::json::parse(run(args + " --json").out);
  EXPECT_EQ(j["data"], text);
  ASSERT_EQ(j["validation"].size(), 3u);
  EXPECT_EQ(j["validation"][2]["iteration"], 4);
  EXPECT_LT(j["validation"][2]["loss"].get<double>(), j["validation"][0]["loss"].get<double>());
  EXPECT_NEAR(j["validation"][0]["loss"].get<double>(), std::log(256.0), 0.5);  // untrained: about uniform
  EXPECT_EQ(j["iteration_end_s"].size(), 4u);
  const auto again = nlohmann::json::parse(run(args + " --json").out);
  for (std::size_t k = 0; k < 3; ++k)  // the numbers repeat; only times differ
    EXPECT_EQ(again["validation"][k]["loss"], j["validation"][k]["loss"]);
  EXPECT_EQ(again["iteration_loss"], j["iteration_loss"]);
  const auto t = nlohmann::json::parse(slurp(trace));
  int training = 0, validation = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "C") continue;
    training += e["name"] == "training loss";
    validation += e["name"] == "validation loss";
    if (e["name"] == "validation loss") {
      EXPECT_EQ(e["pid"], 1);  // the last stage's device
    }
  }
  EXPECT_EQ(training, 4);
  EXPECT_EQ(validation, 3);
  // Synthetic data stays the default, and says so.
  EXPECT_THAT(run("run -p 2 -m 2").out, HasSubstr("seed 1, synthetic data\n"));
}

TEST(RunCli, TimeoutWritesThePartialTrace) {
  // gpt-small ops take far longer than 1 us, so the watchdog stops the run at its first look.
  const std::string trace = temp_path("run_partial.json");
  std::filesystem::remove(trace);
  const Result r = run("run --model gpt-small --schedule gpipe -p 2 -m 2 --timeout 1us --trace " + trace);
  EXPECT_EQ(r.code, 2) << r.out;
  // (What each device was doing at that moment depends on the machine's load.)
  EXPECT_THAT(r.out, HasSubstr("pipesim: error: device 0 op 0 (0F0): no op finished and no message moved for 1.000 us "
                               "(--timeout); it "));
  EXPECT_THAT(r.out, HasSubstr("; device 1 op 0 (1F0) "));
  EXPECT_THAT(r.out, HasSubstr("pipesim: partial trace written to " + trace));
  const auto t = nlohmann::json::parse(slurp(trace));
  EXPECT_THAT(t["otherData"]["partial"].get<std::string>(), HasSubstr("device 0 op 0 (0F0)"));
}

TEST(RunCli, BadFlags) {
  Result r = run("run --backend cuda");  // no GPU here (or no CUDA in this build): exit code 6
  EXPECT_EQ(r.code, 6);
  EXPECT_THAT(r.out, HasSubstr("pipesim: error: --backend cuda: "));
  EXPECT_THAT(r.out, HasSubstr("use --backend cpu"));
  r = run("run --backend tpu");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.out, HasSubstr("pipesim: error: --backend: expected cpu or cuda, got 'tpu'"));
  r = run("run --timeout soon");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.out, HasSubstr("--timeout"));
  r = run("run --model llama2-7b -p 2 -m 2");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.out, HasSubstr("pipesim: error: model 'llama2-7b': the CPU executor computes GPT-style blocks only"));
  r = run("run --schedule chimera --concat halving -p 4 -m 4");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.out, HasSubstr("must divide the micro-batch size 1"));
  r = run("run --optimizer lamb");
  EXPECT_EQ(r.code, 2);
}

}  // namespace
}  // namespace pipesim
