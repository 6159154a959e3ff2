#pragma once
// Schedule: pure data, never time. Per-device ordered op lists plus the placement
// (pipeline, stage) -> device. The engine (sim/) gives it time; generators
// (schedules/generators/) and readers (schedule_io.hpp) produce it.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schedules/cell_layout.hpp"
#include "schedules/op.hpp"

namespace pipesim {

// Which weight version a forward / backward uses (spec §9-§10). The engine applies the
// policy and counts versions; generators only pick it.
enum class WeightPolicy : std::uint8_t {
  Current,  // every op uses the replica's current weights (synchronous schedules, AMP,
            // async 1F1B without stashing, PipeDream-2BW's naive accumulation)
  Stash,    // a backward reuses the version its forward used (PipeDream weight stashing)
  TwoBW,    // every op of batch t uses W^(t-1) (PipeDream-2BW double buffering, bound
            // when the stage first sees batch t; batch 0 uses W^0)
};

std::string_view weight_policy_name(WeightPolicy policy);  // "current", "stash", "2bw"

struct Schedule {
  std::string name;          // e.g. "1f1b"; free text for imported schedules
  int num_devices = 0;
  int num_stages = 0;        // stages per pipeline (p*v for interleaved)
  int num_pipelines = 1;     // model replicas running as separate pipelines (Chimera: 2)
  // Distinct micro-batches per iteration over the whole schedule. Micro-batch ids are
  // global across pipelines and count over the run: iteration t owns ids
  // t*microbatches .. t*microbatches + microbatches - 1. (For one pipeline group this is
  // the spec's m = N; with data-parallel width W it is W x N.)
  int microbatches = 0;
  int iterations = 1;        // optimizer steps the op lists cover
  bool blocking_grad_sync = false;  // GradSync stalls its device until the collective ends
  WeightPolicy weight_policy = WeightPolicy::Current;
  // Each micro-batch op works on 1/microbatch_split of a micro-batch (Chimera's backward
  // halving runs the doubling order with half-size micro-batches: split 2).
  int microbatch_split = 1;

  // placement[pipeline][stage] = device holding that stage replica.
  std::vector<std::vector<int>> placement;
  // ops[device] = that device's ops in execution order.
  std::vector<std::vector<Op>> ops;
  // Where the ops stood in the PyTorch CSV they came from (empty for generated schedules).
  CellLayout cells;

  int device_of(int pipeline, int stage) const { return placement[pipeline][stage]; }
  int device_of(const Op& op) const { return placement[op.pipeline][op.stage]; }

  // How many chunks one device's share of the model is cut into: num_stages divided by
  // the number of distinct devices pipeline 0 spans (interleaved: v, ZB-V: 2, plain: 1).
  // A cost model gives each chunk 1/chunks_per_device() of a full stage's time.
  int chunks_per_device() const;

  // Chunk index of a stage on its device: its rank among the stages of that pipeline
  // held by the same device, in stage order (interleaved rank r: stage c*p + r -> c).
  int chunk_of(const Op& op) const;

  // The (pipeline, stage) replicas held by device d, in (pipeline, stage) order.
  std::vector<std::pair<int, int>> replicas_on(int device) const;

  std::size_t total_ops() const;

  // Iteration a micro-batch belongs to (ids count over the whole run): mb / microbatches.
  int iteration_of(int microbatch) const { return microbatches > 0 ? microbatch / microbatches : 0; }
};

// Fills placement for a single plain pipeline: stage s on device s % num_devices
// (so interleaved chunk c of rank r is stage c*p + r).
std::vector<std::vector<int>> round_robin_placement(int num_stages, int num_devices);

}  // namespace pipesim
