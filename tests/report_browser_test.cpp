// The HTML report in a real browser: headless Chromium (Debian package `chromium`, which
// tools/bootstrap.sh installs) renders a compare report of four schedules, the report of
// README command 1 (GPT-3 6.7B on one 8-GPU H100 node) and a validate page.
//
// What is checked, and how (no PNG decoder needed):
//   - the screenshot (1400 x 2000) is a PNG of that size whose file is several times larger
//     than the screenshot of an empty page: a blank or failed render compresses to almost
//     nothing (about 13 KB here), the report's charts and tables do not;
//   - --dump-dom gives the DOM after rendering: every section and chart is there;
//   - with --enable-logging=stderr --v=0, Chromium logs every console message as a
//     "...:CONSOLE..." line (errors as "Uncaught ..."); the report must log none. A page
//     with a deliberate script error shows that such lines really appear.
// Without /usr/bin/chromium the tests skip with a message saying so. PIPESIM_CHROMIUM names
// another browser binary (set it to a missing path to see the skip).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "traces/html_report.hpp"

namespace pipesim {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing::Not;

std::string chromium_path() {
  const char* env = std::getenv("PIPESIM_CHROMIUM");
  return env && *env ? env : "/usr/bin/chromium";
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size())) ++n;
  return n;
}

// Width and height from a PNG's IHDR chunk; {0, 0} if it is not a PNG.
std::pair<std::uint32_t, std::uint32_t> png_size(const std::string& png) {
  static const std::string kSignature = "\x89PNG\r\n\x1a\n";
  if (png.size() < 24 || png.compare(0, 8, kSignature) != 0 || png.compare(12, 4, "IHDR") != 0) return {0, 0};
  auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(png[at + i]);
    return v;
  };
  return {be32(16), be32(20)};
}

class ReportBrowser : public testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(chromium_path()))
      GTEST_SKIP() << chromium_path() << " is missing: install the Debian package 'chromium' (tools/bootstrap.sh does) "
                   << "to render the report in a browser";
    std::string pattern = (fs::temp_directory_path() / "pipesim_browser_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Runs Chromium headless on `page` with `args`; stdout and stderr go to files in dir_.
  int chromium(const std::string& args, const fs::path& page, const std::string& tag) {
    const std::string cmd = "timeout 120 " + chromium_path() +
                            " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                            " --disable-background-networking --disable-component-update --disable-sync"
                            " --user-data-dir=" +
                            (dir_ / ("profile-" + tag)).string() + " " + args + " file://" + page.string() + " >" +
                            (dir_ / (tag + ".out")).string() + " 2>" + (dir_ / (tag + ".err")).string();
    return std::system(cmd.c_str());
  }
  std::string out(const std::string& tag) const { return slurp(dir_ / (tag + ".out")); }
  std::string err(const std::string& tag) const { return slurp(dir_ / (tag + ".err")); }

  // A compare report of four schedules with link costs, memory sizes, a capacity and one
  // stale schedule, so every kind of chart is on the page.
  fs::path write_report() {
    UniformCostConfig costs;
    costs.stage.wgrad = costs.stage.bwd / 2;
    costs.link_latency = 20 * kNsPerUs;
    costs.link_bandwidth = 50e9;
    costs.message_bytes = 64ll << 20;
    costs.activation_bytes = 64ll << 20;
    const UniformCostModel model(costs);
    for (const char* name : {"gpipe", "1f1b", "zb-h1", "pipedream"}) {
      schedules_.push_back(generate(name, ScheduleParams{}));
      TimelineRecorder recorder;
      const SimResult result = simulate(schedules_.back(), model, &recorder);
      timelines_.push_back(std::move(recorder.timeline));
      metrics_.push_back(summarize(schedules_.back(), result));
    }
    std::vector<ReportRun> runs;
    for (std::size_t i = 0; i < schedules_.size(); ++i) runs.push_back({schedules_[i], timelines_[i], metrics_[i]});
    ReportOptions options;
    options.title = "pipesim report: compare";
    options.capacity_bytes = 300ll << 20;
    const fs::path path = dir_ / "report.html";
    std::ofstream file(path, std::ios::binary);
    write_html_report(file, runs, options);
    return path;
  }

  fs::path dir_;
  std::vector<Schedule> schedules_;
  std::vector<Timeline> timelines_;
  std::vector<Metrics> metrics_;
};

