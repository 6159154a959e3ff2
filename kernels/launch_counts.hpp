#pragma once
// LaunchCounts: how a GPU backend launched a stage's block ops (F, I, W): as one replayed
// CUDA graph each, or kernel by kernel (kernels/cuda/stage_graphs.hpp, docs/gpu.md). Plain
// numbers, so the executor's interface (executor/backend.hpp) can carry them without CUDA.
#include <cstdint>

namespace pipesim {

struct LaunchCounts {
  std::int64_t stage_ops = 0;       // F, I and W calls on a stage's blocks (B counts as I and W)
  std::int64_t graph_launches = 0;  // cudaGraphLaunch calls: one per replayed op
  std::int64_t direct_ops = 0;      // ops whose kernels were launched one by one
  std::int64_t captures = 0;        // stream captures (a slot's first use, other weights)
  std::int64_t instantiations = 0;  // cudaGraphInstantiate calls
  std::int64_t updates = 0;         // re-captures applied by cudaGraphExecUpdate instead
  LaunchCounts& operator+=(const LaunchCounts& o) {
    stage_ops += o.stage_ops;
    graph_launches += o.graph_launches;
    direct_ops += o.direct_ops;
    captures += o.captures;
    instantiations += o.instantiations;
    updates += o.updates;
    return *this;
  }
};

}  // namespace pipesim
