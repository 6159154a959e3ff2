// A device's footprint (tools/validate_footprint.hpp): the blocks its most loaded device
// holds, all its stages', at most the profiler's cap; validate's groups of schedules, a
// profile each; and its warning where a schedule's devices hold another number than a
// --cost profile timed the block within.
#include <gtest/gtest.h>

#include "cost_models/catalog.hpp"
#include "tests/generated.hpp"
#include "tools/validate_footprint.hpp"
#include "tools/validation_output.hpp"

namespace pipesim {
namespace {

using testing_schedules::generated;

TEST(DeviceBlocks, AllTheStagesADeviceHolds) {
  const ModelSpec tiny = find_model("gpt-tiny");  // 8 layers
  EXPECT_EQ(device_blocks(tiny, generated("1f1b", 2, 4)), 4);
  EXPECT_EQ(device_blocks(tiny, generated("chimera", 2, 4)), 8);      // one stage of each pipeline
  EXPECT_EQ(device_blocks(tiny, generated("interleaved", 2, 4)), 4);  // 2 chunks of 2 blocks
  EXPECT_EQ(device_blocks(tiny, generated("1f1b", 3, 3)), 3);         // 3, 3, 2: the most loaded
  // gpt-small's 16 layers: Chimera's 16 a device, capped at the 10 blocks of 64 MiB of fp32
  // weights and gradients (default_stage_blocks).
  EXPECT_EQ(device_blocks(find_model("gpt-small"), generated("chimera", 2, 4)), 10);
}

TEST(DeviceBlocks, AWarningWhereTheProfileTimedAnotherNumber) {
  const ModelSpec tiny = find_model("gpt-tiny");
  const Schedule chimera = generated("chimera", 2, 4);
  EXPECT_EQ(footprint_warning(tiny, chimera, 8), "");
  EXPECT_EQ(footprint_warning(tiny, chimera, 4),
            "chimera's devices hold 8 blocks each (all their stages'), the profile timed the block within 4: its ops may "
            "run longer than predicted (profile with --stage-blocks 8 for it, or leave out --cost: validate then profiles "
            "each footprint)");
  EXPECT_NE(footprint_warning(tiny, generated("1f1b", 4, 4), 4).find("may run shorter"), std::string::npos);
}

// validate profiles once per footprint: 1F1B and AMP share one (4 blocks a device), Chimera
// and 1F1B at p = 1 another (8), in the order each first comes.
TEST(DeviceBlocks, SchedulesGroupedByFootprint) {
  const ModelSpec tiny = find_model("gpt-tiny");
  const std::vector<Schedule> schedules = {generated("1f1b", 2, 4), generated("chimera", 2, 4), generated("amp", 2, 4),
                                           generated("1f1b", 1, 4)};
  EXPECT_EQ(footprint_groups(tiny, schedules), (std::vector<std::vector<std::size_t>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(footprint_groups(tiny, {schedules[0]}), (std::vector<std::vector<std::size_t>>{{0}}));
  EXPECT_TRUE(footprint_groups(tiny, {}).empty());
}

// The text's cost-model lines: one, or one per footprint's profile.
TEST(DeviceBlocks, OneCostModelLineOrOnePerFootprint) {
  EXPECT_EQ(cost_models_text({"profiled: a"}), "cost model: profiled: a\n");
  EXPECT_EQ(cost_models_text({"profiled: a", "profiled: b"}),
            "cost models, a profile per footprint:\n  profiled: a\n  profiled: b\n");
}

}  // namespace
}  // namespace pipesim
