// The schedule generators (schedules/generators/): exact op orders for small cases,
// completeness and placement for many, iteration ids, and parameter errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "input_error.hpp"
#include "schedules/dependencies.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

using ::testing::HasSubstr;

ScheduleParams params(int p, int m, int v = 2, int iterations = 1) {
  ScheduleParams out;
  out.p = p;
  out.m = m;
  out.v = v;
  out.iterations = iterations;
  return out;
}

// Device d's ops as text, joined with spaces: "0F0 0F1 0B0 ...".
std::string device_ops(const Schedule& s, int d) {
  std::string out;
  for (const Op& op : s.ops[static_cast<std::size_t>(d)]) out += (out.empty() ? "" : " ") + to_string(op);
  return out;
}

std::vector<std::string> all_device_ops(const Schedule& s) {
  std::vector<std::string> out;
  for (int d = 0; d < s.num_devices; ++d) out.push_back(device_ops(s, d));
  return out;
}

// ---- exact orders --------------------------------------------------------------------

TEST(Generators, OneFOneBP4M8) {
  const Schedule s = generate("1f1b", params(4, 8));
  EXPECT_THAT(all_device_ops(s),
              ::testing::ElementsAre(
                  "0F0 0F1 0F2 0F3 0B0 0F4 0B1 0F5 0B2 0F6 0B3 0F7 0B4 0B5 0B6 0B7 0OPT",
                  "1F0 1F1 1F2 1B0 1F3 1B1 1F4 1B2 1F5 1B3 1F6 1B4 1F7 1B5 1B6 1B7 1OPT",
                  "2F0 2F1 2B0 2F2 2B1 2F3 2B2 2F4 2B3 2F5 2B4 2F6 2B5 2F7 2B6 2B7 2OPT",
                  "3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3 3F4 3B4 3F5 3B5 3F6 3B6 3F7 3B7 3OPT"));
}

TEST(Generators, OneFOneBFewerMicrobatchesThanStages) {
  // warm = min(p - r - 1, m): rank 0 of p = 4, m = 2 runs both forwards first.
  const Schedule s = generate("1f1b", params(4, 2));
  EXPECT_THAT(all_device_ops(s), ::testing::ElementsAre("0F0 0F1 0B0 0B1 0OPT", "1F0 1F1 1B0 1B1 1OPT",
                                                        "2F0 2F1 2B0 2B1 2OPT", "3F0 3B0 3F1 3B1 3OPT"));
}

TEST(Generators, GpipeP3M4BackwardFifo) {
  const Schedule s = generate("gpipe", params(3, 4));
  EXPECT_THAT(all_device_ops(s), ::testing::ElementsAre("0F0 0F1 0F2 0F3 0B0 0B1 0B2 0B3 0OPT",
                                                        "1F0 1F1 1F2 1F3 1B0 1B1 1B2 1B3 1OPT",
                                                        "2F0 2F1 2F2 2F3 2B0 2B1 2B2 2B3 2OPT"));
}

TEST(Generators, InterleavedP2V2M4) {
  // Rank 0: warm = (p-1)*2 + (v-1)*p = 4; rank 1: warm = 2. Stage = chunk*p + rank.
  const Schedule s = generate("interleaved", params(2, 4, 2));
  EXPECT_THAT(all_device_ops(s),
              ::testing::ElementsAre("0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 2B2 2B3 0B2 0B3 0OPT 2OPT",
                                     "1F0 1F1 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 1B2 1B3 1OPT 3OPT"));
  EXPECT_EQ(s.num_stages, 4);
  EXPECT_EQ(s.placement, (std::vector<std::vector<int>>{{0, 1, 0, 1}}));
  EXPECT_EQ(s.chunks_per_device(), 2);
}

// m == p: PyTorch's ScheduleInterleaved1F1B keeps the usual warm-up, (v-1)p + 2(p-1-r)
// forwards (Megatron would run all forwards first; docs/schedules.md).
TEST(Generators, InterleavedMEqualsPKeepsTheWarmUp) {
  const Schedule s = generate("interleaved", params(2, 2, 2));
  EXPECT_THAT(all_device_ops(s), ::testing::ElementsAre("0F0 0F1 2F0 2F1 2B0 2B1 0B0 0B1 0OPT 2OPT",
                                                        "1F0 1F1 3F0 3B0 3F1 3B1 1B0 1B1 1OPT 3OPT"));
}

