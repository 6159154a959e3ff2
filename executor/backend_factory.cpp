#include "executor/backend_factory.hpp"

#include <memory>

#include "executor/cpu_backend.hpp"
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

BackendFactory make_backend_factory(const std::string& name) {
  if (name == "cpu")
    return [](int, const ModelSetup& setup, const StopFlag&) -> std::unique_ptr<ComputeBackend> {
      return std::make_unique<CpuBackend>(setup);
    };
  if (name == "cuda") {
#ifdef PIPESIM_HAVE_CUDA
    std::string why;
    int count = 0;
    try {
      count = cuda_device_count(&why);
    } catch (const CudaError& e) {
      throw InputError("--backend cuda: cannot query the CUDA devices: " + std::string(e.what()));
    }
    if (count == 0) throw InputError("--backend cuda: no CUDA device is visible (" + why + "); use --backend cpu");
    return [](int device, const ModelSetup& setup, const StopFlag&) -> std::unique_ptr<ComputeBackend> {
      try {
        return std::make_unique<CudaBackend>(device, setup);
      } catch (const CudaError& e) {
        throw InputError("--backend cuda: device " + std::to_string(device) + ": " + e.what());
      }
    };
#else
    throw InputError("--backend cuda: this pipesim was built without CUDA (configure with -DPIPESIM_CUDA=ON where nvcc "
                     "and cuBLAS are installed, docs/gpu.md); use --backend cpu");
#endif
  }
  throw InputError("--backend: expected cpu or cuda, got '" + name + "'");
}

}  // namespace pipesim
