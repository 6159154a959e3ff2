// Fuzz targets for the command line: the schedule and cost flags every subcommand shares,
// and --config files (tools/hardware_flags.hpp, tools/config_file.hpp), then what `pipesim simulate` does with them.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include <CLI/CLI.hpp>

#include "cost_models/uniform.hpp"
#include "fuzz/check.hpp"
#include "schedules/generator.hpp"
#include "assess/analytical_source.hpp"
#include "cost_models/analytical.hpp"
#include "tools/breakdown_report.hpp"
#include "tools/cli_checks.hpp"
#include "tools/cli_options.hpp"
#include "tools/config_file.hpp"
#include "tools/analytical_setup.hpp"
#include "tools/assessment_output.hpp"
#include "tools/memory_guard.hpp"
#include "tools/report.hpp"
#include "sim/breakdown.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"

namespace pipesim::fuzz {
namespace {

// One argument per line, at most 64 of them (CLI11 wants them last to first).
std::vector<std::string> arguments(std::string_view bytes) {
  std::vector<std::string> args;
  while (!bytes.empty() && args.size() < 64) {
    const std::size_t nl = bytes.find('\n');
    args.emplace_back(bytes.substr(0, nl));
    bytes = nl == std::string_view::npos ? std::string_view() : bytes.substr(nl + 1);
  }
  return {args.rbegin(), args.rend()};
}

}  // namespace

namespace {

// nlohmann writes NaN and infinity as null: no number of the --json output may be one
// (the price is null on purpose for a GPU without one).
void require_no_null(const nlohmann::ordered_json& j, const std::string& where) {
  if (j.is_null() && !where.ends_with("_usd") && !where.ends_with("_usd_per_gpu_hour"))  // no price: null
    violation(where + " is null (NaN or infinity)");
  if (j.is_object())
    for (const auto& item : j.items()) require_no_null(item.value(), where + "/" + item.key());
  if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i) require_no_null(j[i], where + "/" + std::to_string(i));
}

// What `pipesim simulate` does once its flags are parsed: costs, the memory check, the
// generator, validation, the run and its outputs.
void run_flags(const ScheduleOptions& so, const CostOptions& co, const HardwareOptions* ho) {
  if (!so.file.empty()) return;  // the schedule files have their own targets

  UniformCostConfig config;
  if (!parses([&] { config = make_cost_config(co); UniformCostModel check(config); }, "make_cost_config")) return;
  const UniformCostModel model(config);

  // The memory check before generating, with a limit that keeps the runs small.
  const MemoryUse use{kSimulateBytesPerOp, 0, 0};
  const std::uint64_t estimate = estimate_ops(so.name, so.params);
  if (!parses([&] { check_memory(so.name, so.params, use, std::to_string(kMaxSimulatedOps * kSimulateBytesPerOp) + "B"); },
              "check_memory"))
    return;
  Schedule s;
  if (!parses([&] { s = generate(so.name, so.params); }, "generate")) return;
  const std::uint64_t ops = s.total_ops();
  require(estimate >= ops, so.name + ": estimate_ops " + std::to_string(estimate) + " below the real " +
                               std::to_string(ops) + " ops");
  require(estimate <= 4 * ops + 1024, so.name + ": estimate_ops " + std::to_string(estimate) + " far above the real " +
                                          std::to_string(ops) + " ops");
  require(check_runs(s, model), so.name + ": the generator made an invalid schedule");

  // The text and JSON outputs of `pipesim simulate`.
  SimResult result;
  BreakdownRecorder recorded(s);
  if (!parses([&] { result = simulate(s, model, &recorded); }, "simulate")) return;
  const Metrics metrics = summarize(s, result);
  (void)summary_text(metrics);
  (void)device_table(metrics);
  require_no_null(metrics_json(metrics), "metrics JSON");
  const TimeBreakdown where = time_breakdown(s, result, model, recorded);  // asserts the exact sums
  (void)breakdown_table(where);
  require_no_null(breakdown_json(where), "time_breakdown JSON");

  // --model / --hardware: the analytical cost model, for built-in names only (a name can
  // also be a file path, and a fuzzer must not read arbitrary files).
  if (!ho || ho->model.empty() || ho->model.find_first_of("/.") != std::string::npos ||
      ho->hardware.find_first_of("/.,") != std::string::npos)
    return;
  std::optional<AnalyticalCostModel> analytical;
  if (!parses([&] { analytical.emplace(make_analytical_config(*ho, ho->hardware, s.num_devices)); },
              "make_analytical_config"))
    return;
  SimResult run;
  BreakdownRecorder parts(s);
  if (!parses([&] { run = simulate(s, *analytical, &parts); }, "simulate (analytical)")) return;
  const Metrics m = summarize(s, run);
  const TimeBreakdown breakdown = time_breakdown(s, run, *analytical, parts);  // asserts the exact sums
  const Assessment a = assess(AnalyticalSource(*analytical), s, run, m);
  require_finite_non_negative(a.tokens_per_s, "tokens/s");
  require_finite_non_negative(a.mfu, "MFU");
  require(a.peak_memory >= 0 && a.capacity > 0, "memory");
  nlohmann::ordered_json j = metrics_json(m);
  j["time_breakdown"] = breakdown_json(breakdown);
  require_no_null(assessment_json(a, std::move(j)), "assessment JSON");
}

// A fresh app with the settings flags of `pipesim simulate` (no output files).
struct SimulateFlags {
  CLI::App app{"simulate"};
  ScheduleOptions so;
  CostOptions co;
  HardwareOptions ho;
  std::size_t max_trace_ops = 0;  // --save-config writes it; without --trace it does nothing
  SimulateFlags() {
    add_schedule_flags(app, so, true);
    add_cost_flags(app, co);
    add_hardware_flags(app, ho);
    app.add_option("--max-trace-ops", max_trace_ops);
    add_value_checks(app);
  }
};

}  // namespace

void cli_flags(std::string_view bytes) {
  CLI::App app{"fuzz"};
  ScheduleOptions so;
  CostOptions co;
  add_schedule_flags(app, so, true);
  add_cost_flags(app, co);
  add_value_checks(app);
  std::vector<std::string> args = arguments(bytes);
  try {
    app.parse(args);
  } catch (const CLI::ParseError&) {
    return;  // CLI11's own errors; pipesim.cpp prints them on one line
  }
  run_flags(so, co, nullptr);
}

void experiment_config(std::string_view bytes) {
  // apply_config_file reads a file: one per process, rewritten for every input.
  static const std::string path =
      (std::filesystem::temp_directory_path() / ("pipesim_fuzz_config_" + std::to_string(::getpid()) + ".json")).string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  SimulateFlags flags;
  try {
    std::vector<std::string> none;
    flags.app.parse(none);  // defaults in place, as before --config is read
  } catch (const CLI::ParseError&) {
    violation("the simulate flags do not parse without arguments");
  }
  if (!parses([&] { apply_config_file(flags.app, path); }, "apply_config_file")) return;
  run_flags(flags.so, flags.co, &flags.ho);
}

}  // namespace pipesim::fuzz
