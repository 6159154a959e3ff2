// kernels/core_speeds: a block pass timed on each core, in turns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sched.h>

#include "core/cpu_affinity.hpp"
#include "core/error.hpp"
#include "cost_models/catalog.hpp"
#include "kernels/core_speeds.hpp"

namespace pipesim {
namespace {

TEST(CoreSpeeds, OneMedianPerCoreAndARefusedCoreNamed) {
  const ModelSpec model = find_model("gpt-tiny");
  const std::vector<int> cores = usable_core_ids();
  ASSERT_FALSE(cores.empty());
  const CorePassSeconds seconds = block_pass_seconds_on_cores(model, 1, cores, 2, 0.002, 2);
  ASSERT_EQ(seconds.median.size(), cores.size());
  ASSERT_EQ(seconds.visits.size(), cores.size());
  for (std::size_t c = 0; c < cores.size(); ++c) {
    EXPECT_GT(seconds.median[c], 0);
    EXPECT_LT(seconds.median[c], 10.0);  // seconds, not nanoseconds
    ASSERT_EQ(seconds.visits[c].size(), 2u);  // one median per round
    for (double v : seconds.visits[c]) EXPECT_GT(v, 0);
  }
  try {
    (void)block_pass_seconds_on_cores(model, 1, {CPU_SETSIZE - 1}, 1, 0.0, 1);
    FAIL() << "core " << CPU_SETSIZE - 1 << " accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("core speeds: cannot run a thread on core " + std::to_string(CPU_SETSIZE - 1)));
  }
}

}  // namespace
}  // namespace pipesim
