// tools/fit_runs and `pipesim fit`: runs files (every error names file:line and column), the
// fit recovering known efficiencies from synthetic measurements, leave-one-out, the written
// calibrated GPU (read back by --hardware FILE), and outputs that never clobber a file on failure.
#include "tools/fit_runs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "cost_models/catalog.hpp"
#include "input_error.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;
using namespace testing_cli;

const char* kHeader =
    "name,model,hardware,tp,pp,dp,global-batch,micro-batch-size,schedule,recompute,sequence-parallel,seconds\n";

std::vector<TrainingRun> parse(const std::string& body) { return parse_runs(std::string(kHeader) + body, "runs.csv", ""); }

TEST(RunsFile, ReadsRowsIntoConfigsAndSchedules) {
  const std::vector<TrainingRun> runs = parse(
      "# a comment line\n"
      "small,gpt3-1.3b,a100-80g,2,2,4,64,2,1f1b,selective,true,1.5\n"
      "\"quoted, name\",gpt3-1.3b,h100-sxm,1,4,2,64,1,interleaved,none,false,2\n");
  ASSERT_EQ(runs.size(), 2u);
  const TrainingRun& a = runs[0];
  EXPECT_EQ(a.where, "runs.csv:3");
  EXPECT_EQ(a.name, "small");
  EXPECT_EQ(a.config.tp, 2);
  EXPECT_EQ(a.config.pipeline_devices, 2);
  EXPECT_EQ(a.config.dp, 4);
  EXPECT_EQ(a.config.cluster.total_gpus(), 16);  // 2 nodes of 8
  EXPECT_EQ(a.config.recompute, Recompute::Selective);
  EXPECT_TRUE(a.config.sequence_parallel);
  EXPECT_EQ(a.microbatches, 8);  // 64 / (4 x 2)
  EXPECT_EQ(a.plan.num_stages, 2);
  EXPECT_EQ(a.seconds, 1.5);
  EXPECT_FALSE(a.activation_memory.has_value());
  EXPECT_EQ(runs[1].name, "quoted, name");
  EXPECT_EQ(runs[1].config.cluster.gpu.name, "h100-sxm");
  EXPECT_EQ(runs[1].plan.num_stages, 8);  // interleaved, 2 chunks by default
  EXPECT_EQ(runs[1].config.cluster.total_gpus(), 8);
  // Optional columns are the analytical flags; an empty field keeps the default.
  const std::vector<TrainingRun> knobs = parse_runs(
      "model,hardware,tp,pp,dp,global-batch,micro-batch-size,schedule,recompute,sequence_parallel,seconds,tp-overlap,"
      "blocking_p2p,chunks,efficiency\n"
      "gpt3-1.3b,a100-80g,1,2,1,8,1,interleaved,full,false,3,none,true,3,gemm=0.5\n"
      "gpt3-1.3b,a100-80g,1,2,1,8,1,1f1b,full,false,3,,,,\n",
      "k.csv", "");
  EXPECT_EQ(knobs[0].config.tp_overlap, TpOverlap::None);
  EXPECT_TRUE(knobs[0].config.blocking_p2p);
  EXPECT_EQ(knobs[0].plan.num_stages, 6);
  EXPECT_DOUBLE_EQ(knobs[0].config.efficiency.gemm, 0.5);
  EXPECT_EQ(knobs[1].config.tp_overlap, TpOverlap::Backward);
  EXPECT_EQ(knobs[1].name, "gpt3-1.3b tp1 pp2 dp1");
}

