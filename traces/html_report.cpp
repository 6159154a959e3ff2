#include "traces/html_report.hpp"

#include <algorithm>
#include <ostream>

#include "core/error.hpp"
#include "traces/html_gantt.hpp"
#include "traces/html_memory.hpp"
#include "traces/html_staleness.hpp"
#include "traces/html_style.hpp"
#include "traces/html_tables.hpp"
#include "traces/svg.hpp"

namespace pipesim {
namespace {

void put(std::ostream& out, const std::string& text) {
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

std::string anchor_of(std::size_t index) { return "run-" + std::to_string(index); }

std::string shape_line(const Schedule& s) {
  return std::to_string(s.num_devices) + " devices, " + std::to_string(s.num_stages) + " stages" +
         (s.num_pipelines > 1 ? " x " + std::to_string(s.num_pipelines) + " pipelines" : "") + ", " +
         std::to_string(s.microbatches) + " micro-batches x " + std::to_string(s.iterations) +
         (s.iterations == 1 ? " iteration, " : " iterations, ") + std::to_string(s.total_ops()) +
         " ops, weights: " + std::string(weight_policy_name(s.weight_policy));
}

void write_section(std::ostream& out, const ReportRun& run, std::size_t index, const TimeRange& range,
                   const ReportOptions& options) {
  const Metrics& m = run.metrics;
  put(out, "<section id=\"" + anchor_of(index) + "\">\n<h2>" + xml_escape(m.schedule) + "</h2>\n");
  put(out, "<p class=\"settings\">" + xml_escape(shape_line(run.schedule)) + "</p>\n");
  put(out, "<h3>Summary</h3>\n" + metrics_summary_html(m));

  GanttOptions gantt;
  gantt.range = range;
  gantt.width = options.width;
  gantt.max_shapes = options.max_shapes;
  const GanttChart g = render_gantt(run.schedule, run.timeline, gantt);
  put(out, "<h3>Timeline</h3>\n" + legend_html(g.kinds));
  if (g.aggregated)
    put(out, "<p class=\"note\">Aggregated: " + std::to_string(g.shapes) + " shapes are more than " +
                 std::to_string(options.max_shapes) +
                 ", so each device shows its busy intervals merged per kind at pixel resolution (1 px = " +
                 format_duration(g.ns_per_px) +
                 "), one strip per kind; gaps shorter than a pixel do not show. Hover a bar for its op count and busy "
                 "time.</p>\n");
  else
    put(out,
        "<p class=\"note\">Hover an op for its exact times. Grey is idle time (bubbles); labels are kind + "
        "micro-batch where they fit.</p>\n");
  put(out, g.svg + "\n");

  MemoryChartOptions mem;
  mem.range = range;
  mem.width = options.width;
  mem.capacity_bytes = options.capacity_bytes;
  const MemoryChart mc = render_memory_chart(run.schedule, run.timeline, mem);
  put(out, "<h3>Activation memory</h3>\n" + mc.legend);
  if (!mc.bytes)
    put(out,
        "<p class=\"note\">The run gives activations no size (--activation-memory), so the chart counts "
        "micro-batch activations held.</p>\n");
  else if (!options.capacity_bytes)
    put(out, "<p class=\"note\">No device capacity given (--report-capacity), so none is drawn.</p>\n");
  if (!mc.over_capacity.empty()) {
    std::string devices;
    for (int d : mc.over_capacity) devices += (devices.empty() ? "" : ", ") + std::to_string(d);
    put(out, "<p class=\"warn\">Peak activation memory exceeds the capacity on device" +
                 std::string(mc.over_capacity.size() > 1 ? "s " : " ") + devices + ".</p>\n");
  }
  put(out, mc.svg + "\n");

  const StalenessChart sc = render_staleness_chart(m.staleness, options.width);
  put(out, "<h3>Staleness</h3>\n");
  if (sc.svg.empty()) {
    put(out,
        "<p class=\"note\">No staleness: every backward used its forward's weights and every gradient was "
        "applied to the weights it was computed on.</p>\n");
  } else {
    put(out,
        "<p class=\"note\">Mismatch: updates between a micro-batch's forward and its backward at a stage. "
        "Gradient delay: updates between the weights a gradient was computed on and the update that applies "
        "it.</p>\n" +
            sc.legend + sc.svg + "\n");
  }
  put(out, "<details><summary>Per device</summary>\n" + device_table_html(m) + "</details>\n</section>\n");
}

}  // namespace

void write_html_report(std::ostream& out, const std::vector<ReportRun>& runs, const ReportOptions& options) {
  PIPESIM_ASSERT(!runs.empty());
  // One time axis for every run, so lengths compare across schedules.
  TimeRange range{0, 1};
  for (const ReportRun& r : runs) range.end = std::max(range.end, timeline_end(r.timeline));

  put(out,
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
          xml_escape(options.title) + "</title>\n<style>\n" + report_css() + "</style>\n</head>\n<body>\n<main>\n");
  put(out, "<h1>" + xml_escape(options.title) + "</h1>\n");
  if (!options.settings.empty()) {
    std::string line;
    for (const auto& [key, value] : options.settings)
      line += (line.empty() ? "" : " &middot; ") + xml_escape(key) + "=" + xml_escape(value);
    put(out, "<p class=\"settings\">" + line + "</p>\n");
  }
  put(out, options.intro_html);
  if (runs.size() > 1) {
    std::string nav;
    for (std::size_t i = 0; i < runs.size(); ++i)
      nav += "<a href=\"#" + anchor_of(i) + "\">" + xml_escape(runs[i].metrics.schedule) + "</a>";
    put(out, "<nav>" + nav + "</nav>\n<section id=\"summary\">\n<h2>Summary</h2>\n");
    std::vector<const Metrics*> all;
    std::vector<std::string> anchors;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      all.push_back(&runs[i].metrics);
      anchors.push_back(anchor_of(i));
    }
    put(out, compare_summary_html(all, anchors));
    put(out,
        "<p class=\"note\">Bold: best in its column. bubble = idle / (devices x makespan); Megatron's = idle / "
        "ideal; weights = most weight copies one device holds (replicas + stashed versions); mismatch = updates "
        "between a micro-batch's forward and backward at a stage; delay = updates between the weights a gradient "
        "was computed on and the update that applies it. All timelines share one time axis.</p>\n</section>\n");
  }
  for (std::size_t i = 0; i < runs.size(); ++i) write_section(out, runs[i], i, range, options);
  put(out, "<footer><p class=\"note\">Generated by " + xml_escape(options.generator) +
               ". Self-contained: no scripts, fonts or network.</p></footer>\n</main>\n</body>\n</html>\n");
}

}  // namespace pipesim
