// Uses the installed package: headers under <pipesim/...>, the pipesim::sim target.
#include <cstdio>

#include <pipesim/cost_models/uniform.hpp>
#include <pipesim/schedules/generator.hpp>
#include <pipesim/sim/engine.hpp>

int main() {
  pipesim::ScheduleParams p;  // 1F1B, p = 4, m = 8
  pipesim::UniformCostConfig costs;
  costs.stage = pipesim::StageCosts{1000, 2000, 1000};
  const pipesim::SimResult r = pipesim::simulate(pipesim::generate("1f1b", p), pipesim::UniformCostModel(costs));
  std::printf("makespan %lld ns\n", static_cast<long long>(r.makespan));  // (m + p - 1) * 3000 = 33000
  return r.makespan == 33000 ? 0 : 1;
}
