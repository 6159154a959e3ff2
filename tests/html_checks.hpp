#pragma once
// What the HTML report's tests share: a tag-balance parser, no external resources,
// counting, and simulated runs to put on a page.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "sim/timeline.hpp"
#include "traces/html_report.hpp"

namespace pipesim {

inline std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size())) ++n;
  return n;
}

// Tag balance: every element opened is closed in order (void elements and "/>" excepted),
// attribute quotes pair up, no stray '<'. Returns "" when well-formed, else what broke.
inline std::string markup_error(const std::string& html) {
  std::vector<std::string> open;
  std::size_t i = 0;
  while ((i = html.find('<', i)) != std::string::npos) {
    const auto end = html.find('>', i);
    if (end == std::string::npos) return "unterminated tag at " + std::to_string(i);
    const std::string tag = html.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty()) return "empty tag";
    if (tag[0] == '!') continue;  // <!DOCTYPE html>
    if (std::count(tag.begin(), tag.end(), '"') % 2 != 0) return "unbalanced quotes in <" + tag + ">";
    if (tag.find('<') != std::string::npos) return "stray '<' in <" + tag + ">";
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes <" + (open.empty() ? std::string("nothing") : open.back()) + ">";
      open.pop_back();
      continue;
    }
    if (tag.back() == '/') continue;  // <rect .../>
    const std::string name = tag.substr(0, tag.find_first_of(" \n"));
    if (name == "meta" || name == "br") continue;
    open.push_back(name);
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  return "";
}

inline void expect_self_contained(const std::string& html) {
  EXPECT_THAT(html, ::testing::Not(::testing::HasSubstr("<script")));
  EXPECT_THAT(html, ::testing::Not(::testing::HasSubstr("<link")));
  EXPECT_THAT(html, ::testing::Not(::testing::HasSubstr("url(")));
  EXPECT_THAT(html, ::testing::Not(::testing::HasSubstr("@import")));
  EXPECT_THAT(html, ::testing::Not(::testing::HasSubstr("src=")));
  EXPECT_THAT(html, ::testing::Not(::testing::HasSubstr("https://")));
  // The one http:// is the SVG namespace name, which browsers never fetch.
  EXPECT_EQ(count(html, "http://"), count(html, "http://www.w3.org/2000/svg"));
}

// A schedule simulated on uniform costs (wgrad defaults to half of bwd), with its timeline.
struct SimRun {
  Schedule schedule;
  Timeline timeline;
  Metrics metrics;
};

inline SimRun simulate_run(const std::string& name, ScheduleParams params, UniformCostConfig costs = {}) {
  if (costs.stage.wgrad == 0) costs.stage.wgrad = costs.stage.bwd / 2;
  SimRun run{generate(name, params), {}, {}};
  TimelineRecorder recorder;
  const SimResult result = simulate(run.schedule, UniformCostModel(costs), &recorder);
  run.timeline = std::move(recorder.timeline);
  run.metrics = summarize(run.schedule, result);
  return run;
}

inline std::string report_of(const std::vector<const SimRun*>& runs, const ReportOptions& options = {}) {
  std::vector<ReportRun> list;
  for (const SimRun* r : runs) list.push_back({r->schedule, r->timeline, r->metrics});
  std::ostringstream out;
  write_html_report(out, list, options);
  return out.str();
}

}  // namespace pipesim
