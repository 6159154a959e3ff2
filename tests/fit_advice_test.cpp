// When nothing fits (#15): the closest configurations and the switches that would make them
// fit, each re-evaluated. Every change the advice lists is checked against a real run of
// `compare` with that change, so the advice cannot be a guess.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"
#include "tools/fit_advice.hpp"

namespace {

using testing::HasSubstr;
using testing::Not;
using namespace pipesim::testing_cli;
using nlohmann::json;

// Llama-2 70B on 4 nodes of 8 H100 without the memory switches: nothing fits.
const std::string kCluster =
    " --model llama2-70b --nodes 4 --gpus-per-node 8 --global-batch-size 32 --flash-attention false";
const std::string kShape = " --tp 8 -p 4";

// kCluster with `flags` (which may set --tp, -p or --flash-attention themselves).
std::string with(const std::string& flags) {
  std::string cluster = kCluster;
  if (flags.find("--flash-attention") != std::string::npos)
    cluster.erase(cluster.find(" --flash-attention false"), std::string(" --flash-attention false").size());
  std::string shape = kShape;
  if (flags.find("--tp ") != std::string::npos) shape.erase(0, std::string(" --tp 8").size());
  if (flags.find("-p ") != std::string::npos) shape.erase(shape.find(" -p 4"));
  return cluster + shape + " " + flags;
}

json compare_json(const std::string& args) {
  const Result r = run("compare" + with(args) + " --json");
  EXPECT_EQ(r.code, 0) << r.out;
  return json::parse(r.out);
}

TEST(FitAdvice, EveryChangeIsWhatThatRunGives) {
  const json j = compare_json("--schedules 1f1b,interleaved");
  const json& s = j["schedules"][0];
  ASSERT_FALSE(s["fits"].get<bool>());
  ASSERT_TRUE(s.contains("fit_advice"));
  int checked = 0, fitting = 0;
  for (const auto& change : s["fit_advice"]) {
    if (change.contains("not_applicable")) continue;
    const std::string flags = change["change"];
    // The flags that differ, given last, win over kCluster's.
    const json again = compare_json("--schedules 1f1b " + flags);
    EXPECT_EQ(change["peak_memory_bytes"], again["schedules"][0]["peak_memory_bytes"]) << flags;
    EXPECT_EQ(change["fits"], again["schedules"][0]["fits"]) << flags;
    EXPECT_EQ(change["tokens_per_s"], again["schedules"][0]["tokens_per_s"]) << flags;
    ++checked;
    fitting += change["fits"].get<bool>() ? 1 : 0;
  }
  EXPECT_GE(checked, 5);
  EXPECT_GE(fitting, 1);  // flash attention alone makes 1F1B fit
}

TEST(FitAdvice, TextNamesTheClosestAndWhatMakesThemFit) {
  const Result r = run("compare" + with("--schedules 1f1b,zb-h1,interleaved,gpipe"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("No schedule fits in memory; the closest:"));
  EXPECT_THAT(r.out, HasSubstr("h100-sxm 1f1b does not fit: 119.6 GiB on its fullest GPU, 80.0 GiB available (over by "
                               "39.6 GiB)"));
  EXPECT_THAT(r.out, HasSubstr("--flash-attention true"));
  EXPECT_THAT(r.out, Not(HasSubstr("gpipe does not fit")));  // three closest only: GPipe holds the most
  // dp = 32 / (8 x 4) = 1: ZeRO-1 has nothing to shard, so it is not offered; tp 16 does not
  // divide the cluster, which is said once.
  EXPECT_THAT(r.out, Not(HasSubstr("--zero1 true")));
  EXPECT_THAT(r.out, HasSubstr("not applicable: --tp 16: "));
  EXPECT_THAT(r.out, Not(HasSubstr("not applicable: --tp 16 --recompute")));
}

TEST(FitAdvice, NoAdviceWhenSomethingFits) {
  const Result r = run("compare --model llama2-70b --nodes 4 --gpus-per-node 8 --tp 8 -p 4 --global-batch-size 32 "
                       "--schedules 1f1b,interleaved");
  ASSERT_EQ(r.code, 0) << r.out;  // with the default flash attention 1F1B fits
  EXPECT_THAT(r.out, Not(HasSubstr("does not fit:")));
  const json j = compare_json("--schedules 1f1b --flash-attention true");
  EXPECT_FALSE(j["schedules"][0].contains("fit_advice"));
}

TEST(FitAdvice, SimulateAdvisesOnItsOneRun) {
  const Result r = run("simulate" + with("--schedule 1f1b"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("1f1b does not fit:"));
  EXPECT_THAT(r.out, HasSubstr("--recompute full"));
  // With dp > 1 ZeRO-1 is one of the switches.
  const Result dp2 = run("simulate --model llama2-70b --nodes 8 --gpus-per-node 8 --tp 8 -p 4 -m 16 "
                         "--flash-attention false --schedule 1f1b");
  ASSERT_EQ(dp2.code, 0) << dp2.out;
  EXPECT_THAT(dp2.out, HasSubstr("--zero1 true"));
}

TEST(FitAdvice, AScheduleFileKeepsItsShape) {
  // The file fixes p and m: the model's switches and tp are tried, never another -p.
  const std::string file = temp_path("advice-1f1b.json");
  ASSERT_EQ(run("schedule --schedule 1f1b -p 4 -m 32 --format json -o " + file).code, 0);
  const Result r = run("simulate --model llama2-70b --nodes 4 --gpus-per-node 8 --tp 8 --flash-attention false "
                       "--schedule-file " + file);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("1f1b does not fit: 119.6 GiB"));
  EXPECT_THAT(r.out, testing::ContainsRegex("--flash-attention true +69.6 GiB +86.95 % +yes"));
  EXPECT_THAT(r.out, HasSubstr("not applicable: --tp 16: "));
  EXPECT_THAT(r.out, Not(HasSubstr("-p 8")));
}

TEST(FitAdvice, SweepListsTheClosestWhenNoneFits) {
  const std::string path = temp_path("none-fits.json");
  const Result r = run("sweep --model llama2-70b --gpus 32 --schedules 1f1b,zb-h1 --tp 8 --pp 4 --global-batch-size 32 "
                       "--flash-attention false --json " + path);
  ASSERT_EQ(r.code, 0) << r.out;
  const json j = json::parse(slurp(path));
  const json& sel = j["selections"][0];
  EXPECT_TRUE(sel["best"].empty());
  ASSERT_EQ(sel["closest"].size(), 2u);
  EXPECT_EQ(sel["closest"][0]["index"], 0);  // 1F1B and ZB-H1 hold the same: ties by index
  bool fits = false;
  for (const auto& c : sel["closest"][0]["fit_advice"]) fits = fits || c.value("fits", false);
  EXPECT_TRUE(fits);
  const Result text = run("sweep --model llama2-70b --gpus 32 --schedules 1f1b,zb-h1 --tp 8 --pp 4 "
                          "--global-batch-size 32 --flash-attention false");
  EXPECT_THAT(text.out, HasSubstr("(none fits)"));
  EXPECT_THAT(text.out, HasSubstr("The closest to fitting at global batch 32:"));
  EXPECT_THAT(text.out, HasSubstr("config 0 (1f1b) does not fit:"));
  EXPECT_THAT(text.out, Not(HasSubstr("Pareto front")));  // no fronts among no configurations
}

TEST(FitAdvice, ClosestIsEmptyWhenAnyFitsAndOrderedByOvershoot) {
  std::vector<pipesim::Assessment> a(3);
  a[0].fits = false, a[0].overshoot = 30;
  a[1].fits = false, a[1].overshoot = 10;
  a[2].fits = false, a[2].overshoot = 20;
  EXPECT_EQ(pipesim::closest_to_fitting(a, 2), (std::vector<std::size_t>{1, 2}));
  a[2].fits = true, a[2].overshoot = 0;
  EXPECT_TRUE(pipesim::closest_to_fitting(a, 2).empty());
}

}  // namespace
