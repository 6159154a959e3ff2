#include "traces/html_report.hpp"

#include <algorithm>
#include <ostream>

#include "core/error.hpp"
#include "traces/html_breakdown.hpp"
#include "traces/html_gantt.hpp"
#include "traces/html_memory.hpp"
#include "traces/html_model.hpp"
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

// Memory over time against the capacity, the parts at each device's peak for a run on a
// model, and which devices exceed the capacity.
void write_memory(std::ostream& out, const ReportRun& run, const TimeRange& range, const ReportOptions& options) {
  const ReportAssessment* a = run.assessment;
  MemoryChartOptions mem;
  mem.range = range;
  mem.width = options.width;
  mem.capacity_bytes = a ? std::optional<std::int64_t>(a->capacity) : options.capacity_bytes;
  if (a)
    for (const ReportDeviceMemory& d : a->memory) mem.static_bytes.push_back(d.static_bytes());
  const MemoryChart mc = render_memory_chart(run.schedule, run.timeline, mem);
  if (a) {
    put(out, "<h3>Memory</h3>\n<p class=\"note\">Each line is what one GPU of a pipeline device holds over time: its "
             "static memory (weights, times the copies it keeps, gradients, optimizer state, recomputation workspace "
             "and communication buffers) plus the activations it holds at that moment. Dashed red: the " +
                 xml_escape(a->hardware) + "'s memory, " + xml_escape(format_bytes(static_cast<double>(a->capacity))) +
                 ".</p>\n" + mc.legend);
  } else {
    put(out, "<h3>Activation memory</h3>\n" + mc.legend);
    if (!mc.bytes)
      put(out,
          "<p class=\"note\">The run gives activations no size (--activation-memory), so the chart counts "
          "micro-batch activations held.</p>\n");
    else if (!options.capacity_bytes)
      put(out, "<p class=\"note\">No device capacity given (--report-capacity), so none is drawn.</p>\n");
  }
  if (!mc.over_capacity.empty()) {
    std::string devices;
    for (int d : mc.over_capacity) devices += (devices.empty() ? "" : ", ") + std::to_string(d);
    const std::string what = a ? "Peak memory" : "Peak activation memory";
    put(out, "<p class=\"warn\">" + what + " exceeds the capacity on device" +
                 std::string(mc.over_capacity.size() > 1 ? "s " : " ") + devices +
                 (a ? ": the configuration does not fit (" + xml_escape(fit_text(*a)) + ")" : std::string()) +
                 ".</p>\n");
  }
  put(out, mc.svg + "\n");
  if (!a) return;
  const MemoryBreakdownChart bars = render_memory_breakdown(a->memory, a->capacity, options.width);
  put(out, "<h3>Memory at the peak, per device</h3>\n" + bars.legend + bars.svg + "\n");
  MemoryChartOptions alone = mem;
  alone.static_bytes.clear();
  alone.capacity_bytes.reset();
  const MemoryChart ac = render_memory_chart(run.schedule, run.timeline, alone);
  put(out, "<details><summary>Activation memory alone</summary>\n" + ac.legend + ac.svg + "\n</details>\n");
}

// What the time-breakdown charts' note says about the window they cover.
std::string breakdown_note(const TimeBreakdown& b) {
  const std::string window = b.window.counted == 1 && b.window.start == 0
                                 ? "the whole run (one iteration)"
                                 : "the steady state (the last " + std::to_string(b.window.counted) +
                                       " iterations, the window time per iteration is measured over)";
  return "<p class=\"note\">Time per iteration over " + xml_escape(window) +
         ", by what each device does: its work (F, B, I, W, optimizer), recomputation, exposed tensor-parallel "
         "communication, waiting for other stages (pipeline), exposed gradient reduction (DP sync) and idle "
         "before its first op or after its last. The parts add up to the time per iteration. Hover a part for "
         "its time.</p>\n";
}

void write_breakdown(std::ostream& out, const TimeBreakdown& b, int width) {
  const BreakdownChart chart = render_breakdown_bars(device_bars(b), "where the time goes, per device", width);
  put(out, "<h3>Where the time goes</h3>\n" + breakdown_note(b) + chart.legend + chart.svg +
               "\n<p class=\"note\">* the critical device: the one that computes longest. mean = over the devices.</p>\n");
}