TEST(RunsFile, BadRowsNameFileLineAndColumn) {
  auto err = [](const std::string& text) { return error_of([&] { parse_runs(text, "runs.csv", ""); }); };
  const std::string h = kHeader;
  EXPECT_EQ(err("model,tp\n"), "runs.csv:1: missing column 'hardware' (the required columns are model, hardware, tp, pp, "
                               "dp, global-batch, micro-batch-size, schedule, recompute, sequence-parallel)");
  EXPECT_THAT(err("model,bogus\n"), HasSubstr("runs.csv:1: unknown column 'bogus' (expected model, hardware"));
  EXPECT_THAT(err(h.substr(0, h.size() - 1) + ",nodes\n"), HasSubstr("runs.csv:1: unknown column 'nodes'"));
  EXPECT_EQ(err("model,model\n"), "runs.csv:1: column 'model' appears twice");
  EXPECT_EQ(err(h), "runs.csv: a header but no runs");
  EXPECT_EQ(err("# only a comment\n"), "runs.csv: no header line (the column names) and no runs");
  EXPECT_EQ(err(h + "x,gpt3-1.3b,a100-80g,1,1,1,8,1,1f1b,none,false\n"), "runs.csv:2: 11 fields, but the header has 12");
  EXPECT_EQ(err(h + "x,gpt3-1.3b,a100-80g,1,1,1,8,1,1f1b,none,false,-1\n"),
            "runs.csv:2: column 'seconds': expected the seconds of an iteration, from 0.000001 to 10000000, got '-1'");
  EXPECT_EQ(err(h + "x,gpt3-1.3b,a100-80g,1,0,1,8,1,1f1b,none,false,1\n"),
            "runs.csv:2: column 'pp': expected an integer >= 1, got '0'");
  EXPECT_EQ(err(h + "x,gpt3-1.3b,a100-80g,1,1,3,8,1,1f1b,none,false,1\n"),
            "runs.csv:2: column 'global-batch': 8 is not a multiple of dp x micro-batch-size = 3");
  EXPECT_EQ(err(h + "x,,a100-80g,1,1,1,8,1,1f1b,none,false,1\n"), "runs.csv:2: column 'model': is empty");
  EXPECT_THAT(err(h + "x,gpt3-1.3b,a100-80g,1,1,1,8,1,1f1b,sometimes,false,1\n"),
              HasSubstr("runs.csv:2: --recompute: expected none, selective or full, got 'sometimes'"));
  EXPECT_THAT(err(h + "x,gpt3-1.3b,a100-80g,1,1,1,8,1,1f1b,none,maybe,1\n"), HasSubstr("runs.csv:2: --sequence-parallel: 'maybe': expected true or false"));
  EXPECT_THAT(err(h + "x,no-such-model,a100-80g,1,1,1,8,1,1f1b,none,false,1\n"), HasSubstr("runs.csv:2: "));
  EXPECT_THAT(err(h + "x,gpt3-1.3b,a100-80g,3,1,1,8,1,1f1b,none,false,1\n"),
              HasSubstr("runs.csv:2: analytical: tp (3) must divide the attention heads (16)"));
  EXPECT_EQ(err(h + "x,gpt3-1.3b,a100-80g,1,1,1,8,1,1f1b,none,false,1\n\"open,a\n"), "runs.csv:3: a quoted field is not closed");
  EXPECT_THAT(err(h + "x,gpt3-1.3b,a100-80g,1,3,1,7,1,interleaved,none,false,1\n"), HasSubstr("runs.csv:2: "));
  EXPECT_EQ(err(h + "x,gpt3-1.3b,a100-80g,1,1,1,8,1,1f1b,none,false,1\n" + "y,gpt3-1.3b,a100-80g,4,3,1,8,1,1f1b,none,false,1\n"),
            "runs.csv:3: tp x pp x dp = 12 GPUs is not a whole number of nodes of 8 (gpus-per-node)");
  const std::string no_time = h.substr(0, h.size() - std::string(",seconds\n").size());
  EXPECT_EQ(err(no_time + "\n"), "runs.csv:1: no measurement column (expected one or more of seconds, activation-memory, "
                                 "state-memory)");
  const std::string mem = no_time + ",seconds,activation-memory,state-memory\n";
  EXPECT_EQ(err(mem + "x,gpt3-1.3b,a100-80g,1,1,1,8,1,1f1b,none,false,,,\n"),
            "runs.csv:2: nothing measured (give one or more of seconds, activation-memory, state-memory)");
  EXPECT_THAT(err(mem + "x,gpt3-1.3b,a100-80g,1,1,1,8,1,1f1b,none,false,,59.25,\n"),
              HasSubstr("runs.csv:2: column 'activation-memory': "));
  EXPECT_EQ(err(mem + "x,gpt3-1.3b,a100-80g,1,1,1,8,1,1f1b,none,false,,,0GiB\n"),
            "runs.csv:2: column 'state-memory': expected a positive size such as 59.25GiB, got '0GiB'");
  EXPECT_EQ(error_of([] { read_runs_file("/no/such/runs.csv"); }), "cannot read runs file '/no/such/runs.csv': No such file or directory");
}

