// libFuzzer harness for the runs_csv target (fuzz/targets.hpp); built with -DPIPESIM_FUZZ=ON.
#include "fuzz/harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return pipesim::fuzz::run_one(&pipesim::fuzz::runs_csv, data, size);
}
