// Real models on real hardware from the command line: `--model`, `--hardware`, the
// assessment columns and JSON, `--config` / `--save-config`, and their errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace {

using testing::HasSubstr;
using namespace pipesim::testing_cli;

const std::string kSmall = "--model gpt3-1.3b --hardware a100-80g --nodes 1 --gpus-per-node 8 -p 4 -m 8";

TEST(Experiment, CompareJsonHasTheDocumentedFields) {
  const Result r = run("compare " + kSmall + " --schedules 1f1b,chimera,amdp --iterations 2 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["schedules"].size(), 3u);
  EXPECT_EQ(j["cost_model"], "analytical");
  for (const auto& s : j["schedules"]) {
    for (const char* key : {"schedule", "model", "hardware", "time_per_iteration_s", "tokens_per_s", "mfu",
                            "bubble_ratio", "peak_memory_bytes", "capacity_bytes", "fits", "staleness",
                            "memory_per_device", "global_batch", "price_usd_per_gpu_hour", "cost_per_million_tokens_usd"})
      EXPECT_TRUE(s.contains(key)) << key;
    EXPECT_EQ(s["model"], "gpt3-1.3b");
    EXPECT_EQ(s["hardware"], "a100-80g");
    EXPECT_EQ(s["tp"], 1);
    EXPECT_EQ(s["pp"], 4);
    EXPECT_EQ(s["dp"], 2);
    EXPECT_EQ(s["gpus"], 8);
    EXPECT_DOUBLE_EQ(s["global_batch"].get<double>(), 2 * 8.0);  // dp x m x micro-batch size
    EXPECT_EQ(s["fits"].get<bool>(), s["peak_memory_bytes"].get<double>() <= s["capacity_bytes"].get<double>());
    EXPECT_GT(s["mfu"].get<double>(), 0.05);
    EXPECT_LT(s["mfu"].get<double>(), 0.8);
    // 8 GPUs, 4 per pipeline: data parallel 2, so 2 x 8 micro-batches of 2048 tokens.
    EXPECT_DOUBLE_EQ(s["tokens_per_iteration"].get<double>(), 2 * 8 * 2048.0);
    EXPECT_NEAR(s["tokens_per_s"].get<double>(),
                s["tokens_per_iteration"].get<double>() / s["time_per_iteration_s"].get<double>(), 1e-6);
  }
  EXPECT_EQ(j["schedules"][2]["staleness"]["max_mismatch"], 1);  // AMDP's one-step mismatch from iteration 2
  // Chimera's device 1 holds stages 1 and 2 (6 layers each, no embedding or head): twice the
  // weights of 1F1B's device 1, which holds stage 1 only.
  EXPECT_EQ(j["schedules"][1]["memory_per_device"][1]["weights_bytes"].get<double>(),
            2 * j["schedules"][0]["memory_per_device"][1]["weights_bytes"].get<double>());
}

// One layout with and without --model: the same top level, and every field of a uniform
// run's schedule object in a model run's too, in the same order (docs/json.md).
TEST(Experiment, CompareJsonHasOneLayoutWithOrWithoutAModel) {
  const Result uniform = run("compare -p 4 -m 8 --schedules 1f1b,zb-h1 --json");
  const Result model = run("compare " + kSmall + " --schedules 1f1b,zb-h1 --json");
  ASSERT_EQ(uniform.code, 0) << uniform.out;
  ASSERT_EQ(model.code, 0) << model.out;
  const auto u = nlohmann::ordered_json::parse(uniform.out), m = nlohmann::ordered_json::parse(model.out);
  std::vector<std::string> top_u, top_m;
  for (const auto& [k, v] : u.items()) top_u.push_back(k);
  for (const auto& [k, v] : m.items()) top_m.push_back(k);
  EXPECT_EQ(top_u, top_m);
  EXPECT_EQ(top_u, (std::vector<std::string>{"schedules", "cost_model"}));
  EXPECT_EQ(u["cost_model"], "uniform");
  std::vector<std::string> keys_u, keys_m;
  for (const auto& [k, v] : u["schedules"][0].items()) keys_u.push_back(k);
  for (const auto& [k, v] : m["schedules"][0].items()) keys_m.push_back(k);
  ASSERT_GT(keys_m.size(), keys_u.size());
  EXPECT_EQ(std::vector<std::string>(keys_m.begin(), keys_m.begin() + static_cast<long>(keys_u.size())), keys_u);
  // simulate prints one such object, with the cost model.
  const Result one = run("simulate --schedule zb-h1 " + kSmall + " --json");
  ASSERT_EQ(one.code, 0) << one.out;
  const auto s = nlohmann::ordered_json::parse(one.out);
  EXPECT_EQ(s["cost_model"], "analytical");
  for (const std::string& k : keys_m) EXPECT_TRUE(s.contains(k)) << k;
}

TEST(Experiment, PricePerHourReplacesTheCatalogPrice) {
  const Result r = run("compare " + kSmall + " --schedules 1f1b --price-per-hour 2.49 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto s = nlohmann::json::parse(r.out)["schedules"][0];
  EXPECT_DOUBLE_EQ(s["price_usd_per_gpu_hour"].get<double>(), 2.49);
  EXPECT_EQ(s["price_source"], "--price-per-hour");
  // $/M tokens = price x GPUs x hours per token x 1e6.
  EXPECT_NEAR(s["cost_per_million_tokens_usd"].get<double>(), 2.49 * 8 / 3600 / s["tokens_per_s"].get<double>() * 1e6,
              1e-12);
  const auto catalog = nlohmann::json::parse(run("compare " + kSmall + " --schedules 1f1b --json").out)["schedules"][0];
  EXPECT_DOUBLE_EQ(catalog["price_usd_per_gpu_hour"].get<double>(), 5.1207);  // a100-80g: AWS p4de / 8
  EXPECT_NEAR(catalog["cost_per_million_tokens_usd"].get<double>() / s["cost_per_million_tokens_usd"].get<double>(),
              5.1207 / 2.49, 1e-12);
  // An assumed catalog price says so in the table.
  const Result h200 = run("compare --model gpt3-1.3b --hardware h200 -p 4 --schedules 1f1b");
  ASSERT_EQ(h200.code, 0) << h200.out;
  EXPECT_THAT(h200.out, HasSubstr(" (assumed)\n"));
  EXPECT_THAT(h200.out, HasSubstr("the GPU's catalog price is an assumption"));
  EXPECT_THAT(run("compare --model gpt3-1.3b --hardware h200 -p 4 --schedules 1f1b --price-per-hour 3").out,
              testing::Not(HasSubstr("assumed")));
}

// A GPU from a file is named as the file names it, never by the file's path.
TEST(Experiment, TablesNameAGpuFromAFileByItsName) {
  const std::string file = temp_path("my-gpus.json");
  ASSERT_EQ(run_shell(std::string(PIPESIM_CLI) + " catalog gpus --json > " + file).code, 0);
  for (const std::string& arg : {file + ":h200", file + ":a100-40g"}) {
    const Result r = run("compare --model gpt3-1.3b -p 4 --schedules 1f1b --hardware " + arg);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_THAT(r.out, testing::Not(HasSubstr(file))) << r.out;
    EXPECT_THAT(r.out, HasSubstr("\n" + arg.substr(arg.find(':') + 1) + "  "));
  }
}

// With --schedule-file the header shows the file's own shape, not the unused -p and -m.
TEST(Experiment, HeaderShowsTheShapeOfTheScheduleFile) {
  const Result r = run("simulate --model gpt3-1.3b --schedule-file " + std::string(PIPESIM_TEST_DATA) +
                       "/pytorch_1f1b_p4_m8.csv");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("gpt3-1.3b on 1 x 8 GPUs: tp=1 pp=4 m=8 "));
  const Result chimera = run("simulate --model gpt3-1.3b --nodes 1 --gpus-per-node 2 --schedule-file " +
                             std::string(PIPESIM_TEST_DATA) + "/chimera_p2_m2.csv");
  ASSERT_EQ(chimera.code, 0) << chimera.out;
  EXPECT_THAT(chimera.out, HasSubstr("tp=1 pp=2 m=2 "));
}

// README command 1's report: the model and GPU named, AMDP (over capacity by 46.5 GiB) marked
// and never bold, the fastest that fits named, no uniform-cost settings.
TEST(Experiment, TheReadmeReportIsHonestAboutMemory) {
  const std::string report = temp_path("readme-report.html");
  const Result r = run("compare --config " + std::string(PIPESIM_EXAMPLES) + "/gpt3-13b-h100-node.json --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string html = slurp(report);
  EXPECT_THAT(html, HasSubstr("<title>pipesim report: compare, gpt3-13b on 8 x h100-sxm</title>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>model</td><td>gpt3-13b</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>GPU</td><td>h100-sxm: 80.0 GiB, $12.29 per GPU-hour (AWS EC2 p5.48xlarge"));
  EXPECT_THAT(html, HasSubstr("<tr><td>parallelism</td><td>tp=1 pp=8 dp=1</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>batch per iteration</td><td>32 sequences x 2,048 tokens = 65,536 tokens per "
                              "iteration</td></tr>"));
  // AMP steps after every micro-batch: the page says at what batch, not only the iteration's.
  EXPECT_THAT(html, HasSubstr("<tr><td>optimizer steps</td><td>amp: 32 an iteration at each stage, 1 sequence per "
                              "step (a smaller batch than the others&#39;"));
  for (const char* unused : {"fwd=", "bwd=", "wgrad="}) EXPECT_THAT(html, testing::Not(HasSubstr(unused))) << unused;
  const std::size_t amdp = html.find("<tr class=\"nofit\"><td><a href=\"#run-6\">amdp</a></td>");
  ASSERT_NE(amdp, std::string::npos);
  const std::string row = html.substr(amdp, html.find("</tr>", amdp) - amdp);
  EXPECT_THAT(row, HasSubstr("over by 46.5 GiB"));
  EXPECT_THAT(row, testing::Not(HasSubstr("best")));
  EXPECT_THAT(html, HasSubstr("Fastest that fits: <b><a href=\"#run-3\">zb-h1</a></b>, 45,608 tokens/s"));
  EXPECT_THAT(html, HasSubstr(">capacity 80.0 GiB</text>"));
  EXPECT_THAT(html, HasSubstr(">memory per GPU: static + activations (GiB)</text>"));
  // The capacity is the GPU's: --report-capacity would contradict it.
  expect_one_line_error(run("compare " + kSmall + " --report " + report + " --report-capacity 40GiB"),
                        "--report-capacity: not with --model (the report draws each run against its GPU's own memory)");
}

// Without a model, the page shows only the settings its runs used.
TEST(Experiment, UniformAndProfiledReportsShowOnlyTheSettingsTheyUsed) {
  const std::string report = temp_path("settings-report.html");
  const auto settings = [&](const std::string& args) {
    const Result r = run("compare " + args + " --report " + report);
    EXPECT_EQ(r.code, 0) << r.out;
    const std::string html = slurp(report);
    const std::size_t at = html.find("<p class=\"settings\">");
    return html.substr(at, html.find("</p>", at) - at);
  };
  EXPECT_EQ(settings("--schedules 1f1b,gpipe"), "<p class=\"settings\">p=4 &middot; m=8 &middot; iterations=1 &middot; "
                                                "fwd=1ms &middot; bwd=2ms");
  EXPECT_THAT(settings("--schedules 1f1b,interleaved,zb-h1"), HasSubstr("m=8 &middot; v=2 &middot; iterations=1"));
  EXPECT_THAT(settings("--schedules 1f1b,zb-h1"), HasSubstr("wgrad=bwd/2"));
  const std::string profiled = settings("--schedules 1f1b --cost " + std::string(PIPESIM_TEST_DATA) +
                                        "/../../docs/validation/gpu-h200/profile-cuda-gpt3-1.3b.json");
  EXPECT_THAT(profiled, HasSubstr("cost model=profiled: gpt3-1.3b on cuda"));
  EXPECT_THAT(profiled, testing::Not(HasSubstr("fwd=")));
}

TEST(Experiment, SeveralGpuTypesInOneTableAndOverCapacityIsSaid) {
  const Result r = run("compare --model gpt3-6.7b --hardware a100-40g,h100-sxm -p 8 -m 32 --schedules gpipe,1f1b");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("a100-40g  gpipe"));
  EXPECT_THAT(r.out, HasSubstr("h100-sxm  1f1b"));
  EXPECT_THAT(r.out, HasSubstr("over by "));
  EXPECT_THAT(r.out, HasSubstr("tokens/s"));
  EXPECT_THAT(r.out, HasSubstr("MFU"));
}

TEST(Experiment, SimulateOnHardwareShowsTheAssessment) {
  const Result r = run("simulate --schedule zb-h1 " + kSmall);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("gpt3-1.3b on 1 x 8 GPUs: tp=1 pp=4 m=8"));
  EXPECT_THAT(r.out, HasSubstr("a100-80g  zb-h1"));
}

