#pragma once
// StageLayout: which part of a model one pipeline stage computes. The profiled cost model,
// the executor and the analytical cost model all cut a model through this one header
// (stage_blocks_of), so a predicted op and a measured op cover the same blocks. It lives
// in cost_models/ because kernels/ and executor/ link cost_models, not the other way.
//
// The one rule (balanced_block): n blocks over k stages get ⌊n/k⌋ each, and the remainder
// r goes to stages 1..r. Stage 0 keeps the base count because it holds the embedding and,
// in 1F1B-like schedules, the most micro-batches in flight (the memory peak); the last
// stage holds the LM head and the loss, the heaviest extra work, and gets an extra block
// only when every stage between them has one (r = k - 1).
//
//   L = 10, S = 4:  stage 0: emb + blocks 0-1 | 1: blocks 2-4 | 2: blocks 5-7 | 3: blocks 8-9 + head
//
// Uneven pipelines (Megatron's --decoder-first-pipeline-num-layers and
// --decoder-last-pipeline-num-layers) fix the layers of the first and the last pipeline
// device; the devices in between share the rest by the same rule, and each device's layers
// are cut into its v model chunks (interleaving: stage s on device s mod p) by it again.
// An explicit list gives every stage's layers.
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace pipesim {

struct StageLayout {
  int first_block = 0;
  int blocks = 0;
  bool embedding = false;  // token + position embedding before the first block
  bool head = false;       // final norm, LM head and loss after the last block
};

// The one rule: n blocks over k stages, ⌊n/k⌋ each, the remainder r to stages 1..r: the
// blocks of stage i (0 <= i < k).
inline int balanced_block(int n, int k, int i) { return n / k + (i >= 1 && i <= n % k ? 1 : 0); }

// How a model is cut, beyond the balanced default.
struct StagePartition {
  std::vector<int> layers;  // layers of each stage, explicitly (num_stages entries); empty: the rule
  int first = -1;           // layers of the first pipeline device (-1: by the rule)
  int last = -1;            // layers of the last pipeline device (-1: by the rule)
  bool empty() const { return layers.empty() && first < 0 && last < 0; }
};

// Layers of `stage` when `layers` layers are cut into `stages` stages. Without first/last
// layers that is the rule over the stages. With them (Megatron's semantics) the first and
// last of `devices` pipeline devices get those layers, the devices between share the rest,
// and each device's layers are cut into its chunks (stage s on device s mod devices;
// devices must divide stages, else each stage is taken as its own device), all by the rule.
// Stages may get 0 layers. InputError (its message
// starting "partition: ") if the partition does not add up (stage_blocks checks it all).
inline int stage_blocks_of(int layers, int stage, int stages, int devices, const StagePartition& part = {}) {
  auto fail = [](const std::string& what) { throw InputError("partition: " + what); };
  if (stages < 1) fail("needs at least one stage, got " + std::to_string(stages));
  PIPESIM_ASSERT(stage >= 0 && stage < stages);
  if (!part.layers.empty()) {
    if (static_cast<int>(part.layers.size()) != stages)
      fail(std::to_string(part.layers.size()) + " entries, but the schedule has " + std::to_string(stages) + " stages");
    return part.layers[static_cast<std::size_t>(stage)];
  }
  // The default cut is the rule over all stages, whatever device holds them: what the
  // executor runs (stage_layout).
  if (part.first < 0 && part.last < 0) return balanced_block(layers, stages, stage);
  const int p = devices >= 1 && stages % devices == 0 ? devices : stages;
  const int v = stages / p, d = stage % p, chunk = stage / p;
  const bool first = part.first >= 0, last = part.last >= 0;
  if (p == 1) fail("first/last pipeline-stage layers need at least 2 pipeline devices");
  const int rest = layers - std::max(part.first, 0) - std::max(part.last, 0);
  if (rest < 0)
    fail("first/last pipeline-stage layers (" + std::to_string(std::max(part.first, 0)) + " + " +
         std::to_string(std::max(part.last, 0)) + ") exceed the model's " + std::to_string(layers) + " layers");
  const int middle = p - first - last;
  if (middle == 0 && rest != 0)
    fail("first + last pipeline-stage layers must add up to the model's " + std::to_string(layers) +
         " layers with 2 pipeline devices");
  int on_device = 0;
  if (d == 0 && first) on_device = part.first;
  else if (d == p - 1 && last) on_device = part.last;
  else on_device = balanced_block(rest, middle, d - (first ? 1 : 0));
  return balanced_block(on_device, v, chunk);
}

// Every stage's layers (stage_blocks_of), with the explicit partition checked whole.
inline std::vector<int> stage_blocks(int layers, int stages, int devices, const StagePartition& part = {}) {
  if (!part.layers.empty()) {
    long long sum = 0;
    for (std::size_t i = 0; i < part.layers.size(); ++i) {
      if (part.layers[i] < 0)
        throw InputError("partition: entry " + std::to_string(i) + " must be >= 0, got " + std::to_string(part.layers[i]));
      sum += part.layers[i];
    }
    if (sum != layers)
      throw InputError("partition: sums to " + std::to_string(sum) + " layers, but the model has " + std::to_string(layers));
  }
  std::vector<int> out;
  for (int s = 0; s < std::max(stages, 1); ++s) out.push_back(stage_blocks_of(layers, s, stages, devices, part));
  return out;
}

// The layout of one stage: its blocks by stage_blocks_of (the balanced rule unless `part`
// says otherwise), after those of the stages before it. InputError unless
// 1 <= stages <= layers (a stage without blocks has nothing to run in the executor) and
// 0 <= stage < stages, or if the partition does not add up.
inline StageLayout stage_layout(int layers, int stage, int stages, int devices = 1, const StagePartition& part = {}) {
  if (stages < 1 || stages > layers)
    throw InputError("stage layout: " + std::to_string(stages) + " stages need between 1 and " +
                     std::to_string(layers) + " (the model's layers) stages");
  if (stage < 0 || stage >= stages)
    throw InputError("stage layout: stage " + std::to_string(stage) + " is not in 0.." + std::to_string(stages - 1));
  StageLayout l;
  for (int s = 0; s < stage; ++s) l.first_block += stage_blocks_of(layers, s, stages, devices, part);
  l.blocks = stage_blocks_of(layers, stage, stages, devices, part);
  l.embedding = stage == 0;
  l.head = stage == stages - 1;
  return l;
}

}  // namespace pipesim
