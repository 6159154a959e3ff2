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

namespace pipesim {
namespace {

struct RunOutput {
  Schedule schedule;
  SimResult result;
  Metrics metrics;
};

// Simulates one schedule; writes its trace if `trace_path` is set.
RunOutput run_one(const ScheduleOptions& so, const std::string& name, const UniformCostConfig& costs,
                  const std::string& trace_path) {
  RunOutput out{make_schedule(so, name), {}, {}};
  const UniformCostModel model(costs);
  if (trace_path.empty()) {
    out.result = simulate(out.schedule, model);
  } else {
    TimelineRecorder recorder;
    out.result = simulate(out.schedule, model, &recorder);
    TraceOptions options;
    options.metadata = {{"generator", "pipesim " PIPESIM_VERSION}, {"cost model", "uniform"}};
    write_chrome_trace_file(trace_path, out.schedule, recorder.timeline, options);
  }
  out.metrics = summarize(out.schedule, out.result);
  return out;
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
  add_schedule_flags(*cmd, *so, true);
  add_cost_flags(*cmd, *co);
  cmd->add_option("--trace", *trace, "Write a Chrome trace (Perfetto / chrome://tracing) to this file");
  cmd->add_flag("--json", *json, "Print one JSON object instead of tables");
  cmd->callback([=] {
    const RunOutput run = run_one(*so, so->name, make_cost_config(*co), *trace);
    if (*json) {
      std::cout << metrics_json(run.metrics).dump(2) << "\n";
      return;
    }
    std::cout << summary_text(run.metrics) << "\n" << device_table(run.metrics);
    if (!trace->empty()) std::cout << "\ntrace written to " << *trace << " (open in ui.perfetto.dev)\n";
  });
}

void add_compare_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare", "Simulate several schedules on the same settings, one table");
  auto so = std::make_shared<ScheduleOptions>();
  auto co = std::make_shared<CostOptions>();
  auto names = std::make_shared<std::string>("gpipe,1f1b,interleaved,zb-h1");
  auto trace_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--schedules", *names, "Comma-separated generator names, or 'all'")->capture_default_str();
  add_schedule_flags(*cmd, *so, false);
  add_cost_flags(*cmd, *co);
  cmd->add_option("--trace-dir", *trace_dir, "Write one Chrome trace per schedule into this folder");
  cmd->add_flag("--json", *json, "Print a JSON object {\"schedules\": [...]} instead of the table");
  cmd->callback([=] {
    std::vector<std::string> list = split_list(*names);
    if (*names == "all") {
      list.clear();
      for (const auto& g : generators()) list.emplace_back(g.name);
    }
    if (list.empty()) throw InputError("--schedules: expected a comma-separated list of schedule names");
    const UniformCostConfig costs = make_cost_config(*co);
    if (!trace_dir->empty()) {
      std::error_code ec;
      std::filesystem::create_directories(*trace_dir, ec);
      if (ec) throw InputError("--trace-dir: cannot create '" + *trace_dir + "': " + ec.message());
    }
    std::vector<Metrics> all;
    std::vector<std::string> traces;
    for (const auto& name : list) {
      for (const auto& m : all)
        if (m.schedule == name) throw InputError("--schedules: '" + name + "' is listed twice");
      std::string path;
      if (!trace_dir->empty()) path = (std::filesystem::path(*trace_dir) / (name + ".trace.json")).string();
      all.push_back(run_one(*so, name, costs, path).metrics);
      if (!path.empty()) traces.push_back(path);
    }
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
  });
}

}  // namespace pipesim
