#include "tools/fit_runs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "core/decimal.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/units.hpp"
#include "cost_models/memory_model.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "tools/cli_checks.hpp"
#include "tools/cli_options.hpp"
#include "tools/memory_guard.hpp"

namespace pipesim {
namespace {

// Columns of a runs file that are not analytical flags.
const std::vector<std::string> kRequired = {"model", "hardware", "tp", "pp", "dp", "global-batch", "micro-batch-size",
                                            "schedule", "recompute", "sequence-parallel"};
// What was measured: a runs file has at least one of these columns, each run at least one value.
const std::vector<std::string> kMeasured = {"seconds", "activation-memory", "state-memory"};
const std::vector<std::string> kOwn = {"pp",   "dp",     "global-batch", "schedule", "seconds", "activation-memory",
                                       "state-memory", "name", "source", "chunks"};

// One CSV line into fields: commas separate, "..." quotes (with "" for a quote).
std::vector<std::string> split_csv(std::string_view line, const std::string& where) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"' && fields.back().empty()) {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  if (quoted) throw InputError(where + ": a quoted field is not closed");
  for (std::string& f : fields) {  // surrounding blanks are not part of a value
    const std::size_t a = f.find_first_not_of(" \t\r"), b = f.find_last_not_of(" \t\r");
    f = a == std::string::npos ? "" : f.substr(a, b - a + 1);
  }
  return fields;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

long long integer(const std::string& text, const std::string& where, long long lo) {
  const std::optional<long long> v = parse_decimal<long long>(text);  // decimal, as everywhere (core/decimal.hpp)
  if (!v || *v < lo) throw InputError(where + ": expected an integer >= " + std::to_string(lo) + ", got " + quote(text));
  return *v;
}

// A catalog file named relative to the runs file is read from the runs file's folder.
std::string relative_to(const std::string& value, const std::string& base_dir) {
  const std::size_t json = value.find(".json");
  if (json == std::string::npos || base_dir.empty()) return value;
  const std::string file = value.substr(0, json + 5);
  if (std::filesystem::path(file).is_absolute()) return value;
  return (std::filesystem::path(base_dir) / file).string() + value.substr(json + 5);
}

// The analytical config and schedule of a run (what make_analytical_config makes of the
// same flags on a cluster of exactly tp·pp·dp GPUs).
// Every run's schedule is kept for the fit: `ops` counts them all, against the memory guard.
void build(TrainingRun& r, std::uint64_t& ops, const std::optional<MemoryLimit>& limit) {
  const long long gpus = static_cast<long long>(r.options.tp) * r.pp * r.dp;
  const int gpn = r.options.gpus_per_node;
  if (gpn <= 0) throw InputError("column 'gpus-per-node': must be positive, got " + std::to_string(gpn));
  if (gpus > (1LL << 20)) throw InputError("tp x pp x dp = " + std::to_string(gpus) + " GPUs: at most 2^20");
  if (gpus <= gpn) {
    r.options.nodes = 1;  // a job smaller than a node: the node is just not full
    r.options.gpus_per_node = static_cast<int>(gpus);
  } else {
    if (gpus % gpn != 0)
      throw InputError("tp x pp x dp = " + std::to_string(gpus) + " GPUs is not a whole number of nodes of " +
                       std::to_string(gpn) + " (gpus-per-node)");
    r.options.nodes = static_cast<int>(gpus / gpn);
  }
  const long long per_step = static_cast<long long>(r.dp) * r.options.micro_batch_size;
  if (r.global_batch % per_step != 0)
    throw InputError("column 'global-batch': " + std::to_string(r.global_batch) + " is not a multiple of dp x micro-batch-size = " +
                     std::to_string(per_step));
  if (r.global_batch / per_step > (1 << 20)) throw InputError("column 'global-batch': more than 2^20 micro-batches");
  r.microbatches = static_cast<int>(r.global_batch / per_step);
  r.config = make_analytical_config(r.options, r.options.hardware, r.pp);
  PIPESIM_ASSERT(r.config.dp == r.dp);
  ScheduleParams sp;
  sp.p = r.pp;
  sp.m = r.microbatches;
  sp.v = r.chunks;
  ops += estimate_ops(r.schedule, sp);
  if (auto refusal = memory_refusal(describe_generation(r.schedule, sp) + " (with the runs before it)", ops,
                                    {kSimulateBytesPerOp, 0, 0}, limit, "give fewer or smaller runs"))
    throw InputError(*refusal);
  r.plan = generate(r.schedule, sp);
  const AnalyticalCostModel check(r.config);  // every setting, before any fit
  (void)check;
}

}  // namespace

std::vector<TrainingRun> parse_runs(std::string_view text, const std::string& source, const std::string& base_dir,
                                    const std::string& max_memory) {
  std::vector<TrainingRun> runs;
  std::vector<std::string> header;
  std::uint64_t ops = 0;  // of every run's schedule so far
  const std::optional<MemoryLimit> limit = memory_limit(max_memory);
  std::istringstream in{std::string(text)};
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string where = source + ":" + std::to_string(number);
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::vector<std::string> fields = split_csv(line, where);
    if (header.empty()) {
      CLI::App probe;
      HardwareOptions o;
      add_hardware_flags(probe, o);
      for (std::string& f : fields) {
        std::replace(f.begin(), f.end(), '_', '-');
        const bool own = std::find(kOwn.begin(), kOwn.end(), f) != kOwn.end();
        bool flag = false;
        try {
          flag = probe.get_option("--" + f) != nullptr && f != "nodes";
        } catch (const CLI::OptionNotFound&) {
        }
        if (!own && !flag)
          throw InputError(where + ": unknown column '" + f + "' (expected " + joined(kRequired) + ", one or more of " +
                           joined(kMeasured) +
                           ", and optionally name, source, chunks, gpus-per-node or an analytical flag of `pipesim "
                           "simulate` without its dashes; nodes is tp x pp x dp / gpus-per-node)");
        if (std::count(fields.begin(), fields.end(), f) > 1) throw InputError(where + ": column '" + f + "' appears twice");
      }
      for (const std::string& r : kRequired)
        if (std::find(fields.begin(), fields.end(), r) == fields.end())
          throw InputError(where + ": missing column '" + r + "' (the required columns are " + joined(kRequired) + ")");
      if (std::none_of(kMeasured.begin(), kMeasured.end(),
                       [&](const std::string& m) { return std::find(fields.begin(), fields.end(), m) != fields.end(); }))
        throw InputError(where + ": no measurement column (expected one or more of " + joined(kMeasured) + ")");
      header = fields;
      continue;
    }
    if (fields.size() != header.size())
      throw InputError(where + ": " + std::to_string(fields.size()) + " fields, but the header has " +
                       std::to_string(header.size()));
    TrainingRun r;
    r.where = where;
    CLI::App app;
    add_hardware_flags(app, r.options);
    add_value_checks(app);  // the flags' own rules: a column reads as its flag does
    std::vector<std::string> args;
    for (std::size_t i = 0; i < header.size(); ++i) {
      const std::string& col = header[i];
      const std::string& value = fields[i];
      const std::string at = where + ": column '" + col + "'";
      if (value.empty()) {
        if (std::find(kRequired.begin(), kRequired.end(), col) != kRequired.end()) throw InputError(at + ": is empty");
        continue;
      }
      if (col == "pp") r.pp = static_cast<int>(integer(value, at, 1));
      else if (col == "dp") r.dp = static_cast<int>(integer(value, at, 1));
      else if (col == "chunks") r.chunks = static_cast<int>(integer(value, at, 1));
      else if (col == "global-batch") r.global_batch = integer(value, at, 1);
      else if (col == "schedule") r.schedule = value;
      else if (col == "name") r.name = value;
      else if (col == "source") continue;
      else if (col == "seconds") {
        std::size_t used = 0;
        try {
          r.seconds = std::stod(value, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        // An iteration of a real run: at least a microsecond (the simulator counts in ns), at
        // most 10^7 s; beyond either the fit divides by noise or overflows.
        if (used != value.size() || !(*r.seconds >= 1e-6) || !(*r.seconds <= 1e7))
          throw InputError(at + ": expected the seconds of an iteration, from 0.000001 to 10000000, got " +
                           quote(value));
      } else if (col == "activation-memory" || col == "state-memory") {
        const std::int64_t bytes = parse_bytes(value, at);
        if (bytes <= 0) throw InputError(at + ": expected a positive size such as 59.25GiB, got " + quote(value));
        (col == "activation-memory" ? r.activation_memory : r.state_memory) = bytes;
      } else {
        const bool file = col == "model" || col == "hardware" || col == "intra-link" || col == "inter-link";
        args.push_back("--" + col + "=" + (file ? relative_to(value, base_dir) : value));
      }
    }
    if (!r.seconds && !r.activation_memory && !r.state_memory)
      throw InputError(where + ": nothing measured (give one or more of " + joined(kMeasured) + ")");
    if (r.pp > 1 << 16 || r.dp > 1 << 20) throw InputError(where + ": pp or dp is too large");
    try {
      std::reverse(args.begin(), args.end());  // CLI11 takes its arguments last first
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      throw InputError(where + ": " + cli_error_text(e));
    }
    if (split_list(r.options.hardware).size() != 1)
      throw InputError(where + ": column 'hardware': one GPU type per run, got " + quote(r.options.hardware));
    try {
      build(r, ops, limit);
    } catch (const InputError& e) {
      throw InputError(where + ": " + e.what());
    }
    if (r.name.empty())
      r.name = r.options.model + " tp" + std::to_string(r.options.tp) + " pp" + std::to_string(r.pp) + " dp" + std::to_string(r.dp);
    runs.push_back(std::move(r));
  }
  if (header.empty()) throw InputError(source + ": no header line (the column names) and no runs");
  if (runs.empty()) throw InputError(source + ": a header but no runs");
  return runs;
}

std::vector<TrainingRun> read_runs_file(const std::string& path, const std::string& max_memory) {
  return parse_runs(read_input_file(path, kRunsFileInput), path, std::filesystem::path(path).parent_path().string(),
                    max_memory);
}

namespace {

// The run's analytical config with the GPU's efficiencies `e` and the run's own efficiency
// column applied on top: what both predictions simulate.
AnalyticalConfig config_of(const TrainingRun& run, const Efficiency& e) {
  AnalyticalConfig c = run.config;
  c.efficiency = e;
  apply_efficiency_overrides(c.efficiency, run.options.efficiency, run.where + ": column 'efficiency'");
  return c;
}

}  // namespace

double predict_run_seconds(const TrainingRun& run, const Efficiency& e) {
  const AnalyticalCostModel model(config_of(run, e));
  return ticks_to_seconds(simulate(run.plan, model).makespan);
}

RunMemory predict_run_memory(const TrainingRun& run) {
  const AnalyticalCostModel model(config_of(run, run.config.efficiency));
  const SimResult result = simulate(run.plan, model);
  RunMemory out;
  for (int d = 0; d < run.plan.num_devices; ++d) {
    const DeviceStats& stats = result.devices[static_cast<std::size_t>(d)];
    const DeviceMemory m = device_memory(model, run.plan, d, stats.peak_activation_bytes, stats.peak_weight_versions);
    out.activations = std::max(out.activations, m.activations);
    out.state = std::max(out.state, m.weights + m.gradients + m.optimizer);
  }
  return out;
}

std::vector<TrainingRun> timed_runs(std::vector<TrainingRun> runs) {
  std::erase_if(runs, [](const TrainingRun& r) { return !r.seconds; });
  return runs;
}

RunsFit fit_runs(const std::vector<TrainingRun>& runs, const Efficiency& start, const std::vector<EfficiencyParam>& params,
                 bool leave_one_out) {
  RunsFit out;
  for (const TrainingRun& r : runs) out.before.push_back(predict_run_seconds(r, start));
  auto fit_subset = [&](const std::vector<std::size_t>& rows) {
    std::vector<double> measured;
    for (std::size_t i : rows) {
      PIPESIM_ASSERT(runs[i].seconds.has_value());  // timed_runs
      measured.push_back(*runs[i].seconds);
    }
    return fit_efficiency([&](int k, const Efficiency& e) { return predict_run_seconds(runs[rows[static_cast<std::size_t>(k)]], e); },
                          measured, start, params);
  };
  std::vector<std::size_t> all(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) all[i] = i;
  out.fit = fit_subset(all);
  if (leave_one_out && runs.size() > params.size()) {
    for (std::size_t left = 0; left < runs.size(); ++left) {
      std::vector<std::size_t> rest;
      for (std::size_t i : all)
        if (i != left) rest.push_back(i);
      const EfficiencyFit fold = fit_subset(rest);
      out.fold.push_back(fold.efficiency);
      out.leave_one_out.push_back(predict_run_seconds(runs[left], fold.efficiency));
    }
  }
  return out;
}

}  // namespace pipesim
