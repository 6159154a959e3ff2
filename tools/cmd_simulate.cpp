// `pipesim simulate` (one schedule) and `pipesim compare` (several on the same settings).
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "schedules/error.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "sim/timeline.hpp"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"
#include "tools/report.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/html_report.hpp"

namespace pipesim {
namespace {

struct RunOutput {
  Schedule schedule;
  SimResult result;
  Metrics metrics;
  Timeline timeline;  // recorded only when `keep_timeline` (an HTML report wants it)
};

// Simulates one schedule; writes its trace if `trace_path` is set.
RunOutput run_one(const ScheduleOptions& so, const std::string& name, const UniformCostConfig& costs,
                  const std::string& trace_path, bool keep_timeline = false) {
  RunOutput out{make_schedule(so, name), {}, {}, {}};
  const UniformCostModel model(costs);
  if (trace_path.empty() && !keep_timeline) {
    out.result = simulate(out.schedule, model);
  } else {
    TimelineRecorder recorder;
    out.result = simulate(out.schedule, model, &recorder);
    if (!trace_path.empty()) {
      TraceOptions options;
      options.metadata = {{"generator", "pipesim " PIPESIM_VERSION}, {"cost model", "uniform"}};
      write_chrome_trace_file(trace_path, out.schedule, recorder.timeline, options);
    }
    if (keep_timeline) out.timeline = std::move(recorder.timeline);
  }
  out.metrics = summarize(out.schedule, out.result);
  return out;
}

// --report FILE and --report-capacity SIZE, shared by simulate and compare.
struct ReportFlags {
  std::string path;
  std::string capacity;
};

void add_report_flags(CLI::App& cmd, ReportFlags& flags) {
  auto* report = cmd.add_option("--report", flags.path,
                                "Write a self-contained HTML report (timelines, memory, staleness) to this file");
  cmd.add_option("--report-capacity", flags.capacity, "Device memory capacity drawn on the report's memory charts")
      ->needs(report);
}

// The settings line of the report: the flags that shaped the runs.
std::vector<std::pair<std::string, std::string>> report_settings(const ScheduleOptions& so, const CostOptions& co) {
  std::vector<std::pair<std::string, std::string>> out;
  if (so.file.empty()) {
    out = {{"p", std::to_string(so.params.p)}, {"m", std::to_string(so.params.m)}, {"v", std::to_string(so.params.v)},
           {"iterations", std::to_string(so.params.iterations)}};
  } else {
    out = {{"schedule file", so.file}};
  }
  out.insert(out.end(), {{"fwd", co.fwd}, {"bwd", co.bwd}, {"wgrad", co.wgrad.empty() ? "bwd/2" : co.wgrad}});
  if (co.optimizer != "0ns") out.emplace_back("optimizer", co.optimizer);
  if (co.link_latency != "0ns") out.emplace_back("link latency", co.link_latency);
  if (!co.link_bandwidth.empty()) out.emplace_back("link bandwidth", co.link_bandwidth);
  if (co.activation_bytes != "0B") out.emplace_back("activation bytes", co.activation_bytes);
  if (!co.activation_memory.empty()) out.emplace_back("activation memory", co.activation_memory);
  if (co.grad_bytes != "0B") out.emplace_back("grad bytes", co.grad_bytes);
  return out;
}

void write_report(const ReportFlags& flags, const std::string& title, const ScheduleOptions& so,
                  const CostOptions& co, const std::vector<RunOutput>& runs) {
  ReportOptions options;
  options.title = title;
  options.settings = report_settings(so, co);
  options.generator = "pipesim " PIPESIM_VERSION;
  if (!flags.capacity.empty()) options.capacity_bytes = parse_bytes(flags.capacity, "--report-capacity");
  std::vector<ReportRun> list;
  for (const auto& r : runs) list.push_back({r.schedule, r.timeline, r.metrics});
  write_html_report_file(flags.path, list, options);
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("simulate", "Simulate one schedule and report time, bubbles and memory");
  auto so = std::make_shared<ScheduleOptions>();
  auto co = std::make_shared<CostOptions>();
  auto trace = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto report = std::make_shared<ReportFlags>();
  add_schedule_flags(*cmd, *so, true);
  add_cost_flags(*cmd, *co);
  cmd->add_option("--trace", *trace, "Write a Chrome trace (Perfetto / chrome://tracing) to this file");
  add_report_flags(*cmd, *report);
  cmd->add_flag("--json", *json, "Print one JSON object instead of tables");
  cmd->callback([=] {
    if (!report->capacity.empty()) (void)parse_bytes(report->capacity, "--report-capacity");  // fail before simulating
    std::vector<RunOutput> runs;
    runs.push_back(run_one(*so, so->name, make_cost_config(*co), *trace, !report->path.empty()));
    const RunOutput& run = runs.front();
    if (!report->path.empty())
      write_report(*report, "pipesim report: " + run.metrics.schedule, *so, *co, runs);
    if (*json) {
      std::cout << metrics_json(run.metrics).dump(2) << "\n";
      return;
    }
    std::cout << summary_text(run.metrics) << "\n" << device_table(run.metrics);
    if (!trace->empty()) std::cout << "\ntrace written to " << *trace << " (open in ui.perfetto.dev)\n";
    if (!report->path.empty()) std::cout << "report written to " << report->path << " (open in a browser)\n";
  });
}

void add_compare_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare", "Simulate several schedules on the same settings, one table");
  auto so = std::make_shared<ScheduleOptions>();
  auto co = std::make_shared<CostOptions>();
  auto names = std::make_shared<std::string>("gpipe,1f1b,interleaved,zb-h1");
  auto trace_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto report = std::make_shared<ReportFlags>();
  cmd->add_option("--schedules", *names, "Comma-separated generator names, or 'all'")->capture_default_str();
  add_schedule_flags(*cmd, *so, false);
  add_cost_flags(*cmd, *co);
  cmd->add_option("--trace-dir", *trace_dir, "Write one Chrome trace per schedule into this folder");
  add_report_flags(*cmd, *report);
  cmd->add_flag("--json", *json, "Print a JSON object {\"schedules\": [...]} instead of the table");
  cmd->callback([=] {
    std::vector<std::string> list = split_list(*names);
    if (*names == "all") {
      list.clear();
      for (const auto& g : generators()) list.emplace_back(g.name);
    }
    if (list.empty()) throw InputError("--schedules: expected a comma-separated list of schedule names");
    const UniformCostConfig costs = make_cost_config(*co);
    if (!report->capacity.empty()) (void)parse_bytes(report->capacity, "--report-capacity");  // fail before simulating
    if (!trace_dir->empty()) {
      std::error_code ec;
      std::filesystem::create_directories(*trace_dir, ec);
      if (ec) throw InputError("--trace-dir: cannot create '" + *trace_dir + "': " + ec.message());
    }
    std::vector<Metrics> all;
    std::vector<std::string> traces;
    std::vector<RunOutput> kept;  // whole runs, for the report
    for (const auto& name : list) {
      for (const auto& m : all)
        if (m.schedule == name) throw InputError("--schedules: '" + name + "' is listed twice");
      std::string path;
      if (!trace_dir->empty()) path = (std::filesystem::path(*trace_dir) / (name + ".trace.json")).string();
      RunOutput run = run_one(*so, name, costs, path, !report->path.empty());
      all.push_back(run.metrics);
      if (!report->path.empty()) kept.push_back(std::move(run));
      if (!path.empty()) traces.push_back(path);
    }
    if (!report->path.empty()) write_report(*report, "pipesim report: compare", *so, *co, kept);
    if (*json) {
      nlohmann::ordered_json j;
      j["schedules"] = nlohmann::ordered_json::array();
      for (const auto& m : all) j["schedules"].push_back(metrics_json(m));
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::cout << "p=" << so->params.p << " m=" << so->params.m << " v=" << so->params.v << " iterations="
              << so->params.iterations << "  fwd=" << co->fwd << " bwd=" << co->bwd
              << " wgrad=" << (co->wgrad.empty() ? "bwd/2" : co->wgrad) << "\n\n";
    std::cout << compare_table(all);
    for (const auto& path : traces) std::cout << (&path == &traces.front() ? "\ntraces: " : "        ") << path << "\n";
    if (!report->path.empty()) std::cout << "\nreport: " << report->path << " (open in a browser)\n";
  });
}

}  // namespace pipesim
