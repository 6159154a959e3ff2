#pragma once
// The executor's backends by name, for the commands that run schedules (pipesim run,
// pipesim validate) and tests:
//
//   "cpu"   CpuBackend (executor/cpu_backend.hpp), always built
//   "cuda"  CudaBackend (executor/cuda_backend.hpp, bf16 GEMMs), built with PIPESIM_CUDA;
//           executor device d runs on GPU d % (visible GPUs)
//
// Several devices on one GPU ("virtual devices") and `sm_partition`:
//   "auto"  each gets its own equal group of the GPU's SMs (green contexts,
//           kernels/cuda/sm_partition.hpp) where the driver allows; otherwise they share
//           all SMs. Either way one line on stderr per GPU says which.
//   "on"    the same, but a GPU that cannot be partitioned is an error
//   "off"   they share all SMs
//
// InputError (one line naming --backend or --sm-partition) for another name, for "cuda" in a
// build without CUDA, and for "cuda" where no GPU is visible (checked here, before any
// thread starts). A GPU failure while the factory makes a backend becomes an InputError
// naming the device.
#include <string>

#include "executor/executor.hpp"

namespace pipesim {

BackendFactory make_backend_factory(const std::string& name, const std::string& sm_partition = "auto");

// Whether this build has the CUDA backend (PIPESIM_CUDA).
bool cuda_backend_built();

// How many of a run's `devices` share the busiest GPU under backend `name` (cuda: devices
// over visible GPUs, rounded up; cpu, or no GPU: 1): what the profiler splits a GPU into to
// time ops as such a device runs them (pipesim validate, profiling now).
int devices_per_gpu(const std::string& name, int devices);

}  // namespace pipesim
