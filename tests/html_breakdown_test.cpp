// Where the time goes in the HTML report (traces/html_breakdown.hpp): stacked bars per
// device and per run, their parts, tooltips and legend, and where the page puts them.
#include "traces/html_breakdown.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/breakdown.hpp"
#include "tests/html_checks.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;
using testing::Not;

struct Broken {
  SimRun run;
  TimeBreakdown breakdown;
};

// A run on uniform costs (F 1 ms, B 2 ms unless `costs` says otherwise) with its breakdown.
Broken simulate_broken(const std::string& name, ScheduleParams params, UniformCostConfig costs = {}) {
  Broken out{{generate(name, params), {}, {}}, {}};
  const UniformCostModel model(costs);
  TimelineRecorder timeline;
  BreakdownRecorder parts(out.run.schedule);
  ObserverList both;
  both.add(&timeline);
  both.add(&parts);
  const SimResult result = simulate(out.run.schedule, model, &both);
  out.run.timeline = std::move(timeline.timeline);
  out.run.metrics = summarize(out.run.schedule, result);
  out.breakdown = time_breakdown(out.run.schedule, result, model, parts);
  return out;
}

std::string page(const std::vector<const Broken*>& runs) {
  std::vector<ReportRun> list;
  for (const Broken* b : runs) list.push_back({b->run.schedule, b->run.timeline, b->run.metrics, nullptr, &b->breakdown});
  std::ostringstream out;
  write_html_report(out, list);
  return out.str();
}

TEST(BreakdownBars, OneF1BTwoDevicesByHand) {
  // Device 0: 2 ms F, 4 ms B, 3 ms waiting for device 1; device 1: 3 ms idle (fill, drain).
  const Broken b = simulate_broken("1f1b", {.p = 2, .m = 2});
  const BreakdownChart chart = render_breakdown_bars(device_bars(b.breakdown), "where the time goes, per device");
  EXPECT_EQ(count(chart.svg, "class=\"tF\""), 3u);  // dev 0, dev 1, mean
  EXPECT_EQ(count(chart.svg, "class=\"tB\""), 3u);
  EXPECT_EQ(count(chart.svg, "class=\"tP\""), 2u);  // dev 0 and the mean
  EXPECT_EQ(count(chart.svg, "class=\"tX\""), 2u);  // dev 1 and the mean
  EXPECT_EQ(count(chart.svg, "<rect"), 10u);
  EXPECT_THAT(chart.svg, HasSubstr("<title>dev 0 F: 2.000 ms (22.2% of the iteration)</title>"));
  EXPECT_THAT(chart.svg, HasSubstr("<title>dev 0 pipeline: 3.000 ms (33.3% of the iteration)</title>"));
  EXPECT_THAT(chart.svg, HasSubstr("<title>dev 1 idle: 3.000 ms (33.3% of the iteration)</title>"));
  EXPECT_THAT(chart.svg, HasSubstr("<title>mean idle: 1.500 ms (16.7% of the iteration)</title>"));
  EXPECT_THAT(chart.svg, HasSubstr(">dev 0 *</text>"));  // the critical device (the first of equals)
  EXPECT_THAT(chart.svg, HasSubstr(">9.000 ms</text>"));  // each bar's total: the iteration
  EXPECT_THAT(chart.svg, HasSubstr("(ms per iteration)"));
  EXPECT_THAT(chart.legend, HasSubstr("<i class=\"sw tF\"></i>F</span>"));
  EXPECT_THAT(chart.legend, HasSubstr("<i class=\"sw tX\"></i>idle</span>"));
  EXPECT_THAT(chart.legend, Not(HasSubstr("TP comm")));  // zero everywhere: not in the legend
  EXPECT_EQ(markup_error(chart.svg), "");
}

TEST(BreakdownBars, BarsOfEqualTimeHaveEqualLength) {
  // GPipe and 1F1B take 33 ms per iteration at p=4 m=8: their bars end at the same x.
  const Broken g = simulate_broken("gpipe", {.p = 4, .m = 8}), o = simulate_broken("1f1b", {.p = 4, .m = 8});
  const BreakdownChart chart =
      render_breakdown_bars({mean_bar(g.breakdown, "gpipe"), mean_bar(o.breakdown, "1f1b")}, "mean over the devices");
  EXPECT_EQ(count(chart.svg, ">33.000 ms</text>"), 2u);
}

TEST(BreakdownBars, ReportHasOneChartPerRunAndOneAcrossRuns) {
  UniformCostConfig costs;
  costs.stage.wgrad = costs.stage.bwd / 2;
  const Broken a = simulate_broken("1f1b", {.p = 4, .m = 8}, costs), b = simulate_broken("zb-h1", {.p = 4, .m = 8}, costs);
  const std::string html = page({&a, &b});
  EXPECT_EQ(count(html, "class=\"timebars\""), 3u);
  EXPECT_THAT(html, HasSubstr("<section id=\"breakdown\">\n<h2>Where the time goes</h2>"));
  EXPECT_THAT(html, HasSubstr("<title>zb-h1 W: "));
  EXPECT_THAT(html, HasSubstr(".tF{fill:#56B4E9;background:#56B4E9}"));  // the Gantt chart's forward colour
  EXPECT_EQ(markup_error(html), "");
  expect_self_contained(html);
  EXPECT_EQ(page({&a, &b}), html);  // byte-identical
  const std::string one = page({&a});
  EXPECT_EQ(count(one, "class=\"timebars\""), 1u);  // one run: its devices, no chart across runs
  EXPECT_THAT(one, Not(HasSubstr("id=\"breakdown\"")));
  // Without breakdowns (a caller that has none) the page has no such chart.
  EXPECT_THAT(report_of({&a.run}), Not(HasSubstr("timebars")));
}

}  // namespace
}  // namespace pipesim
