#pragma once
// --global-batch-size B: the sequences per optimizer step every schedule of a run is held
// to, Megatron's global batch. Each schedule then runs m = B / (dp x micro-batch size)
// micro-batches per iteration.
#include <string_view>

#include "schedules/generator.hpp"
#include "schedules/schedule.hpp"
#include "tools/hardware_flags.hpp"

namespace pipesim {

// --global-batch-size B: the micro-batches per iteration m = B / (dp x micro-batch size)
// with which `schedule` runs B sequences per optimizer step, dp being the cluster's
// (data_parallel_width; 1 for `profiled`, a measured profile of one machine). InputError
// naming B, dp and the micro-batch size when it does not divide.
int microbatches_for_global_batch(const HardwareOptions& options, std::string_view schedule,
                                  const ScheduleParams& params, bool profiled);
// With --global-batch-size: InputError unless `schedule` runs exactly that many sequences
// per iteration (a schedule file fixes its micro-batches: the file must agree with B).
void check_global_batch(const HardwareOptions& options, const Schedule& schedule, int dp);

}  // namespace pipesim