TEST_F(ReportBrowser, ScreenshotIsNotBlank) {
  const fs::path report = write_report();
  const fs::path blank = dir_ / "blank.html";
  std::ofstream(blank) << "<!DOCTYPE html><html><body></body></html>\n";
  ASSERT_EQ(chromium("--window-size=1400,2000 --screenshot=" + (dir_ / "report.png").string(), report, "report"), 0)
      << err("report");
  ASSERT_EQ(chromium("--window-size=1400,2000 --screenshot=" + (dir_ / "blank.png").string(), blank, "blank"), 0)
      << err("blank");
  const std::string shot = slurp(dir_ / "report.png"), empty = slurp(dir_ / "blank.png");
  EXPECT_EQ(png_size(shot), std::make_pair(1400u, 2000u));
  EXPECT_EQ(png_size(empty), std::make_pair(1400u, 2000u));
  EXPECT_GT(shot.size(), 40'000u);
  EXPECT_GT(shot.size(), 3 * empty.size()) << "report " << shot.size() << " bytes, empty page " << empty.size();
  std::cout << "screenshots: report " << shot.size() << " bytes, empty page " << empty.size() << " bytes\n";
}

TEST_F(ReportBrowser, DomHasEverySectionAndTheConsoleStaysQuiet) {
  const fs::path report = write_report();
  ASSERT_EQ(chromium("--enable-logging=stderr --v=0 --dump-dom", report, "dom"), 0) << err("dom");
  const std::string dom = out("dom"), log = err("dom");
  EXPECT_THAT(dom, HasSubstr("<section id=\"summary\">"));
  for (const char* id : {"run-0", "run-1", "run-2", "run-3"}) EXPECT_THAT(dom, HasSubstr(id));
  EXPECT_EQ(count(dom, "class=\"gantt\""), 4u);
  EXPECT_EQ(count(dom, "class=\"memory\""), 4u);
  EXPECT_EQ(count(dom, "class=\"staleness\""), 1u);
  EXPECT_THAT(log, Not(HasSubstr("CONSOLE"))) << log;
  EXPECT_THAT(log, Not(HasSubstr("Uncaught"))) << log;
}

// The negative control: the console check above would see a script error.
TEST_F(ReportBrowser, ConsoleErrorsDoShowInTheLog) {
  const fs::path bad = dir_ / "bad.html";
  std::ofstream(bad) << "<!DOCTYPE html><html><body><script>undefinedFunction();</script></body></html>\n";
  ASSERT_EQ(chromium("--enable-logging=stderr --v=0 --dump-dom", bad, "bad"), 0) << err("bad");
  EXPECT_THAT(err("bad"), HasSubstr("CONSOLE"));
  EXPECT_THAT(err("bad"), HasSubstr("Uncaught ReferenceError"));
}

// README command 1's page as the browser builds it: the model and GPU named at the top, the
// GPU's capacity drawn on every memory chart, and AMDP, which does not fit, marked in red and
// bold nowhere, while the fastest schedule that fits is named.
TEST_F(ReportBrowser, ModelReportNamesTheModelDrawsTheCapacityAndMarksWhatDoesNotFit) {
  const fs::path report = dir_ / "model.html";
  const std::string cmd = std::string(PIPESIM_CLI) + " compare --config " + PIPESIM_EXAMPLES +
                          "/gpt3-13b-h100-node.json --report " + report.string() + " > " +
                          (dir_ / "model.log").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir_ / "model.log");
  ASSERT_EQ(chromium("--enable-logging=stderr --v=0 --dump-dom", report, "mdom"), 0) << err("mdom");
  const std::string dom = out("mdom"), log = err("mdom");
  EXPECT_THAT(dom, HasSubstr("<title>pipesim report: compare, gpt3-13b on 8 x h100-sxm</title>"));
  EXPECT_THAT(dom, HasSubstr("<td>model</td><td>gpt3-13b</td>"));
  EXPECT_THAT(dom, HasSubstr("<td>GPU</td><td>h100-sxm: 80.0 GiB, $12.29 per GPU-hour"));
  // The capacity line: a dashed line and its label on each of the 7 memory charts and 7 bar charts.
  EXPECT_EQ(count(dom, "class=\"memory\""), 7u + 7u);  // with static memory, and activations alone (folded)
  EXPECT_EQ(count(dom, "class=\"membars\""), 7u);
  EXPECT_EQ(count(dom, ">capacity 80.0 GiB</text>"), 7u + 7u);
  EXPECT_EQ(count(dom, "class=\"cap\""), 7u + 7u);
  // AMDP (over by 46.5 GiB) and GPipe (over by 17.5 GiB) are marked, in the table and their sections.
  const std::size_t amdp = dom.find("<tr class=\"nofit\"><td><a href=\"#run-6\">amdp</a></td>");
  ASSERT_NE(amdp, std::string::npos) << dom;
  const std::string row = dom.substr(amdp, dom.find("</tr>", amdp) - amdp);
  EXPECT_THAT(row, HasSubstr("<td class=\"fit\">over by 46.5 GiB</td>"));
  EXPECT_THAT(row, Not(HasSubstr("best")));
  EXPECT_THAT(dom, HasSubstr("<tr class=\"nofit\"><td><a href=\"#run-0\">gpipe</a></td>"));
  EXPECT_THAT(dom, HasSubstr("<span class=\"badge\">does not fit: over by 46.5 GiB</span>"));
  EXPECT_THAT(dom, HasSubstr("Fastest that fits: <b><a href=\"#run-3\">zb-h1</a></b>"));
  EXPECT_THAT(dom, HasSubstr("Faster, but does not fit: <a href=\"#run-6\">amdp</a>"));
  // Where the time goes: one stacked bar per schedule across the runs, and one chart per run
  // with a bar per device (8) and their mean, each cut into parts that carry their time.
  EXPECT_THAT(dom, HasSubstr("<section id=\"breakdown\">"));
  EXPECT_EQ(count(dom, "class=\"timebars\""), 1u + 7u);
  EXPECT_EQ(count(dom, ">dev 7 *</text>"), 5u);  // the LM head's device computes longest but in chimera, amdp
  EXPECT_THAT(dom, HasSubstr("<title>amdp F: "));
  EXPECT_GE(count(dom, "class=\"tF\""), 7u * 9u + 7u);
  EXPECT_THAT(log, Not(HasSubstr("CONSOLE"))) << log;
  ASSERT_EQ(chromium("--window-size=1400,2000 --screenshot=" + (dir_ / "model.png").string(), report, "mshot"), 0)
      << err("mshot");
  const std::string shot = slurp(dir_ / "model.png");
  EXPECT_EQ(png_size(shot), std::make_pair(1400u, 2000u));
  EXPECT_GT(shot.size(), 40'000u);
}

// `pipesim validate --report`: the error tables above the predicted and measured timelines,
// rendered by the browser like the compare page.
TEST_F(ReportBrowser, ValidatePageRendersBothTimelinesAndTheErrorTables) {
  const fs::path report = dir_ / "validate.html";
  const std::string cmd = std::string(PIPESIM_CLI) + " validate --schedule 1f1b -p 2 -m 2 --iterations 2 --model gpt-tiny " +
                          "--repeats 2 --report " + report.string() + " > " + (dir_ / "validate.log").string() + " 2>&1";
  // The page is what is tested, not the verdict: exit 1 (off by more than --tolerance) writes
  // it too, and a profile taken in a burst of other tests' load can be off by any amount.
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1)) << slurp(dir_ / "validate.log");
  ASSERT_TRUE(fs::exists(report)) << slurp(dir_ / "validate.log");
  ASSERT_EQ(chromium("--enable-logging=stderr --v=0 --dump-dom", report, "vdom"), 0) << err("vdom");
  const std::string dom = out("vdom"), log = err("vdom");
  EXPECT_THAT(dom, HasSubstr("<section id=\"validation-0\">"));
  EXPECT_THAT(dom, HasSubstr("1f1b (predicted)"));
  EXPECT_THAT(dom, HasSubstr("1f1b (measured)"));
  EXPECT_EQ(count(dom, "class=\"gantt\""), 2u);
  EXPECT_THAT(log, Not(HasSubstr("CONSOLE"))) << log;
  ASSERT_EQ(chromium("--window-size=1400,2000 --screenshot=" + (dir_ / "validate.png").string(), report, "vshot"), 0)
      << err("vshot");
  EXPECT_GT(slurp(dir_ / "validate.png").size(), 40'000u);
}

