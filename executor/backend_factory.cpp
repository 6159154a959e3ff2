#include "executor/backend_factory.hpp"

#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "core/error.hpp"
#include "executor/cpu_backend.hpp"
#include "kernels/cuda_devices.hpp"
#ifdef PIPESIM_HAVE_CUDA
#include "executor/cuda_backend.hpp"
#include "kernels/cuda/cuda_error.hpp"
#endif

namespace pipesim {

bool cuda_backend_built() {
#ifdef PIPESIM_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

int devices_per_gpu(const std::string& name, int devices) {
#ifdef PIPESIM_HAVE_CUDA
  if (name == "cuda" && devices > 1) {
    const int gpus = cuda_device_count();
    if (gpus > 0) return (devices + gpus - 1) / gpus;
  }
#else
  (void)name;
  (void)devices;
#endif
  return 1;
}

#ifdef PIPESIM_HAVE_CUDA
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

}  // namespace
#endif

BackendFactory make_backend_factory(const std::string& name, const std::string& sm_partition) {
  if (sm_partition != "auto" && sm_partition != "on" && sm_partition != "off")
    throw InputError("--sm-partition: expected auto, on or off, got " + quote(sm_partition));
  if (name == "cpu")
    return [](int, const ModelSetup& setup, const StopFlag&) -> std::unique_ptr<ComputeBackend> {
      return std::make_unique<CpuBackend>(setup);
    };
  if (name == "cuda") {
#ifdef PIPESIM_HAVE_CUDA
    const int count = cuda_devices_for_backend();
    auto partitions = std::make_shared<Partitions>(sm_partition);
    return [partitions, count](int device, const ModelSetup& setup, const StopFlag&) -> std::unique_ptr<ComputeBackend> {
      try {
        return std::make_unique<CudaBackend>(device, setup, partitions->options_for(device, setup.num_devices, count));
      } catch (const CudaError& e) {
        throw InputError("--backend cuda: device " + std::to_string(device) + ": " + e.what());
      }
    };
#else
    cuda_devices_for_backend();  // throws: this build has no CUDA
#endif
  }
  throw InputError("--backend: expected cpu or cuda, got " + quote(name));
}

}  // namespace pipesim
