// `pipesim validate` end to end on the CPU: profile gpt-tiny, simulate with the profiled
// cost model, run for real, compare. The seed schedules at the smallest sizes that fit a
// 2-core machine. Asserted: weight versions equal op by op (exact), the time per
// iteration within a loose factor (a loaded machine delays thread wake-ups, which no
// profile of single ops sees), the outputs' shape. The errors themselves are reported in
// docs/validation/cpu.md, not asserted here: the runs that expect exit code 0 pass
// --tolerance 400 (the factor-4 check's own bound), since the default verdict (5 %) on a
// loaded 2-core CI machine would fail at random; the verdict itself is tested with a
// tolerance no real run meets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace pipesim {
namespace {

using nlohmann::json;
using testing::HasSubstr;
using testing_cli::Result;
using testing_cli::run;
using testing_cli::slurp;
using testing_cli::temp_path;

// Output of --json (a warning on stderr, e.g. more devices than cores, may come first, and
// the verdict's line after it).
json json_of(const Result& r) {
  const auto at = r.out.find('{');
  const auto end = r.out.rfind("\n}");
  if (at == std::string::npos || end == std::string::npos) return json();
  return json::parse(r.out.substr(at, end + 2 - at));
}

// A quick gpt-tiny profile (2 repeats, no interference curve) named `name` in the temp
// directory, for the tests that give validate --cost; "" if profiling failed.
std::string quick_tiny_profile(const std::string& name) {
  const std::string path = temp_path(name);
  return run("profile --model gpt-tiny --micro-batch-sizes 1 --repeats 2 --neighbours 0 --out " + path).code == 0 ? path : "";
}

// `devices` device threads on this machine's cores: the engine does not model cores shared
// by several devices yet (issue #14), so with more devices than cores a measured run is
// that much slower than its prediction on top of any scale error.
double oversubscription(int devices) {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1.0 : std::max(1.0, static_cast<double>(devices) / cores);
}

void expect_valid(const json& v, const std::string& schedule, int devices) {
  SCOPED_TRACE(schedule);
  EXPECT_EQ(v["schedule"], schedule);
  EXPECT_EQ(v["versions_match"], true) << v["version_mismatches"].dump();
  EXPECT_GT(v["versions_compared"].get<int>(), 0);
  EXPECT_EQ(v["unmatched_ops"], 0);
  // Predicted and measured within a factor of 4 of each other (times the cores' sharing):
  // catches unit and scale errors (a block counted per stage instead of per layer, ms for
  // us) on any machine.
  const double error = v["time_per_iteration_error"].get<double>();
  EXPECT_GT(error, 1.0 / (4.0 * oversubscription(devices)) - 1.0) << "predicted " << v["predicted"]["time_per_iteration_s"] << " s, measured "
                          << v["measured"]["time_per_iteration_s"] << " s";
  EXPECT_LT(error, 3.0);
  EXPECT_GT(v["predicted"]["time_per_iteration_s"].get<double>(), 0);
  EXPECT_GT(v["measured"]["time_per_iteration_s"].get<double>(), 0);
  // The same activations are held: the profile measured the kernels' caches.
  const double pred = v["peak_activation_bytes"]["predicted"].get<double>();
  const double meas = v["peak_activation_bytes"]["measured"].get<double>();
  EXPECT_NEAR(pred / meas, 1.0, 0.05);
  ASSERT_FALSE(v["per_kind"].empty());
  for (const json& k : v["per_kind"]) EXPECT_GT(k["ops"].get<int>(), 0);
  // The error split (tools/validate_replay.hpp): its two parts add up to the error.
  const json& replay = v["replay"];
  EXPECT_GT(replay["time_per_iteration_s"].get<double>(), 0);
  EXPECT_NEAR(replay["simulator_part"].get<double>() + replay["cost_model_part"].get<double>(), error, 1e-9);
  EXPECT_NEAR(replay["cost_model_ops_part"].get<double>() + replay["cost_model_comm_part"].get<double>(),
              replay["cost_model_part"].get<double>(), 1e-9);
  EXPECT_GE(replay["hand_offs"].get<int>(), 0);
  EXPECT_GE(replay["hand_off_median_s"].get<double>(), 0);
  EXPECT_GE(replay["hand_off_mean_s"].get<double>(), 0);
}

TEST(ValidateCli, SeedSchedulesOnTwoDevices) {
  const Result r = run("validate --schedules 1f1b,chimera,amp -p 2 -m 4 --iterations 2 --model gpt-tiny "
                       "--repeats 3 --tolerance 400 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const json j = json_of(r);
  ASSERT_EQ(j["schedules"].size(), 3u);
  expect_valid(j["schedules"][0], "1f1b", 2);
  expect_valid(j["schedules"][1], "chimera", 2);
  expect_valid(j["schedules"][2], "amp", 2);
  // A profile per footprint: 1F1B's and AMP's devices hold 4 of gpt-tiny's 8 blocks,
  // Chimera's 8 (a stage of each pipeline), each timed within its own.
  for (int i : {0, 1, 2}) {
    const json& fp = j["schedules"][i]["footprint"];
    EXPECT_EQ(fp["device_blocks"], i == 1 ? 8 : 4);
    EXPECT_EQ(fp["profiled_within"], fp["device_blocks"]);
    EXPECT_THAT(j["schedules"][i]["cost_model"].get<std::string>(),
                HasSubstr("profiled now, the block within " + fp["device_blocks"].dump() + " blocks"));
  }
}

// AMDP needs p to be a multiple of 4: four device threads on however many cores.
TEST(ValidateCli, AmdpOnFourDevices) {
  const Result r = run("validate --schedule amdp -p 4 -m 4 --iterations 2 --model gpt-tiny --repeats 3 --tolerance 400 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  expect_valid(json_of(r), "amdp", 4);
}

TEST(ValidateCli, TablesTraceAndReport) {
  const std::string trace = temp_path("validate.trace.json");
  const std::string report = temp_path("validate.html");
  const Result r = run("validate --schedule pipedream -p 2 -m 2 --iterations 3 --model gpt-tiny --repeats 2 --tolerance 400 --trace " +
                       trace + " --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("time/iter predicted"));
  EXPECT_THAT(r.out, HasSubstr("match ("));
  EXPECT_THAT(r.out, HasSubstr("|error| median"));
  EXPECT_THAT(r.out, HasSubstr("machine load "));
  EXPECT_THAT(r.out, HasSubstr("intervals: 200 simulations"));  // validate's default --samples
  EXPECT_THAT(r.out, HasSubstr("measured inside the predicted [p5, p95]: "));
  EXPECT_THAT(r.out, HasSubstr("error split (the simulator replayed on each run's own op times and hand-offs"));
  EXPECT_THAT(r.out, HasSubstr("simulator's part  cost model's part  op times  links, collectives  hand-offs seen"));
  EXPECT_THAT(r.out, HasSubstr("verdict: PASS (time per iteration within 400.00 %: 1 of 1)"));
  const json t = json::parse(slurp(trace));
  std::set<std::string> processes;
  for (const json& e : t["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
  EXPECT_EQ(processes, (std::set<std::string>{"predicted: device 0", "predicted: device 1", "measured: device 0",
                                              "measured: device 1"}));
  const std::string html = slurp(report);
  EXPECT_THAT(html, HasSubstr("pipedream: predicted against measured"));
  EXPECT_THAT(html, HasSubstr("pipedream (predicted)"));
  EXPECT_THAT(html, HasSubstr("pipedream (measured)"));
  EXPECT_THAT(html, HasSubstr("Weight versions: all"));
  EXPECT_THAT(html, HasSubstr("<h2>Prediction intervals</h2>"));
  EXPECT_THAT(html, HasSubstr("pipedream: replayed on the run&#39;s own op times and hand-offs"));
  EXPECT_THAT(html, HasSubstr("(op times "));
}

TEST(ValidateCli, AProfileFileReplacesProfiling) {
  const std::string profile = temp_path("validate_profile.json");
  ASSERT_EQ(run("profile --backend cpu --model gpt-tiny --micro-batch-sizes 1,2 --repeats 2 --out " + profile).code, 0);
  const Result r = run("validate --schedule 1f1b -p 2 -m 2 --model gpt-tiny --tolerance 400 --cost " + profile + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const json j = json_of(r);
  EXPECT_THAT(j["cost_model"].get<std::string>(), HasSubstr("from " + profile));
  EXPECT_EQ(j["verdict"], "PASS");
  EXPECT_EQ(j["overall_verdict"], "PASS");
  EXPECT_DOUBLE_EQ(j["tolerance"].get<double>(), 4.0);
  const json& t = j["prediction_interval"]["time_per_iteration_s"];
  EXPECT_EQ(j["prediction_interval"]["samples"], 200);
  EXPECT_LE(t["p5"].get<double>(), t["p50"].get<double>());
  EXPECT_LE(t["p50"].get<double>(), t["p95"].get<double>());
  const double measured = j["measured"]["time_per_iteration_s"].get<double>();
  EXPECT_EQ(j["inside_interval"].get<bool>(), measured >= t["p5"].get<double>() && measured <= t["p95"].get<double>());
  EXPECT_EQ(j["coverage"].get<double>(), j["inside_interval"].get<bool>() ? 1.0 : 0.0);
  EXPECT_GT(j["machine_load"]["cores"].get<int>(), 0);
  EXPECT_GE(j["machine_load"]["before"].get<double>(), 0.0);
  EXPECT_GE(j["profile_repeat_spread"].get<double>(), 0.0);
}

// A tolerance no real run meets (0.01 %): the verdict FAIL, exit code 1 after every output,
// the spread warning first (the profile's repeats spread more than that), each schedule's
// interval and the coverage over both.
TEST(ValidateCli, AVerdictBeyondTheToleranceFailsWithExitCode1) {
  const Result r = run("validate --schedules 1f1b,gpipe -p 2 -m 2 --model gpt-tiny --repeats 3 --samples 50 "
                       "--tolerance 0.01 --json");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pipesim: warning: the profile's repeats spread "));
  EXPECT_THAT(r.out, HasSubstr("pipesim: time per iteration off by more than --tolerance 0.01 %: "));
  EXPECT_LT(r.out.find("pipesim: warning: the profile"), r.out.find("pipesim: time per iteration off"));
  const json j = json_of(r);
  ASSERT_EQ(j["schedules"].size(), 2u);
  EXPECT_EQ(j["overall_verdict"], "FAIL");
  int inside = 0;
  for (const json& v : j["schedules"]) {
    EXPECT_EQ(v["prediction_interval"]["samples"], 50);
    inside += v["inside_interval"].get<bool>();
  }
  EXPECT_DOUBLE_EQ(j["coverage"].get<double>(), inside / 2.0);
}

// validate runs --warmup-iterations more iterations first (default 2) and measures the time
// per iteration over the --iterations after them, on both sides; a schedule file's first
// iterations are its warm-up.
TEST(ValidateCli, WarmupIterationsRunFirstAndAreNotCounted) {
  const std::string profile = quick_tiny_profile("validate_warmup_profile.json");
  ASSERT_FALSE(profile.empty());
  const std::string common = " --model gpt-tiny --samples 20 --tolerance 400 --json --cost " + profile;
  struct Case {
    std::string flags;
    int warmup, measured, run;
  };
  for (const Case& c : {Case{"--iterations 2", 2, 2, 4}, Case{"--iterations 2 --warmup-iterations 0", 0, 1, 2},
                        Case{"--iterations 1 --warmup-iterations 3", 3, 1, 4}}) {
    SCOPED_TRACE(c.flags);
    const Result r = run("validate --schedule 1f1b -p 2 -m 2 " + c.flags + common);
    ASSERT_EQ(r.code, 0) << r.out;
    const json j = json_of(r);
    EXPECT_EQ(j["warmup_iterations"], c.warmup);
    EXPECT_EQ(j["measured_iterations"], c.measured);
    EXPECT_EQ(j["predicted"]["iterations"], c.run);
    EXPECT_EQ(j["measured"]["iterations"], c.run);
  }
  const Result table = run("validate --schedule 1f1b -p 2 -m 2 --iterations 2 --model gpt-tiny --samples 20 "
                           "--tolerance 400 --cost " + profile);
  ASSERT_EQ(table.code, 0) << table.out;
  EXPECT_THAT(table.out, HasSubstr("time per iteration: the last 2 of 4 iterations (2 warm-up not counted, "
                                   "predicted or measured)"));

  const std::string two = temp_path("validate_warmup_two.json"), one = temp_path("validate_warmup_one.json");
  ASSERT_EQ(run("schedule --schedule 1f1b -p 2 -m 2 --iterations 2 --format json -o " + two).code, 0);
  ASSERT_EQ(run("schedule --schedule 1f1b -p 2 -m 2 --iterations 1 --format json -o " + one).code, 0);
  const Result from_two = run("validate --schedule-file " + two + common);
  ASSERT_EQ(from_two.code, 0) << from_two.out;
  EXPECT_EQ(json_of(from_two)["warmup_iterations"], 1);
  EXPECT_EQ(json_of(from_two)["measured_iterations"], 1);
  EXPECT_EQ(json_of(from_two)["measured"]["iterations"], 2);
  const Result from_one = run("validate --schedule-file " + one + common);  // nothing left to warm up with
  ASSERT_EQ(from_one.code, 0) << from_one.out;
  EXPECT_EQ(json_of(from_one)["warmup_iterations"], 0);
  EXPECT_EQ(json_of(from_one)["measured_iterations"], 1);
  testing_cli::expect_one_line_error(run("validate --schedule-file " + two + " --warmup-iterations 2" + common),
                                     "--warmup-iterations: 2 warm-up iterations leave none of the schedule file's 2 "
                                     "to measure; expected at most 1");
}

// Each core's block-pass speed is measured before the runs (kernels/core_speeds.hpp) and the
// device threads pinned; --core-speeds off measures nothing.
TEST(ValidateCli, CoreSpeedsAreMeasuredOrOff) {
  const std::string profile = quick_tiny_profile("validate_speeds_profile.json");
  ASSERT_FALSE(profile.empty());
  const std::string common = "validate --schedule 1f1b -p 2 -m 2 --model gpt-tiny --samples 20 --tolerance 400 --cost " + profile;
  const Result measured = run(common + " --json");
  ASSERT_EQ(measured.code, 0) << measured.out;
  const json speeds = json_of(measured)["core_speeds"];
  ASSERT_GE(speeds.size(), 1u);  // every core this process may use
  // Probed again after the run: the schedule's before, after, drift, and what the prediction
  // took, each core halfway between its two probes.
  const json probes = json_of(measured)["speed_probes"];
  EXPECT_EQ(probes["before"], speeds);
  ASSERT_EQ(probes["after"].size(), speeds.size());
  EXPECT_GE(probes["drift"].get<double>(), 0);
  ASSERT_EQ(probes["applied"].size(), speeds.size());
  for (std::size_t c = 0; c < speeds.size(); ++c) {
    ASSERT_EQ(probes["after"][c]["core"], speeds[c]["core"]);
    EXPECT_NEAR(probes["applied"][c].get<double>(),
                (speeds[c]["slowdown"].get<double>() + probes["after"][c]["slowdown"].get<double>()) / 2, 1e-12);
  }
  for (const json& c : speeds) {
    EXPECT_GE(c["core"].get<int>(), 0);
    EXPECT_GT(c["slowdown"].get<double>(), 0.1);  // a factor, not a time
    EXPECT_LT(c["slowdown"].get<double>(), 10.0);
  }
  if (speeds.size() >= 2) {
    EXPECT_TRUE(json_of(measured)["core_use"].is_null());  // a core per device: nothing shared
  }
  const Result table = run(common);
  ASSERT_EQ(table.code, 0) << table.out;
  EXPECT_THAT(table.out, HasSubstr("core speeds: a block pass takes x"));
  const Result off = run(common + " --core-speeds off --json");
  ASSERT_EQ(off.code, 0) << off.out;
  EXPECT_TRUE(json_of(off)["core_speeds"].empty());
  EXPECT_TRUE(json_of(off)["speed_probes"]["after"].empty());
  EXPECT_EQ(json_of(off)["speed_probes"]["drift"].get<double>(), 0);
  EXPECT_TRUE(json_of(off)["speed_probes"]["applied"].empty());

  // A profile whose block passes took 100x what they take now is not of this machine now:
  // a warning, no factor applied, and the run goes on.
  json slow = json::parse(slurp(profile));
  for (json& mb : slow["micro_batches"])
    for (const char* pass : {"forward", "input_grad", "weight_grad"}) {
      json& t = mb["block"][pass];
      for (const char* key : {"median_s", "p10_s", "p90_s", "min_s", "max_s", "mean_s"}) t[key] = t[key].get<double>() * 100;
      for (json& q : t["quantiles_s"]) q = q.get<double>() * 100;
    }
  const std::string slow_profile = temp_path("validate_speeds_slow_profile.json");
  std::ofstream(slow_profile) << slow.dump(2);
  const Result beyond = run("validate --schedule 1f1b -p 2 -m 2 --model gpt-tiny --samples 20 --tolerance 100000 --json --cost " +
                            slow_profile);
  ASSERT_EQ(beyond.code, 0) << beyond.out;
  EXPECT_THAT(beyond.out, HasSubstr("the profile does not describe this machine now"));
  EXPECT_TRUE(json_of(beyond)["core_speeds"].empty());
}

// More device threads than cores: how much of the cores' time ops filled, predicted and
// measured (tools/validate_core_use.hpp), in the JSON and the table.
TEST(ValidateCli, CoreUseWhereDevicesOutnumberCores) {
  const std::string profile = quick_tiny_profile("validate_core_use_profile.json");
  ASSERT_FALSE(profile.empty());
  const std::string common = "validate --schedule amdp -p 4 -m 4 --model gpt-tiny --samples 20 --tolerance 400 --cost " + profile;
  const Result measured = run(common + " --json");
  ASSERT_EQ(measured.code, 0) << measured.out;
  const json use = json_of(measured)["core_use"];
  const int cores = static_cast<int>(json_of(measured)["core_speeds"].size());  // one per core it may use
  ASSERT_GE(cores, 1);
  if (cores >= 4) {
    EXPECT_TRUE(use.is_null());
    return;
  }
  ASSERT_TRUE(use.is_object()) << measured.out;
  EXPECT_EQ(use["cores"], cores);
  for (const char* way : {"predicted", "measured"}) {
    EXPECT_GT(use[way].get<double>(), 0) << way;
    EXPECT_LE(use[way].get<double>(), 1) << way;
  }
  // The shared-core turns: the profile's, and the prediction's (none below 1). The profile's is
  // the ratio of the turns' mean to the alone turns' mean: below 1, even below the 0.5 a
  // profile's median slowdown may be, when other load cut into the alone turns (0.42 seen
  // for OPT while the machine compiled).
  for (const char* kind : {"F", "B", "OPT"}) {
    EXPECT_GT(use["profile_turn_slowdown"][kind].get<double>(), 0) << kind;
    EXPECT_GE(use["turn_slowdown"][kind].get<double>(), 1) << kind;
  }
  EXPECT_GE(use["thread_cpu_outside_ops"].get<double>(), 0);  // the threads' work besides their ops
  EXPECT_LT(use["thread_cpu_outside_ops"].get<double>(), 1);
  EXPECT_GT(use["thread_cpu_grad_sync_copies"].get<double>(), 0);  // AMDP's GradSync copies
  EXPECT_LT(use["thread_cpu_grad_sync_copies"].get<double>(), 1);
  // The ops' CPU time over the run: the simulated cores' work, and the threads' clocks in their ops (at
  // most the cores' time over the measured run).
  const json ops_cpu = use["ops_cpu_s"];
  ASSERT_TRUE(ops_cpu.is_object()) << measured.out;
  EXPECT_GT(ops_cpu["predicted"].get<double>(), 0);
  EXPECT_LE(ops_cpu["predicted"].get<double>(),
            cores * json_of(measured)["predicted"]["makespan_s"].get<double>() * (1 + 1e-9));
  EXPECT_GT(ops_cpu["measured"].get<double>(), 0);
  EXPECT_LE(ops_cpu["measured"].get<double>(),
            cores * json_of(measured)["measured"]["makespan_s"].get<double>() * 1.05);
  // All the threads' CPU time: their ops' and the rest (each thread's clock read at its first op's start and its
  // last op's end, the ops' at each op's; a little slack for the clocks' resolution).
  EXPECT_GE(ops_cpu["threads_measured"].get<double>(), 0.99 * ops_cpu["measured"].get<double>());
  // Each member's copies, the profile's (its gradient_copies) and the run's.
  const auto copies = json_of(measured)["replay"]["grad_sync_copies"];
  ASSERT_TRUE(copies.is_object()) << measured.out;
  EXPECT_GT(copies["members"].get<int>(), 0);
  EXPECT_GT(copies["predicted_s"].get<double>(), 0);
  EXPECT_GT(copies["measured_s"].get<double>(), 0);
  const std::string report = temp_path("validate_core_use.html");
  const Result table = run(common + " --report " + report);
  ASSERT_EQ(table.code, 0) << table.out;
  const std::string line = "amdp: core use (4 device threads on " + std::to_string(cores) + " cores)";
  EXPECT_THAT(table.out, HasSubstr(line));
  EXPECT_THAT(table.out, HasSubstr("an op taking turns on the cores: F x"));
  EXPECT_THAT(slurp(report), HasSubstr(line));  // and on the page, beside the error table
}

// --runs N: each schedule run N times, each against its prediction; a trace per run, a line
// per schedule with the runs' spread, and every run counted in the verdict.
TEST(ValidateCli, RunsRepeatEachSchedule) {
  const std::string profile = quick_tiny_profile("validate_runs_profile.json");
  ASSERT_FALSE(profile.empty());
  const std::string dir = temp_path("validate_runs_traces");
  std::filesystem::remove_all(dir);
  const std::string common = "validate --schedule 1f1b -p 2 -m 2 --iterations 1 --warmup-iterations 1 --model gpt-tiny "
                             "--cost " + profile + " --samples 20 --tolerance 400 --runs 2";
  const Result text = run(common + " --trace-dir " + dir);
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_THAT(text.out, HasSubstr("1f1b #1 "));
  EXPECT_THAT(text.out, HasSubstr("1f1b #2 "));
  EXPECT_THAT(text.out, HasSubstr("runs:\n1f1b: 2 runs measured "));
  EXPECT_THAT(text.out, HasSubstr("within 400.00 %: 2 of 2"));
  EXPECT_THAT(text.out, HasSubstr("verdict: PASS (time per iteration within 400.00 %: 2 of 2)"));
  for (const char* name : {"1f1b.run1.validate.trace.json", "1f1b.run2.validate.trace.json"})
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / name)) << name;
  const Result r = run(common + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const json j = json_of(r);
  ASSERT_EQ(j["schedules"].size(), 2u);
  for (int k = 0; k < 2; ++k) {
    expect_valid(j["schedules"][k], "1f1b", 2);
    EXPECT_EQ(j["schedules"][k]["run"], k + 1);
  }
  ASSERT_EQ(j["runs"].size(), 1u);
  const json& runs = j["runs"][0];
  EXPECT_EQ(runs["schedule"], "1f1b");
  EXPECT_EQ(runs["runs"], 2);
  ASSERT_EQ(runs["measured_time_per_iteration_s"].size(), 2u);
  const double a = runs["measured_time_per_iteration_s"][0], b = runs["measured_time_per_iteration_s"][1];
  EXPECT_NEAR(runs["spread"].get<double>(), std::abs(a - b) / ((a + b) / 2), 1e-9);
  EXPECT_EQ(runs["within_tolerance"], 2);
}

// --calibration: nine past runs of this group whose measurements fell 1 .. 9 % of p50
// outside their intervals (and one of another group, not used) widen each interval by the
// largest, 9 %: [p5 - 0.09 p50, p95 + 0.09 p50], in the JSON, the table and the report.
TEST(ValidateCli, CalibrationWidensTheIntervalByItsGroupsPastMisses) {
  namespace fs = std::filesystem;
  const fs::path past = temp_path("calibration_past");
  fs::create_directories(past);
  json runs = json::array();
  for (int i = 1; i <= 9; ++i)
    runs.push_back({{"schedule", "1f1b"}, {"backend", "cpu"}, {"model", "gpt-tiny"}, {"time_per_iteration_error", 0},
                    {"prediction_interval", {{"time_per_iteration_s", {{"p5", 0.9}, {"p50", 1.0}, {"p95", 1.1}}}}},
                    {"core_use", nullptr}, {"measured", {{"time_per_iteration_s", 1.1 + i / 100.0}}}});
  std::ofstream(past / "tiny.json") << json{{"schedules", runs}}.dump();
  json other = runs[0];
  other["model"] = "gpt-small";
  other["measured"]["time_per_iteration_s"] = 3.0;
  std::ofstream(past / "small.json") << other.dump();
  const std::string report = temp_path("calibrated.html");
  const Result r = run("validate --schedule 1f1b -p 2 -m 2 --iterations 2 --model gpt-tiny --repeats 2 --samples 20 "
                       "--tolerance 400 --json --calibration " + past.string() + " --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  const json j = json_of(r);
  EXPECT_EQ(j["calibration"]["runs"], 10);
  EXPECT_EQ(j["calibration"]["files"], 2);
  const json& c = j["calibrated_interval"];
  EXPECT_EQ(c["group"], "cpu gpt-tiny");
  EXPECT_EQ(c["calibration_runs"], 9);
  EXPECT_NEAR(c["widening"].get<double>(), 0.09, 1e-12);
  const json& t = j["prediction_interval"]["time_per_iteration_s"];
  const double p50 = t["p50"].get<double>();
  EXPECT_NEAR(c["time_per_iteration_s"]["p5"].get<double>(), t["p5"].get<double>() - 0.09 * p50, 1e-12);
  EXPECT_NEAR(c["time_per_iteration_s"]["p95"].get<double>(), t["p95"].get<double>() + 0.09 * p50, 1e-12);
  const double measured = j["measured"]["time_per_iteration_s"].get<double>();
  EXPECT_EQ(c["inside"].get<bool>(), measured >= c["time_per_iteration_s"]["p5"].get<double>() &&
                                         measured <= c["time_per_iteration_s"]["p95"].get<double>());
  EXPECT_EQ(j["calibrated_coverage"].get<double>(), c["inside"].get<bool>() ? 1.0 : 0.0);
  EXPECT_THAT(slurp(report), HasSubstr("<th>calibrated p5 .. p95</th>"));
}

TEST(ValidateCli, BadInput) {
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --backend tpu"),
                                     "--backend: expected cpu or cuda, got 'tpu'");
  testing_cli::expect_one_line_error(run("validate --schedules 1f1b,1f1b -p 2 -m 2"), "'1f1b' is listed twice");
  testing_cli::expect_one_line_error(run("validate --schedules 1f1b -p 2 -m 2 --trace x.json"),
                                     "--trace: with --schedules, use --trace-dir");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --trace-dir d"),
                                     "--trace-dir: needs --schedules or --runs (one schedule, one run: --trace)");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --runs 101"),
                                     "--runs: expected 1 to 100 runs per schedule, got 101");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --runs 2 --trace x.json"),
                                     "--trace: with --runs, use --trace-dir (a trace per run)");
  testing_cli::expect_one_line_error(run("validate --schedules 1f1b --schedule-file x.csv"),
                                     "--schedules: not with --schedule-file");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --cost /nonexistent/p.json"),
                                     "/nonexistent/p.json");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 16 -m 2 --model gpt-tiny"), "16 stages");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --tolerance 0"),
                                     "--tolerance: expected a percentage above 0, got 0.00");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --samples 0"),
                                     "--samples: expected a number of simulations in 1..100000, got 0");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --samples 100001"),
                                     "--samples: expected a number of simulations in 1..100000, got 100001");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --core-speeds fast"),
                                     "--core-speeds: fast not in {measure,off}");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --warmup-iterations -1"),
                                     "--warmup-iterations: expected 0 to 1000, got -1");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --warmup-iterations 1001"),
                                     "--warmup-iterations: expected 0 to 1000, got 1001");
}

}  // namespace
}  // namespace pipesim
