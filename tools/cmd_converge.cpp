// `pipesim converge`: time to reach a validation loss, per schedule. Iterations to the target
// are measured by training a small proxy model for real (the executor, on real text, several
// seeds); the time of one iteration is simulated on the cost model the flags choose
// (tools/cost_model_registry.hpp: --model the analytical one for the model and hardware
// asked about, --cost a profile, --cost-model uniform uniform costs), or, without one,
// measured on the proxy run itself. The answer
// is their product, printed with its assumption: that the proxy's iterations-to-target
// (and their ratio between schedules) carry over to the real model (docs/convergence.md).
//
// Several learning rates (--lr 1e-3,3e-3) train every schedule at each, and the answer takes
// each schedule's best (tuned_runs); the generators' settings take lists as in `sweep`
// (--max-active-keys 2,4 --amdp-update code,early; tools/setting_grids.hpp): one row per
// variant ("amp keys=2").
#include <algorithm>
#include <cstdlib>
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
#include "tools/cli_options.hpp"
#include "tools/command_files.hpp"
#include "tools/commands.hpp"
#include "tools/config_file.hpp"
#include "tools/convergence.hpp"
#include "tools/cost_model_registry.hpp"
#include "tools/hardware_flags.hpp"
#include "tools/profiled_flags.hpp"
#include "tools/cli_checks.hpp"
#include "tools/report.hpp"
#include "tools/setting_grids.hpp"
#include "tools/sweep_grid.hpp"
#include "tools/unused_flags.hpp"

namespace pipesim {
namespace {

struct ConvergeFlags {
  std::string schedules = "1f1b,pipedream,pipedream-2bw,async-1f1b,amp,amdp";
  std::string proxy = "gpt-tiny";
  std::string data = "fortunes";
  std::string seeds = "1";
  std::string optimizer = "adam";
  std::string lr = "3e-3";
  SettingGridFlags generator_settings;  // comma-separated as in `sweep`
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

// --lr: rates > 0 in the order given, none twice.
std::vector<double> parse_rates(const std::string& text) {
  const std::string form = "give learning rates > 0, comma-separated, e.g. 1e-3,3e-3,1e-2";
  std::vector<std::string> items;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (std::all_of(items.begin(), items.end(), [](const std::string& i) { return i.empty(); }))
    throw InputError("--lr: no learning rate in " + quote(text) + "; " + form);
  std::vector<double> out;
  std::vector<std::string> texts;
  for (const std::string& item : items) {
    if (item.empty()) throw InputError("--lr: an empty item in " + quote(text) + "; " + form);
    if (const std::string problem = number_problem(item); !problem.empty())
      throw InputError("--lr: " + quote(item) + ": " + problem + "; " + form);
    const double lr = std::strtod(item.c_str(), nullptr);
    if (!(lr > 0)) throw InputError("--lr: " + quote(item) + " is not > 0; " + form);
    const auto same = std::find(out.begin(), out.end(), lr);
    if (same != out.end()) {
      const std::string& first = texts[static_cast<std::size_t>(same - out.begin())];
      throw InputError("--lr: " + quote(item) + " is listed twice" + (first == item ? "" : " (as " + quote(first) + ")"));
    }
    out.push_back(lr);
    texts.push_back(item);
  }
  return out;
}

// Every variant of the generators in `names` the setting lists describe.
std::vector<SweepVariant> variants_of(const std::vector<std::string>& names, const ConvergeFlags& f) {
  VariantLists lists;
  lists.schedules = names;
  lists.name_off_default = true;
  f.generator_settings.parse(lists);
  return expand_variants(lists);
}

// The settings `generator` reads, by name, with their values in `params`.
nlohmann::ordered_json settings_json(const std::string& generator, const ScheduleParams& params) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const ScheduleSetting& s : find_generator(generator).settings) {
    const SettingValue v = s.get(params);
    out[std::string(s.name())] = std::holds_alternative<int>(v) ? nlohmann::ordered_json(std::get<int>(v))
                                                                 : nlohmann::ordered_json(std::get<std::string>(v));
  }
  return out;
}

// Simulated time of one steady-state iteration of `schedule` on the cost model of `setup`
// and its `machine`.
Tick simulated_iteration(const CostModelSetup& setup, const std::string& machine, const Schedule& schedule) {
  const ScheduleCosts costs = setup.make(schedule, machine);
  Simulator simulator;
  return summarize(schedule, simulator.run(schedule, *costs.model)).time_per_iteration;
}

}  // namespace

