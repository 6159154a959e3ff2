#pragma once
// The self-contained HTML report of `pipesim simulate --report` and `pipesim compare
// --report`: one file, no network (inline SVG and CSS, system fonts, no scripts; tooltips
// are SVG <title> elements), readable in any browser. See docs/report.md.
//
// Page: title and settings; with several runs, one summary table across them and where the
// time goes, one stacked bar per run (html_breakdown.hpp); then one section per run with its
// summary table, where its time goes per device, Gantt timeline per device (html_gantt.hpp),
// memory over time against capacity (html_memory.hpp), staleness per stage
// (html_staleness.hpp) and a per-device table. The time charts of all runs share one time
// axis (0 to the latest end), so equal lengths mean equal times across schedules.
//
// Runs on a model (ReportRun::assessment, traces/report_assessment.hpp) add what a person
// picks a configuration by (html_model.hpp): model, GPU, cluster, parallelism and global
// batch at the top, the fastest configuration that fits, tokens/s, MFU, $/M tokens and
// memory against the GPU's capacity in the tables; their memory charts show static memory
// plus activations against the GPU's capacity, and what each device holds at its peak. A
// run that does not fit is marked in red and never bold as the best of a column.
//
// Deterministic: the page is a pure function of its input (fixed number formatting, no
// dates), so the same runs give a byte-identical file.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schedules/schedule.hpp"
#include "sim/breakdown.hpp"
#include "sim/metrics.hpp"
#include "sim/timeline.hpp"
#include "traces/report_assessment.hpp"

namespace pipesim {

struct ReportOptions {
  std::string title = "pipesim report";
  // Shown under the title in order, e.g. {"fwd", "1ms"}.
  std::vector<std::pair<std::string, std::string>> settings;
  // Device memory capacity for the memory charts of runs without an assessment (like
  // TraceOptions, a presentation setting: the simulation itself does not limit memory). A
  // run on a model is drawn against its GPU's capacity instead.
  std::optional<std::int64_t> capacity_bytes;
  int width = 1200;                   // px of every chart
  std::size_t max_shapes = 2000;      // per Gantt chart; above this it is aggregated
  std::string generator = "pipesim";  // footer ("pipesim 0.1.0"); never a date
  // HTML put after the title and settings, before the runs (validate's error tables,
  // traces/html_validation.hpp); the caller escapes what it contains.
  std::string intro_html;
  // Bold the best of each summary column: the runs compete (compare). False where they are
  // one schedule seen two ways (validate's predicted and measured), where "best" means nothing.
  bool rank_runs = true;
};

// One simulated run; the report only reads it.
struct ReportRun {
  const Schedule& schedule;
  const Timeline& timeline;
  const Metrics& metrics;
  const ReportAssessment* assessment = nullptr;  // a run on a model; null: no model (uniform or profiled costs)
  const TimeBreakdown* breakdown = nullptr;      // where the time goes (sim/breakdown.hpp); null: not drawn
};

// Writes the page. `runs` must not be empty; each timeline must belong to its schedule;
// either every run has an assessment (with one memory entry per device) or none has.
void write_html_report(std::ostream& out, const std::vector<ReportRun>& runs, const ReportOptions& options = {});

}  // namespace pipesim