void write_section(std::ostream& out, const ReportRun& run, std::size_t index, const TimeRange& range,
                   const ReportOptions& options, bool several_gpus) {
  const Metrics& m = run.metrics;
  const ReportAssessment* a = run.assessment;
  std::string heading = xml_escape(m.schedule) + (a && several_gpus ? " on " + xml_escape(a->hardware) : "");
  if (a && !a->fits()) heading += "<span class=\"badge\">does not fit: " + xml_escape(fit_text(*a)) + "</span>";
  put(out, "<section id=\"" + anchor_of(index) + "\"" + (a && !a->fits() ? " class=\"nofit\"" : "") + ">\n<h2>" +
               heading + "</h2>\n");
  put(out, "<p class=\"settings\">" + xml_escape(shape_line(run.schedule)) + "</p>\n");
  put(out, "<h3>Summary</h3>\n" + metrics_summary_html(m, a ? model_summary_html(*a) : std::string()));
  if (run.breakdown) write_breakdown(out, *run.breakdown, options.width);

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

  write_memory(out, run, range, options);

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
  put(out, "<details><summary>Per device</summary>\n" + device_table_html(m) +
               (a ? device_memory_table_html(*a) : std::string()) + "</details>\n</section>\n");
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
  const bool model = runs.front().assessment != nullptr;
  std::vector<ModelRow> rows;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    PIPESIM_ASSERT((runs[i].assessment != nullptr) == model);
    PIPESIM_ASSERT(!model || runs[i].assessment->memory.size() == static_cast<std::size_t>(runs[i].schedule.num_devices));
    if (model) rows.push_back({&runs[i].metrics, runs[i].assessment, runs.size() > 1 ? anchor_of(i) : ""});
  }
  if (model) put(out, experiment_facts_html(rows) + verdict_html(rows));
  put(out, options.intro_html);
  if (runs.size() > 1) {
    std::string nav;
    for (std::size_t i = 0; i < runs.size(); ++i)
      nav += "<a href=\"#" + anchor_of(i) + "\">" + xml_escape(runs[i].metrics.schedule) + "</a>";
    put(out, "<nav>" + nav + "</nav>\n<section id=\"summary\">\n<h2>Summary</h2>\n");
    if (model) {
      put(out, model_compare_summary_html(rows));
      put(out,
          "<p class=\"note\">Bold: best in its column among the configurations that fit. Red rows do not fit in "
          "the GPU's memory and are never marked best. tokens/s and $/M tokens in steady state; MFU = model FLOPs "
          "(forward + backward, no recomputation) / (time x GPUs x dense peak); peak memory = the fullest GPU: "
          "weights (x copies held), gradients, optimizer state, activations, buffers; weights = the most weights "
          "one device holds, in shares of a plain pipeline device's (1/p of the model); bubble = idle share of the "
          "whole run, fill and drain included, not ranked (time/iter and tokens/s are); mismatch and delay in "
          "optimizer steps. All timelines share one time axis.</p>\n"
          "</section>\n");
    } else {
      std::vector<const Metrics*> all;
      std::vector<std::string> anchors;
      for (std::size_t i = 0; i < runs.size(); ++i) {
        all.push_back(&runs[i].metrics);
        anchors.push_back(anchor_of(i));
      }
      put(out, compare_summary_html(all, anchors, options.rank_runs));
      put(out,
          std::string("<p class=\"note\">") + (options.rank_runs ? "Bold: best in its column. " : "") +
          "bubble = idle / (devices x makespan); Megatron's = idle / "
          "ideal, both over the whole run and not ranked; weights = the most weights one device holds, in shares of "
          "a plain pipeline device's (1/p of the model; each stashed version one more); mismatch = updates "
          "between a micro-batch's forward and backward at a stage; delay = updates between the weights a gradient "
          "was computed on and the update that applies it. All timelines share one time axis.</p>\n</section>\n");
    }
  }
  if (runs.size() > 1 && std::all_of(runs.begin(), runs.end(), [](const ReportRun& r) { return r.breakdown != nullptr; })) {
    std::vector<BreakdownBar> bars;
    for (const ReportRun& r : runs) {
      const bool on_gpu = r.assessment && r.assessment->hardware != runs.front().assessment->hardware;
      bars.push_back(mean_bar(*r.breakdown, r.metrics.schedule + (on_gpu ? " on " + r.assessment->hardware : "")));
    }
    const BreakdownChart chart = render_breakdown_bars(bars, "where the time goes, mean over the devices", options.width);
    put(out, "<section id=\"breakdown\">\n<h2>Where the time goes</h2>\n" + breakdown_note(*runs.front().breakdown) +
                 chart.legend + chart.svg + "\n</section>\n");
  }
  bool several_gpus = false;
  for (const ModelRow& r : rows) several_gpus = several_gpus || r.assessment->hardware != rows.front().assessment->hardware;
  for (std::size_t i = 0; i < runs.size(); ++i) write_section(out, runs[i], i, range, options, several_gpus);
  put(out, "<footer><p class=\"note\">Generated by " + xml_escape(options.generator) +
               ". Self-contained: no scripts, fonts or network.</p></footer>\n</main>\n</body>\n</html>\n");
}

}  // namespace pipesim
