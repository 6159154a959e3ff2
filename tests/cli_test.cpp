// The `pipesim` binary end to end: outputs, JSON fields, exit codes and one-line errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace {

using testing::HasSubstr;
using namespace pipesim::testing_cli;

TEST(Cli, SimulateJsonHasTheDocumentedFields) {
  const Result r = run("simulate --schedule 1f1b -p 4 -m 8 --fwd 1ms --bwd 2ms --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schedule"], "1f1b");
  EXPECT_EQ(j["devices"], 4);
  EXPECT_EQ(j["stages"], 4);
  EXPECT_EQ(j["microbatches"], 8);
  EXPECT_DOUBLE_EQ(j["makespan_s"].get<double>(), 0.033);  // (m+p-1)(tF+tB)
  EXPECT_DOUBLE_EQ(j["bubble_ratio"].get<double>(), 3.0 / 11.0);
  ASSERT_EQ(j["per_device"].size(), 4u);
  for (const char* key : {"device", "busy_s", "idle_s", "peak_activations", "peak_activation_bytes"})
    EXPECT_TRUE(j["per_device"][0].contains(key)) << key;
  EXPECT_EQ(j["per_device"][0]["peak_activations"], 4);
  EXPECT_EQ(j["per_device"][0]["peak_weight_versions"], 1);
}

TEST(Cli, IterationsGiveSteadyStateTimeThroughputAndStaleness) {
  const Result r = run("simulate --schedule 1f1b -p 4 -m 8 --iterations 3 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["iterations"], 3);
  EXPECT_DOUBLE_EQ(j["time_per_iteration_s"].get<double>(), 0.033);  // flushed: each iteration is a fresh pipeline
  EXPECT_NEAR(j["throughput_mb_per_s"].get<double>(), 8 / 0.033, 1e-9);
  for (const char* key : {"max_mismatch", "mean_mismatch", "mismatched_fraction", "max_delay"})
    EXPECT_EQ(j["staleness"][key], 0) << key;
  EXPECT_EQ(j["staleness"]["per_stage"].size(), 4u);
}

TEST(Cli, SimulateTableHasUnits) {
  const Result r = run("simulate --schedule gpipe -p 2 -m 2 --activation-bytes 1MiB");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("makespan      9.000 ms"));
  EXPECT_THAT(r.out, HasSubstr("2.0 MiB"));
}

TEST(Cli, CompareRunsTheDefaultSetAndWritesTraces) {
  const std::string dir = temp_path("traces");
  std::filesystem::remove_all(dir);
  const Result r = run("compare --trace-dir " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* name : {"gpipe", "1f1b", "interleaved", "zb-h1"}) {
    EXPECT_THAT(r.out, HasSubstr(name));
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + name + ".trace.json")) << name;
  }
  const auto trace = nlohmann::json::parse(slurp(dir + "/1f1b.trace.json"));
  EXPECT_FALSE(trace["traceEvents"].empty());
}

