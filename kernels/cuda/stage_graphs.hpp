#pragma once
// CudaStageGraphs: a stage's F, I and W (cuda_stage.hpp) captured once as CUDA graphs and
// replayed, so a block's ~30 kernels and GEMMs are one cudaGraphLaunch instead of ~30
// launches (docs/gpu.md, "CUDA graphs"). One object per replica (pipeline, stage).
//
// What a replay depends on, and how each is kept fixed:
//   kernels, shapes   the replica's blocks: fixed for the object's life
//   weights           the blocks' parameter, bf16 and gradient addresses (CudaStage::
//                     addresses): part of the key; another weight version (a kept copy)
//                     re-captures and updates the executable in place (cudaGraphExecUpdate)
//   cache, temporaries  laid out in a DeviceArena per (op, slot), reserved once; a slot is
//                     one micro-batch in flight on the replica (the backend hands them out),
//                     so the same addresses serve every micro-batch of that slot in turn
//   input             a payload at any address: a memcpy node at the graph's head copies
//                     it into the arena; its source is set before each launch
//                     (cudaGraphExecMemcpyNodeSetParams1D)
//   output            a memcpy node at the tail copies the result out of the arena into a
//                     fresh buffer of its own (a message may outlive the slot)
//   ones vector       made before the capture; its address is part of the key
//
// Per op kind, the first call runs directly and lays its allocations out on paper (a sizing
// arena: the capacity the arena needs). I and W are captured only on a cache whose F (and
// I) were replayed (every buffer borrowed from the arenas); otherwise they run directly.
// A CudaError while capturing, instantiating or launching turns graphs off for this object
// (fallback() says why) and the op runs directly; errors of the op itself propagate.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_stage.hpp"
#include "kernels/cuda/device_arena.hpp"
#include "kernels/launch_counts.hpp"

namespace pipesim {

class CudaStageGraphs {
 public:
  // `enabled` false: every op runs directly (counted). The context must outlive the object.
  CudaStageGraphs(CudaContext& ctx, bool enabled);
  ~CudaStageGraphs();
  CudaStageGraphs(const CudaStageGraphs&) = delete;
  CudaStageGraphs& operator=(const CudaStageGraphs&) = delete;

  // stage.forward / backward_input / backward_weight for the micro-batch in `slot`, with
  // the same results; outputs are buffers of their own.
  DeviceMatrix forward(const CudaStage& stage, const DeviceMatrix& x, CudaStageCache& cache, int slot);
  DeviceMatrix backward_input(const CudaStage& stage, const DeviceMatrix& dy, CudaStageCache& cache, int slot);
  void backward_weight(CudaStage& stage, CudaStageCache& cache, int slot);

  bool enabled() const { return enabled_; }
  const std::string& fallback() const { return fallback_; }  // why graphs were turned off; "" if not
  const LaunchCounts& counts() const { return counts_; }

 private:
  enum Kind : int { F = 0, I = 1, W = 2 };
  struct Entry {
    cudaGraph_t graph = nullptr;      // what `exec` was instantiated from (owns the nodes below)
    cudaGraphExec_t exec = nullptr;
    cudaGraphNode_t in_node = nullptr, out_node = nullptr;
    std::vector<const void*> key;     // weights, ones vector and cache addresses it was captured with
    float* in_dst = nullptr;          // the staged input in the arena
    const float* out_src = nullptr;   // the output in the arena
    std::int64_t in_count = 0, out_count = 0;
    int out_rows = 0, out_cols = 0;
    CudaStageCache after;             // the cache the op leaves (views into the arenas)
  };
  using Body = std::function<DeviceMatrix(const DeviceMatrix* in)>;

  DeviceMatrix run(Kind kind, int slot, std::vector<const void*> key, const DeviceMatrix* in, CudaStageCache& cache,
                   const Body& body, int tokens);
  void capture(Entry& e, Kind kind, int slot, std::vector<const void*> key, const DeviceMatrix* in,
               CudaStageCache& cache, const Body& body, int tokens);
  DeviceMatrix launch(Entry& e, const DeviceMatrix* in, CudaStageCache& cache, const char* what);
  static void destroy(Entry& e);

  CudaContext& ctx_;
  bool enabled_;
  std::string fallback_;
  LaunchCounts counts_;
  std::int64_t sized_[3] = {-1, -1, -1};                          // arena bytes per kind; -1: not yet
  std::map<std::pair<int, int>, std::unique_ptr<DeviceArena>> arenas_;  // (kind, slot); outlive the entries
  std::map<std::pair<int, int>, Entry> entries_;
};

}  // namespace pipesim
