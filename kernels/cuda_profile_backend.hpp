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
// Built into pipesim::kernels_cuda (PIPESIM_CUDA) and from there into the CUDA plugin
// (executor/cuda_plugin.hpp): make_profile_backend("cuda") (executor/backend_factory.hpp)
// checks the flags and that a GPU is visible, then makes one through the plugin.
#include <memory>

#include "kernels/profile_backend.hpp"

namespace pipesim {

// Timed by CUDA events (else the host's wall clock) on 1/virtual_devices of GPU 0's SMs, with
// `gpus` (>= 1) visible. A GPU failure while it sets up is an InputError naming the backend.
std::unique_ptr<ProfileBackend> make_cuda_profile_backend(bool events, int virtual_devices, int gpus);

}  // namespace pipesim
