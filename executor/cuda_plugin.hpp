#pragma once
// The CUDA plugin (docs/gpu.md, "Loading"): the CUDA backends of the executor and of the
// profiler, built as libpipesim_cuda.so with PIPESIM_CUDA and opened with dlopen by the first
// call that needs it, so a run that stays on the CPU never loads libcudart or cuBLAS.
//
// The interface is one C symbol, `pipesim_cuda_plugin`, that returns the table below: C++
// factory functions, because host and plugin come from one build (one compiler, the same
// headers). The table carries that build's tag, and a plugin from another build is refused
// rather than called. Exceptions cross the boundary as in one program (InputError, or the
// executor's errors from a backend's calls).
//
// The loader looks in one place, the first that applies:
//   $PIPESIM_CUDA_PLUGIN       when set (a path to the file), and nowhere else
//   <exe dir>/libpipesim_cuda.so                         a plugin next to the executable
//   <exe dir>/<PIPESIM_CUDA_PLUGIN_DIR>/libpipesim_cuda.so  ../lib/pipesim: where it is
//                              installed (cmake/install.cmake), and where the build puts it
//
// A CUDA run that cannot start (no plugin in this build, the file missing, a library it needs
// missing, a plugin of another build, no driver or no visible GPU) is a CudaUnavailable:
// one line naming --backend cuda and the reason, exit code 6 (tools/exit_codes.hpp).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "executor/executor.hpp"
#include "kernels/profile_backend.hpp"

namespace pipesim {

class CudaUnavailable : public InputError {
 public:
  using InputError::InputError;
};

// What the plugin says about the CUDA runtime, for `pipesim --check-cuda`.
struct CudaRuntimeInfo {
  std::string runtime, driver, cublas;  // "13.0"; driver "" when none is installed
  std::vector<std::string> gpus;        // "NVIDIA H200 (sm_90, 139.8 GiB)"
  std::string why_none;                 // the runtime's reason when gpus is empty
};

inline constexpr int kCudaPluginAbi = 2;

struct CudaPluginApi {
  int abi = 0;                   // kCudaPluginAbi
  const char* build = nullptr;   // the tag of the build that made it (PIPESIM_CUDA_PLUGIN_TAG)
  CudaRuntimeInfo (*runtime_info)() = nullptr;
  // Executor device d on GPU d % gpus; sm_partition "auto", "on" or "off" (checked by the host);
  // cuda_graphs: replay each block op as a CUDA graph (kernels/cuda/stage_graphs.hpp).
  BackendFactory (*backend_factory)(const std::string& sm_partition, bool cuda_graphs, int gpus) = nullptr;
  // GPU 0, timed by CUDA events (else the wall clock), on 1/virtual_devices of its SMs.
  std::unique_ptr<ProfileBackend> (*profile_backend)(bool events, int virtual_devices, int gpus) = nullptr;
};

// Where the loader looks (above); empty in a build without the plugin.
std::string cuda_plugin_path();

// Whether this build made the plugin (PIPESIM_CUDA).
bool cuda_plugin_built();

// The loaded plugin (loaded once per process, never unloaded), or CudaUnavailable.
const CudaPluginApi& cuda_plugin();

// The loaded plugin's GPU count, or CudaUnavailable when none is visible.
int cuda_gpus();

}  // namespace pipesim

// The plugin's entry point (executor/cuda_plugin_entry.cpp).
extern "C" const pipesim::CudaPluginApi* pipesim_cuda_plugin();
