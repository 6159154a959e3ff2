// The plugin's half of executor/cuda_plugin.hpp, built into libpipesim_cuda.so only: the
// executor's CudaBackend, the profiler's CUDA backend and the runtime's answers, behind the
// one exported symbol pipesim_cuda_plugin. The host has checked every flag before it calls.
#include <cuda_runtime_api.h>

#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "core/units.hpp"
#include "executor/cuda_backend.hpp"
#include "executor/cuda_plugin.hpp"
#include "kernels/cuda/cuda_error.hpp"
#include "kernels/cuda_profile_backend.hpp"

namespace pipesim {
namespace {

// The SM partitions of the GPUs, made when a GPU's first virtual device is; shared by every
// run the factory makes backends for (keyed by GPU and number of virtual devices on it).
class Partitions {
 public:
  explicit Partitions(std::string mode) : mode_(std::move(mode)) {}

  CudaBackendOptions options_for(int device, int num_devices, int gpus) {
    CudaBackendOptions o;
    const int gpu = device % gpus;
    const int on_gpu = (num_devices - gpu + gpus - 1) / gpus;  // virtual devices on this GPU
    if (on_gpu <= 1) return o;
    std::lock_guard lock(mutex_);
    const auto key = std::pair{gpu, on_gpu};
    auto it = made_.find(key);
    if (it == made_.end()) it = made_.emplace(key, make(gpu, on_gpu)).first;
    o.partition = it->second;
    o.partition_group = device / gpus;
    return o;
  }

 private:
  std::shared_ptr<SmPartition> make(int gpu, int on_gpu) {
    const std::string head = "pipesim: GPU " + std::to_string(gpu) + ": " + std::to_string(on_gpu) + " virtual devices ";
    if (mode_ == "off") {
      std::cerr << head << "share all its SMs (--sm-partition off)\n";
      return nullptr;
    }
    try {
      auto p = std::make_shared<SmPartition>(gpu, on_gpu);
      std::cerr << head << "each run on their own " << p->sms_per_group() << " of its " << p->total_sms()
                << " SMs (green contexts)\n";
      return p;
    } catch (const CudaError& e) {
      if (mode_ == "on") throw InputError("--sm-partition on: " + std::string(e.what()));
      std::cerr << head << "share all its SMs: no SM partition (" << e.what() << ")\n";
      return nullptr;
    }
  }

  std::string mode_;
  std::mutex mutex_;
  std::map<std::pair<int, int>, std::shared_ptr<SmPartition>> made_;
};

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

CudaRuntimeInfo runtime_info() {
  CudaRuntimeInfo info;
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) info.runtime = version_text(runtime);
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) info.driver = version_text(driver);
  info.cublas = std::to_string(CUBLAS_VER_MAJOR) + "." + std::to_string(CUBLAS_VER_MINOR) + "." +
                std::to_string(CUBLAS_VER_PATCH);
  int count = 0;
  try {
    count = cuda_device_count(&info.why_none);
  } catch (const CudaError& e) {
    info.why_none = std::string("cannot query the CUDA devices: ") + e.what();
    return info;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
      (void)cudaGetLastError();
      info.gpus.push_back("GPU " + std::to_string(d) + " (no properties)");
      continue;
    }
    info.gpus.push_back(std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
                        ", " + format_bytes(static_cast<double>(prop.totalGlobalMem)) + ")");
  }
  return info;
}

BackendFactory backend_factory(const std::string& sm_partition, bool cuda_graphs, int gpus) {
  auto partitions = std::make_shared<Partitions>(sm_partition);
  return [partitions, cuda_graphs, gpus](int device, const ModelSetup& setup,
                                         const StopFlag&) -> std::unique_ptr<ComputeBackend> {
    try {
      CudaBackendOptions o = partitions->options_for(device, setup.num_devices, gpus);
      o.cuda_graphs = cuda_graphs;
      return std::make_unique<CudaBackend>(device, setup, o);
    } catch (const CudaError& e) {
      throw InputError("--backend cuda: device " + std::to_string(device) + ": " + e.what());
    }
  };
}

const CudaPluginApi kApi{kCudaPluginAbi, PIPESIM_CUDA_PLUGIN_TAG, runtime_info, backend_factory,
                         make_cuda_profile_backend};

}  // namespace
}  // namespace pipesim

extern "C" __attribute__((visibility("default"))) const pipesim::CudaPluginApi* pipesim_cuda_plugin() {
  return &pipesim::kApi;
}
