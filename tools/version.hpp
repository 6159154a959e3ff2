#pragma once
// What `pipesim --version` and `pipesim --check-cuda` print (docs/gpu.md, "Loading").
//
//   --version     the version and what this build has: build type and compiler, zlib, the
//                 Python module, and the CUDA plugin (built or not; where the loader looks and
//                 whether the file is there). Loads nothing: it stays as fast as a run that
//                 never touches the GPU.
//   --check-cuda  loads the CUDA plugin as --backend cuda would and lists the runtime, the
//                 driver and the visible GPUs; CudaUnavailable (exit code 6) when a CUDA run
//                 could not start here, with the reason.
#include <ostream>
#include <string>

namespace pipesim {

std::string version_text();

void check_cuda(std::ostream& out);

}  // namespace pipesim
