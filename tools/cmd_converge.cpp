// `pipesim converge`: time to reach a validation loss, per schedule. Iterations to the target
// are measured by training a small proxy model for real (the executor, on real text, several
// seeds); the time of one iteration is simulated for the model and hardware asked about (the
// analytical cost model), or, without --model, measured on the proxy run itself. The answer
// is their product, printed with its assumption: that the proxy's iterations-to-target
// (and their ratio between schedules) carry over to the real model (docs/convergence.md).
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "cost_models/catalog.hpp"
#include "core/units.hpp"
#include "executor/executor.hpp"
#include "executor/text_corpus.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "tools/analytical_setup.hpp"
#include "tools/cli_options.hpp"
#include "tools/command_files.hpp"
#include "tools/commands.hpp"
#include "tools/convergence.hpp"
#include "tools/hardware_flags.hpp"
#include "tools/report.hpp"

namespace pipesim {
namespace {

struct ConvergeFlags {
  std::string schedules = "1f1b,pipedream,pipedream-2bw,async-1f1b,amp,amdp";
  std::string proxy = "gpt-tiny";
  std::string data = "fortunes";
  std::string seeds = "1";
  std::string optimizer = "adam";
  double lr = 3e-3;
  double target = 0;
  int validate_every = 10;
  bool json = false;
  std::string report;
};

std::vector<std::uint64_t> parse_seeds(const std::string& text) {
  std::vector<std::uint64_t> out;
  for (const std::string& item : split_list(text)) {
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || item[0] == '-')
      throw InputError("--seeds: expected comma-separated non-negative integers, got " + quote(text));
    if (std::find(out.begin(), out.end(), v) != out.end()) throw InputError("--seeds: " + item + " is listed twice");
    out.push_back(v);
  }
  if (out.empty()) throw InputError("--seeds: expected at least one seed");
  return out;
}

// Simulated time of one steady-state iteration of `schedule` for --model on --hardware.
Tick simulated_iteration(const HardwareOptions& ho, const Schedule& schedule) {
  const AnalyticalCostModel costs = analytical_model(ho, ho.hardware, schedule);
  Simulator simulator;
  return summarize(schedule, simulator.run(schedule, costs)).time_per_iteration;
}

}  // namespace

void add_converge_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "converge", "Time to a validation loss per schedule: iterations measured on a small proxy model trained for real, "
                  "times the time per iteration simulated for --model");
  auto f = std::make_shared<ConvergeFlags>();
  auto so = std::make_shared<ScheduleOptions>();
  auto ho = std::make_shared<HardwareOptions>();
  so->params.iterations = 300;
  cmd->add_option("--schedules", f->schedules, "Comma-separated generator names, or 'all'")->capture_default_str();
  add_schedule_flags(*cmd, *so, false);
  const std::size_t before = cmd->get_options().size();
  add_hardware_flags(*cmd, *ho);
  std::vector<CLI::Option*> hardware_flags = cmd->get_options();
  hardware_flags.erase(hardware_flags.begin(), hardware_flags.begin() + static_cast<std::ptrdiff_t>(before));
  cmd->add_option("--proxy-model", f->proxy, "The small GPT-style model trained for real (catalog name or file)")
      ->capture_default_str();
  cmd->add_option("--data", f->data, "UTF-8 text to train on ('fortunes': the Debian corpus)")->capture_default_str();
  cmd->add_option("--seeds", f->seeds, "Comma-separated seeds (weights and data order); each schedule runs once per seed")
      ->capture_default_str();
  cmd->add_option("--optimizer", f->optimizer, "sgd or adam")->check(CLI::IsMember({"sgd", "adam"}))->capture_default_str();
  cmd->add_option("--lr", f->lr, "Learning rate, the same for every schedule")->capture_default_str();
  cmd->add_option("--target", f->target,
                  "Validation loss to reach; 0: the highest of the schedules' lowest losses (one every schedule reaches)")
      ->capture_default_str();
  cmd->add_option("--validate-every", f->validate_every, "Iterations between validation points")->capture_default_str();
  cmd->add_flag("--json", f->json, "Print one JSON object instead of tables");
  cmd->add_option("--report", f->report, "Write an HTML report: validation loss against iterations and simulated time");
  cmd->callback([=] {
    if (ho->model.empty())
      for (const CLI::Option* o : hardware_flags)
        if (o->count() > 0)
          throw InputError(o->get_name() + ": used only with --model (the model whose time per iteration is simulated)");
    if (f->validate_every < 1)
      throw InputError("--validate-every: expected a number of iterations >= 1, got " + std::to_string(f->validate_every));
    if (!(f->target >= 0) || f->target > 1e6)
      throw InputError("--target: expected a validation loss > 0 (or 0: chosen from the runs), got " +
                       std::to_string(f->target));
    const std::vector<std::string> names = parse_schedule_list(f->schedules);
    const std::vector<std::uint64_t> seeds = parse_seeds(f->seeds);
    CommandFiles files;
    files.catalog_input("--proxy-model", f->proxy);
    files.catalog_input("--model", ho->model);
    if (f->data != "fortunes") files.input("--data", f->data);
    OutputFile* report = files.output("--report", f->report);
    check_generator_flags(*cmd, names);
    const ModelSpec proxy = find_model(f->proxy);
    RunOptions options;
    options.optimizer = {f->optimizer == "sgd" ? OptimizerKind::Sgd : OptimizerKind::Adam, f->lr};
    options.validate_every = f->validate_every;
    options.data = load_text_corpus(f->data);
    std::vector<ScheduleConvergence> results;
    for (const std::string& name : names) {
      const Schedule schedule = make_schedule(*cmd, *so, name);
      ScheduleConvergence r;
      r.schedule = name;
      for (const std::uint64_t seed : seeds) {
        options.seed = seed;
        check_run(schedule, proxy, options);
      }
      if (!ho->model.empty()) r.simulated_iteration = simulated_iteration(*ho, schedule);
      for (const std::uint64_t seed : seeds) {
        options.seed = seed;
        const MeasuredRun run = run_schedule(schedule, proxy, options);
        const Metrics m = summarize(schedule, run.result);
        r.seeds.push_back(SeedCurve{seed, run.validation, run.iteration_loss, m.time_per_iteration, m.staleness});
      }
      results.push_back(std::move(r));
    }
    const ConvergenceSettings settings{f->proxy, options.data->name, f->optimizer, f->lr, so->params.p,
                                       so->params.m, so->params.iterations, ho->model, ho->hardware,
                                       f->target > 0 ? f->target : common_target(results), f->target == 0};
    if (report) write_convergence_report(report->stream(), settings, results);
    if (f->json) {
      std::cout << json_text(convergence_json(settings, results)) << "\n";
    } else {
      std::cout << convergence_text(settings, results);
      if (report) std::cout << "\nreport written to " << one_line(f->report) << " (open in a browser)\n";
    }
    files.commit();
  });
}

}  // namespace pipesim