TEST(Experiment, TraceCountsWholeDeviceMemoryInBytes) {
  const std::string trace = temp_path("model.trace.json");
  ASSERT_EQ(run("simulate --schedule 1f1b " + kSmall + " --trace " + trace).code, 0);
  const auto j = nlohmann::json::parse(slurp(trace));
  int counters = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "C") continue;
    ++counters;
    EXPECT_EQ(e["name"], "device memory");
    EXPECT_GT(e["args"]["static"].get<double>(), 1e9);  // 1.3B parameters over 4 stages, 18 bytes each
    EXPECT_GE(e["args"]["activations"].get<double>(), 0);
  }
  EXPECT_GT(counters, 4 * 8);
}

TEST(Experiment, ConfigRoundTripsAndFlagsOverrideIt) {
  const std::string saved = temp_path("saved.json");
  const Result first = run("compare " + kSmall + " --schedules 1f1b,zb-h1 --tp 2 --save-config " + saved + " --json");
  ASSERT_EQ(first.code, 0) << first.out;
  const Result again = run("compare --config " + saved + " --json");
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(first.out, again.out);
  const Result overridden = run("compare --config " + saved + " -m 16 --json");
  ASSERT_EQ(overridden.code, 0) << overridden.out;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(overridden.out)["schedules"][0]["tokens_per_iteration"].get<double>(),
                   16 * 2048.0);  // 8 GPUs / (tp 2 x pp 4) = 1 pipeline
}

