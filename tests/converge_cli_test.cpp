// `pipesim converge` (tools/cmd_converge.cpp) end to end on a tiny proxy and a small text:
// the table with its assumption, iterations to the target, the simulated time on the cost
// model the registry chooses, byte-identical reruns, the report's plots, the learning rate
// tuned per schedule and the generators' variants.
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace pipesim {
namespace {

using namespace testing_cli;
using ::testing::HasSubstr;

// A proxy smaller than gpt-tiny and a text of 4 KB, so the test takes about a second.
std::string args(const std::string& lr = "0.01") {
  const std::string model = temp_path("converge_micro.json"), text = temp_path("converge_text.txt");
  std::ofstream(model) << R"({"models": [{"name": "micro", "family": "gpt", "layers": 2, "hidden": 32, "heads": 2,
    "ffn_hidden": 64, "seq_len": 16, "vocab": 256, "mlp": "gelu", "source": "test"}]})";
  std::ofstream out(text);
  for (int k = 0; k < 100; ++k) out << "all work and no play makes jack a dull boy " << k << "\n";
  return "converge --proxy-model " + model + " --data " + text +
         " --schedules 1f1b,pipedream -p 2 -m 2 --iterations 6 --validate-every 2 --seeds 1,2 --lr " + lr;
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

// The time per iteration of `simulate` with the same schedule and cost model.
double simulate_time(const std::string& schedule, const std::string& costs) {
  const Result r = run("simulate --schedule " + schedule + " -p 2 -m 2 --iterations 6 --json " + costs);
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(r.out)["time_per_iteration_s"].get<double>();
}

// The cost model is chosen through the registry as simulate's is (tools/cost_model_registry.hpp):
// the time line names it, and the time per iteration is simulate's on it.
TEST(ConvergeCli, TheTimeIsSimulatedOnTheCostModelTheRegistryChooses) {
  const Result uniform = run(args() + " --cost-model uniform --fwd 2ms --bwd 3ms");
  ASSERT_EQ(uniform.code, 0) << uniform.out;
  EXPECT_THAT(uniform.out, HasSubstr("time          per iteration simulated (cost model: uniform)\n"));
  EXPECT_THAT(uniform.out, HasSubstr("x time per iteration simulated; it assumes"));
  EXPECT_EQ(run(args() + " --cost-model uniform --fwd 2ms --bwd 3ms").out, uniform.out);  // simulated: repeatable
  const auto j = nlohmann::json::parse(run(args() + " --cost-model uniform --fwd 2ms --bwd 3ms --json").out);
  EXPECT_EQ(j["cost_model"], "uniform");
  EXPECT_FALSE(j.contains("model"));
  const std::vector<std::string> names = {"1f1b", "pipedream"};
  ASSERT_EQ(j["schedules"].size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_DOUBLE_EQ(j["schedules"][k]["time_per_iteration_s"].get<double>(),
                     simulate_time(names[k], "--fwd 2ms --bwd 3ms"));
    EXPECT_FALSE(j["schedules"][k]["seeds"][0].contains("measured_time_per_iteration_s"));
  }

  const Result analytical = run(args() + " --cost-model analytical --model gpt3-1.3b");
  ASSERT_EQ(analytical.code, 0) << analytical.out;
  EXPECT_THAT(analytical.out,
              HasSubstr("time          per iteration simulated for gpt3-1.3b on h100-sxm (analytical cost model)\n"));
  EXPECT_EQ(run(args() + " --model gpt3-1.3b").out, analytical.out);  // --model alone chooses it
  const auto a = nlohmann::json::parse(run(args() + " --model gpt3-1.3b --json").out);
  EXPECT_EQ(a["cost_model"], "analytical");
  EXPECT_EQ(a["model"], "gpt3-1.3b");
  EXPECT_EQ(a["hardware"], "h100-sxm");
  EXPECT_DOUBLE_EQ(a["schedules"][0]["time_per_iteration_s"].get<double>(), simulate_time("1f1b", "--model gpt3-1.3b"));

  const std::string profile = std::string(PIPESIM_TEST_DATA) + "/../../docs/validation/gpu-h200/profile-cuda-gpt3-1.3b.json";
  const Result profiled = run(args() + " --cost " + profile);
  ASSERT_EQ(profiled.code, 0) << profiled.out;
  EXPECT_THAT(profiled.out, HasSubstr("time          per iteration simulated (cost model: profiled: gpt3-1.3b on cuda ("));
  const auto p = nlohmann::json::parse(run(args() + " --cost " + profile + " --json").out);
  EXPECT_DOUBLE_EQ(p["schedules"][1]["time_per_iteration_s"].get<double>(),
                   simulate_time("pipedream", "--cost " + profile));
}

