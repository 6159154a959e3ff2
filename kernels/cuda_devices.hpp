#pragma once
// `--backend cuda` (pipesim run, validate, profile): how many GPUs this process sees, or one
// InputError naming --backend: this build has no CUDA (PIPESIM_CUDA=OFF), no GPU is visible
// (with the runtime's reason), or the query itself fails. Built in every build, so the
// callers need no #ifdef to say why there is no CUDA.

namespace pipesim {

int cuda_devices_for_backend();

}  // namespace pipesim