// m not a multiple of p: one round of g = m micro-batches when m < 2p (PyTorch's rounds).
TEST(Generators, InterleavedRoundsOfMDivP) {
  const Schedule s = generate("interleaved", params(2, 3, 2));
  EXPECT_THAT(all_device_ops(s), ::testing::ElementsAre("0F0 0F1 0F2 2F0 2F1 2F2 2B0 2B1 2B2 0B0 0B1 0B2 0OPT 2OPT",
                                                        "1F0 1F1 1F2 3F0 3B0 3F1 3B1 3F2 3B2 1B0 1B1 1B2 1OPT 3OPT"));
}

TEST(Generators, ZbH1P4M8) {
  const Schedule s = generate("zb-h1", params(4, 8));
  EXPECT_THAT(all_device_ops(s),
              ::testing::ElementsAre(
                  "0F0 0F1 0F2 0F3 0I0 0W0 0F4 0I1 0W1 0F5 0I2 0W2 0F6 "
                  "0I3 0W3 0F7 0I4 0W4 0I5 0W5 0I6 0W6 0I7 0W7 0OPT",
                  "1F0 1F1 1F2 1I0 1F3 1I1 1W0 1F4 1I2 1W1 1F5 1I3 1W2 "
                  "1F6 1I4 1W3 1F7 1I5 1W4 1I6 1W5 1I7 1W6 1W7 1OPT",
                  "2F0 2F1 2I0 2F2 2I1 2F3 2I2 2W0 2F4 2I3 2W1 2F5 2I4 "
                  "2W2 2F6 2I5 2W3 2F7 2I6 2W4 2I7 2W5 2W6 2W7 2OPT",
                  "3F0 3I0 3F1 3I1 3F2 3I2 3F3 3I3 3W0 3F4 3I4 3W1 3F5 "
                  "3I5 3W2 3F6 3I6 3W3 3F7 3I7 3W4 3W5 3W6 3W7 3OPT"));
}

TEST(Generators, ZbH2P4M8) {
  const Schedule s = generate("zb-h2", params(4, 8));
  EXPECT_THAT(all_device_ops(s),
              ::testing::ElementsAre(
                  "0F0 0F1 0F2 0F3 0F4 0F5 0F6 0I0 0W0 0F7 0I1 0W1 0I2 "
                  "0W2 0I3 0W3 0I4 0W4 0I5 0W5 0I6 0W6 0I7 0W7 0OPT",
                  "1F0 1F1 1F2 1F3 1F4 1I0 1F5 1I1 1F6 1I2 1W0 1F7 1I3 "
                  "1W1 1I4 1W2 1I5 1W3 1I6 1W4 1I7 1W5 1W6 1W7 1OPT",
                  "2F0 2F1 2F2 2I0 2F3 2I1 2F4 2I2 2F5 2I3 2F6 2I4 2W0 "
                  "2F7 2I5 2W1 2I6 2W2 2I7 2W3 2W4 2W5 2W6 2W7 2OPT",
                  "3F0 3I0 3F1 3I1 3F2 3I2 3F3 3I3 3F4 3I4 3F5 3I5 3F6 "
                  "3I6 3W0 3F7 3I7 3W1 3W2 3W3 3W4 3W5 3W6 3W7 3OPT"));
}

// ---- structure over many parameter sets ----------------------------------------------

struct Case {
  std::string name;
  ScheduleParams params;
};

std::vector<Case> many_cases() {
  std::vector<Case> out;
  for (int t : {1, 2, 3}) {
    for (int p : {1, 2, 3, 4, 8}) {
      for (int m : {1, 2, 3, 4, 5, 8, 16}) {
        out.push_back({"gpipe", params(p, m, 1, t)});
        out.push_back({"1f1b", params(p, m, 1, t)});
        if (m >= 2 * p) {
          out.push_back({"zb-h1", params(p, m, 1, t)});
          out.push_back({"zb-h2", params(p, m, 1, t)});
        }
        if (m % p == 0)
          for (int v : {1, 2, 3, 4}) out.push_back({"interleaved", params(p, m, v, t)});
      }
    }
  }
  return out;
}

std::string describe(const Case& c) {
  return c.name + " p=" + std::to_string(c.params.p) + " m=" + std::to_string(c.params.m) +
         " v=" + std::to_string(c.params.v) + " T=" + std::to_string(c.params.iterations);
}

TEST(Generators, FieldsAndPlacement) {
  for (const Case& c : many_cases()) {
    SCOPED_TRACE(describe(c));
    const Schedule s = generate(c.name, c.params);
    const int p = c.params.p;
    const int v = c.name == "interleaved" ? c.params.v : 1;
    EXPECT_EQ(s.name, c.name);
    EXPECT_EQ(s.num_devices, p);
    EXPECT_EQ(s.num_stages, p * v);
    EXPECT_EQ(s.num_pipelines, 1);
    EXPECT_EQ(s.microbatches, c.params.m);
    EXPECT_EQ(s.iterations, c.params.iterations);
    EXPECT_EQ(s.placement, round_robin_placement(p * v, p));
    EXPECT_EQ(s.ops.size(), static_cast<std::size_t>(p));
    EXPECT_FALSE(s.blocking_grad_sync);
  }
}

