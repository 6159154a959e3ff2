// `pipesim validate` end to end on the CPU: profile gpt-tiny, simulate with the profiled
// cost model, run for real, compare. The seed schedules at the smallest sizes that fit a
// 2-core machine. Asserted: weight versions equal op by op (exact), the time per
// iteration within a loose factor (a loaded machine delays thread wake-ups, which no
// profile of single ops sees), the outputs' shape. The errors themselves are reported in
// docs/validation/cpu.md, not asserted here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

// Output of --json (a warning on stderr, e.g. more devices than cores, may come first).
json json_of(const Result& r) {
  const auto at = r.out.find('{');
  if (at == std::string::npos) return json();
  return json::parse(r.out.substr(at));
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
}

TEST(ValidateCli, SeedSchedulesOnTwoDevices) {
  const Result r = run("validate --schedules 1f1b,chimera,amp -p 2 -m 4 --iterations 2 --model gpt-tiny "
                       "--repeats 3 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const json j = json_of(r);
  ASSERT_EQ(j["schedules"].size(), 3u);
  expect_valid(j["schedules"][0], "1f1b", 2);
  expect_valid(j["schedules"][1], "chimera", 2);
  expect_valid(j["schedules"][2], "amp", 2);
}

// AMDP needs p to be a multiple of 4: four device threads on however many cores.
TEST(ValidateCli, AmdpOnFourDevices) {
  const Result r = run("validate --schedule amdp -p 4 -m 4 --iterations 2 --model gpt-tiny --repeats 3 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  expect_valid(json_of(r), "amdp", 4);
}

TEST(ValidateCli, TablesTraceAndReport) {
  const std::string trace = temp_path("validate.trace.json");
  const std::string report = temp_path("validate.html");
  const Result r = run("validate --schedule pipedream -p 2 -m 2 --iterations 3 --model gpt-tiny --repeats 2 --trace " +
                       trace + " --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("time/iter predicted"));
  EXPECT_THAT(r.out, HasSubstr("match ("));
  EXPECT_THAT(r.out, HasSubstr("|error| median"));
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
}

TEST(ValidateCli, AProfileFileReplacesProfiling) {
  const std::string profile = temp_path("validate_profile.json");
  ASSERT_EQ(run("profile --backend cpu --model gpt-tiny --micro-batch-sizes 1,2 --repeats 2 --out " + profile).code, 0);
  const Result r = run("validate --schedule 1f1b -p 2 -m 2 --model gpt-tiny --cost " + profile + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(json_of(r)["cost_model"].get<std::string>(), HasSubstr("from " + profile));
}

TEST(ValidateCli, BadInput) {
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --backend tpu"),
                                     "--backend: expected cpu or cuda, got 'tpu'");
  testing_cli::expect_one_line_error(run("validate --schedules 1f1b,1f1b -p 2 -m 2"), "'1f1b' is listed twice");
  testing_cli::expect_one_line_error(run("validate --schedules 1f1b -p 2 -m 2 --trace x.json"),
                                     "--trace: with --schedules, use --trace-dir");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --trace-dir d"),
                                     "--trace-dir: needs --schedules (one schedule: --trace)");
  testing_cli::expect_one_line_error(run("validate --schedules 1f1b --schedule-file x.csv"),
                                     "--schedules: not with --schedule-file");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 2 -m 2 --cost /nonexistent/p.json"),
                                     "/nonexistent/p.json");
  testing_cli::expect_one_line_error(run("validate --schedule 1f1b -p 16 -m 2 --model gpt-tiny"), "16 stages");
}

}  // namespace
}  // namespace pipesim
