// `pipesim sweep` over several blocks (docs/sweep.md#blocks): --model and --gpus lists expand
// into one block per model and cluster size, each the grid it is alone; a grid file's blocks
// override the flags; the CSV's block column, the JSON's block fields, selections per block
// and global batch, the comparison across blocks only at equal model and batch. And the
// what-if sharing flags on every configuration, against their closed form.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_runner.hpp"
#include "tests/html_checks.hpp"

namespace {

using testing::HasSubstr;
using testing::Not;
using namespace pipesim::testing_cli;
using nlohmann::json;

const std::string kGrid = "sweep --schedules 1f1b,zb-h1 --pp 2,4 --tp 1,2 --global-batch-size 32,64 --top 2";

std::string run_ok(const std::string& args) {
  const Result r = run(args);
  EXPECT_EQ(r.code, 0) << r.out;
  return r.out;
}

json run_json(const std::string& args, const std::string& name) {
  const std::string path = temp_path(name);
  run_ok(args + " --json " + path);
  return json::parse(slurp(path));
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Each block is the sweep of its model and GPUs alone: its rows (the CSV's lines after the
// block column) and its selections are that sweep's.
TEST(SweepBlocks, ListsExpandIntoBlocksThatAreTheSweepsAlone) {
  const std::string csv = temp_path("blocks.csv");
  run_ok(kGrid + " --model gpt3-1.3b,gpt3-2.7b --gpus 8,4 --csv " + csv);
  const std::vector<std::string> all = lines(slurp(csv));
  const json j = run_json(kGrid + " --model gpt3-1.3b,gpt3-2.7b --gpus 8,4", "blocks.json");
  const std::vector<std::string> names = {"gpt3-1.3b/8", "gpt3-1.3b/4", "gpt3-2.7b/8", "gpt3-2.7b/4"};
  ASSERT_EQ(j["blocks"].size(), names.size());
  std::size_t line = 1, row = 0, selection = 0;
  for (std::size_t b = 0; b < names.size(); ++b) {
    EXPECT_EQ(j["blocks"][b]["block"], names[b]);
    const std::string model = names[b].substr(0, names[b].find('/')), gpus = names[b].substr(names[b].find('/') + 1);
    const std::string alone_csv = temp_path("alone.csv");
    run_ok(kGrid + " --model " + model + " --gpus " + gpus + " --csv " + alone_csv);
    const std::vector<std::string> alone = lines(slurp(alone_csv));
    ASSERT_THAT(alone.front(), testing::StartsWith("index,hardware,")) << "one block: no block column";
    EXPECT_EQ(all.front(), "block," + alone.front());
    for (std::size_t k = 1; k < alone.size(); ++k, ++line) {
      ASSERT_LT(line, all.size());
      EXPECT_EQ(all[line], names[b] + "," + alone[k]);
    }
    const json one = run_json(kGrid + " --model " + model + " --gpus " + gpus, "alone.json");
    EXPECT_EQ(j["blocks"][b]["settings"], one["settings"]);
    for (json r : one["configurations"]) {
      json got = j["configurations"][row++];
      EXPECT_EQ(got["block"], names[b]);
      got.erase("block");
      EXPECT_EQ(got, r);
    }
    ASSERT_EQ(one["selections"].size(), 2u) << "one per global batch";
    for (json s : one["selections"]) {
      json got = j["selections"][selection++];
      EXPECT_EQ(got["block"], names[b]);
      got.erase("block");
      EXPECT_EQ(got, s);
    }
  }
  EXPECT_EQ(line, all.size());
  EXPECT_EQ(row, j["configurations"].size());
  EXPECT_EQ(selection, j["selections"].size());
}

// Across blocks only the same model at the same global batch: the best of each block, fastest first.
TEST(SweepBlocks, AcrossBlocksComparesOnlyTheSameModelAtTheSameBatch) {
  const json j = run_json(kGrid + " --model gpt3-1.3b,gpt3-2.7b --gpus 8,4", "across.json");
  ASSERT_EQ(j["across_blocks"].size(), 4u) << "2 models x 2 batches";
  for (const json& a : j["across_blocks"]) {
    ASSERT_EQ(a["best"].size(), 2u);
    double previous = 1e300;
    for (const json& best : a["best"]) {
      const std::string block = best["block"];
      EXPECT_EQ(block.substr(0, block.find('/')), a["model"]);
      bool found = false;
      for (const json& s : j["selections"])
        if (s["block"] == block && s["global_batch"] == a["global_batch"]) {
          EXPECT_EQ(s["best"][0], best["index"]) << "the block's own best";
          found = true;
        }
      EXPECT_TRUE(found) << block;
      for (const json& r : j["configurations"])
        if (r["block"] == block && r["index"] == best["index"]) {
          EXPECT_LE(r["tokens_per_s"].get<double>(), previous);
          previous = r["tokens_per_s"].get<double>();
        }
    }
  }
  const std::string text = run_ok(kGrid + " --model gpt3-1.3b,gpt3-2.7b --gpus 8");
  EXPECT_THAT(text, HasSubstr("=== block gpt3-2.7b (2 of 2) ===\n"));
  EXPECT_THAT(text, HasSubstr("=== across blocks ===\n(no comparison: blocks are compared only at equal global batch "
                              "and the same model, and no two blocks share both)\n"));
  // Without --global-batch-size the rows differ in batch: nothing is compared across blocks.
  const json m = run_json("sweep --schedules 1f1b --pp 2 -m 8 --model gpt3-1.3b --gpus 8,4", "by_m.json");
  EXPECT_TRUE(m["across_blocks"].empty());
}

// A grid file's blocks: each one's settings over the flags (and only over them), names,
// lists inside a block, and a one-block file that writes the bytes of the flags alone.
TEST(SweepBlocks, AGridFilesBlocksOverrideTheFlags) {
  const std::string grid = temp_path("grid.json");
  std::ofstream(grid) << R"({"blocks": [
    {"name": "wide", "model": "gpt3-1.3b", "gpus": 8, "tp": [2], "hardware": "a100-80g"},
    {"model": "gpt3-1.3b", "gpus": "8,4"}]})";
  const std::string flags = "sweep --schedules 1f1b,zb-h1 --pp 2,4 --global-batch-size 32,64 --tp 1";
  const json j = run_json(flags + " --grid " + grid, "grid_out.json");
  ASSERT_EQ(j["blocks"].size(), 3u);
  EXPECT_EQ(j["blocks"][0]["block"], "wide");
  EXPECT_EQ(j["blocks"][1]["block"], "8/h100-sxm") << "what differs: not the model";
  EXPECT_EQ(j["blocks"][2]["block"], "4/h100-sxm");
  for (const json& r : j["configurations"]) {
    EXPECT_EQ(r["tp"], r["block"] == "wide" ? 2 : 1) << r["block"];
    EXPECT_EQ(r["hardware"], r["block"] == "wide" ? "a100-80g" : "h100-sxm") << r["block"];
  }
  // One block: the outputs of the same settings given as flags, byte for byte.
  std::ofstream(grid) << R"({"blocks": [{"model": "gpt3-1.3b", "gpus": 8}]})";
  const std::string a = temp_path("a.csv"), b = temp_path("b.csv");
  const std::string flags_out = run_ok(kGrid + " --model gpt3-1.3b --gpus 8 --csv " + a);
  const std::string file_out = run_ok(kGrid + " --grid " + grid + " --csv " + b);
  EXPECT_EQ(slurp(a), slurp(b));
  EXPECT_THAT(slurp(b), Not(HasSubstr("block")));
  EXPECT_EQ(lines(flags_out).size(), lines(file_out).size());
}