TEST(Experiment, TheShippedExampleRuns) {
  const Result r = run("compare --config " + std::string(PIPESIM_EXAMPLES) + "/gpt3-13b-h100-node.json");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* s : {"gpipe", "1f1b", "interleaved", "zb-h1", "chimera", "amp", "amdp"}) EXPECT_THAT(r.out, HasSubstr(s));
}

TEST(Experiment, BadSettingsAreOneLineErrors) {
  expect_one_line_error(run("compare --model gpt-9 --hardware h100-sxm"), "gpt-9");
  expect_one_line_error(run("compare --model gpt3-1.3b --hardware tpu-v9"), "tpu-v9");
  expect_one_line_error(run("compare --model gpt3-1.3b --nodes 1 --gpus-per-node 6 -p 4"), "does not divide the 6 GPUs");
  expect_one_line_error(run("compare --model gpt3-1.3b --recompute some"), "--recompute: expected none, selective or full");
  expect_one_line_error(run("simulate --model gpt3-1.3b --hardware a100-80g,h100-sxm"), "simulate takes one GPU type");
  const std::string bad = temp_path("bad.json");
  std::ofstream(bad) << "{\"tpp\": 2}";
  expect_one_line_error(run("compare --config " + bad), bad + ": /tpp: unknown setting");
  std::ofstream(bad) << "{\"tp\": \"two\"}";
  expect_one_line_error(run("compare --config " + bad), bad + ": /tp: ");
  std::ofstream(bad) << "{\"tp\": ";
  expect_one_line_error(run("compare --config " + bad), bad + ": line 1, column 8: invalid JSON");
  std::ofstream(bad) << "[1, 2]";
  expect_one_line_error(run("compare --config " + bad), "expected a JSON object of settings");
  std::ofstream(bad) << "{\"tp\": {\"a\": 1}}";
  expect_one_line_error(run("compare --config " + bad), "expected a string, number or boolean, got object");
  expect_one_line_error(run("compare --config /nonexistent/c.json"), "cannot read config file '/nonexistent/c.json'");
  // The analytical model's own settings.
  const std::string m = "simulate --model gpt3-1.3b --hardware a100-80g -p 4 ";
  expect_one_line_error(run(m + "--tp-overlap some"), "--tp-overlap: expected none, backward or all, got 'some'");
  expect_one_line_error(run(m + "--efficiency gemm"), "--efficiency 'gemm': expected KEY=VALUE, e.g. gemm=0.7");
  expect_one_line_error(run(m + "--efficiency gemm=fast"), "--efficiency 'gemm=fast': 'fast' is not a number");
  expect_one_line_error(run(m + "--efficiency gem=0.5"), "--efficiency 'gem=0.5': unknown efficiency parameter 'gem'");
  expect_one_line_error(run(m + "--efficiency gemm=1.5"), "--efficiency: efficiency.gemm must lie in (0, 1], got 1.5");
  expect_one_line_error(run(m + "--efficiency tile_m=3.5"), "--efficiency 'tile_m=3.5': a tile side is an integer in 1..4096");
  expect_one_line_error(run(m + "--partition 6,6,6,x"), "--partition: expected non-negative layer counts like 2,3,3,2, got 'x'");
  expect_one_line_error(run(m + "--partition 6,6,6,5"), "analytical: partition: sums to 23 layers, but the model has 24");
  expect_one_line_error(run(m + "--partition 8,8,8 "), "analytical: partition: 3 entries, but the schedule has 4 stages");
  expect_one_line_error(run(m + "--partition 6,6,6,6 --decoder-first-pipeline-num-layers 2"),
                        "--partition: not with --decoder-first/last-pipeline-num-layers (it gives every stage)");
  expect_one_line_error(run(m + "--decoder-last-pipeline-num-layers -3"),
                        "--decoder-last-pipeline-num-layers must be a non-negative number of layers, got -3");
  expect_one_line_error(run(m + "--grad-reduce-bytes 0"), "--grad-reduce-bytes: 0 not in {2,4}");
  expect_one_line_error(run(m + "--vocab-multiple 0"), "--vocab-multiple must be positive, got 0");
  // Uneven pipelines and the knobs run.
  EXPECT_EQ(run(m + "--decoder-first-pipeline-num-layers 3 --decoder-last-pipeline-num-layers 3 --tp-overlap all "
                    "--gradient-accumulation-fusion false --blocking-p2p true --efficiency gemm=0.6,memory=0.9")
                .code,
            0);
}