TEST(Generators, EveryOpExactlyOnceOnItsDevice) {
  for (const Case& c : many_cases()) {
    SCOPED_TRACE(describe(c));
    const Schedule s = generate(c.name, c.params);
    const bool split = c.name == "zb-h1" || c.name == "zb-h2";
    const int total_mb = c.params.m * c.params.iterations;
    std::map<OpKind, int> count;
    std::set<std::tuple<int, int, int>> seen;  // (kind, stage, microbatch)
    for (int d = 0; d < s.num_devices; ++d) {
      for (const Op& op : s.ops[static_cast<std::size_t>(d)]) {
        ++count[op.kind];
        EXPECT_EQ(op.pipeline, 0);
        EXPECT_EQ(s.device_of(op), d) << to_string(op);
        if (!is_microbatch_op(op.kind)) continue;
        EXPECT_TRUE(seen.insert({static_cast<int>(op.kind), op.stage, op.microbatch}).second)
            << "duplicate " << to_string(op);
        EXPECT_GE(op.microbatch, 0);
        EXPECT_LT(op.microbatch, total_mb);
      }
    }
    const int per_kind = s.num_stages * total_mb;
    EXPECT_EQ(count[OpKind::F], per_kind);
    EXPECT_EQ(count[OpKind::B], split ? 0 : per_kind);
    EXPECT_EQ(count[OpKind::I], split ? per_kind : 0);
    EXPECT_EQ(count[OpKind::W], split ? per_kind : 0);
    EXPECT_EQ(count[OpKind::GradSync], 0);
    EXPECT_EQ(count[OpKind::OptStep], s.num_stages * c.params.iterations);

    std::vector<DependencyProblem> problems;
    build_dependencies(s, problems);
    EXPECT_TRUE(problems.empty()) << problems.front().message;
  }
}

// Each device's list is T blocks, block t = iteration t's micro-batch ops (ids t*m ..
// t*m+m-1) followed by one OptStep per stage it holds, in stage order.
TEST(Generators, IterationsUseTheirOwnMicrobatchIdsAndEndInOptSteps) {
  for (const Case& c : many_cases()) {
    SCOPED_TRACE(describe(c));
    const Schedule s = generate(c.name, c.params);
    const int m = c.params.m;
    for (int d = 0; d < s.num_devices; ++d) {
      std::vector<int> held;
      for (const auto& [pipeline, stage] : s.replicas_on(d)) held.push_back(stage);
      const auto& list = s.ops[static_cast<std::size_t>(d)];
      std::size_t i = 0;
      for (int t = 0; t < c.params.iterations; ++t) {
        for (; i < list.size() && is_microbatch_op(list[i].kind); ++i) {
          EXPECT_GE(list[i].microbatch, t * m) << to_string(list[i]);
          EXPECT_LT(list[i].microbatch, t * m + m) << to_string(list[i]);
        }
        for (int stage : held) {
          ASSERT_LT(i, list.size());
          EXPECT_EQ(list[i], opt_step(stage)) << "device " << d << " iteration " << t;
          ++i;
        }
      }
      EXPECT_EQ(i, list.size());
    }
  }
}

TEST(Generators, SecondIterationShiftsIdsByM) {
  const Schedule s = generate("1f1b", params(2, 2, 1, 2));
  EXPECT_THAT(all_device_ops(s), ::testing::ElementsAre("0F0 0F1 0B0 0B1 0OPT 0F2 0F3 0B2 0B3 0OPT",
                                                        "1F0 1B0 1F1 1B1 1OPT 1F2 1B2 1F3 1B3 1OPT"));
  const Schedule il = generate("interleaved", params(2, 2, 2, 2));
  EXPECT_EQ(device_ops(il, 1),
            "1F0 1F1 3F0 3B0 3F1 3B1 1B0 1B1 1OPT 3OPT 1F2 1F3 3F2 3B2 3F3 3B3 1B2 1B3 1OPT 3OPT");
}