double num(const json& row, const char* key) { return row[key].get<double>(); }

// --share-cores 1: the devices of the one host take turns on one core, so an iteration is every
// device's core work end to end (the p2p transfers overlap it): pp x the mean per device of
// forward, backward, optimizer and gradient sync. --share-cores 2 gives each device its own:
// the unshared time, no contention.
// Every id="..." of a page.
std::vector<std::string> ids(const std::string& page) {
  std::vector<std::string> out;
  for (std::size_t at = 0; (at = page.find(" id=\"", at)) != std::string::npos;) {
    at += 5;
    out.push_back(page.substr(at, page.find('"', at) - at));
  }
  return out;
}

std::string between(const std::string& text, const std::string& from, const std::string& to) {
  const std::size_t a = text.find(from);
  EXPECT_NE(a, std::string::npos) << from;
  const std::size_t b = text.find(to, a + from.size());
  EXPECT_NE(b, std::string::npos) << to;
  return text.substr(a + from.size(), b - a - from.size());
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  return text;
}

// --report with several blocks: one page, a section per block that is the page of the block's
// sweep alone (its ids prefixed, its headings one level down), then the comparisons across
// blocks; the same bytes for any --jobs.
TEST(SweepBlocks, TheReportHasEachBlocksPageAndTheComparison) {
  const std::string html = temp_path("blocks.html"), alone = temp_path("alone.html");
  run_ok(kGrid + " --model gpt3-1.3b --gpus 8,4 --jobs 1 --report " + html);
  const std::string page = slurp(html);
  run_ok(kGrid + " --model gpt3-1.3b --gpus 8,4 --jobs 2 --report " + html);
  EXPECT_EQ(slurp(html), page) << "--jobs 1 and 2";
  EXPECT_EQ(pipesim::markup_error(page), "");
  EXPECT_THAT(page, HasSubstr("<h1>pipesim sweep: 2 blocks</h1>"));
  EXPECT_THAT(page, HasSubstr("<a href=\"#block-1\">8</a><a href=\"#block-2\">4</a>"));
  std::vector<std::string> all = ids(page), unique = all;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  EXPECT_EQ(all.size(), unique.size()) << "ids are unique";
  EXPECT_EQ(all.size(), 2u * 5 + 1);  // block-K and its four sections, across-blocks
  EXPECT_EQ(pipesim::count(page, "<svg"), 4u);
  const std::vector<std::pair<std::string, std::string>> blocks = {{"8", "1"}, {"4", "2"}};
  for (const auto& [gpus, k] : blocks) {
    run_ok(kGrid + " --model gpt3-1.3b --gpus " + gpus + " --report " + alone);
    const std::string one = slurp(alone);
    const std::string section = between(page, "<section id=\"block-" + k + "\" class=\"block\">\n", "<section id=\"" +
                                                  (k == "1" ? std::string("block-2\"") : std::string("across-blocks\"")));
    EXPECT_THAT(section, HasSubstr("<h2>Block " + gpus + " (" + k + " of 2)</h2>\n"));
    std::string as_alone = section.substr(section.find("</h2>\n") + 6);  // up to the block's own </section>
    as_alone = replace_all(replace_all(replace_all(as_alone, "block-" + k + "-", ""), "<h3>", "<h2>"), "</h3>", "</h2>");
    EXPECT_EQ(as_alone, between(one, "</h1>\n", "<footer>") + "</section>\n") << "block " << gpus;
  }
  const std::string across = between(page, "<section id=\"across-blocks\">", "</section>");
  EXPECT_THAT(across, HasSubstr("<h3>The best of each block: gpt3-1.3b at global batch 32</h3>"));
  EXPECT_THAT(across, HasSubstr("<h3>The best of each block: gpt3-1.3b at global batch 64</h3>"));
  EXPECT_EQ(pipesim::count(across, "<table>"), 2u);
  EXPECT_EQ(pipesim::count(across, "<td class=\"l\">8</td>"), 2u);
  EXPECT_EQ(pipesim::count(across, "<td class=\"l\">4</td>"), 2u);
}

