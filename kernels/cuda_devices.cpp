#include "kernels/cuda_devices.hpp"

#include <string>

#include "core/error.hpp"
#ifdef PIPESIM_HAVE_CUDA
#include "kernels/cuda/cuda_error.hpp"
#endif

namespace pipesim {

int cuda_devices_for_backend() {
#ifdef PIPESIM_HAVE_CUDA
  std::string why;
  int count = 0;
  try {
    count = cuda_device_count(&why);
  } catch (const CudaError& e) {
    throw InputError("--backend cuda: cannot query the CUDA devices: " + std::string(e.what()));
  }
  if (count == 0) throw InputError("--backend cuda: no CUDA device is visible (" + why + "); use --backend cpu");
  return count;
#else
  throw InputError("--backend cuda: this pipesim was built without CUDA (configure with -DPIPESIM_CUDA=ON where nvcc "
                   "and cuBLAS are installed, docs/gpu.md); use --backend cpu");
#endif
}

}  // namespace pipesim
