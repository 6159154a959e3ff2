#pragma once
// StageLayout: which part of a model one pipeline stage computes. The profiler, the
// profiled cost model and the executor all cut a model the same way, through this one
// function, so a predicted op and a measured op cover the same blocks.
//
// A model of L transformer blocks split into S stages: stage s gets L/S blocks, and the
// first L % S stages one more; the embedding is on stage 0, the LM head on stage S-1.
//
//   L = 10, S = 4:  stage 0: emb + blocks 0-2 | 1: blocks 3-5 | 2: blocks 6-7 | 3: blocks 8-9 + head
#include <string>

#include "core/error.hpp"

namespace pipesim {

struct StageLayout {
  int first_block = 0;
  int blocks = 0;
  bool embedding = false;  // token + position embedding before the first block
  bool head = false;       // final norm, LM head and loss after the last block
};

// InputError unless 1 <= stages <= layers and 0 <= stage < stages.
inline StageLayout stage_layout(int layers, int stage, int stages) {
  if (stages < 1 || stages > layers)
    throw InputError("stage layout: " + std::to_string(stages) + " stages need between 1 and " +
                     std::to_string(layers) + " (the model's layers) stages");
  if (stage < 0 || stage >= stages)
    throw InputError("stage layout: stage " + std::to_string(stage) + " is not in 0.." + std::to_string(stages - 1));
  const int base = layers / stages, extra = layers % stages;
  StageLayout l;
  l.blocks = base + (stage < extra ? 1 : 0);
  l.first_block = stage * base + (stage < extra ? stage : extra);
  l.embedding = stage == 0;
  l.head = stage == stages - 1;
  return l;
}

}  // namespace pipesim
