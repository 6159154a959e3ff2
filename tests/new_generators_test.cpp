// The generators that follow PyTorch's schedules.py (commit 00722e64): looped-bfs,
// interleaved-zb, zb-v; orders derived by hand from that code for small cases, the
// published ZB-V figures, and the closed forms of their bubbles and memory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost_models/uniform.hpp"
#include "generated.hpp"
#include "input_error.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"

namespace pipesim {
namespace {

using testing_schedules::device_rows;

using testing::ElementsAre;
using testing::HasSubstr;

ScheduleParams params(int p, int m, int v = 2) {
  ScheduleParams out;
  out.p = p;
  out.m = m;
  out.v = v;
  return out;
}

// F = I = W = `unit` per full stage (B = 2 units), free links, free optimizer.
UniformCostModel unit_costs(Tick unit, std::int64_t activation = 0) {
  UniformCostConfig cfg;
  cfg.stage = StageCosts{unit, 2 * unit, unit};
  cfg.activation_bytes = activation;
  return UniformCostModel(cfg);
}

TEST(NewGenerators, LoopedBfsOrder) {
  EXPECT_THAT(device_rows(generate("looped-bfs", params(2, 2))),
              ElementsAre("0F0 0F1 2F0 2F1 2B1 2B0 0B1 0B0 0OPT 2OPT", "1F0 1F1 3F0 3F1 3B1 3B0 1B1 1B0 1OPT 3OPT"));
}

TEST(NewGenerators, ZbVOrderFollowsPytorch) {
  EXPECT_THAT(device_rows(generate("zb-v", params(2, 4))),
              ElementsAre("0F0 0F1 0F2 3F0 3I0 3W0 3F1 3I1 3W1 0F3 0I0 0W0 3F2 3I2 3W2 0I1 0W1 3F3 3I3 3W3 0I2 0W2 0I3 0W3 "
                          "0OPT 3OPT",
                          "1F0 2F0 1F1 2F1 2I0 2W0 1F2 1I0 1W0 2F2 2I1 2W1 1F3 1I1 1W1 2F3 2I2 2W2 1I2 2I3 1I3 1W2 2W3 1W3 "
                          "1OPT 2OPT"));
  // Fewer micro-batches than 2p-1: the pattern of 2p-1 with the missing ones left out.
  const Schedule few = generate("zb-v", params(4, 2));
  EXPECT_TRUE(validate(few).ok());
}

// The published peers (Qi et al., arXiv 2405.15362 and its Space): F = I = W = 1, free
// links. ZB-V p = 4, m = 8: 25.5 and p micro-batches held; p = 8, m = 32: 99.5.
TEST(NewGenerators, ZbVPublishedFigures) {
  const std::int64_t mb = 1 << 20;  // one micro-batch's activation on one full stage
  const SimResult a = simulate(generate("zb-v", params(4, 8)), unit_costs(1000, mb));
  EXPECT_EQ(a.makespan, 25500);
  for (const DeviceStats& d : a.devices) {
    EXPECT_EQ(d.busy, 8 * 3000);
    EXPECT_EQ(d.peak_activation_bytes, 4 * mb);  // p micro-batches: 2p half-stage chunks
  }
  EXPECT_EQ(simulate(generate("zb-v", params(8, 32)), unit_costs(1000)).makespan, 99500);
}

// ZB-V with F = I = W: the only idle is the ramp of (p-1) half-stage forwards, whatever m
// (m >= 2p-1): makespan m(F+I+W) + (p-1)F/2 (25.5 and 99.5 above are two points of it).
TEST(NewGenerators, ZbVBubbleIsTheRampOnly) {
  for (int p : {2, 3, 4, 8}) {
    for (int m : {2 * p, 2 * p + 3, 4 * p}) {
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
      const SimResult r = simulate(generate("zb-v", params(p, m)), unit_costs(1000));
      EXPECT_EQ(r.makespan, m * 3000 + (p - 1) * 500);
    }
  }
}

// V-Half and V-Min (arXiv 2405.15362 and its Space), F = I = W = 1, free links: p = 4, m = 8
// 26.5 and 29.5 holding 3 and 2 micro-batches; p = 8, m = 32 104.5 and 109.5, within the
// published memory (p+2)//2 and (p+4)//3 micro-batches. Memory is counted as the paper does:
// a micro-batch's activation is held from its F to its W (I frees none of it).
TEST(NewGenerators, VHalfAndVMinPublishedFigures) {
  const std::int64_t mb = 1 << 20;
  UniformCostConfig cfg;
  cfg.stage = StageCosts{1000, 2000, 1000};
  cfg.activation_bytes = mb;
  cfg.input_grad_free_fraction = 0;
  const UniformCostModel costs(cfg);
  struct Figure {
    const char* name;
    int p, m;
    Tick makespan;
    std::int64_t held_bound;  // micro-batches
  };
  for (const Figure& f : {Figure{"v-half", 4, 8, 26500, 3}, Figure{"v-min", 4, 8, 29500, 2},
                          Figure{"v-half", 8, 32, 104500, 5}, Figure{"v-min", 8, 32, 109500, 4}}) {
    SCOPED_TRACE(std::string(f.name) + " p=" + std::to_string(f.p) + " m=" + std::to_string(f.m));
    const Schedule s = generate(f.name, params(f.p, f.m));
    ASSERT_TRUE(validate(s).ok());
    const SimResult r = simulate(s, costs);
    EXPECT_EQ(r.makespan, f.makespan);
    std::int64_t peak = 0;
    for (const DeviceStats& d : r.devices) {
      EXPECT_EQ(d.busy, f.m * 3000);
      peak = std::max(peak, d.peak_activation_bytes);
    }
    EXPECT_LE(peak, f.held_bound * mb);
    if (f.p == 4) {
      EXPECT_EQ(peak, f.held_bound * mb);  // exactly the paper's count
    }
  }
  EXPECT_THAT(error_of("v-half", params(4, 7)), HasSubstr("v-half: m (7) must be at least 2p = 8 (p = 4)"));
}

// Looped BFS on free links: the interleaved bubble (p-1)(F+B)/v, and m*v chunk activations.
TEST(NewGenerators, LoopedBfsClosedForms) {
  for (int p : {2, 4}) {
    for (int v : {2, 4}) {
      for (int m : {p, 2 * p, 3 * p}) {
        SCOPED_TRACE("p=" + std::to_string(p) + " v=" + std::to_string(v) + " m=" + std::to_string(m));
        const SimResult r = simulate(generate("looped-bfs", params(p, m, v)), unit_costs(1200));
        for (const DeviceStats& d : r.devices) {
          EXPECT_EQ(d.busy, m * 3600);
          EXPECT_EQ(r.makespan - d.busy, (p - 1) * 3600 / v);
          EXPECT_EQ(d.peak_activations, m * v);
        }
      }
    }
  }
}

// Interleaved zero bubble with m a multiple of p, F = I = W: every rank is busy m(F+I+W) and
// idles less than interleaved 1F1B's (p-1)(F+B)/v.
TEST(NewGenerators, InterleavedZbBeatsInterleaved) {
  for (int p : {2, 4}) {
    for (int m : {2 * p, 4 * p}) {
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
      const SimResult zb = simulate(generate("interleaved-zb", params(p, m)), unit_costs(1200));
      const SimResult il = simulate(generate("interleaved", params(p, m)), unit_costs(1200));
      for (const DeviceStats& d : zb.devices) EXPECT_EQ(d.busy, m * 3600);
      EXPECT_LT(zb.makespan, il.makespan);
      EXPECT_EQ(il.makespan - m * 3600, (p - 1) * 3600 / 2);
    }
  }
}

TEST(NewGenerators, EveryNewGeneratorIsValidOverAGrid) {
  for (const char* name : {"looped-bfs", "interleaved-zb", "zb-v", "interleaved", "v-half", "v-min"}) {
    for (int p : {1, 2, 3, 4}) {
      for (int m : {1, 2, 3, 4, 5, 6, 8, 10, 13}) {
        const ScheduleParams prm = params(p, m);
        if (!error_of(name, prm).empty()) continue;
        SCOPED_TRACE(std::string(name) + " p=" + std::to_string(p) + " m=" + std::to_string(m));
        const Schedule s = generate(name, prm);
        const ValidationReport v = validate(s);
        EXPECT_TRUE(v.ok()) << (v.errors.empty() ? "" : v.errors.front());
        EXPECT_GT(simulate(s, unit_costs(1000)).makespan, 0);
      }
    }
  }
}

TEST(NewGenerators, ParameterErrorsNameTheFlag) {
  EXPECT_THAT(error_of("zb-v", params(0, 8)), HasSubstr("zb-v: p must be a positive integer, got 0"));
  EXPECT_THAT(error_of("looped-bfs", params(4, 8, 0)), HasSubstr("looped-bfs: v must be a positive integer, got 0"));
  EXPECT_THAT(error_of("interleaved-zb", params(4, 0)), HasSubstr("interleaved-zb: m must be a positive integer, got 0"));
}

}  // namespace
}  // namespace pipesim