TEST(Cli, CompareJsonListsEverySchedule) {
  const Result r = run("compare --schedules 1f1b,zb-h1 -p 4 -m 8 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["schedules"].size(), 2u);
  EXPECT_EQ(j["schedules"][1]["schedule"], "zb-h1");
}

TEST(Cli, TracesAreByteIdenticalAcrossRuns) {
  const std::string a = temp_path("a.json"), b = temp_path("b.json");
  const std::string args = "simulate --schedule interleaved -p 4 -m 8 -v 2 --link-latency 5us --link-bandwidth 10GB/s "
                           "--activation-bytes 16MiB --trace ";
  ASSERT_EQ(run(args + a).code, 0);
  ASSERT_EQ(run(args + b).code, 0);
  EXPECT_EQ(slurp(a), slurp(b));
  EXPECT_GT(slurp(a).size(), 1000u);
}

TEST(Cli, ScheduleCsvRoundTripsThroughScheduleFile) {
  const std::string csv = temp_path("zb.csv");
  ASSERT_EQ(run("schedule --schedule zb-h2 -p 4 -m 8 --format csv -o " + csv).code, 0);
  const Result direct = run("simulate --schedule zb-h2 -p 4 -m 8 --json");
  const Result from_file = run("simulate --schedule-file " + csv + " --json");
  ASSERT_EQ(from_file.code, 0) << from_file.out;
  EXPECT_EQ(nlohmann::json::parse(direct.out)["makespan_ns"], nlohmann::json::parse(from_file.out)["makespan_ns"]);
}

TEST(Cli, ScheduleTextShowsOrderAndTimeline) {
  const Result r = run("schedule --schedule 1f1b -p 2 -m 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("dev0: 0F0 0F1 0B0 0B1 0OPT"));
  EXPECT_THAT(r.out, HasSubstr("dev1 |"));
}

TEST(Cli, CheckReportsTheDeadlockCycle) {
  const std::string csv = temp_path("deadlock.csv");
  std::ofstream(csv) << "0B0,0F0\n1F0,1B0\n";
  const Result r = run("check --schedule-file " + csv);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.out, HasSubstr("deadlock: "));
  EXPECT_THAT(r.out, HasSubstr("waits for"));
  const Result ok = run("check --schedule 1f1b -p 4 -m 8");
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_THAT(ok.out, HasSubstr("critical-path lower bound 33.000 ms"));
}

TEST(Cli, BadInputGivesOneLineErrorAndExitCode2) {
  expect_one_line_error(run("simulate --schedule nope"), "unknown schedule 'nope' (known: gpipe, 1f1b");
  expect_one_line_error(run("simulate --fwd 3"), "--fwd");
  expect_one_line_error(run("simulate --link-bandwidth fast"), "--link-bandwidth");
  expect_one_line_error(run("simulate -p 0"), "must be a positive integer");
  expect_one_line_error(run("simulate --schedule interleaved -p 4 -m 9"),
                        "m (9) must be a multiple of its number of rounds m div p = 2");
  expect_one_line_error(run("simulate --schedule-file /nonexistent/x.csv"),
                        "cannot read schedule file '/nonexistent/x.csv': No such file or directory");
  expect_one_line_error(run("simulate --stage-cost 1:2ms"), "expected STAGE:FWD:BWD[:WGRAD]");
  expect_one_line_error(run("simulate --bogus"), "--bogus");
  expect_one_line_error(run("compare --schedules 1f1b,1f1b"), "listed twice");
  const std::string bad = temp_path("bad.csv");
  std::ofstream(bad) << "0F0,0B0\n1F0,1X0\n";
  expect_one_line_error(run("simulate --schedule-file " + bad), ":2:");
  const std::string missing = temp_path("missing.csv");
  std::ofstream(missing) << "0F0\n1F0,1B0\n";
  expect_one_line_error(run("simulate --schedule-file " + missing), "0F0 has no backward");
}

// Throughput is named in full in every table: "micro-batches/s", never "mb/s".
TEST(Cli, TablesSayMicroBatchesPerSecond) {
  for (const char* cmd : {"compare -p 2 -m 4", "simulate -p 2 -m 4"}) {
    const Result r = run(cmd);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr("micro-batches/s")) << cmd;
    EXPECT_THAT(r.out, testing::Not(HasSubstr("mb/s"))) << cmd;
  }
}

// One iteration of a schedule whose iterations overlap is its makespan, without the staleness
// of a second: the tables and the JSON say so for those schedules, and only with one iteration.
TEST(Cli, OneIterationOfOverlappingIterationsIsNamed) {
  const Result one = run("compare --schedules 1f1b,pipedream-2bw,amdp");
  ASSERT_EQ(one.code, 0) << one.out;
  EXPECT_THAT(one.out, HasSubstr("note: pipedream-2bw, amdp: one iteration of a schedule whose iterations overlap shows"));
  EXPECT_THAT(one.out, HasSubstr("--iterations 2 or more gives the steady state."));
  const Result two = run("compare --schedules 1f1b,pipedream-2bw,amdp --iterations 2");
  ASSERT_EQ(two.code, 0) << two.out;
  EXPECT_THAT(two.out, testing::Not(HasSubstr("note:")));
  const Result sync = run("simulate --schedule 1f1b");
  EXPECT_THAT(sync.out, testing::Not(HasSubstr("note:")));
  const nlohmann::json j = nlohmann::json::parse(run("simulate --schedule pipedream-2bw --json").out);
  EXPECT_THAT(j.value("note", ""), HasSubstr("time_per_iteration_s is its makespan, not the steady state"));
  EXPECT_FALSE(nlohmann::json::parse(run("simulate --schedule 1f1b --json").out).contains("note"));
}

