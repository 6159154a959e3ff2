// executor/shared_layout: the executor's real layout as the engine's shared hardware.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/cpu_affinity.hpp"
#include "executor/shared_layout.hpp"

namespace pipesim {
namespace {

TEST(SharedLayout, KernelTimeSliceIsEevdfsDefaultScaledByLogCores) {
  EXPECT_EQ(kernel_time_slice(1), 750'000);
  EXPECT_EQ(kernel_time_slice(2), 1'500'000);
  EXPECT_EQ(kernel_time_slice(4), 2'250'000);
  EXPECT_EQ(kernel_time_slice(8), 3'000'000);
  EXPECT_EQ(kernel_time_slice(64), 3'000'000);  // capped at 8 cores
}

TEST(SharedLayout, CpuThreadsShareOnePoolOverTheUsableCores) {
  ExecutorLayout layout;
  layout.backend = "cpu";
  layout.devices = 4;
  layout.cores = 2;
  SlowdownCurves curves;
  curves[static_cast<std::size_t>(OpKind::F)] = {1.0, 1.2};
  const SharedHardware hw = shared_hardware(layout, curves);
  ASSERT_EQ(hw.pools.size(), 1u);
  EXPECT_EQ(hw.pools[0].devices, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(hw.pools[0].cores, 2);
  EXPECT_TRUE(hw.pools[0].queue);
  EXPECT_EQ(hw.pools[0].slowdown[static_cast<std::size_t>(OpKind::F)], (std::vector<double>{1.0, 1.2}));
  for (double f : hw.pools[0].turn_slowdown) EXPECT_EQ(f, 1);  // no turns given
  KindFactors turns = kNoSlowdown;
  turns[static_cast<std::size_t>(OpKind::B)] = 1.1;
  EXPECT_EQ(shared_hardware(layout, curves, turns).pools[0].turn_slowdown, turns);
  layout.time_sliced = true;
  EXPECT_FALSE(shared_hardware(layout, curves).pools[0].queue);
  // One device alone shares nothing.
  layout.devices = 1;
  EXPECT_TRUE(shared_hardware(layout, curves).shares_nothing());
}

TEST(SharedLayout, CpuOpsLongerThanFourSlicesAreTimeSliced) {
  const int cores = usable_cores();
  const Tick slice = kernel_time_slice(cores);
  EXPECT_FALSE(executor_layout("cpu", 4, "auto", 4 * slice).time_sliced);
  EXPECT_TRUE(executor_layout("cpu", 4, "auto", 4 * slice + 1).time_sliced);
  EXPECT_EQ(executor_layout("cpu", 4, "auto", 0).cores, cores);
}

TEST(SharedLayout, VirtualDevicesOfOneGpuFormAPool) {
  ExecutorLayout layout;
  layout.backend = "cuda";
  layout.devices = 8;
  layout.devices_per_gpu = 4;
  layout.own_sms = true;
  const SharedHardware own = shared_hardware(layout, {});
  ASSERT_EQ(own.pools.size(), 2u);
  EXPECT_EQ(own.pools[1].devices, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(own.pools[0].cores, 0);  // own SMs: interference only
  EXPECT_FALSE(own.pools[0].queue);
  layout.own_sms = false;
  EXPECT_EQ(shared_hardware(layout, {}).pools[0].cores, 1);  // all SMs: 1/k each
  // A GPU's partitions do not take turns on a CPU core: its curve holds what they share.
  KindFactors turns = kNoSlowdown;
  turns[static_cast<std::size_t>(OpKind::F)] = 1.2;
  EXPECT_EQ(shared_hardware(layout, {}, turns).pools[0].turn_slowdown, kNoSlowdown);
}

// Turn slowdowns the profile cannot tell from none (their medians within 2 standard errors),
// or below 1, are not applied.
TEST(SharedLayout, TurnsWithinTheirNoiseAreOne) {
  KindFactors turns = kNoSlowdown, evidence{};
  turns[static_cast<std::size_t>(OpKind::F)] = 1.04;
  turns[static_cast<std::size_t>(OpKind::B)] = 1.12;
  turns[static_cast<std::size_t>(OpKind::OptStep)] = 0.93;
  evidence[static_cast<std::size_t>(OpKind::F)] = 1.6;
  evidence[static_cast<std::size_t>(OpKind::B)] = 2.4;
  evidence[static_cast<std::size_t>(OpKind::OptStep)] = 9;  // the medians say slower, the means faster
  const KindFactors kept = beyond_noise(turns, evidence);
  EXPECT_EQ(kept[static_cast<std::size_t>(OpKind::F)], 1);
  EXPECT_EQ(kept[static_cast<std::size_t>(OpKind::B)], 1.12);
  EXPECT_EQ(kept[static_cast<std::size_t>(OpKind::OptStep)], 1);  // below 1: noise, at any evidence
  evidence[static_cast<std::size_t>(OpKind::F)] = 2.1;
  EXPECT_EQ(beyond_noise(turns, evidence)[static_cast<std::size_t>(OpKind::F)], 1.04);
}

}  // namespace
}  // namespace pipesim

namespace pipesim {
namespace {

// validate pins device d to core d % cores when every device has a core: each device gets its
// core's speed; with more devices than cores (threads not pinned) every device the mean.
TEST(SharedLayout, DeviceSlowdownsFollowThePinning) {
  EXPECT_EQ(device_slowdowns(2, {1.2, 1.0}), (std::vector<double>{1.2, 1.0}));
  EXPECT_EQ(device_slowdowns(1, {1.2, 1.0}), (std::vector<double>{1.2}));
  EXPECT_EQ(device_slowdowns(4, {1.2, 1.0}), (std::vector<double>{1.1, 1.1, 1.1, 1.1}));
  const std::vector<int> ids = usable_core_ids();
  EXPECT_EQ(static_cast<int>(ids.size()), usable_cores());
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
}

}  // namespace
}  // namespace pipesim