TEST(ConvergeCli, ABadCostModelOrAnotherModelsFlagIsOneLine) {
  expect_one_line_error(run(args() + " --cost-model roofline"),
                        "--cost-model: unknown cost model 'roofline' (known: uniform, analytical, profiled)");
  expect_one_line_error(run(args() + " --cost-model analytcal --model gpt3-1.3b"),
                        "(did you mean 'analytical'? known: uniform, analytical, profiled)");
  expect_one_line_error(run(args() + " --cost-model analytical"), "--cost-model analytical: needs --model");
  expect_one_line_error(run(args() + " --cost-model uniform --model gpt3-1.3b"),
                        "--cost-model uniform: not with --model (which chooses the analytical cost model)");
  expect_one_line_error(run(args() + " --cost-model uniform --tp 2"),
                        "--tp: used only with --model (the GPU settings of the analytical model)");
  expect_one_line_error(run(args() + " --model gpt3-1.3b --fwd 2ms"),
                        "--fwd: not used with --model (the analytical model gives every duration and size)");
  expect_one_line_error(run(args() + " --model gpt3-1.3b --cost-fit line"), "--cost-fit: used only with --cost");
  // Without a cost model (the time measured on the proxy) every model's flags are refused.
  expect_one_line_error(run(args() + " --fwd 2ms"),
                        "--fwd: used only with --cost-model uniform (the costs of a simulated iteration)");
  expect_one_line_error(run(args() + " --micro-batch-size 2"), "--micro-batch-size: used only with --model or --cost");
  expect_one_line_error(run(args() + " --model gpt3-1.3b --hardware h100-sxm,a100-sxm"),
                        "--hardware: converge takes one GPU type, got 'h100-sxm,a100-sxm'");
}

// The rule of tools/convergence.hpp, recomputed from the JSON of every rate: the most seeds
// reaching the target, the fewest iterations (lower median), the lower mean final loss, the
// lower rate.
std::tuple<long, int, double, double> score(const nlohmann::json& run) {
  long reached = 0;
  for (const auto& seed : run["seeds"]) reached += seed["iterations_to_target"].is_null() ? 0 : 1;
  const int iterations = run["iterations_to_target"].is_null() ? 1 << 30 : run["iterations_to_target"].get<int>();
  return {-reached, iterations, run["mean_final_validation_loss"].get<double>(), run["lr"].get<double>()};
}

TEST(ConvergeCli, EachScheduleTakesItsBestRateAndEveryRateStaysBesideIt) {
  const std::string tuned = args("0.03,0.01,0.002") + " --model gpt3-1.3b";
  const auto j = nlohmann::json::parse(run(tuned + " --json").out);
  EXPECT_EQ(j["lr"], nlohmann::json::parse("[0.03, 0.01, 0.002]"));
  ASSERT_EQ(j["schedules"].size(), 2u);
  ASSERT_EQ(j["every_rate"].size(), 6u);  // schedule by schedule, the rates in the order given
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& best = j["schedules"][k];
    const nlohmann::json* expected = nullptr;
    for (std::size_t r = 0; r < 3; ++r) {
      const auto& run_at = j["every_rate"][3 * k + r];
      EXPECT_EQ(run_at["schedule"], best["schedule"]);
      if (!expected || score(run_at) < score(*expected)) expected = &run_at;
    }
    nlohmann::json same = best;
    same.erase("lr_at_grid_end");
    EXPECT_EQ(same, *expected) << best["schedule"];
    EXPECT_EQ(best["lr_at_grid_end"], best["lr"] != 0.01);
  }
  // Every rate's runs are the single-rate runs' numbers.
  const auto single = nlohmann::json::parse(run(args("0.002") + " --model gpt3-1.3b --json").out);
  for (std::size_t k = 0; k < 2; ++k)
    for (std::size_t seed = 0; seed < 2; ++seed)
      for (const char* key : {"validation", "training_loss", "staleness"})
        EXPECT_EQ(single["schedules"][k]["seeds"][seed][key], j["every_rate"][3 * k + 2]["seeds"][seed][key]) << key;
  // The target chosen: each schedule at its best rate reaches it on every seed.
  for (const auto& best : j["schedules"])
    for (const auto& seed : best["seeds"]) EXPECT_FALSE(seed["iterations_to_target"].is_null()) << best["schedule"];
  // The table names each schedule's rate and lists every rate; reruns are byte-identical.
  const Result text = run(tuned);
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_THAT(text.out, HasSubstr("learning rate tuned per schedule over 0.03, 0.01, 0.002: the rate with the most seeds"));
  EXPECT_THAT(text.out, HasSubstr("each schedule at its best rate:\n"));
  EXPECT_THAT(text.out, HasSubstr("every rate (the same target):\n"));
  EXPECT_EQ(run(tuned).out, text.out);
  const std::string report = temp_path("converge_tuned.html");
  ASSERT_EQ(run(tuned + " --report " + report).code, 0);
  EXPECT_THAT(slurp(report), HasSubstr("aria-label=\"validation loss against iterations at lr 0.002\""));
}