// "weights" counts a device's weights in shares of a plain pipeline device's: v chunks of 1/v
// (interleaved, ZB-V) are 1x, Chimera's two full stages 2x, PipeDream's stashed versions 4x.
// The bubble is not ranked: it covers the whole run, time/iter the steady state.
TEST(Cli, WeightsAreSharesOfAPlainDevicesAndTheBubbleIsNotRanked) {
  const std::string report = temp_path("weights.html");
  const Result r = run("compare --schedules interleaved,chimera,pipedream,zb-v --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, testing::ContainsRegex("interleaved .* 1x  "));
  EXPECT_THAT(r.out, testing::ContainsRegex("chimera .* 2x  "));
  EXPECT_THAT(r.out, testing::ContainsRegex("pipedream .* 4x  "));
  EXPECT_THAT(r.out, testing::ContainsRegex("zb-v .* 1x  "));
  const std::string html = slurp(report);
  EXPECT_THAT(html, HasSubstr("<td class=\"best\">25.500 ms</td><td class=\"best\">313.7</td><td>5.88 %</td>"));
}

TEST(Cli, CatalogTablesCarryUnits) {
  const Result gpus = run("catalog gpus");
  ASSERT_EQ(gpus.code, 0) << gpus.out;
  EXPECT_THAT(gpus.out, HasSubstr("h100-sxm"));
  EXPECT_THAT(gpus.out, HasSubstr("989.4 TFLOP/s"));
  EXPECT_THAT(gpus.out, HasSubstr("3.35 TB/s"));
  EXPECT_THAT(gpus.out, HasSubstr("80.0 GiB"));
  EXPECT_THAT(gpus.out, testing::Not(HasSubstr("llama2-7b")));
  const Result all = run("catalog");
  ASSERT_EQ(all.code, 0) << all.out;
  for (const char* s : {"models (24)", "gpus (6)", "links (9)", "megatron-gpt-1t", "1.008T", "145.6B", "6.738B",
                        "nvlink4", "450 GB/s", "3.400 us"})
    EXPECT_THAT(all.out, HasSubstr(s));
  // Every GPU has a price, and the table says which are assumptions.
  EXPECT_THAT(gpus.out, testing::ContainsRegex("h100-sxm .* \\$12\\.29/h  list"));
  EXPECT_THAT(gpus.out, testing::ContainsRegex("h200 .* \\$13\\.52/h  assumed"));
  EXPECT_THAT(gpus.out, testing::Not(testing::ContainsRegex(" -  *-\n")));
}

// `catalog --json` prints a catalog file: `catalog --file` reads it back, whole or one kind,
// and prints the same file again.
TEST(Cli, CatalogJsonReadsBackAsACatalogFile) {
  const Result r = run("catalog --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["models"].size(), 24u);
  EXPECT_EQ(j["models"][15]["name"], "llama2-7b");
  const auto& h100 = j["gpus"][2];
  EXPECT_EQ(h100["name"], "h100-sxm");
  EXPECT_EQ(h100["peak_flops"]["bf16"], "989.4TFLOP/s");
  EXPECT_EQ(h100["memory"], "80GiB");
  EXPECT_EQ(h100["price_per_hour"], "12.29USD");
  EXPECT_THAT(h100["price_source"].get<std::string>(), HasSubstr("p5.48xlarge"));
  EXPECT_FALSE(h100.contains("price_assumed"));
  EXPECT_EQ(j["gpus"][3]["price_assumed"], true);  // h200
  EXPECT_EQ(j["links"][1]["latency"], "3.4us");
  EXPECT_THAT(j["links"][1]["source"].get<std::string>(), HasSubstr("NCCL"));
  const std::string file = temp_path("catalog_all.json");
  std::ofstream(file) << r.out;
  const Result back = run("catalog --json --file " + file);
  ASSERT_EQ(back.code, 0) << back.out;
  EXPECT_EQ(back.out, r.out);
  const Result tables = run("catalog --file " + file);
  ASSERT_EQ(tables.code, 0) << tables.out;
  EXPECT_EQ(tables.out, run("catalog").out);
  for (const char* kind : {"models", "gpus", "links"}) {
    const Result one = run(std::string("catalog ") + kind + " --json");
    ASSERT_EQ(one.code, 0) << one.out;
    const auto k = nlohmann::json::parse(one.out);
    EXPECT_EQ(k.size(), 1u) << kind;
    EXPECT_TRUE(k.contains(kind));
    const std::string part = temp_path(std::string("catalog_") + kind + ".json");
    std::ofstream(part) << one.out;
    EXPECT_EQ(run(std::string("catalog ") + kind + " --json --file " + part).out, one.out) << kind;
  }
}

// A user's GPU that names a link of its own file brings the link along.
TEST(Cli, CatalogJsonOfAUserGpuKeepsItsOwnLinks) {
  const std::string file = temp_path("catalog_own_link.json");
  std::ofstream(file) << R"({"gpus": [{"name": "my-gpu", "peak_flops": {"bf16": "500TFLOP/s"}, "hbm_bandwidth": "2TB/s",
      "memory": "96GiB", "intra_node_link": "my-fabric", "inter_node_link": "ib-ndr", "source": "t"}],
      "links": [{"name": "my-fabric", "bandwidth": "200GB/s", "latency": "2us", "source": "t"}]})";
  const Result gpus = run("catalog gpus --json --file " + file);
  ASSERT_EQ(gpus.code, 0) << gpus.out;
  const auto j = nlohmann::json::parse(gpus.out);
  ASSERT_EQ(j["links"].size(), 1u);
  EXPECT_EQ(j["links"][0]["name"], "my-fabric");
  const std::string back = temp_path("catalog_own_link_back.json");
  std::ofstream(back) << gpus.out;
  EXPECT_EQ(run("catalog gpus --file " + back).code, 0);
}