void add_converge_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "converge", "Time to a validation loss per schedule: iterations measured on a small proxy model trained for real, "
                  "times the time per iteration simulated for --model (or on --cost's profile, or --cost-model "
                  "uniform)");
  auto f = std::make_shared<ConvergeFlags>();
  auto so = std::make_shared<ScheduleOptions>();
  auto co = std::make_shared<CostOptions>();
  auto ho = std::make_shared<HardwareOptions>();
  auto po = std::make_shared<ProfiledOptions>();
  auto cost_model = std::make_shared<std::string>();
  so->params.iterations = 300;
  cmd->add_option("--schedules", f->schedules, "Comma-separated generator names, or 'all'")->capture_default_str();
  std::vector<std::string_view> listed;  // the generators' settings: list flags below
  for (const ScheduleSetting& s : schedule_settings())
    if (!s.every) listed.push_back(s.name());
  add_schedule_flags(*cmd, *so, false, listed);
  add_cost_flags(*cmd, *co);
  add_hardware_flags(*cmd, *ho);
  add_profiled_flags(*cmd, *po);
  // Nothing here prices a run (no tokens/s, MFU or $): --cost-hardware would be ignored.
  cmd->remove_option(cmd->get_option("--cost-hardware"));
  cmd->add_option("--cost-model", *cost_model, cost_model_help("none: the time per iteration measured on the proxy run"));
  cmd->add_option("--proxy-model", f->proxy, "The small GPT-style model trained for real (catalog name or file)")
      ->capture_default_str();
  cmd->add_option("--data", f->data, "UTF-8 text to train on ('fortunes': the Debian corpus)")->capture_default_str();
  cmd->add_option("--seeds", f->seeds, "Comma-separated seeds (weights and data order); each schedule runs once per seed")
      ->capture_default_str();
  cmd->add_option("--optimizer", f->optimizer, "sgd or adam")->check(CLI::IsMember({"sgd", "adam"}))->capture_default_str();
  cmd->add_option("--lr", f->lr,
                  "Learning rate, the same for every schedule; several, comma-separated (1e-3,3e-3,1e-2): each "
                  "schedule trains at each and the answer takes its best")
      ->capture_default_str();
  const char* list = ", comma-separated: one row per value";
  f->generator_settings.add(*cmd, list, list);
  cmd->add_option("--target", f->target,
                  "Validation loss to reach; 0: chosen from the runs, one every schedule reaches on every seed at "
                  "one of its rates at least (docs/convergence.md)")
      ->capture_default_str();
  cmd->add_option("--validate-every", f->validate_every, "Iterations between validation points")->capture_default_str();
  cmd->add_flag("--json", f->json, "Print one JSON object instead of tables");
  cmd->add_option("--report", f->report, "Write an HTML report: validation loss against iterations and simulated time");
  cmd->callback([=] {
    // The cost model that simulates the time per iteration; none: it is measured on the proxy.
    const CostModelInfo* simulated_by =
        cost_model->empty() && ho->model.empty() && po->cost.empty() ? nullptr : &chosen_cost_model(*cost_model, *ho, *po);
    for (const UnusedFlags& group : unused_flags(simulated_by, false, {}))
      if (group.reject) reject_given_flags(*cmd, group.flags, group.why);
    if (f->validate_every < 1)
      throw InputError("--validate-every: expected a number of iterations >= 1, got " + std::to_string(f->validate_every));
    if (!(f->target >= 0) || f->target > 1e6)
      throw InputError("--target: expected a validation loss > 0 (or 0: chosen from the runs), got " +
                       std::to_string(f->target));
    const std::vector<std::string> names = parse_schedule_list(f->schedules);
    const std::vector<std::uint64_t> seeds = parse_seeds(f->seeds);
    const std::vector<double> rates = parse_rates(f->lr);
    CommandFiles files;
    files.catalog_input("--proxy-model", f->proxy);
    files.catalog_input("--model", ho->model);
    files.input("--cost", po->cost);
    for (const std::string& gpu : split_list(ho->hardware)) files.catalog_input("--hardware", gpu);
    files.catalog_input("--intra-link", ho->intra_link);
    files.catalog_input("--inter-link", ho->inter_link);
    if (f->data != "fortunes") files.input("--data", f->data);
    OutputFile* report = files.output("--report", f->report);
    check_generator_flags(*cmd, names);
    const std::unique_ptr<CostModelSetup> setup = simulated_by ? simulated_by->setup({*co, *ho, *po}) : nullptr;
    const std::vector<std::string> machines = setup ? setup->machines() : std::vector<std::string>{};
    if (setup && machines.size() != 1)
      throw InputError("--hardware: converge takes one GPU type, got " + quote(ho->hardware));
    const std::vector<SweepVariant> variants = variants_of(names, *f);
    const ModelSpec proxy = find_model(f->proxy);
    RunOptions options;
    const OptimizerKind kind = f->optimizer == "sgd" ? OptimizerKind::Sgd : OptimizerKind::Adam;
    options.optimizer = {kind, rates.front()};
    options.validate_every = f->validate_every;
    options.data = load_text_corpus(f->data);
    // Every schedule generated and checked before the first (long) training run.
    std::vector<Schedule> schedules;
    std::vector<nlohmann::ordered_json> generator_settings;
    for (const SweepVariant& variant : variants) {
      ScheduleOptions vo = *so;
      for (const ScheduleSetting& s : schedule_settings())
        if (!s.every) s.set(vo.params, s.get(variant.settings));
      schedules.push_back(make_schedule(*cmd, vo, variant.schedule));
      generator_settings.push_back(settings_json(variant.schedule, vo.params));
      for (const std::uint64_t seed : seeds) {
        options.seed = seed;
        check_run(schedules.back(), proxy, options);
      }
    }
    // Every simulated time before the first training run too: the cost model may refuse a schedule.
    std::vector<Tick> simulated(schedules.size(), 0);
    if (setup)
      for (std::size_t k = 0; k < schedules.size(); ++k)
        simulated[k] = simulated_iteration(*setup, machines.front(), schedules[k]);
    std::vector<ScheduleConvergence> results;
    for (std::size_t k = 0; k < variants.size(); ++k) {
      for (const double lr : rates) {
        ScheduleConvergence r{variants[k].label, generator_settings[k], lr, simulated[k], {}};
        options.optimizer = {kind, lr};
        for (const std::uint64_t seed : seeds) {
          options.seed = seed;
          const MeasuredRun run = run_schedule(schedules[k], proxy, options);
          const Metrics m = summarize(schedules[k], run.result);
          r.seeds.push_back(SeedCurve{seed, run.validation, run.iteration_loss, m.time_per_iteration, m.staleness});
        }
        results.push_back(std::move(r));
      }
    }
    // What simulated the time: the model and GPU of a cost model that runs on one (analytical).
    const std::string machine = setup ? machines.front() : "";
    const ConvergenceSettings settings{f->proxy, options.data->name, f->optimizer, rates, so->params.p,
                                       so->params.m, so->params.iterations, setup ? setup->label() : "",
                                       machine.empty() ? "" : ho->model, machine,
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
