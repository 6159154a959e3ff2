#pragma once
// The HTML report of `pipesim simulate` and `pipesim compare` (--report): its flags, the
// settings line and the page (traces/html_report.hpp draws it).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "assess/assessment.hpp"
#include "schedules/schedule.hpp"
#include "sim/breakdown.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "sim/timeline.hpp"
#include "tools/cli_options.hpp"
#include "tools/hardware_flags.hpp"
#include "core/output_file.hpp"
#include "tools/command_files.hpp"
#include "tools/sample_flags.hpp"

namespace pipesim {

// One simulated schedule, as the commands keep it.
struct RunOutput {
  Schedule schedule;
  SimResult result;
  Metrics metrics;
  Timeline timeline;  // recorded only when Keep::timeline (an HTML report wants it)
  std::optional<TimeBreakdown> breakdown;  // only when Keep::breakdown
};

struct ReportFlags {
  std::string path;
  std::string capacity;
};

// --report FILE and --report-capacity.
void add_report_flags(CLI::App& cmd, ReportFlags& flags);

// The settings line of the report: the flags that shaped the runs, and only those (no
// uniform costs on a model or a profile, no -v without a schedule that reads it, no --wgrad
// without a split backward). Model, GPU, cluster and parallelism are the page's own table.
std::vector<std::pair<std::string, std::string>> report_settings(const ScheduleOptions& so, const CostOptions& co,
                                                                 const HardwareOptions& ho,
                                                                 const std::string& cost_label,
                                                                 const std::vector<RunOutput>& runs);

// Writes the page to `file` and closes it. `assessments`: one per run on a model, or empty.
void write_report(const ReportFlags& flags, OutputFile& file, const std::string& title,
                  std::vector<std::pair<std::string, std::string>> settings, const std::vector<RunOutput>& runs,
                  const std::vector<Assessment>& assessments, const std::vector<NamedInterval>& intervals);

// "pipesim report: compare", with the model and GPUs of a model run.
std::string report_title(const std::string& what, const std::vector<Assessment>& assessed);

}  // namespace pipesim
