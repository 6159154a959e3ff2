#pragma once
// Two runs of the engine that must agree on everything they report: the same schedule
// simulated twice (determinism), by simulate() and by a reused Simulator, or by the engine's
// two paths (ready pass and event loop).
#include <gtest/gtest.h>

#include <cstddef>

#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace pipesim {

// Everything a SimResult reports.
inline void expect_same_result(const SimResult& a, const SimResult& b) {
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.critical_path, b.critical_path);
  EXPECT_EQ(a.iteration_end, b.iteration_end);
  EXPECT_EQ(a.shared, b.shared);
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (std::size_t d = 0; d < a.devices.size(); ++d) {
    const DeviceStats &x = a.devices[d], &y = b.devices[d];
    EXPECT_TRUE(x.busy == y.busy && x.first_start == y.first_start && x.last_end == y.last_end &&
                x.peak_activations == y.peak_activations && x.peak_activation_bytes == y.peak_activation_bytes &&
                x.final_activation_bytes == y.final_activation_bytes && x.peak_weight_versions == y.peak_weight_versions)
        << "device " << d;
  }
  ASSERT_EQ(a.staleness.size(), b.staleness.size());
  for (std::size_t s = 0; s < a.staleness.size(); ++s) {
    const StageStaleness &x = a.staleness[s], &y = b.staleness[s];
    EXPECT_TRUE(x.stage == y.stage && x.backwards == y.backwards && x.mismatched == y.mismatched &&
                x.mismatch_sum == y.mismatch_sum && x.max_mismatch == y.max_mismatch && x.gradients == y.gradients &&
                x.delay_sum == y.delay_sum && x.max_delay == y.max_delay)
        << "stage " << s;
  }
}

// The result and the timeline's records.
inline void expect_same_run(const SimResult& ra, const Timeline& a, const SimResult& rb, const Timeline& b) {
  expect_same_result(ra, rb);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const OpRecord& x = a.ops[i];
    const OpRecord& y = b.ops[i];
    EXPECT_TRUE(x.ref == y.ref && x.op == y.op && x.start == y.start && x.end == y.end &&
                x.weight_version == y.weight_version)
        << "record " << i;
  }
  EXPECT_EQ(a.memory.size(), b.memory.size());
  EXPECT_EQ(a.transfers.size(), b.transfers.size());
}

}  // namespace pipesim
