// `pipesim sweep` end to end: the grid syntax, skipped combinations by reason, rows equal
// to individual `pipesim compare` runs, byte-identical output for any --jobs, the best
// table and both Pareto fronts recomputed from the rows, the CSV columns against
// docs/sweep.md, the HTML page (traces/html_sweep.hpp) and the one-line errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "schedules/generator.hpp"
#include "tests/cli_runner.hpp"
#include "traces/html_sweep.hpp"

namespace {

using testing::HasSubstr;
using testing::Not;
using namespace pipesim::testing_cli;
using nlohmann::json;

// gpt3-1.3b on 2 nodes of 8: small and quick, but every dimension has two values.
const std::string kDims =
    " --gpus 16 --schedules 1f1b,interleaved,zb-h1,chimera,pipedream --tp 1,2 --pp 2,4 -m 8 --micro-batch-size 1,2 "
    "--recompute none,selective";
const std::string kGrid = "sweep --model gpt3-1.3b --hardware a100-80g" + kDims;

json run_json(const std::string& args, const std::string& name) {
  const std::string path = temp_path(name);
  const Result r = run(args + " --json " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  return json::parse(slurp(path));
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

TEST(Sweep, RowsEqualIndividualCompareRuns) {
  const json j = run_json(kGrid, "rows.json");
  ASSERT_EQ(j["combinations"], 5 * 2 * 2 * 2 * 2);
  std::set<std::string> checked;
  for (const auto& row : j["configurations"]) {
    // One row per schedule, plus every row with tp 2 and selective recompute of 1f1b.
    const std::string schedule = row["schedule"];
    const bool extra = schedule == "1f1b" && row["tp"] == 2 && row["recompute"] == "selective";
    if (checked.count(schedule) && !extra) continue;
    checked.insert(schedule);
    const Result c = run("compare --model gpt3-1.3b --hardware a100-80g --nodes 2 --gpus-per-node 8 --iterations 2"
                         " --schedules " + schedule + " --tp " + row["tp"].dump() + " -p " + row["pp"].dump() +
                         " -m " + row["microbatches"].dump() + " --micro-batch-size " +
                         row["micro_batch_size"].dump() + " --recompute " + row["recompute"].get<std::string>() +
                         " --json");
    ASSERT_EQ(c.code, 0) << c.out;
    const json s = json::parse(c.out)["schedules"][0];
    for (const char* key : {"hardware", "gpus", "time_per_iteration_s", "tokens_per_iteration", "tokens_per_s", "mfu",
                            "bubble_ratio", "peak_memory_bytes", "capacity_bytes", "fits", "overshoot_bytes",
                            "cost_per_million_tokens_usd"})
      EXPECT_EQ(row[key], s[key]) << key << " of config " << row["index"];
    for (const char* key : {"max_mismatch", "mean_mismatch", "mismatched_fraction", "max_delay", "mean_delay"})
      EXPECT_EQ(row[key], s["staleness"][key]) << key << " of config " << row["index"];
    EXPECT_EQ(row["dp"], 16 / (row["tp"].get<int>() * row["pp"].get<int>()));
  }
  EXPECT_EQ(checked.size(), 5u);
}

TEST(Sweep, OutputIsByteIdenticalForAnyJobs) {
  std::string first_csv, first_json, first_html;
  for (const char* jobs : {"1", "2", "3", "2"}) {
    const std::string csv = temp_path("det.csv"), js = temp_path("det.json"), html = temp_path("det.html");
    const Result r = run(kGrid + " --jobs " + jobs + " --csv " + csv + " --json " + js + " --report " + html);
    ASSERT_EQ(r.code, 0) << r.out;
    if (first_csv.empty()) {
      first_csv = slurp(csv), first_json = slurp(js), first_html = slurp(html);
      EXPECT_GT(count(first_csv, "\n"), 20u);
      continue;
    }
    EXPECT_EQ(slurp(csv), first_csv) << "--jobs " << jobs;
    EXPECT_EQ(slurp(js), first_json) << "--jobs " << jobs;
    EXPECT_EQ(slurp(html), first_html) << "--jobs " << jobs;
  }
}

TEST(Sweep, SkippedCombinationsAreCountedByReason) {
  // 24 combinations on 48 GPUs: tp 3 x pp 3 and tp 16 x pp 2 do not divide 48 (8); tp 16
  // does not divide the 24 heads (4); interleaved m 7 (not a multiple of its rounds m div
  // pp) on pp 2 and 3 (3); tp 3 straddles nodes of 8 (3): 6 are left.
  const std::string args =
      "sweep --model megatron-gpt-1.7b --gpus 48 --schedules 1f1b,interleaved --tp 1,3,16 --pp 2,3 -m 6,7 "
      "--micro-batch-size 1";
  const json j = run_json(args, "skips.json");
  EXPECT_EQ(j["combinations"], 24);
  EXPECT_EQ(j["evaluated"], 6);
  EXPECT_EQ(j["configurations"].size(), 6u);
  ASSERT_EQ(j["skipped"]["total"], 18);
  const auto& by = j["skipped"]["by_reason"];
  ASSERT_EQ(by.size(), 4u);
  EXPECT_EQ(by[0]["reason"], "tp x pp does not divide the GPUs");
  EXPECT_EQ(by[0]["count"], 8);
  EXPECT_EQ(by[0]["example"], "tp 3 x pp 3 = 9 GPUs per pipeline does not divide 48 GPUs");
  EXPECT_EQ(by[1]["reason"], "the model cannot be split so (tp and heads, stages and layers)");
  EXPECT_EQ(by[1]["count"], 4);
  EXPECT_THAT(by[1]["example"].get<std::string>(), HasSubstr("tp (16) must divide the attention heads (24)"));
  EXPECT_EQ(by[2]["reason"], "the schedule rejects pp and m");
  EXPECT_EQ(by[2]["count"], 3);
  EXPECT_THAT(by[2]["example"].get<std::string>(),
              HasSubstr("interleaved: m (7) must be a multiple of its number of rounds m div p = 3 (p = 2)"));
  EXPECT_EQ(by[3]["reason"], "the cost model rejects the settings");
  EXPECT_EQ(by[3]["count"], 3);
  EXPECT_THAT(by[3]["example"].get<std::string>(), HasSubstr("tp (3) and gpus_per_node (8) must divide one another"));
  // Indices count in grid order, so the evaluated ones are known: tp 1 (position 0).
  for (const auto& row : j["configurations"]) EXPECT_EQ(row["tp"], 1);

  const Result r = run(args);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("24 combinations: 6 evaluated"));
  EXPECT_THAT(r.out, HasSubstr("skipped 8: tp x pp does not divide the GPUs (e.g. tp 3 x pp 3"));
  EXPECT_THAT(r.out, HasSubstr("skipped 3: the schedule rejects pp and m"));
  // Without a terminal there is no progress bar, only the final count on stderr.
  EXPECT_THAT(r.out, HasSubstr("sweep: 24 combinations (6 evaluated, 18 skipped) in "));
  EXPECT_THAT(r.out, Not(HasSubstr("\r")));
}

TEST(Sweep, BestAndFrontsFollowFromTheRows) {
  const json j = run_json(kGrid + " --top 4", "fronts.json");
  std::map<int, json> rows;
  for (const auto& r : j["configurations"]) rows[r["index"].get<int>()] = r;
  // What a selection considers: rows that fit and are the first of their equivalents.
  const auto candidate = [](const json& r) { return r["fits"].get<bool>() && r["same_as"] == r["index"]; };
  ASSERT_EQ(j["selections"].size(), 1u);
  const json& sel = j["selections"][0];
  EXPECT_TRUE(sel["global_batch"].is_null());
  // Best: by tokens/s, descending, ties by index.
  std::vector<std::pair<double, int>> fits;
  for (const auto& [index, r] : rows)
    if (candidate(r)) fits.emplace_back(-r["tokens_per_s"].get<double>(), index);
  ASSERT_GE(fits.size(), 4u);
  std::sort(fits.begin(), fits.end());
  ASSERT_EQ(sel["best"].size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(sel["best"][k], fits[k].second);
  // Fronts: exactly the candidates no other candidate dominates (throughput up, keys down).
  using Keys = std::vector<std::string>;
  for (const auto& [name, keys] : {std::pair<std::string, Keys>{"pareto_memory", {"peak_memory_bytes"}},
                                   {"pareto_staleness", {"max_mismatch", "max_delay"}}}) {
    std::set<int> expected;
    for (const auto& [i, a] : rows) {
      if (!candidate(a)) continue;
      bool dominated = false;
      for (const auto& [k, b] : rows) {
        if (!candidate(b)) continue;
        const double ta = a["tokens_per_s"], tb = b["tokens_per_s"];
        bool all = tb >= ta, strict = tb > ta;
        for (const std::string& key : keys) {
          const double ka = a[key], kb = b[key];
          all = all && kb <= ka;
          strict = strict || kb < ka;
        }
        dominated |= all && strict;
      }
      if (!dominated) expected.insert(i);
    }
    std::set<int> got;
    double last_key = -1;
    for (const auto& i : sel[name]) {
      got.insert(i.get<int>());
      const double key = rows.at(i.get<int>())[keys.front()];
      EXPECT_GE(key, last_key) << name << ": ordered by " << keys.front();
      last_key = key;
    }
    EXPECT_EQ(got, expected) << name;
    EXPECT_FALSE(got.empty()) << name;
  }
}

TEST(Sweep, TablesHaveUnitsAndTheFrontsAreNamed) {
  const Result r = run(kGrid + " --top 3");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* s : {"model=gpt3-1.3b", "gpus=16 (2 x 8)", "tp=1,2", "pp=2,4", "recompute=none,selective",
                        "Best 3 by tokens/s that fit in memory", "Pareto front: tokens/s against peak memory",
                        "Pareto front: tokens/s against staleness (max mismatch and max delay)", "tokens/s",
                        "peak memory", "tokens/iter", "batch", "note: the rows differ in global batch",
                        "mismatch max", "mismatched", "delay max", " GiB", " ms  "})
    EXPECT_THAT(r.out, HasSubstr(s));
}

TEST(Sweep, RangesArePowersOfTwoAndListsAreSorted) {
  const json j = run_json(
      "sweep --model gpt3-1.3b --gpus 64 --schedules 1f1b --pp 2..8 -m 6..48 --micro-batch-size 4,1,2..2 --tp 1",
      "ranges.json");
  EXPECT_EQ(j["settings"]["grid"]["pp"], json({2, 4, 8}));
  EXPECT_EQ(j["settings"]["grid"]["microbatches"], json({8, 16, 32}));
  EXPECT_EQ(j["settings"]["grid"]["micro_batch_size"], json({1, 2, 4}));
  EXPECT_EQ(j["settings"]["grid"]["schedules"], json({"1f1b"}));
  EXPECT_EQ(j["settings"]["nodes"], 8);
  EXPECT_EQ(j["combinations"], 27);
}

TEST(Sweep, JsonWithoutAFileGoesToStdout) {
  const Result r = run("sweep --model gpt3-1.3b --gpus 8 --schedules 1f1b --pp 2 -m 8 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto brace = r.out.find('{');
  ASSERT_NE(brace, std::string::npos) << r.out;
  // stderr's count line comes last, once every output is in place.
  const std::size_t count = r.out.rfind("sweep: 1 combinations");
  ASSERT_NE(count, std::string::npos) << r.out;
  const json j = json::parse(r.out.substr(brace, count - brace));
  EXPECT_EQ(j["evaluated"], 1);
  EXPECT_EQ(j["settings"]["gpus_per_node"], 8);
  EXPECT_THAT(r.out, Not(HasSubstr("Pareto front")));
}

TEST(Sweep, CsvColumnsAreTheDocumentedOnes) {
  const std::string csv = temp_path("cols.csv");
  ASSERT_EQ(run("sweep --model gpt3-1.3b --gpus 8 --schedules 1f1b,zb-h1 --pp 2 -m 8 --csv " + csv).code, 0);
  std::istringstream in(slurp(csv));
  std::string header, line;
  std::getline(in, header);
  std::vector<std::string> columns;
  std::stringstream hs(header);
  for (std::string c; std::getline(hs, c, ',');) columns.push_back(c);
  for (const char* required :
       {"hardware", "schedule", "tp", "pp", "dp", "microbatches", "micro_batch_size", "time_per_iteration_s",
        "tokens_per_s", "mfu", "bubble_ratio", "peak_memory_bytes", "capacity_bytes", "fits", "max_mismatch",
        "mismatched_fraction", "max_delay", "cost_per_million_tokens_usd"})
    EXPECT_NE(std::find(columns.begin(), columns.end(), required), columns.end()) << required;
  // docs/sweep.md has one table row per column: | `name` | unit | meaning |
  const std::string doc = slurp(std::string(PIPESIM_TEST_DATA) + "/../../docs/sweep.md");
  ASSERT_FALSE(doc.empty());
  for (const std::string& c : columns) EXPECT_THAT(doc, HasSubstr("| `" + c + "` |")) << c;
  int rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), static_cast<long>(columns.size() - 1)) << line;
  }
  EXPECT_EQ(rows, 2);
}

