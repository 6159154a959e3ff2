// `pipesim run`: run a schedule for real (executor/executor.hpp) and report what happened
// in the same tables, JSON and Chrome trace as `simulate`, with measured times.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cost_models/catalog.hpp"
#include "executor/backend_factory.hpp"
#include "executor/executor.hpp"
#include "executor/text_corpus.hpp"
#include "core/error.hpp"
#include "sim/metrics.hpp"
#include "tools/cli_options.hpp"
#include "tools/command_files.hpp"
#include "tools/commands.hpp"
#include "tools/run_flags.hpp"
#include "tools/run_losses.hpp"
#include "tools/report.hpp"
#include "tools/table.hpp"
#include "traces/chrome_trace.hpp"

namespace pipesim {
namespace {

// The run's flags: what the executor needs, and where its output goes.
struct RunFlags : ExecutorFlags {
  std::string trace;
  std::string report;
  bool json = false;
  std::string data;
  int validate_every = 0;
};

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string data_text(const RunFlags& f) {
  return f.data.empty() ? "synthetic data" : "data " + quote(f.data) + " (byte-level tokens)";
}

std::string settings_line(const Schedule& s, const RunFlags& f, const MeasuredRun& run) {
  return "pipesim run: " + s.name + " on " + f.model + ", " + f.backend + " backend, " +
         std::to_string(s.num_devices) + " device threads on " + std::to_string(run.hardware_threads) +
         " cores, micro-batch size " + std::to_string(f.micro_batch_size) + ", " + f.optimizer + " lr " +
         short_number(f.lr) + ", seed " + std::to_string(f.seed) + ", " + data_text(f) + "\n\n";
}

nlohmann::ordered_json run_json(const Metrics& m, const RunFlags& f, const MeasuredRun& run) {
  nlohmann::ordered_json j = metrics_json(m);
  j["measured"] = true;
  j["backend"] = f.backend;
  j["model"] = f.model;
  j["micro_batch_size"] = f.micro_batch_size;
  j["optimizer"] = f.optimizer;
  j["lr"] = f.lr;
  j["seed"] = f.seed;
  j["hardware_threads"] = run.hardware_threads;
  j["data"] = f.data.empty() ? "synthetic" : f.data;
  j["validate_every"] = f.validate_every;
  add_loss_json(j, run);
  auto& losses = j["losses"] = nlohmann::ordered_json::array();
  for (const LossRecord& l : run.losses)
    losses.push_back({{"microbatch", l.microbatch}, {"pipeline", l.pipeline}, {"iteration", l.iteration}, {"loss", l.loss}});
  j["warnings"] = run.warnings;
  if (auto launch = launch_json(run); !launch.is_null()) j["launch"] = std::move(launch);
  return j;
}

void write_trace(std::ostream& out, const Schedule& s, const RunFlags& f, const MeasuredRun& run,
                 const std::string& partial) {
  TraceOptions options;
  options.metadata = {{"generator", "pipesim " PIPESIM_VERSION},
                      {"measured", f.backend + " backend, model " + f.model + ", micro-batch size " +
                                       std::to_string(f.micro_batch_size)}};
  if (const auto launch = launch_json(run); !launch.is_null()) options.metadata.emplace_back("launch", launch["path"].get<std::string>());
  if (!partial.empty()) options.metadata.emplace_back("partial", partial);
  options.counters = loss_counters(s, run);
  write_chrome_trace(out, s, run.timeline, options);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run a schedule for real (one thread per device) and measure it");
  auto so = std::make_shared<ScheduleOptions>();
  auto f = std::make_shared<RunFlags>();
  add_executor_flags(*cmd, *f);
  add_schedule_flags(*cmd, *so, true);
  cmd->add_option("--trace", f->trace, "Write the measured Chrome trace (Perfetto / chrome://tracing) to this file");
  cmd->add_flag("--json", f->json, "Print one JSON object instead of tables");
  cmd->add_option("--report", f->report,
                  "Write an HTML page: training and validation loss against iterations and against wall time");
  cmd->add_option("--data", f->data,
                  "Train on this UTF-8 text file (byte-level tokens; 'fortunes': the Debian fortunes corpus) instead "
                  "of synthetic sequences");
  cmd->add_option("--validate-every", f->validate_every,
                  "Validation loss before training and after every K optimizer steps (0: none)")
      ->capture_default_str();
  cmd->callback([=] {
    RunOptions options = make_run_options(*f, so->max_memory);
    options.validate_every = f->validate_every;
    CommandFiles files;
    files.input("--schedule-file", so->file);
    if (f->data != "fortunes") files.input("--data", f->data);
    files.catalog_input("--model", f->model);
    OutputFile* trace = files.output("--trace", f->trace);
    OutputFile* report = files.output("--report", f->report);
    const ModelSpec model = find_model(f->model);
    if (so->file.empty()) check_generator_flags(*cmd, {so->name});
    const Schedule schedule = make_schedule(*cmd, *so, so->name);
    if (!f->data.empty()) options.data = load_text_corpus(f->data);
    check_run(schedule, model, options);  // before the warning: bad input is one line
    warn_if_oversubscribed(schedule);
    MeasuredRun run;
    try {
      run = run_schedule(schedule, model, options);
    } catch (const ExecutionError& e) {
      // What ran before the failure, for finding out why, but never over an existing file:
      // a failed run leaves every file as it was.
      if (trace && !std::filesystem::exists(f->trace)) {
        write_trace(trace->stream(), schedule, *f, e.partial(), e.what());
        trace->commit();
        std::cerr << "pipesim: partial trace written to " << one_line(f->trace) << "\n";
      } else if (trace) {
        std::cerr << "pipesim: no partial trace: " << quote(f->trace, 256)
                  << " exists, and a failed run leaves it as it was\n";
      }
      throw;
    }
    const Metrics metrics = summarize(schedule, run.result);
    if (trace) write_trace(trace->stream(), schedule, *f, run, "");
    if (report) {
      const std::string heading = settings_line(schedule, *f, run);
      report->stream() << loss_report(heading.substr(0, heading.find('\n')), run);
    }
    if (f->json) {
      std::cout << json_text(run_json(metrics, *f, run)) << "\n";
    } else {
      std::cout << settings_line(schedule, *f, run) << summary_text(metrics) << loss_lines(run) << launch_line(run) << "\n"
                << device_table(metrics) << "\n"
                << loss_table(run);
      if (trace) std::cout << "\ntrace written to " << one_line(f->trace) << " (open in ui.perfetto.dev)\n";
      if (report) std::cout << "report written to " << one_line(f->report) << " (open in a browser)\n";
    }
    files.commit();
  });
}

}  // namespace pipesim
