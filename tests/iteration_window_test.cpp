// The window the time per iteration is measured over (sim/metrics.hpp), with and without
// validate's warm-up iterations: by hand on iteration ends, and on generated schedules.
#include <gtest/gtest.h>

#include <string>

#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"

namespace pipesim {
namespace {

SimResult ends(std::vector<Tick> e, Tick makespan) {
  SimResult r;
  r.iteration_end = std::move(e);
  r.makespan = makespan;
  return r;
}

TEST(IterationWindow, WarmupStartsTheWindowLater) {
  const SimResult r = ends({10, 30, 50, 75}, 80);
  const IterationWindow w0 = iteration_window(r);  // (75 - 10) / 3, rounded down
  EXPECT_EQ(w0.per_iteration, 21);
  EXPECT_EQ(w0.counted, 3);
  EXPECT_EQ(w0.start, 75 - 63);
  const IterationWindow w1 = iteration_window(r, 1);  // the first iteration is the warm-up of W = 0
  EXPECT_EQ(w1.per_iteration, w0.per_iteration);
  EXPECT_EQ(w1.counted, w0.counted);
  EXPECT_EQ(w1.start, w0.start);
  const IterationWindow w2 = iteration_window(r, 2);  // from the second end: (75 - 30) / 2
  EXPECT_EQ(w2.per_iteration, 22);
  EXPECT_EQ(w2.counted, 2);
  EXPECT_EQ(w2.start, 75 - 44);
  EXPECT_EQ(w2.end, 75);
  const IterationWindow w3 = iteration_window(r, 3);
  EXPECT_EQ(w3.per_iteration, 25);
  EXPECT_EQ(w3.counted, 1);
}

TEST(IterationWindow, EndsInAnyOrder) {  // an imported schedule's iteration 1 may end first
  const IterationWindow w = iteration_window(ends({50, 10, 75, 30}, 80), 2);
  EXPECT_EQ(w.per_iteration, 22);
  EXPECT_EQ(w.counted, 2);
}

TEST(IterationWindow, OneIterationIsTheWholeRunWithoutWarmup) {
  const IterationWindow w = iteration_window(ends({40}, 50));
  EXPECT_EQ(w.per_iteration, 50);
  EXPECT_EQ(w.counted, 1);
}

TEST(IterationWindowDeathTest, WarmupNeedsAnIterationLeftToCount) {
  EXPECT_DEATH((void)iteration_window(ends({10, 30}, 40), 2), "internal error");
  EXPECT_DEATH((void)iteration_window(ends({40}, 50), 1), "internal error");
}

// A schedule with a flush repeats itself exactly from its second iteration on: leaving more
// iterations out does not change its time per iteration, only the iterations counted.
TEST(IterationWindow, FlushSchedulesAreTheSameWithAnyWarmup) {
  UniformCostConfig c;
  c.stage = StageCosts{1000, 2000, 0};
  c.optimizer = 300;
  const UniformCostModel costs(c);
  for (const std::string name : {"gpipe", "1f1b", "chimera", "interleaved"}) {
    SCOPED_TRACE(name);
    ScheduleParams params;
    params.p = 4;
    params.m = 8;
    params.iterations = 5;
    const Schedule s = generate(name, params);
    const SimResult r = simulate(s, costs);
    const Tick per = summarize(s, r).time_per_iteration;
    for (int w = 1; w <= 4; ++w) {
      EXPECT_EQ(summarize(s, r, w).time_per_iteration, per) << "warm-up " << w;
      EXPECT_EQ(iteration_window(r, w).counted, 5 - std::max(w, 1));
    }
  }
}

}  // namespace
}  // namespace pipesim
