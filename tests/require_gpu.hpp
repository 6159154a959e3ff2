#pragma once
// For the CUDA tests: PIPESIM_SKIP_WITHOUT_GPU() skips the test (or fixture) where no GPU is
// visible, naming the runtime's reason, and fails it instead when PIPESIM_REQUIRE_GPU is set
// (tools/gpu-check.sh sets it on the GPU machine, where a skip would hide a broken setup).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kernels/cuda/cuda_error.hpp"

#define PIPESIM_SKIP_WITHOUT_GPU()                                                                                  \
  do {                                                                                                              \
    std::string why_;                                                                                               \
    if (::pipesim::cuda_device_count(&why_) == 0) {                                                                 \
      if (std::getenv("PIPESIM_REQUIRE_GPU") != nullptr) FAIL() << "PIPESIM_REQUIRE_GPU is set but no GPU: " << why_; \
      GTEST_SKIP() << "no CUDA device: " << why_;                                                                   \
    }                                                                                                               \
  } while (0)
