#pragma once
// The CUDA profile backend: kernels/cuda/ on GPU 0 (bf16 GEMMs, the executor's default),
// every piece timed by one of two clocks:
//   "events"  (the default) CUDA events recorded on the context's stream around it
//             (CudaEventTimer): elapsed GPU time, without the launch overhead before the
//             first kernel
//   "wall"    the host's steady clock from an idle stream to the end of a synchronize after
//             the piece: launches, kernels and the synchronize, which is what the executor
//             measures around each op (its CUDA backend synchronizes after every call;
//             pipesim validate profiles this way)
// `virtual_devices` > 1 profiles on one group of an SmPartition of that many groups (green
// contexts), as one of that many executor devices sharing the GPU with --sm-partition.
//
//   block      CudaBlock forward, backward_input, backward_weight
//   embedding  CudaEmbedding forward, backward_weight (the token-id upload included)
//   head       CudaLmHead forward (with the loss brought to the host), backward_input,
//              backward_weight. Always untied: a tied model's head does the same work on
//              the embedding's matrix, so the times hold for both (parameters() counts V x h)
//   optimizer  CudaParams sgd_step / adam_step on one flat group of the requested size
//   link       cudaMemcpyAsync between two device buffers on GPU 0 ("device-to-device"),
//              or cudaMemcpyPeerAsync from GPU 0 to GPU 1 where two GPUs are visible
//              ("peer"), timed with events on the sending stream
//
// Built into pipesim::kernels_cuda (PIPESIM_CUDA); make_profile_backend("cuda")
// (profiler.hpp) makes one. InputError when no GPU is visible.
#include <memory>
#include <string>

#include "kernels/profile_backend.hpp"

namespace pipesim {

// InputError for another clock, virtual_devices < 1, or no visible GPU.
std::unique_ptr<ProfileBackend> make_cuda_profile_backend(const std::string& clock = "events", int virtual_devices = 1);

}  // namespace pipesim
