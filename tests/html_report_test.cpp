// The HTML report (traces/html_report.hpp) and its pieces: SVG helpers, Gantt, memory and
// staleness charts, tables. Pages are checked for their sections, every schedule,
// well-formed markup (a tiny tag-balance parser), no external resources, the size bound
// of p=64 m=1024 and byte-identical output for identical input.
#include "traces/html_report.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cost_models/uniform.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "traces/html_gantt.hpp"
#include "traces/html_memory.hpp"
#include "traces/html_staleness.hpp"
#include "traces/html_tables.hpp"
#include "traces/svg.hpp"
#include "tests/html_checks.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;
using testing::Not;

// ---- SVG helpers ------------------------------------------------------------------------

TEST(Svg, FixedNumbersNeverShowMinusZero) {
  EXPECT_EQ(format_fixed_number(12.345, 1), "12.3");
  EXPECT_EQ(format_fixed_number(-0.04, 1), "0.0");
  EXPECT_EQ(format_fixed_number(-1.25, 2), "-1.25");
  EXPECT_EQ(format_fixed_number(3, 0), "3");
}

TEST(Svg, EscapesMarkup) { EXPECT_EQ(xml_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"); }

TEST(Svg, NiceStepsAndTickLabels) {
  EXPECT_EQ(nice_step_ticks(33 * kNsPerMs, 10), 5 * kNsPerMs);
  EXPECT_EQ(nice_step_ticks(7, 10), 1);
  EXPECT_DOUBLE_EQ(nice_step(4.0, 5), 1.0);
  EXPECT_DOUBLE_EQ(nice_step(0.9, 5), 0.2);
  const TimeUnit ms = time_unit_for(1200 * kNsPerUs);
  EXPECT_EQ(ms.name, "ms");
  EXPECT_EQ(format_time_tick(750 * kNsPerUs, 250 * kNsPerUs, ms), "0.75");
  EXPECT_EQ(format_time_tick(10 * kNsPerMs, 5 * kNsPerMs, ms), "10");
  EXPECT_EQ(byte_unit_for(3.0 * 1024 * 1024 * 1024).name, "GiB");
  EXPECT_EQ(byte_unit_for(100).name, "B");
}

// ---- Gantt ------------------------------------------------------------------------------

TEST(Gantt, OneRectPerOpWithLabelsTooltipsAndIdleLanes) {
  const SimRun run = simulate_run("1f1b", {.p = 2, .m = 2});
  const GanttChart g = render_gantt(run.schedule, run.timeline);
  EXPECT_FALSE(g.aggregated);
  EXPECT_EQ(g.shapes, 8u);  // 2 devices x (2 F + 2 B); free links: transfers take no time
  EXPECT_EQ(count(g.svg, "class=\"kF\""), 4u);
  EXPECT_EQ(count(g.svg, "class=\"kB\""), 4u);
  EXPECT_EQ(count(g.svg, "class=\"lane\""), 2u);  // grey background per device: bubbles show
  EXPECT_THAT(g.svg, HasSubstr(">F0</text>"));
  EXPECT_THAT(g.svg, HasSubstr(">B1</text>"));
  EXPECT_THAT(g.svg, HasSubstr("<title>1F0 on device 1: 1.000 ms to 2.000 ms (1.000 ms), weights v0</title>"));
  EXPECT_THAT(g.svg, HasSubstr(">time (ms)</text>"));
  EXPECT_THAT(g.kinds, testing::ElementsAre(WorkKind::Forward, WorkKind::Backward));
  EXPECT_EQ(markup_error(g.svg), "");
}

TEST(Gantt, CommunicationAndSyncLanesAppearWhenTheyTakeTime) {
  UniformCostConfig costs;
  costs.link_latency = 10 * kNsPerUs;
  costs.grad_bytes = 1 << 30;
  costs.link_bandwidth = 50e9;
  const SimRun run = simulate_run("chimera", {.p = 4, .m = 4}, costs);
  const GanttChart g = render_gantt(run.schedule, run.timeline);
  EXPECT_GT(count(g.svg, "class=\"kC\""), 0u);
  EXPECT_GT(count(g.svg, "class=\"kS\""), 0u);
  EXPECT_THAT(g.svg, HasSubstr("<title>send 0F0 -&gt; 1F0 (device 0 -&gt; 1)"));
  EXPECT_THAT(g.svg, HasSubstr("<title>gradient sync"));
  EXPECT_EQ(markup_error(g.svg), "");
}

TEST(Gantt, AggregatesAboveMaxShapesAndMergesAtPixelResolution) {
  const SimRun run = simulate_run("1f1b", {.p = 4, .m = 64});
  GanttOptions options;
  options.max_shapes = 100;
  const GanttChart g = render_gantt(run.schedule, run.timeline, options);
  EXPECT_TRUE(g.aggregated);
  EXPECT_EQ(g.shapes, 512u);
  EXPECT_GT(g.ns_per_px, 0);
  // Merged runs: fewer rects than ops, with their op counts in the tooltips.
  const std::size_t rects = count(g.svg, "class=\"kF\"") + count(g.svg, "class=\"kB\"");
  EXPECT_LT(rects, 512u);
  EXPECT_GT(rects, 0u);
  EXPECT_THAT(g.svg, HasSubstr("device 0, forward (F): "));
  EXPECT_THAT(g.svg, Not(HasSubstr("class=\"lbls\""))) << "no op labels when aggregated";
  EXPECT_EQ(markup_error(g.svg), "");
}

TEST(Gantt, SameRangeAndWidthLineUpAcrossTimelines) {
  const SimRun a = simulate_run("1f1b", {.p = 4, .m = 8});
  const SimRun b = simulate_run("zb-h1", {.p = 4, .m = 8});
  GanttOptions options;
  options.range = {0, 40 * kNsPerMs};
  options.width = 900;
  options.caption = "predicted";
  const GanttChart ga = render_gantt(a.schedule, a.timeline, options);
  options.caption = "measured";
  const GanttChart gb = render_gantt(b.schedule, b.timeline, options);
  auto axis = [](const std::string& svg) { return svg.substr(svg.find("<g class=\"axis\">")); };
  auto axis_only = [&](const std::string& svg) {
    const auto s = axis(svg);
    return s.substr(0, s.find("</g>"));
  };
  EXPECT_EQ(axis_only(ga.svg), axis_only(gb.svg));
  EXPECT_THAT(ga.svg, HasSubstr(">predicted</text>"));
  EXPECT_THAT(ga.svg, HasSubstr("width=\"900.0\""));
}

TEST(Gantt, ClipsToTheRange) {
  const SimRun run = simulate_run("1f1b", {.p = 2, .m = 2});
  GanttOptions options;
  options.range = {0, 2 * kNsPerMs};  // 0F0, 0F1 and 1F0 only
  const GanttChart g = render_gantt(run.schedule, run.timeline, options);
  EXPECT_EQ(g.shapes, 3u);
}

// ---- memory and staleness ---------------------------------------------------------------

TEST(MemoryChart, BytesAgainstCapacityNamesTheDevicesOverIt) {
  UniformCostConfig costs;
  costs.activation_bytes = 64ll << 20;
  const SimRun run = simulate_run("1f1b", {.p = 4, .m = 8}, costs);
  MemoryChartOptions options;
  options.capacity_bytes = 200ll << 20;  // device 0 holds 4 x 64 MiB, device 1 3 x 64 MiB
  const MemoryChart m = render_memory_chart(run.schedule, run.timeline, options);
  EXPECT_TRUE(m.bytes);
  EXPECT_EQ(m.peak, 256ll << 20);
  EXPECT_THAT(m.over_capacity, testing::ElementsAre(0));
  EXPECT_EQ(count(m.svg, "class=\"mem\""), 4u);
  EXPECT_THAT(m.svg, HasSubstr("class=\"cap\""));
  EXPECT_THAT(m.svg, HasSubstr(">capacity 200.0 MiB</text>"));
  EXPECT_THAT(m.svg, HasSubstr("activation memory (MiB)"));
  EXPECT_THAT(m.svg, HasSubstr("<title>device 0: peak 256.0 MiB</title>"));
  EXPECT_THAT(m.legend, HasSubstr("dev 3 (peak 64.0 MiB)"));
  EXPECT_EQ(markup_error(m.svg), "");
}

TEST(MemoryChart, CountsActivationsWhenTheyHaveNoSize) {
  const SimRun run = simulate_run("gpipe", {.p = 4, .m = 8});
  MemoryChartOptions options;
  options.capacity_bytes = 1;  // ignored: nothing is measured in bytes
  const MemoryChart m = render_memory_chart(run.schedule, run.timeline, options);
  EXPECT_FALSE(m.bytes);
  EXPECT_EQ(m.peak, 8);
  EXPECT_TRUE(m.over_capacity.empty());
  EXPECT_THAT(m.svg, HasSubstr(">activations held</text>"));
  EXPECT_THAT(m.svg, Not(HasSubstr("class=\"cap\"")));
}

TEST(StalenessChart, EmptyForSynchronousBarsOtherwise) {
  const SimRun sync = simulate_run("1f1b", {.p = 4, .m = 8});
  EXPECT_TRUE(render_staleness_chart(sync.metrics.staleness).svg.empty());
  const SimRun stale = simulate_run("pipedream", {.p = 4, .m = 8});
  const StalenessChart c = render_staleness_chart(stale.metrics.staleness);
  ASSERT_FALSE(c.svg.empty());
  EXPECT_GT(count(c.svg, "class=\"bdelay\""), 0u);
  EXPECT_THAT(c.svg, HasSubstr("<title>stage 0: max gradient delay "));
  EXPECT_THAT(c.legend, HasSubstr("max mismatch"));
  EXPECT_EQ(markup_error(c.svg), "");
}

// ---- the page ---------------------------------------------------------------------------

TEST(HtmlReport, SimulatePageHasEverySection) {
  const SimRun run = simulate_run("zb-h1", {.p = 4, .m = 8});
  ReportOptions options;
  options.title = "pipesim report: zb-h1";
  options.settings = {{"p", "4"}, {"m", "8"}};
  const std::string html = report_of({&run}, options);
  EXPECT_THAT(html, testing::StartsWith("<!DOCTYPE html>\n<html lang=\"en\">"));
  EXPECT_THAT(html, HasSubstr("<title>pipesim report: zb-h1</title>"));
  EXPECT_THAT(html, HasSubstr("p=4 &middot; m=8"));
  for (const char* h3 : {"Summary", "Timeline", "Activation memory", "Staleness"})
    EXPECT_THAT(html, HasSubstr(std::string("<h3>") + h3 + "</h3>")) << h3;
  EXPECT_THAT(html, HasSubstr("<summary>Per device</summary>"));
  EXPECT_THAT(html, HasSubstr("<td>time per iteration</td><td>27.000 ms</td>"));
  EXPECT_THAT(html, HasSubstr("<td>bubble</td><td>11.11 % of device time"));
  EXPECT_THAT(html, Not(HasSubstr("id=\"summary\"")));  // one run: no comparison table
  EXPECT_EQ(count(html, "<svg"), 2u);                   // Gantt and memory; no staleness
  EXPECT_EQ(markup_error(html), "");
  expect_self_contained(html);
}

TEST(HtmlReport, ComparePageHasOneTableAndOneSectionPerSchedule) {
  const SimRun a = simulate_run("gpipe", {.p = 4, .m = 8});
  const SimRun b = simulate_run("1f1b", {.p = 4, .m = 8});
  const SimRun c = simulate_run("zb-h1", {.p = 4, .m = 8});
  const SimRun d = simulate_run("pipedream", {.p = 4, .m = 8});
  const std::string html = report_of({&a, &b, &c, &d});
  EXPECT_THAT(html, HasSubstr("<section id=\"summary\">"));
  int i = 0;
  for (const char* name : {"gpipe", "1f1b", "zb-h1", "pipedream"}) {
    const std::string anchor = "run-" + std::to_string(i++);
    EXPECT_THAT(html, HasSubstr("<a href=\"#" + anchor + "\">" + name + "</a></td>")) << name;  // table row
    EXPECT_THAT(html, HasSubstr("<section id=\"" + anchor + "\">\n<h2>" + name + "</h2>")) << name;
  }
  EXPECT_EQ(count(html, "<h3>Timeline</h3>"), 4u);
  EXPECT_EQ(count(html, "class=\"gantt\""), 4u);
  EXPECT_EQ(count(html, "class=\"memory\""), 4u);
  EXPECT_EQ(count(html, "class=\"staleness\""), 1u);  // only pipedream is stale
  // zb-h1 is fastest: its time and bubble are bold in the comparison.
  EXPECT_THAT(html, HasSubstr("<td class=\"best\">27.000 ms</td>"));
  EXPECT_EQ(markup_error(html), "");
  expect_self_contained(html);
}

// Runs that do not compete (validate's predicted and measured of one schedule): no column
// marks a best.
TEST(HtmlReport, RunsThatDoNotCompeteAreNotRanked) {
  const SimRun a = simulate_run("gpipe", {.p = 4, .m = 8});
  const SimRun b = simulate_run("zb-h1", {.p = 4, .m = 8});
  ReportOptions options;
  options.rank_runs = false;
  const std::string html = report_of({&a, &b}, options);
  EXPECT_THAT(html, Not(HasSubstr("class=\"best\"")));
  EXPECT_THAT(html, Not(HasSubstr("Bold: best")));
  EXPECT_THAT(report_of({&a, &b}), HasSubstr("class=\"best\""));  // ranked by default
  EXPECT_EQ(markup_error(html), "");
}

TEST(HtmlReport, SharesOneTimeAxisAcrossRuns) {
  const SimRun slow = simulate_run("gpipe", {.p = 4, .m = 8});  // 33 ms
  const SimRun fast = simulate_run("zb-h1", {.p = 4, .m = 8});  // 27 ms
  const std::string html = report_of({&slow, &fast});
  // Both Gantt charts end their axis at 30 ms ticks of the 33 ms range: the 30 tick sits
  // at the same x in both.
  const std::regex tick("<text x=\"([0-9.]+)\" y=\"[0-9.]+\" class=\"tick\" text-anchor=\"middle\">30</text>");
  std::vector<std::string> xs;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tick); it != std::sregex_iterator(); ++it)
    xs.push_back((*it)[1]);
  ASSERT_GE(xs.size(), 4u);  // Gantt and memory chart of each run
  for (const auto& x : xs) EXPECT_EQ(x, xs.front());
}