TEST(ConvergeCli, VariantsOfAGeneratorAreRowsNamedAfterTheirSettings) {
  // 4 layers for p = 4 (AMDP takes a multiple of 4 devices).
  const std::string model = temp_path("converge_micro4.json"), text = temp_path("converge_text.txt");
  (void)args();  // writes the text
  std::ofstream(model) << R"({"models": [{"name": "micro4", "family": "gpt", "layers": 4, "hidden": 32, "heads": 2,
    "ffn_hidden": 64, "seq_len": 16, "vocab": 256, "mlp": "gelu", "source": "test"}]})";
  const std::string common = "converge --proxy-model " + model + " --data " + text +
                             " -p 4 -m 4 --iterations 4 --validate-every 2 --lr 0.01 --json";
  const auto j = nlohmann::json::parse(
      run(common + " --schedules amp,pipedream-2bw,amdp --max-active-keys 1,2 --min-update-frequency 1,2 "
                   "--twobw-policy double-buffer,naive --amdp-update code,late")
          .out);
  std::vector<std::string> names;
  for (const auto& s : j["schedules"]) names.push_back(s["schedule"]);
  EXPECT_EQ(names, (std::vector<std::string>{"amp keys=1 freq=1", "amp keys=1 freq=2", "amp keys=2 freq=1",
                                             "amp keys=2 freq=2", "pipedream-2bw policy=double-buffer",
                                             "pipedream-2bw policy=naive", "amdp update=code", "amdp update=late"}));
  EXPECT_EQ(j["schedules"][2]["settings"], nlohmann::json::parse(R"({"max-active-keys": 2, "min-update-frequency": 1})"));
  EXPECT_EQ(j["schedules"][5]["settings"], nlohmann::json::parse(R"({"twobw-policy": "naive"})"));
  // The settings reach the generator: one instance in flight is never stale, two are.
  EXPECT_EQ(j["schedules"][0]["seeds"][0]["staleness"]["max_mismatch"], 0);
  EXPECT_GT(j["schedules"][2]["seeds"][0]["staleness"]["max_mismatch"], 0);
  EXPECT_NE(j["schedules"][4]["seeds"][0]["staleness"], j["schedules"][5]["seeds"][0]["staleness"]);
  // One value other than the default is named too (a sweep names only what varies).
  const auto naive = nlohmann::json::parse(run(common + " --schedules 1f1b,pipedream-2bw --twobw-policy naive").out);
  EXPECT_EQ(naive["schedules"][0]["schedule"], "1f1b");
  EXPECT_EQ(naive["schedules"][1]["schedule"], "pipedream-2bw policy=naive");
  EXPECT_EQ(naive["schedules"][1]["seeds"][0]["validation"], j["schedules"][5]["seeds"][0]["validation"]);
  // A setting no listed generator reads is refused, as in every command.
  const Result r = run(common + " --schedules 1f1b --max-active-keys 1,2");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.out, HasSubstr("--max-active-keys: not a setting of 1f1b"));
}

}  // namespace
}  // namespace pipesim