TEST(Generators, RegistryFindsEveryGenerator) {
  for (const char* name : {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2"})
    EXPECT_EQ(find_generator(name).name, name);
}

// ---- parameter errors ----------------------------------------------------------------

TEST(Generators, NonPositiveParametersNameTheFlag) {
  for (const char* name : {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2"}) {
    SCOPED_TRACE(name);
    EXPECT_THAT(error_of(name, params(0, 8)), HasSubstr(std::string(name) + ": p must be a positive integer, got 0"));
    EXPECT_THAT(error_of(name, params(4, -1)), HasSubstr(std::string(name) + ": m must be a positive integer, got -1"));
    EXPECT_THAT(error_of(name, params(4, 8, 2, 0)),
                HasSubstr(std::string(name) + ": iterations must be a positive integer, got 0"));
  }
  EXPECT_THAT(error_of("interleaved", params(4, 8, 0)), HasSubstr("interleaved: v must be a positive integer, got 0"));
  // v is an interleaved-only parameter: the others ignore it.
  EXPECT_EQ(error_of("1f1b", params(4, 8, 0)), "");
  EXPECT_EQ(error_of("gpipe", params(4, 8, 0)), "");
}

TEST(Generators, InterleavedNeedsMMultipleOfItsRounds) {
  for (const char* name : {"interleaved", "interleaved-zb"}) {
    EXPECT_THAT(error_of(name, params(4, 9)),
                HasSubstr(std::string(name) + ": m (9) must be a multiple of its number of rounds m div p = 2 (p = 4)"));
    EXPECT_THAT(error_of(name, params(4, 14)), HasSubstr("m (14) must be a multiple of its number of rounds m div p = 3"));
    for (int m : {2, 6, 10, 12}) EXPECT_EQ(error_of(name, params(4, m, 3)), "") << name << " m=" << m;
  }
}

TEST(Generators, ZeroBubbleNeedsMAtLeastTwoP) {
  EXPECT_THAT(error_of("zb-h1", params(4, 7)), HasSubstr("zb-h1: m (7) must be at least 2p = 8 (p = 4)"));
  EXPECT_THAT(error_of("zb-h2", params(4, 7)), HasSubstr("zb-h2: m (7) must be at least 2p = 8 (p = 4)"));
  EXPECT_EQ(error_of("zb-h1", params(4, 8)), "");
  EXPECT_EQ(error_of("zb-h2", params(4, 9)), "");
}

TEST(Generators, UnknownNameListsKnownOnes) {
  EXPECT_THAT(error_of("no-such-schedule", params(4, 8)), HasSubstr("unknown schedule 'no-such-schedule'"));
}


// pipeline_devices knows every generator's device count without generating.
TEST(Generators, PipelineDevicesWithoutGenerating) {
  for (const auto& g : generators()) {
    int generated = 0;
    for (int p : {2, 4, 8})
      for (int m : {4, 8, 16, 32})
        for (int width : {1, 2}) {
          ScheduleParams sp = params(p, m, 2, 1);
          sp.set("width", width);
          Schedule s;
          try {
            s = generate(g.name, sp);
          } catch (const InputError&) {
            continue;
          }
          ++generated;
          EXPECT_EQ(pipeline_devices(g.name, sp), s.num_devices) << g.name << " p=" << p << " m=" << m << " width=" << width;
        }
    EXPECT_GT(generated, 0) << g.name;
  }
}

// Each generator's `settings` are the ScheduleParams it reads: changing any other one leaves
// its schedule as it was or is refused (so a sweep varies only those, and nothing else makes
// a new row). Every setting but p, m and iterations is changed from its default: an integer
// to twice it (2 from 0), a text to its first other choice.
TEST(Generators, SettingsAreExactlyWhatAGeneratorReads) {
  for (const auto& g : generators()) {
    const ScheduleParams base = params(8, 16, 2, 2);
    const Schedule s = generate(g.name, base);
    for (const ScheduleSetting& setting : schedule_settings()) {
      if (setting.every) continue;
      ScheduleParams q = base;
      const SettingValue was = setting.get(q);
      if (setting.is_text()) {
        const auto other = std::find_if(setting.choices.begin(), setting.choices.end(),
                                        [&](std::string_view c) { return c != std::get<std::string>(was); });
        ASSERT_NE(other, setting.choices.end()) << setting.flags;
        setting.set(q, std::string(*other));
      } else {
        setting.set(q, std::get<int>(was) == 0 ? 2 : 2 * std::get<int>(was));
      }
      Schedule t;
      try {
        t = generate(g.name, q);
      } catch (const InputError&) {
        continue;  // refused: not silently ignored
      }
      if (!g.reads(setting.name())) {
        EXPECT_EQ(t.ops, s.ops) << g.name << " reads " << setting.name() << " but does not list it";
      }
    }
  }
}

}  // namespace
}  // namespace pipesim
