#pragma once
// The analytical cost model of a run, built once from the flags (tools/hardware_flags.hpp):
// the catalog's model and GPU, the cluster, the parallelism and every setting of
// AnalyticalConfig (cost_models/analytical.hpp). simulate, compare, sweep, fit advice and
// `pipesim fit` all build it here.
#include <string>
#include <string_view>

#include "cost_models/analytical.hpp"
#include "schedules/schedule.hpp"
#include "tools/hardware_flags.hpp"

namespace pipesim {

// The analytical model for `gpu` running a pipeline of `pipeline_devices` devices (each of
// tp GPUs); data parallelism fills the rest of the cluster. InputError if it does not divide.
AnalyticalConfig make_analytical_config(const HardwareOptions& options, const std::string& gpu, int pipeline_devices);
// `config` (its cluster set) with `tp` GPUs per pipeline device, `pipeline_devices` devices,
// `micro_batch_size` sequences per micro-batch, and data parallelism filling the rest of the
// cluster: what a sweep changes between combinations of one GPU type. InputError if
// tp x pipeline devices does not divide the cluster's GPUs.
AnalyticalConfig with_parallelism(AnalyticalConfig config, int tp, int pipeline_devices, int micro_batch_size);
// The data-parallel width that make_analytical_config uses: the cluster's GPUs / (tp x
// pipeline devices). InputError if it does not divide.
int data_parallel_width(const HardwareOptions& options, int pipeline_devices);

// Why `model` cannot be cut into the stages of `schedule` (each stage at least one layer),
// or empty if it can.
std::string stage_count_problem(const ModelSpec& model, const Schedule& schedule);

// The analytical model of `schedule` on `gpu`, checked as every command runs it: with
// --global-batch-size the schedule runs exactly that batch, and every stage holds at least
// one layer (InputError: the stage_count_problem followed by `stage_hint`).
AnalyticalCostModel analytical_model(const HardwareOptions& options, const std::string& gpu, const Schedule& schedule,
                                     std::string_view stage_hint = "");

}  // namespace pipesim