TEST(SweepSharing, OneSharedCoreSerialisesTheDevices) {
  const std::string base = "sweep --model gpt3-1.3b --gpus 2 --schedules gpipe,1f1b --pp 2 -m 4,8";
  const json alone = run_json(base, "unshared.json");
  const json one = run_json(base + " --share-cores 1", "shared1.json");
  const json two = run_json(base + " --share-cores 2", "shared2.json");
  EXPECT_THAT(one["settings"]["shared_hardware"].get<std::string>(), HasSubstr("share 1 core"));
  ASSERT_EQ(one["configurations"].size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) {
    const json& r = one["configurations"][k];
    const double work = num(r, "time_forward_s") + num(r, "time_backward_s") + num(r, "time_optimizer_s") +
                        num(r, "time_dp_sync_s");
    EXPECT_NEAR(num(r, "time_per_iteration_s"), 2 * work, 1e-9) << k;
    EXPECT_GT(num(r, "time_contention_s"), 0) << k;
    EXPECT_GT(num(r, "time_per_iteration_s"), num(alone["configurations"][k], "time_per_iteration_s")) << k;
    EXPECT_EQ(two["configurations"][k]["time_per_iteration_s"], alone["configurations"][k]["time_per_iteration_s"]);
    EXPECT_EQ(num(two["configurations"][k], "time_contention_s"), 0) << k;
  }
  EXPECT_THAT(run_ok(base + " --share-cores 1"), HasSubstr("  shared=the devices share 1 core"));
}

}  // namespace
