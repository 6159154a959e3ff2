#pragma once
// Copies between the CPU backend's types (column-major KMat, BlockCache) and the device's
// row-major ones, for the tests that compare the two backends tensor by tensor and for
// callers that hand activations between a CPU and a GPU stage. Each call synchronises the
// context's stream (they are not for the hot path).
#include "kernels/cpu_block.hpp"
#include "kernels/cuda/cuda_block.hpp"

namespace pipesim {

DeviceMatrix to_device(CudaContext& ctx, const KMat<float>& m);
KMat<float> to_host(CudaContext& ctx, const DeviceMatrix& m);

// Every tensor the device cache holds, in BlockCache's shapes and layout (probs reordered
// to s x (b·a·s)); `holds` copied. Tensors the device cache does not hold stay empty.
BlockCache<float> cache_to_host(CudaContext& ctx, const CudaBlockCache& cache, const BlockConfig& c);

}  // namespace pipesim