TEST(Sweep, ReportHasTheTableAndBothPlots) {
  const std::string html = temp_path("sweep.html");
  const Result r = run("sweep --model gpt3-1.3b --hardware a100-40g,h100-sxm" + kDims + " --report " + html);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("report: " + html));
  const std::string page = slurp(html);
  for (const char* s : {"<section id=\"best\">", "<section id=\"pareto-memory\">", "<section id=\"pareto-staleness\">",
                        "Best 10 by tokens/s that fit in memory", "class=\"cap\"", "a100-40g 40.0 GiB",
                        "h100-sxm 80.0 GiB", "class=\"stair\"", "peak memory per GPU (GiB)", "max mismatch"})
    EXPECT_THAT(page, HasSubstr(s));
  EXPECT_EQ(count(page, "<svg"), 2u);
  EXPECT_EQ(count(page, "<svg"), count(page, "</svg>"));
  EXPECT_EQ(count(page, "<table"), count(page, "</table>"));
  EXPECT_GE(count(page, "<circle"), 40u);
  // Self-contained: no scripts, and no address but the SVG namespace (which is not fetched).
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, Not(HasSubstr("https://")));
  EXPECT_EQ(count(page, "http://"), count(page, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_LT(page.size(), 400'000u);
}

TEST(SweepPage, PointsOnOnePixelAreDrawnOnceAndFarOnesOnTheEdge) {
  pipesim::SweepPage page;
  for (int i = 0; i < 50; ++i)  // the same spot: one circle, its tooltip counts the rest
    page.points.push_back({"same <spot>", 1000.0, 1'000'000'000, 0, true});
  page.points.push_back({"far", 500.0, 10'000'000'000'000, 3, false});
  page.points.push_back({"front", 2000.0, 2'000'000'000, 1, true});
  page.memory_front = {50 + 1};
  page.staleness_front = {51};
  page.capacities = {{"gpu", 8'000'000'000}};
  std::ostringstream out;
  pipesim::write_html_sweep(out, page);
  const std::string html = out.str();
  EXPECT_THAT(html, HasSubstr("same &lt;spot&gt; (and 49 more here)"));
  EXPECT_THAT(html, HasSubstr("1 configuration needs more than 16.0 GiB: they sit on the right edge"));
  EXPECT_THAT(html, HasSubstr("No configuration fits in memory"));  // no best rows were given
  EXPECT_EQ(count(html, "<circle"), 2u * 3u);  // per plot: the merged spot, the far one, the front one
  std::ostringstream again;
  pipesim::write_html_sweep(again, page);
  EXPECT_EQ(again.str(), html);
}

TEST(Sweep, BadInputIsAOneLineError) {
  const std::string base = "sweep --model gpt3-1.3b --gpus 8 ";
  expect_one_line_error(run(base + "-m 8..x"), "--microbatches: expected positive integers or ranges A..B");
  expect_one_line_error(run(base + "-m 8..x"), "got '8..x'");
  expect_one_line_error(run(base + "--pp 16..8"), "--pp: range '16..8' holds no power of two");
  expect_one_line_error(run(base + "--pp 5..7"), "--pp: range '5..7' holds no power of two");
  expect_one_line_error(run(base + "--tp 0"), "--tp: values must lie in 1..1048576, got '0'");
  expect_one_line_error(run(base + "--tp 1,,2"), "--tp: expected positive integers");
  expect_one_line_error(run(base + "--pp ''"), "--pp: expected a value, got an empty string");
  expect_one_line_error(run(base + "--pp ' '"), "--pp: empty grid");
  expect_one_line_error(run(base + "--recompute ''"), "--recompute: expected a value, got an empty string");
  expect_one_line_error(run(base + "--hardware h100-sxm,h100-sxm"), "--hardware: 'h100-sxm' is listed twice");
  expect_one_line_error(run(base + "--schedules 1f1b,2f2b"), "--schedules: unknown schedule '2f2b' (known: gpipe");
  expect_one_line_error(run(base + "--jobs 0"), "--jobs must be at least 1, got 0");
  expect_one_line_error(run(base + "--top 0"), "--top must be at least 1, got 0");
  expect_one_line_error(run(base + "--iterations 0"), "--iterations must be at least 1");
  expect_one_line_error(run(base + "--recompute none,most"), "--recompute: expected none, selective or full, got 'most'");
  expect_one_line_error(run(base + "--hardware tpu-v9"), "tpu-v9");
  expect_one_line_error(run("sweep --model gpt3-1.3b --gpus 12"), "--gpus 12 is not a whole number of nodes of 8");
  expect_one_line_error(run("sweep --model gpt3-1.3b --gpus 0"), "--gpus must be positive, got 0");
  expect_one_line_error(run(base + "--csv /nonexistent/dir/x.csv"), "--csv: cannot write '/nonexistent/dir/x.csv'");
  const std::string all = std::to_string(5 * pipesim::generators().size());  // every generator x m = 8..128
  expect_one_line_error(run(base + "--pp 16"),
                        "no valid configuration: all " + all + " combinations were skipped: " + all +
                            " tp x pp does not divide the GPUs (e.g. tp 1 x pp 16 = 16 GPUs per pipeline does not divide 8 GPUs)");
  const Result missing = run("sweep --gpus 8");
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.out, HasSubstr("--model is required"));
}

}  // namespace