TEST(Cli, CatalogShowsAndValidatesAUserFile) {
  const std::string good = temp_path("catalog_good.json");
  std::ofstream(good) << R"({"models": [{"name": "tiny", "layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256,
                             "seq_len": 128, "vocab": 1000, "source": "test"}]})";
  const Result r = run("catalog models --file " + good);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("tiny"));
  EXPECT_THAT(r.out, testing::Not(HasSubstr("gpt3-175b")));
  const std::string bad = temp_path("catalog_bad.json");
  std::ofstream(bad) << R"({"links": [{"name": "l", "bandwidth": "50", "latency": "1us", "source": "t"}]})";
  expect_one_line_error(run("catalog --file " + bad), bad + ": /links/0/bandwidth: expected a bandwidth");
  EXPECT_EQ(run("catalog chips").code, 2);
}

TEST(Cli, HelpAndVersionExitZero) {
  EXPECT_EQ(run("--help").code, 0);
  EXPECT_EQ(run("--version").code, 0);
  EXPECT_EQ(run("").code, 2);
}

// tools/allocator.cpp: where the build links jemalloc, the executable runs on it with
// transparent huge pages, and MALLOC_CONF in the environment still overrides that.
TEST(Cli, VersionNamesTheAllocator) {
  const Result r = run("--version");
  ASSERT_EQ(r.code, 0) << r.out;
  if (!PIPESIM_JEMALLOC_BUILT) {
    EXPECT_THAT(r.out, HasSubstr("malloc  C library malloc"));
    return;
  }
  EXPECT_THAT(r.out, HasSubstr("malloc  jemalloc 5."));
  EXPECT_THAT(r.out, HasSubstr("transparent huge pages: always, freed memory kept for reuse"));
  const Result off = run_shell("MALLOC_CONF=thp:never,dirty_decay_ms:10000 " + std::string(PIPESIM_CLI) + " --version");
  ASSERT_EQ(off.code, 0) << off.out;
  EXPECT_THAT(off.out, HasSubstr("transparent huge pages: never, freed memory returned to the system within 10000 ms"));
}

TEST(Cli, SimulateAndCompareWriteHtmlReports) {
  // Pages are long: report only the missing piece, not the whole page.
  auto expect_in = [](const std::string& page, const std::string& piece) {
    EXPECT_NE(page.find(piece), std::string::npos) << "missing: " << piece;
  };
  const std::string sim = temp_path("report_simulate.html");
  const Result r = run("simulate --schedule 1f1b -p 4 -m 8 --activation-bytes 64MiB --report " + sim);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("report written to " + sim));
  const std::string page = slurp(sim);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* piece : {"<title>pipesim report: 1f1b</title>", "p=4 &middot; m=8", "activation bytes=64MiB",
                            "<h2>1f1b</h2>", "Generated by pipesim "})
    expect_in(page, piece);

  const std::string cmp = temp_path("report_compare.html");
  const Result c = run("compare --schedules gpipe,zb-h1 --activation-bytes 64MiB --report-capacity 300MiB --json "
                       "--report " + cmp);
  ASSERT_EQ(c.code, 0) << c.out;
  EXPECT_EQ(nlohmann::json::parse(c.out)["schedules"].size(), 2u);  // stdout stays pure JSON
  const std::string both = slurp(cmp);
  for (const char* piece : {"<section id=\"summary\">", "<h2>gpipe</h2>", "<h2>zb-h1</h2>",
                            ">capacity 300.0 MiB</text>",
                            "exceeds the capacity on devices 0, 1, 2, 3."})  // gpipe holds up to 8 x 64 MiB
    expect_in(both, piece);
  std::remove(sim.c_str());
  std::remove(cmp.c_str());
}

