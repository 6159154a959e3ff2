#include "tools/global_batch.hpp"

#include <string>

#include "assess/assessment.hpp"
#include "core/error.hpp"
#include "tools/analytical_setup.hpp"

namespace pipesim {

int microbatches_for_global_batch(const HardwareOptions& o, std::string_view schedule, const ScheduleParams& params,
                                  bool profiled) {
  const long long b = o.global_batch_size;  // an int: a batch of 2^31 sequences is not a batch
  if (b <= 0) throw InputError("--global-batch-size must be positive, got " + std::to_string(b));
  if (o.micro_batch_size <= 0)
    throw InputError("--micro-batch-size must be positive, got " + std::to_string(o.micro_batch_size));
  const int devices = pipeline_devices(schedule, params);
  const long long dp = profiled ? 1 : data_parallel_width(o, devices);
  const long long per_step = dp * o.micro_batch_size;
  if (b % per_step != 0)
    throw InputError("--global-batch-size " + std::to_string(b) + " is not a multiple of dp x micro-batch size = " +
                     std::to_string(dp) + " x " + std::to_string(o.micro_batch_size) + " = " +
                     std::to_string(per_step) + " (" + std::string(schedule) + " on " + std::to_string(devices) +
                     " pipeline devices" + (profiled ? ")" : " of tp " + std::to_string(o.tp) + ")"));
  return static_cast<int>(b / per_step);
}

void check_global_batch(const HardwareOptions& o, const Schedule& schedule, int dp) {
  if (o.global_batch_size <= 0) return;
  const long long runs = sequences_per_iteration(schedule, o.micro_batch_size, dp);
  if (runs != o.global_batch_size)
    throw InputError("--global-batch-size " + std::to_string(o.global_batch_size) + ": " + schedule.name + " runs " +
                     std::to_string(runs) + " sequences per iteration (" + std::to_string(schedule.microbatches) +
                     " micro-batches x micro-batch size " + std::to_string(o.micro_batch_size) + " x dp " +
                     std::to_string(dp) + ")");
}

}  // namespace pipesim
