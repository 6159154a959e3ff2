// A device's footprint (tools/validate_footprint.hpp): the blocks its most loaded device
// holds, all its stages', at most the profiler's cap; and validate's warning where a
// schedule's devices hold another number than the profile timed the block within.
#include <gtest/gtest.h>

#include "cost_models/catalog.hpp"
#include "tests/generated.hpp"
#include "tools/validate_footprint.hpp"

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
            "run longer than predicted (validate it on its own, or profile with --stage-blocks 8 and pass --cost)");
  EXPECT_NE(footprint_warning(tiny, generated("1f1b", 4, 4), 4).find("may run shorter"), std::string::npos);
}

}  // namespace
}  // namespace pipesim