// Synthetic measurements made with known efficiencies: the fit finds them again to 0.1 %,
// from the catalog's values, through the whole simulation (bubbles, TP and p2p included).
TEST(RunsFit, RecoversKnownEfficienciesFromSyntheticRuns) {
  std::vector<TrainingRun> runs = parse(
      "a,gpt3-1.3b,a100-80g,1,1,1,4,4,1f1b,none,false,1\n"
      "b,gpt3-1.3b,a100-80g,2,2,1,8,1,1f1b,full,false,1\n"
      "c,gpt3-2.7b,a100-80g,4,2,1,16,2,1f1b,selective,true,1\n"
      "d,gpt3-6.7b,a100-80g,8,1,1,2,1,1f1b,full,false,1\n"
      "e,gpt3-1.3b,a100-80g,1,4,2,32,2,interleaved,none,false,1\n");
  Efficiency truth = find_gpu("a100-80g").efficiency;
  truth.gemm = 0.64;
  truth.gemm_k_overhead = 150;
  for (TrainingRun& r : runs) r.seconds = predict_run_seconds(r, truth);
  const RunsFit fit = fit_runs(runs, find_gpu("a100-80g").efficiency,
                               {EfficiencyParam::Gemm, EfficiencyParam::GemmKOverhead}, true);
  EXPECT_TRUE(fit.fit.converged);
  EXPECT_NEAR(fit.fit.efficiency.gemm, 0.64, 0.64e-3);
  EXPECT_NEAR(fit.fit.efficiency.gemm_k_overhead, 150, 0.15);
  ASSERT_EQ(fit.leave_one_out.size(), runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    EXPECT_NEAR(fit.before[i], predict_run_seconds(runs[i], find_gpu("a100-80g").efficiency), 1e-12);
    EXPECT_NEAR(fit.leave_one_out[i], *runs[i].seconds, 1e-3 * *runs[i].seconds);  // exact data: every fold agrees
  }
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(FitCommand, WritesACalibratedGpuThatHardwareReads) {
  std::vector<TrainingRun> runs = parse(
      "a,gpt3-1.3b,a100-80g,1,1,1,4,4,1f1b,none,false,1\n"
      "b,gpt3-2.7b,a100-80g,2,2,1,8,1,1f1b,full,false,1\n"
      "c,gpt3-6.7b,a100-80g,8,1,1,2,1,1f1b,full,false,1\n");
  Efficiency truth = find_gpu("a100-80g").efficiency;
  truth.gemm = 0.7;
  std::string csv = kHeader;
  for (TrainingRun& r : runs)
    csv += r.name + ",gpt3-" + (r.name == "a" ? "1.3b" : r.name == "b" ? "2.7b" : "6.7b") + ",a100-80g," +
           std::to_string(r.config.tp) + "," + std::to_string(r.pp) + ",1," + std::to_string(r.global_batch) + "," +
           std::to_string(r.options.micro_batch_size) + ",1f1b," + (r.name == "a" ? "none" : "full") + ",false," +
           std::to_string(predict_run_seconds(r, truth)) + "\n";
  const std::string runs_path = write("fit_runs.csv", csv);
  const std::string out = temp_path("fit_a100.json");
  std::filesystem::remove(out);
  const Result r = run("fit --measurements " + runs_path + " --hardware a100-80g --parameters gemm -o " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("fitting gemm of a100-80g on 3 runs of " + runs_path));
  EXPECT_THAT(r.out, HasSubstr("left out"));
  EXPECT_THAT(r.out, HasSubstr("wrote a100-80g to " + out));
  const Catalog written = read_catalog_file(out);
  ASSERT_EQ(written.gpus.size(), 1u);
  EXPECT_NEAR(written.gpus[0].efficiency.gemm, 0.7, 1e-4);  // the synthetic truth, to the 6 digits printed into the CSV
  EXPECT_EQ(written.gpus[0].sms, 108);
  EXPECT_EQ(written.gpus[0].peak_flops.at("bf16"), 312e12);
  // The calibrated file is a --hardware the rest of pipesim takes, and evaluates the runs exactly.
  const Result again = run("fit --measurements " + runs_path + " --hardware " + out + " --evaluate");
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_THAT(again.out, HasSubstr("mean |error|  0.00 %"));
  EXPECT_EQ(run("simulate --model gpt3-1.3b --hardware " + out + " -p 2 -m 4").code, 0);
  // Reruns are byte-identical.
  const std::string first = slurp(out);
  ASSERT_EQ(run("fit --measurements " + runs_path + " --hardware a100-80g --parameters gemm -o " + out).code, 0);
  EXPECT_EQ(slurp(out), first);
}

// Memory columns: a run may give a time, memory, or both. The fit uses the timed runs; the
// memory table is the memory model's activations and state of the fullest GPU, whose parts
// simulate --json reports (memory_per_device), and the same in --evaluate and in a fit.
TEST(FitCommand, MemoryColumnsAreEvaluatedAgainstTheMemoryModel) {
  const std::string head = std::string(kHeader).substr(0, std::string(kHeader).size() - 1) + ",activation-memory,state-memory\n";
  const std::string runs_path = write("fit_memory.csv", head +
                                                            "timed,gpt3-1.3b,a100-80g,1,2,1,8,1,1f1b,none,false,1.5,,\n"
                                                            "both,gpt3-1.3b,a100-80g,1,2,1,8,1,1f1b,none,false,1.4,10GiB,\n"
                                                            "memory,gpt3-1.3b,a100-80g,2,2,1,8,1,1f1b,full,false,,2GiB,12GiB\n");
  const std::vector<TrainingRun> runs = read_runs_file(runs_path);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(timed_runs(runs).size(), 2u);
  const RunMemory m = predict_run_memory(runs[2]);
  const Result json = run("simulate --model gpt3-1.3b --hardware a100-80g --tp 2 -p 2 --nodes 1 --gpus-per-node 4 -m 8 "
                          "--recompute full --sequence-parallel false --json");
  ASSERT_EQ(json.code, 0) << json.out;
  std::int64_t act = 0, state = 0;
  const nlohmann::json parsed = nlohmann::json::parse(json.out);  // alive while the loop reads it
  for (const auto& d : parsed.at("memory_per_device")) {
    act = std::max(act, d.at("activations_bytes").get<std::int64_t>());
    state = std::max(state, d.at("weights_bytes").get<std::int64_t>() + d.at("gradients_bytes").get<std::int64_t>() +
                                d.at("optimizer_bytes").get<std::int64_t>());
  }
  EXPECT_EQ(m.activations, act);
  EXPECT_EQ(m.state, state);
  EXPECT_GT(m.activations, 0);
  const Result eval = run("fit --measurements " + runs_path + " --hardware a100-80g --evaluate");
  ASSERT_EQ(eval.code, 0) << eval.out;
  EXPECT_THAT(eval.out, HasSubstr("on 3 runs of"));
  EXPECT_THAT(eval.out, HasSubstr("memory of the GPU that holds the most of each"));
  char expected[64];
  std::snprintf(expected, sizeof expected, "%+.1f %%", 100 * (static_cast<double>(state) - 12.0 * (1 << 30)) / (12.0 * (1 << 30)));
  EXPECT_THAT(eval.out, HasSubstr(expected));
  EXPECT_THAT(eval.out, HasSubstr("activations    mean |error|"));
  EXPECT_THAT(eval.out, HasSubstr("state          mean |error|"));
  const std::string out = temp_path("fit_memory.json");
  const Result fit = run("fit --measurements " + runs_path + " --hardware a100-80g --parameters gemm -o " + out);
  ASSERT_EQ(fit.code, 0) << fit.out;
  EXPECT_THAT(fit.out, HasSubstr("memory of the GPU that holds the most of each"));
  const std::string untimed = write("fit_untimed.csv", head + "memory,gpt3-1.3b,a100-80g,2,2,1,8,1,1f1b,full,false,,2GiB,\n");
  expect_one_line_error(run("fit --measurements " + untimed + " --hardware a100-80g -o " + out),
                        untimed + ": no run has a measured time (column 'seconds'), and the fit needs some");
}

TEST(FitCommand, FailuresAreOneLineAndLeaveTheOutputAlone) {
  const std::string out = write("fit_keep.json", "precious\n");
  const std::string bad = write("fit_bad.csv", std::string(kHeader) + "x,gpt3-1.3b,a100-80g,1,1,1,8,1,1f1b,none,false,oops\n");
  expect_one_line_error(run("fit --measurements " + bad + " --hardware a100-80g -o " + out),
                        bad + ":2: column 'seconds': expected the seconds of an iteration, from 0.000001 to 10000000, got 'oops'");
  EXPECT_EQ(slurp(out), "precious\n");
  const std::string other = write("fit_other.csv", std::string(kHeader) + "x,gpt3-1.3b,h100-sxm,1,1,1,8,1,1f1b,none,false,1\n");
  expect_one_line_error(run("fit --measurements " + other + " --hardware a100-80g -o " + out),
                        other + ":2: column 'hardware': 'h100-sxm' is not the GPU being fitted ('a100-80g', --hardware)");
  expect_one_line_error(run("fit --measurements " + other + " --hardware h100-sxm -o " + out + " --parameters gemm,gem"),
                        "--parameters: unknown efficiency parameter 'gem'");
  expect_one_line_error(run("fit --measurements " + other + " --hardware h100-sxm"),
                        "-o/--output: where to write the calibrated GPU (or --evaluate)");
  expect_one_line_error(run("fit --measurements " + other + " --hardware h100-sxm -o " + out + " --parameters gemm,memory"),
                        "1 run(s) cannot determine 2 parameters (--parameters); give at least as many runs");
  expect_one_line_error(run("fit --measurements " + other + " --hardware h100-sxm -o /no/such/dir/x.json"),
                        "-o/--output: cannot write '/no/such/dir/x.json': the folder '/no/such/dir' does not exist");
  expect_one_line_error(run("fit --measurements " + other + " --hardware h100-sxm -o " + out + " --evaluate"),
                        "-o/--output: --evaluate fits and writes nothing");
  expect_one_line_error(run("fit --measurements " + other + " --hardware h100-sxm --parameters , -o " + out),
                        "--parameters: expected a comma-separated list such as gemm,gemm_k_overhead");
  expect_one_line_error(run("fit --measurements " + other + " --hardware h100-sxm -o /tmp"),
                        "-o/--output: cannot write '/tmp': it is a directory");
  const std::string gpn = write("fit_gpn.csv", std::string(kHeader).substr(0, std::string(kHeader).size() - 1) +
                                                   ",gpus-per-node\nx,gpt3-1.3b,h100-sxm,1,1,1,8,1,1f1b,none,false,1,0\n");
  expect_one_line_error(run("fit --measurements " + gpn + " --hardware h100-sxm --evaluate"),
                        gpn + ":2: column 'gpus-per-node': must be positive, got 0");
  EXPECT_EQ(slurp(out), "precious\n");
  // Nothing is left behind in the output's folder.
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(out).parent_path()))
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(::testing::StartsWith("." + std::filesystem::path(out).filename().string() + ".")));
}

}  // namespace
}  // namespace pipesim