// A sweep of two blocks (docs/sweep.md#blocks) on one page: both blocks' sections with their
// two plots each, and the comparison across blocks, as the browser builds them.
TEST_F(ReportBrowser, SweepOfTwoBlocksHasEachBlocksPlotsAndTheComparison) {
  const fs::path report = dir_ / "sweep.html";
  const std::string cmd = std::string(PIPESIM_CLI) + " sweep --model gpt3-1.3b --gpus 8,4 --schedules 1f1b,zb-h1,pipedream " +
                          "--pp 2,4 --tp 1,2 --global-batch-size 32 --report " + report.string() + " > " +
                          (dir_ / "sweep.log").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir_ / "sweep.log");
  ASSERT_EQ(chromium("--enable-logging=stderr --v=0 --dump-dom", report, "sdom"), 0) << err("sdom");
  const std::string dom = out("sdom"), log = err("sdom");
  for (const char* id : {"block-1", "block-1-best", "block-1-pareto-memory", "block-2", "block-2-pareto-staleness",
                         "across-blocks"})
    EXPECT_THAT(dom, HasSubstr("<section id=\"" + std::string(id) + "\"")) << id;
  EXPECT_EQ(count(dom, "class=\"scatter\""), 4u);
  EXPECT_THAT(dom, HasSubstr("The best of each block: gpt3-1.3b at global batch 32"));
  EXPECT_THAT(log, Not(HasSubstr("CONSOLE"))) << log;
  ASSERT_EQ(chromium("--window-size=1400,2000 --screenshot=" + (dir_ / "sweep.png").string(), report, "sshot"), 0)
      << err("sshot");
  EXPECT_GT(slurp(dir_ / "sweep.png").size(), 40'000u);
}

}  // namespace
}  // namespace pipesim