TEST(HtmlReport, IsByteIdenticalForIdenticalInput) {
  UniformCostConfig costs;
  costs.link_latency = 5 * kNsPerUs;
  costs.activation_bytes = 32ll << 20;
  const SimRun a1 = simulate_run("interleaved", {.p = 4, .m = 8}, costs);
  const SimRun b1 = simulate_run("pipedream", {.p = 4, .m = 8}, costs);
  const SimRun a2 = simulate_run("interleaved", {.p = 4, .m = 8}, costs);
  const SimRun b2 = simulate_run("pipedream", {.p = 4, .m = 8}, costs);
  ReportOptions options;
  options.capacity_bytes = 1ll << 30;
  const std::string first = report_of({&a1, &b1}, options);
  const std::string second = report_of({&a2, &b2}, options);
  EXPECT_EQ(first, second);
}

TEST(HtmlReport, LargeScheduleIsAggregatedAndUnderFiveMegabytes) {
  UniformCostConfig costs;
  costs.activation_bytes = 64ll << 20;
  const SimRun run = simulate_run("1f1b", {.p = 64, .m = 1024}, costs);
  ReportOptions options;
  options.capacity_bytes = 80ll << 30;
  const std::string html = report_of({&run}, options);
  EXPECT_LT(html.size(), 5u << 20) << html.size() << " bytes";
  EXPECT_THAT(html, HasSubstr("Aggregated: 131072 shapes are more than 2000"));
  EXPECT_EQ(markup_error(html), "");
  std::cout << "p=64 m=1024 1f1b report: " << html.size() << " bytes\n";
}


TEST(HtmlTables, PercentsAndEscapedNames) {
  EXPECT_EQ(report_percent(0.27272727), "27.27 %");
  Metrics m;
  m.schedule = "<mine>";
  const std::string table = compare_summary_html({&m}, {""});
  EXPECT_THAT(table, HasSubstr("<td>&lt;mine&gt;</td>"));
  EXPECT_EQ(markup_error(table), "");
}

}  // namespace
}  // namespace pipesim
