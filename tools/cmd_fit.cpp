// `pipesim fit`: refits a GPU's kernel efficiencies to measured iteration times (a runs CSV,
// tools/fit_runs.hpp), prints every run's error before and after, and each run's error when
// it is left out of the fit, and writes the calibrated GPU as a catalog file that
// `--hardware FILE` reads. docs/cost-model.md, "Calibrating a GPU".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cost_models/catalog.hpp"
#include "core/error.hpp"
#include "tools/cli_options.hpp"
#include "tools/command_files.hpp"
#include "tools/commands.hpp"
#include "tools/fit_runs.hpp"
#include "tools/table.hpp"

namespace pipesim {
namespace {

struct FitFlags {
  std::string max_memory;
  std::string measurements;
  std::string hardware;
  std::string output;
  std::string parameters = "gemm,gemm_k_overhead";
  std::string name;  // of the calibrated GPU; empty: the fitted GPU's own
  bool evaluate = false;
  bool leave_one_out = true;
};

std::string error_text(double predicted, double measured) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f %%", 100 * (predicted - measured) / measured);
  return buf;
}

struct Summary {
  double mean = 0, worst = 0;
};

Summary summary(const std::vector<double>& predicted, const std::vector<double>& measured) {
  Summary s;
  for (std::size_t i = 0; i < predicted.size(); ++i) {
    const double e = std::abs(predicted[i] - measured[i]) / measured[i];
    s.mean += e / static_cast<double>(predicted.size());
    s.worst = std::max(s.worst, e);
  }
  return s;
}

std::vector<double> measured_seconds(const std::vector<TrainingRun>& runs) {
  std::vector<double> out;
  for (const TrainingRun& r : runs) out.push_back(*r.seconds);
  return out;
}

std::string summary_text(const char* what, const Summary& s) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%-14s mean |error| %5.2f %%, worst %5.2f %%\n", what, 100 * s.mean, 100 * s.worst);
  return buf;
}

// The memory table: each run with a measured activation or state memory, predicted by the
// memory model (independent of the efficiencies, so the same before and after a fit).
void print_memory(const std::vector<TrainingRun>& runs) {
  const bool act = std::any_of(runs.begin(), runs.end(), [](const TrainingRun& r) { return r.activation_memory.has_value(); });
  const bool state = std::any_of(runs.begin(), runs.end(), [](const TrainingRun& r) { return r.state_memory.has_value(); });
  if (!act && !state) return;
  Table t;
  t.add_column("run", Table::Align::Left);
  for (const char* what : {"activations", "predicted", "error"})
    if (act) t.add_column(what);
  for (const char* what : {"state", "predicted", "error"})
    if (state) t.add_column(what);
  std::vector<double> act_predicted, act_measured, state_predicted, state_measured;
  for (const TrainingRun& r : runs) {
    if (!r.activation_memory && !r.state_memory) continue;
    const RunMemory m = predict_run_memory(r);
    std::vector<std::string> row = {r.name};
    auto cells = [&](const std::optional<std::int64_t>& measured, std::int64_t predicted, std::vector<double>& ps,
                     std::vector<double>& ms) {
      if (!measured) {
        row.insert(row.end(), {"", "", ""});
        return;
      }
      row.push_back(format_bytes(static_cast<double>(*measured)));
      row.push_back(format_bytes(static_cast<double>(predicted)));
      row.push_back(error_text(static_cast<double>(predicted), static_cast<double>(*measured)));
      ps.push_back(static_cast<double>(predicted));
      ms.push_back(static_cast<double>(*measured));
    };
    if (act) cells(r.activation_memory, m.activations, act_predicted, act_measured);
    if (state) cells(r.state_memory, m.state, state_predicted, state_measured);
    t.add_row(row);
  }
  std::cout << "\nmemory of the GPU that holds the most of each (activations; state = weights + gradients + optimizer "
               "state)\n\n"
            << t.render() << "\n";
  if (act) std::cout << summary_text("activations", summary(act_predicted, act_measured));
  if (state) std::cout << summary_text("state", summary(state_predicted, state_measured));
}

std::string value_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

