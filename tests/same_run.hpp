#pragma once
// Two runs of the engine that must agree on everything they report: the same schedule
// simulated twice (determinism), or by simulate() and by a reused Simulator.
#include <gtest/gtest.h>

#include <cstddef>

#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace pipesim {

inline void expect_same_run(const SimResult& ra, const Timeline& a, const SimResult& rb, const Timeline& b) {
  EXPECT_EQ(ra.makespan, rb.makespan);
  EXPECT_EQ(ra.events, rb.events);
  EXPECT_EQ(ra.critical_path, rb.critical_path);
  EXPECT_EQ(ra.iteration_end, rb.iteration_end);
  ASSERT_EQ(ra.devices.size(), rb.devices.size());
  for (std::size_t d = 0; d < ra.devices.size(); ++d) {
    EXPECT_EQ(ra.devices[d].busy, rb.devices[d].busy);
    EXPECT_EQ(ra.devices[d].first_start, rb.devices[d].first_start);
    EXPECT_EQ(ra.devices[d].last_end, rb.devices[d].last_end);
    EXPECT_EQ(ra.devices[d].peak_activations, rb.devices[d].peak_activations);
    EXPECT_EQ(ra.devices[d].peak_activation_bytes, rb.devices[d].peak_activation_bytes);
  }
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