// Tokens per iteration are in the table (#15): m x b x dp x sequence length, 8 x 1 x 2 x 2048.
TEST(Experiment, TheTableShowsTokensPerIteration) {
  const Result r = run("compare " + kSmall + " --schedules 1f1b,zb-h1");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, testing::ContainsRegex("schedule +tokens/iter +time/iter"));
  EXPECT_THAT(r.out, testing::ContainsRegex("a100-80g +1f1b +32768 "));
  EXPECT_THAT(r.out, HasSubstr("tokens/iter = tokens per iteration (m x micro-batch size x dp sequences"));
  EXPECT_THAT(r.out, testing::Not(HasSubstr("note: ")));
}

// A fit with less than 5 % of the memory free is marked tight, with why, in the table, the
// report's summary and verdict, and under sweep's best list: ZB-V and V-Half at 98.85 %.
TEST(Experiment, TightFitsAreMarkedWithWhy) {
  const std::string args = "--model gpt3-6.7b --nodes 4 --tp 1 -p 2 --micro-batch-size 2 --global-batch-size 256 "
                           "--iterations 2";
  const std::string report = temp_path("tight.html");
  const Result r = run("compare " + args + " --schedules zb-v,1f1b --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, testing::ContainsRegex("zb-v .* 79.1 GiB  80.0 GiB  fits, tight "));
  EXPECT_THAT(r.out, testing::ContainsRegex("1f1b .*  fits  "));
  EXPECT_THAT(r.out, HasSubstr("note: tight: zb-v fits with less than 5 % of the GPU's memory free; the memory"));
  const std::string html = slurp(report);
  EXPECT_THAT(html, HasSubstr("<td class=\"fit\">fits, tight</td>"));
  EXPECT_THAT(html, HasSubstr("It fits with less than 5 % of the GPU&#39;s memory free"));
  const Result s = run("sweep --model gpt3-6.7b --gpus 32 --schedules zb-v --pp 2 --tp 1 --micro-batch-size 2 "
                       "--global-batch-size 256");
  ASSERT_EQ(s.code, 0) << s.out;
  EXPECT_THAT(s.out, HasSubstr("note: tight: #0 fits with less than 5 % of the GPU's memory free"));
}

// A schedule that steps the optimizer after every micro-batch trains at a smaller batch than the
// iteration's: the table's note says so and names it, and --json carries the steps.
TEST(Experiment, SchedulesThatStepEveryMicroBatchAreNamed) {
  const Result r = run("compare " + kSmall + " --schedules 1f1b,amp,pipedream");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("note: amp, pipedream step the optimizer 8 times an iteration at each stage: a batch of 2\n"
                               "sequences per step, where the others step once an iteration, at 16 sequences."));
  const Result j = run("compare " + kSmall + " --schedules 1f1b,amp --json");
  ASSERT_EQ(j.code, 0) << j.out;
  EXPECT_THAT(j.out, HasSubstr("\"global_batch\": 16.0,\n      \"optimizer_steps_per_iteration\": 1,"));
  EXPECT_THAT(j.out, HasSubstr("\"global_batch\": 16.0,\n      \"optimizer_steps_per_iteration\": 8,"));
}

}  // namespace
