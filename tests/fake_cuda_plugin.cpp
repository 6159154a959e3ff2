// A stand-in for libpipesim_cuda.so built by another pipesim (cuda_plugin_test): the entry
// point is there, the build tag is not this build's, so the loader must refuse to call it.
#include "executor/cuda_plugin.hpp"

namespace {
const pipesim::CudaPluginApi kApi{pipesim::kCudaPluginAbi, "pipesim 0.0.1, another build", nullptr, nullptr, nullptr};
}

extern "C" __attribute__((visibility("default"))) const pipesim::CudaPluginApi* pipesim_cuda_plugin() { return &kApi; }
