// `pipesim converge` (tools/cmd_converge.cpp) end to end on a tiny proxy and a small text:
// the table with its assumption, iterations to the target, the simulated time, byte-identical
// reruns, the report's plots.
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace pipesim {
namespace {

using namespace testing_cli;
using ::testing::HasSubstr;

// A proxy smaller than gpt-tiny and a text of 4 KB, so the test takes about a second.
std::string args() {
  const std::string model = temp_path("converge_micro.json"), text = temp_path("converge_text.txt");
  std::ofstream(model) << R"({"models": [{"name": "micro", "family": "gpt", "layers": 2, "hidden": 32, "heads": 2,
    "ffn_hidden": 64, "seq_len": 16, "vocab": 256, "mlp": "gelu", "source": "test"}]})";
  std::ofstream out(text);
  for (int k = 0; k < 100; ++k) out << "all work and no play makes jack a dull boy " << k << "\n";
  return "converge --proxy-model " + model + " --data " + text +
         " --schedules 1f1b,pipedream -p 2 -m 2 --iterations 6 --validate-every 2 --seeds 1,2 --lr 0.01";
}

TEST(ConvergeCli, IterationsToTargetTimesSimulatedTime) {
  const Result r = run(args() + " --model gpt3-1.3b --target 5.4");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("target        validation loss 5.4000\n"));
  EXPECT_THAT(r.out, HasSubstr("time          per iteration simulated for gpt3-1.3b on h100-sxm (analytical cost model)\n"));
  EXPECT_THAT(r.out, HasSubstr("assumption    time to target = iterations to target, measured on "));
  EXPECT_THAT(r.out, HasSubstr("carry over\n"));
  const auto j = nlohmann::json::parse(run(args() + " --model gpt3-1.3b --target 5.4 --json").out);
  ASSERT_EQ(j["schedules"].size(), 2u);
  for (const auto& s : j["schedules"]) {
    ASSERT_EQ(s["seeds"].size(), 2u);
    EXPECT_EQ(s["seeds"][0]["validation"].size(), 4u);  // iterations 0, 2, 4, 6
    EXPECT_GT(s["time_per_iteration_s"].get<double>(), 0);
    if (s["iterations_to_target"].is_null()) continue;
    const int it = s["iterations_to_target"];
    EXPECT_DOUBLE_EQ(s["time_to_target_s"].get<double>(), it * s["time_per_iteration_s"].get<double>());
  }
  EXPECT_EQ(j["schedules"][0]["seeds"][0]["staleness"]["max_delay"], 0);  // 1F1B
  EXPECT_GT(j["schedules"][1]["seeds"][0]["staleness"]["max_delay"], 0);  // PipeDream
}

TEST(ConvergeCli, RerunsAreByteIdenticalAndTheReportPlots) {
  const std::string report = temp_path("converge_report.html");
  std::filesystem::remove(report);
  const Result a = run(args() + " --model gpt3-1.3b --report " + report);
  ASSERT_EQ(a.code, 0) << a.out;
  EXPECT_THAT(a.out, HasSubstr("(the highest of the runs' lowest: every run reaches it)"));
  const std::string first = slurp(report);
  EXPECT_THAT(first, HasSubstr("aria-label=\"validation loss against iterations\""));
  EXPECT_THAT(first, HasSubstr("aria-label=\"validation loss against time\""));
  EXPECT_EQ(run(args() + " --model gpt3-1.3b --report " + report).out, a.out);
  EXPECT_EQ(slurp(report), first);
  // Without --model the time is the proxy's own, measured (and so not repeatable).
  EXPECT_THAT(run(args()).out, HasSubstr("per iteration measured on the proxy run"));
}

}  // namespace
}  // namespace pipesim
