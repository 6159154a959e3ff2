#pragma once
// The flags of the commands that run schedules for real (`pipesim run`, `pipesim
// validate`): backend, model, micro-batch size, optimizer, seed, timeout. One definition,
// so both commands spell and check them the same way.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "executor/executor.hpp"
#include "schedules/schedule.hpp"
#include "tools/cli_app.hpp"

namespace pipesim {

struct ExecutorFlags {
  std::string backend = "cpu";
  std::string sm_partition = "auto";
  std::string cuda_graphs = "on";
  std::string model = "gpt-tiny";
  int micro_batch_size = 1;
  std::string optimizer = "adam";
  double lr = 1e-3;
  std::uint64_t seed = 1;
  std::string timeout = "60s";
  std::size_t channel_capacity = 0;
};

void add_executor_flags(CLI::App& cmd, ExecutorFlags& flags);

// The executor's options from the flags: the backend by name (executor/backend_factory.hpp:
// cpu, or cuda where this build has it and a GPU is visible), timeout parsed, memory limit (cpu)
// --max-memory (`max_memory`) if given, else half of what is available. InputError for a bad
// --backend or --timeout.
RunOptions make_run_options(const ExecutorFlags& flags, const std::string& max_memory);

// How the backend launched the run's ops (BackendStats, docs/gpu.md), for `run` and
// `validate`: totals over the devices and each device's path. Null JSON and "" for a backend
// with nothing to say (cpu), so CPU outputs stay as they were.
nlohmann::ordered_json launch_json(const MeasuredRun& run);
std::string launch_line(const MeasuredRun& run);  // "launch        ...\n"

// Prints a warning on stderr when the schedule has more devices than this machine has
// cores: device threads then share cores and measured times include waiting for one.
void warn_if_oversubscribed(const Schedule& schedule);

}  // namespace pipesim
