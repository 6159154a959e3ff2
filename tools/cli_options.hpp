#pragma once
// The flag groups the subcommands share: where the schedule comes from and what things
// cost. Flags take units ("1ms", "64MiB", "50GB/s"); bad values are InputErrors naming the flag.
#include <array>
#include <string>
#include <vector>

#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "tools/cli_app.hpp"
#include "tools/memory_guard.hpp"

namespace pipesim {

struct ScheduleOptions {
  std::string name = "1f1b";
  std::string file;  // --schedule-file: CSV or JSON, replaces --schedule
  ScheduleParams params;
  std::string max_memory;  // --max-memory: replaces the available memory in the check before generating
};

struct CostOptions {
  std::string fwd = "1ms";
  std::string bwd = "2ms";
  std::string wgrad;  // default: half of bwd
  std::string optimizer = "0ns";
  std::string link_latency = "0ns";
  std::string link_bandwidth;  // empty: links have no occupancy
  std::string activation_bytes = "0B";
  std::string activation_memory;  // default: activation_bytes
  std::string grad_bytes = "0B";  // gradient bytes of one full stage (GradSync)
  double input_grad_free_fraction = 0.5;
  std::vector<std::string> stage_overrides;  // "STAGE:FWD:BWD[:WGRAD]"
};

// `with_name` adds --schedule (simulate, schedule); compare adds its own --schedules. The
// settings named in `own` ("max-active-keys", ...) get no flag here: the command adds its own
// (converge: comma-separated lists, one row per variant).
void add_schedule_flags(CLI::App& app, ScheduleOptions& options, bool with_name,
                        const std::vector<std::string_view>& own = {});
void add_cost_flags(CLI::App& app, CostOptions& options);

// Its flags are the uniform cost model's (tools/cost_model_registry.hpp).

// The generators' settings (schedule_settings()) as flags: with --schedule-file the shape
// flags (-p, -m, -v, --iterations) must agree with the file (check_schedule_file_flags),
// the others are InputErrors.
std::vector<std::string> shape_flags();           // "--stages", "--microbatches", "--chunks", "--iterations"
std::vector<std::string> generator_only_flags();  // "--pipelines", "--concat", ...
// The flags of the settings only some generators read ("--chunks", "--pipelines", ...).
std::vector<std::string> generator_setting_flags();
void check_schedule_file_flags(const CLI::App& app, const Schedule& schedule, const std::string& file);
// A generator setting given (-v, --pipelines, --concat, ...) that none of `generators` reads
// (GeneratorInfo::settings) is an InputError naming the generators that do.
void check_generator_flags(const CLI::App& app, const std::vector<std::string>& generators);

// The schedule the flags describe: a generator run, or a file (read and validated).
// A generator run is first checked to fit in memory for what the command does (`use`).
// With a schedule file, the flags of `app` that set a generator's shape are checked against
// the file (check_schedule_file_flags), and the file's ops against the memory check.
Schedule make_schedule(const CLI::App& app, const ScheduleOptions& options, const std::string& name,
                       const MemoryUse& use = {kSimulateBytesPerOp, 0, 0});
UniformCostConfig make_cost_config(const CostOptions& options);
// InputError when --stage-cost names a stage `schedule` does not have.
void check_stage_costs(const UniformCostConfig& costs, const Schedule& schedule);

// "a,b,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_list(const std::string& text);
// --schedules: a comma-separated list of generator names, or "all" (every generator, in
// registry order). InputError when empty or when a name is listed twice.
std::vector<std::string> parse_schedule_list(const std::string& text);

}  // namespace pipesim
