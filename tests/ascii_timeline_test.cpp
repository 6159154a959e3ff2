// The text pictures of traces/ascii_timeline.hpp, checked literally on tiny cases.
#include "traces/ascii_timeline.hpp"

#include <gtest/gtest.h>

#include "cost_models/uniform.hpp"
#include "sim/engine.hpp"

namespace pipesim {
namespace {

constexpr Op F(int s, int k, int p = 0) { return make_op(OpKind::F, s, k, p); }
constexpr Op B(int s, int k, int p = 0) { return make_op(OpKind::B, s, k, p); }
constexpr Op I(int s, int k) { return make_op(OpKind::I, s, k); }
constexpr Op W(int s, int k) { return make_op(OpKind::W, s, k); }

// 2 devices, 2 stages, 2 micro-batches, 1F1B.
Schedule tiny_1f1b() {
  Schedule s;
  s.name = "tiny-1f1b";
  s.num_devices = 2;
  s.num_stages = 2;
  s.microbatches = 2;
  s.placement = {{0, 1}};
  s.ops = {{F(0, 0), F(0, 1), B(0, 0), B(0, 1)}, {F(1, 0), B(1, 0), F(1, 1), B(1, 1)}};
  return s;
}

void add(Timeline& t, const Schedule& s, int device, int index, Tick start, Tick end) {
  const Op op = s.ops[static_cast<std::size_t>(device)][static_cast<std::size_t>(index)];
  t.ops.push_back(OpRecord{OpRef{device, index}, op, start, end, 0});
}

// F = 1 ms, B = 2 ms, free links: what the engine computes for tiny_1f1b.
Timeline tiny_1f1b_timeline(const Schedule& s) {
  Timeline t;
  const Tick ms = kNsPerMs;
  add(t, s, 0, 0, 0, 1 * ms);
  add(t, s, 0, 1, 1 * ms, 2 * ms);
  add(t, s, 1, 0, 1 * ms, 2 * ms);
  add(t, s, 1, 1, 2 * ms, 4 * ms);
  add(t, s, 0, 2, 4 * ms, 6 * ms);
  add(t, s, 1, 2, 4 * ms, 5 * ms);
  add(t, s, 1, 3, 5 * ms, 7 * ms);
  add(t, s, 0, 3, 7 * ms, 9 * ms);
  return t;
}

const char* const kTiny1f1b =
    "      0         5       9\n"
    "dev0 |F0F1....B0bb..B1bb|\n"
    "dev1 |..F0B0bbF1B1bb....|\n"
    "F forward, B backward; label = kind + micro-batch (F3), lower case continues an op, '.' idle\n"
    "time: 1 unit = 1.000 ms, 2 columns per unit\n";

TEST(AsciiTimeline, HandBuilt1f1b) {
  const Schedule s = tiny_1f1b();
  EXPECT_EQ(render_ascii_timeline(s, tiny_1f1b_timeline(s)), kTiny1f1b);
}

TEST(AsciiTimeline, Simulated1f1bMatchesHandBuilt) {
  const Schedule s = tiny_1f1b();
  UniformCostConfig config;
  config.stage = StageCosts{kNsPerMs, 2 * kNsPerMs, 0};
  TimelineRecorder recorder;
  simulate(s, UniformCostModel(config), &recorder);
  EXPECT_EQ(render_ascii_timeline(s, recorder.timeline), kTiny1f1b);
}

TEST(AsciiTimeline, WithoutLegend) {
  const Schedule s = tiny_1f1b();
  EXPECT_EQ(render_ascii_timeline(s, tiny_1f1b_timeline(s), {.max_width = 200, .legend = false}),
            "      0         5       9\n"
            "dev0 |F0F1....B0bb..B1bb|\n"
            "dev1 |..F0B0bbF1B1bb....|\n");
}

// Too narrow for "F0" at 2 columns per unit: one column per unit, labels shrink to the kind.
TEST(AsciiTimeline, NarrowFallsBackToKindLetters) {
  const Schedule s = tiny_1f1b();
  EXPECT_EQ(render_ascii_timeline(s, tiny_1f1b_timeline(s), {.max_width = 12, .legend = false}),
            "      0        9\n"
            "dev0 |FF..B0.B1|\n"
            "dev1 |.FB0FB1..|\n");
}

// Wider than max_width units: a round column width, times rounded to the nearest column
// (dev1's F0 is lost under B0), and a notice.
TEST(AsciiTimeline, ScalesDownWithNotice) {
  const Schedule s = tiny_1f1b();
  EXPECT_EQ(render_ascii_timeline(s, tiny_1f1b_timeline(s), {.max_width = 5, .legend = true}),
            "      0    5\n"
            "dev0 |FFB.B|\n"
            "dev1 |.BFB.|\n"
            "F forward, B backward; label = kind + micro-batch (F3), lower case continues an op, '.' idle\n"
            "time: 1 unit = 2.000 ms, 1 column per unit (scaled down to fit 5 columns: times rounded to "
            "the nearest column, short ops may be hidden)\n");
}

// Interleaved: a device holds two stages, so labels carry the stage.
TEST(AsciiTimeline, InterleavedLabelsCarryTheStage) {
  Schedule s;
  s.name = "interleaved";
  s.num_devices = 1;
  s.num_stages = 2;
  s.microbatches = 1;
  s.placement = {{0, 0}};
  s.ops = {{F(0, 0), F(1, 0), B(1, 0), B(0, 0)}};
  Timeline t;
  add(t, s, 0, 0, 0, 10);
  add(t, s, 0, 1, 10, 20);
  add(t, s, 0, 2, 20, 40);
  add(t, s, 0, 3, 40, 60);
  EXPECT_EQ(render_ascii_timeline(s, t),
            "      0              5  6\n"
            "dev0 |0F01F01B0bbb0B0bbb|\n"
            "F forward, B backward; label = stage + kind + micro-batch (2F3), lower case continues an "
            "op, '.' idle\n"
            "time: 1 unit = 10 ns, 3 columns per unit\n");
}

// Pipeline prefixes, split backward, and the optimizer; zero-length ops take no room.
TEST(AsciiTimeline, PipelinesSplitBackwardAndOptimizer) {
  Schedule s;
  s.name = "two-pipelines";
  s.num_devices = 2;
  s.num_stages = 1;
  s.num_pipelines = 2;
  s.microbatches = 1;
  s.placement = {{0}, {1}};
  s.ops = {{F(0, 0), I(0, 0), W(0, 0), opt_step(0)}, {F(0, 0, 1), B(0, 0, 1), opt_step(0, 1)}};
  Timeline t;
  const Tick us = kNsPerUs;
  add(t, s, 0, 0, 0, 4 * us);
  add(t, s, 0, 1, 4 * us, 8 * us);
  add(t, s, 0, 2, 8 * us, 12 * us);
  add(t, s, 0, 3, 12 * us, 16 * us);
  add(t, s, 1, 0, 0, 4 * us);
  add(t, s, 1, 1, 4 * us, 12 * us);
  add(t, s, 1, 2, 12 * us, 12 * us);  // zero-length optimizer step: not drawn
  EXPECT_EQ(render_ascii_timeline(s, t),
            "      0               4\n"
            "dev0 |F0ffI0iiW0wwOooo|\n"
            "dev1 |1:F01:B0bbbb....|\n"
            "F forward, B backward, I backward-input, W backward-weight, O optimizer; label = "
            "pipeline: + kind + micro-batch (1:F3), lower case continues an op, '.' idle\n"
            "time: 1 unit = 4.000 us, 4 columns per unit\n");
}

TEST(AsciiTimeline, EmptyTimeline) {
  const Schedule s = tiny_1f1b();
  EXPECT_EQ(render_ascii_timeline(s, Timeline{}, {.max_width = 200, .legend = false}),
            "      0\n"
            "dev0 ||\n"
            "dev1 ||\n");
}

TEST(AsciiOrder, OneLinePerDevice) {
  EXPECT_EQ(render_ascii_order(tiny_1f1b()),
            "dev0: 0F0 0F1 0B0 0B1\n"
            "dev1: 1F0 1B0 1F1 1B1\n");
}

TEST(AsciiOrder, PadsDeviceNames) {
  Schedule s;
  s.num_devices = 11;
  s.ops.resize(11);
  s.ops[0] = {F(0, 0), make_op(OpKind::GradSync, 0, -1), opt_step(0)};
  s.ops[10] = {F(10, 0, 1)};
  const std::string text = render_ascii_order(s);
  EXPECT_EQ(text.substr(0, text.find('\n')), "dev0:  0F0 0GRADSYNC 0OPT");
  EXPECT_NE(text.find("\ndev9:\ndev10: 1:10F0\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace pipesim
