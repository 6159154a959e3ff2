#pragma once
// The uniform cost model with every stage's forward, full backward and weight-gradient
// times given (free links, free optimizer step), for tests that replay a schedule in ns.
#include "cost_models/uniform.hpp"

namespace pipesim::testing_costs {

inline UniformCostModel uniform_costs(Tick fwd, Tick bwd, Tick wgrad = 0) {
  UniformCostConfig cfg;
  cfg.stage = StageCosts{fwd, bwd, wgrad};
  return UniformCostModel(cfg);
}

}  // namespace pipesim::testing_costs
