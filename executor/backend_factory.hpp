#pragma once
// The backends by name, for the commands that run or profile schedules (pipesim run,
// validate, profile) and tests. One place says which names there are and which flags each
// takes; the CUDA ones come from the CUDA plugin (executor/cuda_plugin.hpp), loaded by the
// first call that asks for "cuda", so nothing else loads the CUDA libraries.
//
// The executor's (make_backend_factory):
//   "cpu"   CpuBackend (executor/cpu_backend.hpp), always built
//   "cuda"  CudaBackend (executor/cuda_backend.hpp, bf16 GEMMs), in the plugin;
//           executor device d runs on GPU d % (visible GPUs)
//
// Several devices on one GPU ("virtual devices") and `sm_partition`:
//   "auto"  each gets its own equal group of the GPU's SMs (green contexts,
//           kernels/cuda/sm_partition.hpp) where the driver allows; otherwise they share
//           all SMs. Either way one line on stderr per GPU says which.
//   "on"    the same, but a GPU that cannot be partitioned is an error
//   "off"   they share all SMs
//
// The profiler's (make_profile_backend):
//   "cpu"   CpuProfileBackend (kernels/cpu_profile_backend.hpp), clock "wall" (the default)
//           or "thread-cpu", one thread (virtual_devices 1)
//   "cuda"  the CUDA profile backend (kernels/cuda_profile_backend.hpp) on GPU 0, clock
//           "events" (the default) or "wall", on 1/virtual_devices of its SMs
//
// InputError (one line naming --backend, --sm-partition, --clock or --virtual-devices) for
// another name or value, checked before the plugin is loaded; CudaUnavailable (exit code 6)
// when "cuda" cannot run here: no plugin in this build, the plugin or a library it needs
// missing, no driver, no visible GPU (checked here, before any thread starts). A GPU failure
// while the factory makes a backend becomes an InputError naming the device.
#include <memory>
#include <string>

#include "executor/executor.hpp"
#include "kernels/profile_backend.hpp"

namespace pipesim {

// cuda_graphs (cuda only; `--cuda-graphs on|off`): replay each block op as one CUDA graph
// launch, or launch its kernels one by one (docs/gpu.md).
BackendFactory make_backend_factory(const std::string& name, const std::string& sm_partition = "auto",
                                    bool cuda_graphs = true);

std::unique_ptr<ProfileBackend> make_profile_backend(const std::string& name, const std::string& clock = "",
                                                     int virtual_devices = 1);

// How many of a run's `devices` share the busiest GPU under backend `name` (cuda: devices
// over visible GPUs, rounded up; cpu: 1): what the profiler splits a GPU into to time ops as
// such a device runs them (pipesim validate). CudaUnavailable as above for "cuda".
int devices_per_gpu(const std::string& name, int devices);

}  // namespace pipesim