void run_fit(const FitFlags& f) {
  if (!f.evaluate && f.output.empty()) throw InputError("-o/--output: where to write the calibrated GPU (or --evaluate)");
  if (f.evaluate && !f.output.empty()) throw InputError("-o/--output: --evaluate fits and writes nothing");
  CommandFiles files;
  files.input("--measurements", f.measurements);
  files.catalog_input("--hardware", f.hardware);
  OutputFile* out = files.output("-o/--output", f.output);
  GpuSpec gpu = find_gpu(f.hardware);
  std::vector<EfficiencyParam> params;
  for (const std::string& name : split_list(f.parameters)) params.push_back(parse_efficiency_param(name, "--parameters"));
  if (params.empty()) throw InputError("--parameters: expected a comma-separated list such as gemm,gemm_k_overhead");
  std::vector<TrainingRun> all = read_runs_file(f.measurements, f.max_memory);
  for (TrainingRun& r : all) {
    if (r.config.cluster.gpu.name != gpu.name)
      throw InputError(r.where + ": column 'hardware': '" + r.config.cluster.gpu.name + "' is not the GPU being fitted ('" +
                       gpu.name + "', --hardware); a runs file for one fit holds one GPU type");
    r.config.cluster.gpu = gpu;  // --hardware's peaks, SMs and efficiencies
  }
  const std::vector<TrainingRun> runs = timed_runs(all);
  if (!f.evaluate && runs.empty())
    throw InputError(f.measurements + ": no run has a measured time (column 'seconds'), and the fit needs some");
  if (!f.evaluate && runs.size() < params.size())
    throw InputError(f.measurements + ": " + std::to_string(runs.size()) + " run(s) cannot determine " +
                     std::to_string(params.size()) + " parameters (--parameters); give at least as many runs");

  RunsFit result;
  if (f.evaluate) {
    for (const TrainingRun& r : runs) result.before.push_back(predict_run_seconds(r, gpu.efficiency));
  } else {
    result = fit_runs(runs, gpu.efficiency, params, f.leave_one_out);
  }
  const bool loo = !result.leave_one_out.empty();

  Table t;
  t.add_column("run", Table::Align::Left);
  t.add_column("measured");
  t.add_column(f.evaluate ? "predicted" : "before");
  t.add_column("error");
  if (!f.evaluate) {
    t.add_column("fitted");
    t.add_column("error");
  }
  if (loo) {
    t.add_column("left out");
    t.add_column("error");
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const TrainingRun& r = runs[i];
    std::vector<std::string> row = {r.name, format_duration_seconds(*r.seconds),
                                    format_duration_seconds(result.before[i]),
                                    error_text(result.before[i], *r.seconds)};
    if (!f.evaluate) {
      row.push_back(format_duration_seconds(result.fit.predicted[i]));
      row.push_back(error_text(result.fit.predicted[i], *r.seconds));
    }
    if (loo) {
      row.push_back(format_duration_seconds(result.leave_one_out[i]));
      row.push_back(error_text(result.leave_one_out[i], *r.seconds));
    }
    t.add_row(row);
  }
  const std::vector<double> measured = measured_seconds(runs);
  std::cout << (f.evaluate ? "evaluating " : "fitting " + f.parameters + " of ") << gpu.name << " on " << all.size()
            << " runs of " << f.measurements << "\n";
  if (!runs.empty())
    std::cout << "\n"
              << t.render() << "\n"
              << summary_text(f.evaluate ? "predicted" : "before the fit", summary(result.before, measured));
  print_memory(all);
  if (f.evaluate) return files.commit();
  std::cout << summary_text("fitted", summary(result.fit.predicted, measured));
  if (loo) std::cout << summary_text("left out", summary(result.leave_one_out, measured));
  std::cout << "\n";
  Table p;
  p.add_column("parameter", Table::Align::Left);
  p.add_column("before");
  p.add_column("fitted");
  if (loo) p.add_column("left-out fits");
  for (EfficiencyParam param : params) {
    std::vector<std::string> row = {std::string(efficiency_param_name(param)), value_text(efficiency_value(gpu.efficiency, param)),
                                    value_text(efficiency_value(result.fit.efficiency, param))};
    if (loo) {
      double lo = 1e300, hi = -1e300;
      for (const Efficiency& e : result.fold) {
        lo = std::min(lo, efficiency_value(e, param));
        hi = std::max(hi, efficiency_value(e, param));
      }
      row.push_back(value_text(lo) + " .. " + value_text(hi));
    }
    p.add_row(row);
  }
  std::cout << p.render();
  if (!result.fit.converged) std::cout << "note: the fit stopped after " << result.fit.iterations << " steps without converging\n";

  GpuSpec calibrated = gpu;
  calibrated.efficiency = result.fit.efficiency;
  if (!f.name.empty()) calibrated.name = f.name;
  char rms[32];
  std::snprintf(rms, sizeof rms, "%.2f %%", 100 * result.fit.rms_relative);
  calibrated.efficiency.source = f.parameters + " fitted by `pipesim fit` to the " + std::to_string(runs.size()) +
                                 " runs of " + std::filesystem::path(f.measurements).filename().string() +
                                 " (rms relative time error " + rms + "); the rest as in " + gpu.name;
  const std::string text = gpu_catalog_json(calibrated);
  (void)parse_catalog(text, f.output);  // what is written reads back
  out->stream() << text;
  std::cout << "\nwrote " << calibrated.name << " to " << one_line(f.output) << " (use --hardware " << one_line(f.output)
            << ")\n";
  files.commit();
}

}  // namespace

void add_fit_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("fit", "Refit a GPU's kernel efficiencies to measured iteration times");
  auto f = std::make_shared<FitFlags>();
  cmd->add_option("--measurements", f->measurements, "Runs CSV: one measured run per line (docs/cost-model.md)")->required();
  cmd->add_option("--hardware", f->hardware, "The GPU to calibrate: a catalog name or file")->required();
  cmd->add_option("-o,--output", f->output, "Write the calibrated GPU to this catalog file (for --hardware FILE)");
  cmd->add_option("--parameters", f->parameters,
                  "Efficiencies to fit: gemm, gemm_k_overhead, wave_smoothing, misaligned, attention, memory, network")
      ->capture_default_str();
  cmd->add_option("--name", f->name, "Name of the calibrated GPU [default: the fitted GPU's]");
  cmd->add_flag("--evaluate", f->evaluate, "Only predict the runs with the GPU as it is: fit and write nothing");
  cmd->add_option("--leave-one-out", f->leave_one_out, "Also refit without each run and predict it (true/false)")
      ->capture_default_str();
  cmd->add_option("--max-memory", f->max_memory,
                  "Memory the runs' schedules may take together, e.g. 8GiB [default: what the machine has available]");
  cmd->callback([f] { run_fit(*f); });
}

}  // namespace pipesim