TEST(Cli, ReportFlagErrorsAreOneLine) {
  expect_one_line_error(run("simulate --report x.html --report-capacity lots"),
                        "--report-capacity: expected a size with a unit such as 512B, 64MiB, 1.5GB; got 'lots'");
  expect_one_line_error(run("compare --report-capacity 80GiB"), "--report-capacity requires --report");
  expect_one_line_error(run("simulate --report /nonexistent-dir/report.html"),
                        "cannot write '/nonexistent-dir/report.html': ");
}

}  // namespace

namespace pipesim {
namespace {

using testing_cli::run;

// What-if contention (docs/shared-hardware.md): four devices on one core do their 96 ms of
// work one after another, time-sliced or queued, and interference lengthens the ops.
TEST(Cli, SharedCoresAndInterferenceSlowTheRunAsTheirClosedForms) {
  auto makespan = [](const std::string& flags) {
    const testing_cli::Result r = run("simulate --schedule 1f1b -p 4 -m 8 --fwd 1ms --bwd 2ms --json " + flags);
    EXPECT_EQ(r.code, 0) << r.out;
    return nlohmann::json::parse(r.out)["makespan_s"].get<double>();
  };
  EXPECT_DOUBLE_EQ(makespan(""), 0.033);  // (m + p - 1)(tF + tB)
  EXPECT_DOUBLE_EQ(makespan("--share-cores 1"), 0.096);  // p m (tF + tB): the core never idles
  EXPECT_DOUBLE_EQ(makespan("--share-cores 1 --core-sharing queue"), 0.096);
  EXPECT_DOUBLE_EQ(makespan("--share-cores 4"), 0.033);  // a core each: as without
  // One device alone never has a busy neighbour: a curve changes nothing for p = 1.
  const testing_cli::Result alone = run("simulate --schedule 1f1b -p 1 -m 8 --fwd 1ms --bwd 2ms --json --interference 1,2");
  ASSERT_EQ(alone.code, 0) << alone.out;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(alone.out)["makespan_s"].get<double>(), 0.024);
  EXPECT_GT(makespan("--interference 1,1.5"), 0.033);
  // Where the time goes: each device's own work is its cost model's (8 F + 8 B), what the
  // shared core added is contention, and the categories still add up to the iteration.
  const testing_cli::Result shared = run("simulate --schedule 1f1b -p 4 -m 8 --fwd 1ms --bwd 2ms --json --share-cores 1");
  ASSERT_EQ(shared.code, 0) << shared.out;
  const nlohmann::json with = nlohmann::json::parse(shared.out);  // kept: the loop reads into it
  for (const auto& d : with["time_breakdown"]["per_device"]) {
    const auto& t = d["window_ns"];
    EXPECT_EQ(t["forward"], 8'000'000);
    EXPECT_EQ(t["backward"], 16'000'000);
    EXPECT_GT(t["contention"].get<long long>(), 0);
    long long sum = 0;
    for (const auto& [key, ns] : t.items()) sum += ns.get<long long>();
    EXPECT_EQ(sum, 96'000'000);
  }
  const testing_cli::Result unshared = run("simulate --schedule 1f1b -p 4 -m 8 --fwd 1ms --bwd 2ms --json");
  const nlohmann::json without = nlohmann::json::parse(unshared.out);
  for (const auto& d : without["time_breakdown"]["per_device"])
    EXPECT_EQ(d["window_ns"]["contention"], 0);
  // Both say what was shared; nothing is said when nothing is.
  const testing_cli::Result text = run("simulate --schedule 1f1b -p 4 --share-cores 2 --core-sharing queue");
  EXPECT_THAT(text.out, testing::HasSubstr("\nshared        the devices share 2 cores (queued)\n"));
  EXPECT_THAT(run("simulate --schedule 1f1b -p 4").out, testing::Not(testing::HasSubstr("shared")));
  const testing_cli::Result j = run("compare --schedules 1f1b,amdp -p 4 --json --overlap-slowdown 1.5");
  ASSERT_EQ(j.code, 0) << j.out;
  EXPECT_EQ(nlohmann::json::parse(j.out)["shared_hardware"], "compute beside communication x1.50");
}

}  // namespace
}  // namespace pipesim
