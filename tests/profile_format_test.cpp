// Versions 2 to 6 of the profile file (cost_models/profile.hpp, docs/profile-format.md):
// every timed quantity's quantiles and TimingStats::at_quantile, the interference curves,
// the shared-core turns, the gradient copies, the sender's parts of a hand-off, their
// validation one malformed class at a time, and older files still reading.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "input_error.hpp"
#include "synthetic_profile.hpp"
#include "cost_models/catalog.hpp"
#include "cost_models/profile.hpp"

namespace pipesim {
namespace {

using ::testing::HasSubstr;
using J = nlohmann::json;

// Samples spread around `seconds`: 0.9, 1.0, 1.1, 1.2 x.
TimingStats spread(double seconds) { return summarize_timings({seconds, 1.2 * seconds, 0.9 * seconds, 1.1 * seconds}); }

InterferenceCurve curve(double seconds, std::vector<double> slowdown) {
  InterferenceCurve c;
  for (double s : slowdown) c.times.push_back(spread(seconds * s));
  for (const TimingStats& t : c.times) c.slowdown.push_back(t.median / c.times.front().median);
  return c;
}

// A valid version-6 profile of gpt-tiny at sizes 1 and 2 with a curve of 2 neighbours,
// shared-core turns (a ring of 4 device threads on 2 cores), gradient copies of a stage of
// 2 blocks and the sender's parts of its link's hand-offs.
Profile sample() {
  Profile p = synthetic_profile(find_model("gpt-tiny"), {1, 2}, spread);
  ProfileInterference& in = p.interference;
  in.micro_batch_size = 2;
  in.block = {curve(2e-4, {1, 1.1, 1.25}), curve(4e-4, {1, 1.05, 1.2}), curve(2e-4, {1, 1.02, 1.1})};
  in.embedding = {curve(2e-6, {1, 0.98, 1.3}), {}, curve(4e-6, {1, 1, 1})};
  in.head = {curve(6e-5, {1, 1.3, 1.6}), curve(4e-5, {1, 1.1, 1.2}), curve(4e-5, {1, 1.1, 1.2})};
  ProfileSharedCore& turns = p.shared_core;
  turns.micro_batch_size = 2;
  turns.threads = 4;
  turns.cores = 2;
  turns.forward = curve(2e-4, {1, 1.05});
  turns.input_grad = curve(4e-4, {1, 1.08});
  turns.weight_grad = curve(2e-4, {1, 1.02});
  turns.optimizer = curve(1e-4, {1, 1.3});
  p.gradient_copies.parameters = 2 * p.parameters.block;
  p.gradient_copies.copy_out = spread(4e-5);
  p.gradient_copies.copy_in = spread(2e-5);
  p.gradient_copies.sum = spread(3e-5);  // version 7: the last member's sum
  p.executor.op_gap = spread(4e-6);  // version 6: the executor's work between ops
  p.link.wake = spread(2e-5);        // and the sender's parts of a hand-off
  p.link.samples[0].copy = spread(4e-7);
  p.link.samples[1].copy = spread(6e-6);
  return p;
}

TEST(AtQuantile, InterpolatesTheQuantilesLinearly) {
  const TimingStats s = summarize_timings({4, 1, 3, 2, 5});  // quantiles: the sorted samples
  EXPECT_THAT(s.quantiles, ::testing::ElementsAre(1, 2, 3, 4, 5));
  EXPECT_DOUBLE_EQ(s.at_quantile(0), 1);
  EXPECT_DOUBLE_EQ(s.at_quantile(1), 5);
  EXPECT_DOUBLE_EQ(s.at_quantile(0.5), 3);
  EXPECT_DOUBLE_EQ(s.at_quantile(0.5), s.median);
  EXPECT_DOUBLE_EQ(s.at_quantile(0.125), 1.5);  // halfway between the first two
  EXPECT_DOUBLE_EQ(s.at_quantile(0.9), s.p90);
  EXPECT_DOUBLE_EQ(s.at_quantile(0.1), s.p10);
  const TimingStats one = summarize_timings({7});
  EXPECT_THAT(one.quantiles, ::testing::ElementsAre(7));
  EXPECT_EQ(one.at_quantile(0), 7);
  EXPECT_EQ(one.at_quantile(0.37), 7);
  EXPECT_EQ(one.at_quantile(1), 7);
}

TEST(AtQuantile, ManyRepeatsKeep51EvenlySpacedQuantiles) {
  std::vector<double> samples;
  for (int i = 0; i <= 1000; ++i) samples.push_back(1000 - i);  // 0..1000, reversed
  const TimingStats s = summarize_timings(samples);
  EXPECT_EQ(s.repeats, 1001);
  ASSERT_EQ(s.quantiles.size(), 51u);
  EXPECT_EQ(quantile_count(1001), 51);
  EXPECT_EQ(quantile_count(50), 50);
  for (int i = 0; i <= 50; ++i) EXPECT_NEAR(s.quantiles[static_cast<std::size_t>(i)], 20.0 * i, 1e-9) << i;
  EXPECT_NEAR(s.at_quantile(0.31), 310, 1e-9);  // uniform: the quantile function is linear
  EXPECT_EQ(s.at_quantile(0), 0);
  EXPECT_EQ(s.at_quantile(1), 1000);
}

TEST(AtQuantile, VersionOneStatsFallBackToTheFiveSummaryPoints) {
  TimingStats s;  // no quantiles, as a version-1 profile reads
  s.min = 1;
  s.p10 = 2;
  s.median = 4;
  s.p90 = 8;
  s.max = 10;
  s.repeats = 10;
  EXPECT_EQ(s.at_quantile(0), 1);
  EXPECT_EQ(s.at_quantile(0.1), 2);
  EXPECT_EQ(s.at_quantile(0.5), 4);
  EXPECT_EQ(s.at_quantile(0.9), 8);
  EXPECT_EQ(s.at_quantile(1), 10);
  EXPECT_DOUBLE_EQ(s.at_quantile(0.05), 1.5);
  EXPECT_DOUBLE_EQ(s.at_quantile(0.3), 3);
  EXPECT_DOUBLE_EQ(s.at_quantile(0.7), 6);
  EXPECT_DOUBLE_EQ(s.at_quantile(0.95), 9);
  EXPECT_EQ(TimingStats{}.at_quantile(0.5), 0);  // never measured
}

TEST(ProfileVersion2, RoundTripKeepsQuantilesAndCurves) {
  const Profile p = sample();
  const std::string text = profile_json_text(p);
  const J j = J::parse(text);
  EXPECT_EQ(j["version"], 7);
  EXPECT_EQ(j["micro_batches"][0]["block"]["forward"]["quantiles_s"].size(), 4u);
  EXPECT_EQ(j["interference"]["block"]["forward"]["slowdown"].size(), 3u);
  const Profile back = parse_profile(text, "v2.json");
  EXPECT_EQ(profile_json_text(back), text);
  EXPECT_EQ(back.micro_batches[1].head.input_grad.quantiles, p.micro_batches[1].head.input_grad.quantiles);
  ASSERT_TRUE(back.interference.measured());
  EXPECT_EQ(back.interference.neighbours(), 2);
  EXPECT_EQ(back.interference.micro_batch_size, 2);
  EXPECT_EQ(back.interference.block.forward.slowdown, p.interference.block.forward.slowdown);
  EXPECT_EQ(back.interference.block.forward.slowdown[0], 1);
  EXPECT_NEAR(back.interference.head.forward.slowdown[2], 1.6, 1e-12);
  EXPECT_TRUE(back.interference.embedding.input_grad.slowdown.empty());
  ASSERT_TRUE(back.shared_core.measured());
  EXPECT_EQ(back.shared_core.micro_batch_size, 2);
  EXPECT_EQ(back.shared_core.threads, 4);
  EXPECT_EQ(back.shared_core.cores, 2);
  EXPECT_NEAR(back.shared_core.optimizer.slowdown[1], 1.3, 1e-12);
  EXPECT_EQ(back.shared_core.input_grad.times[1].median, p.shared_core.input_grad.times[1].median);
  ASSERT_TRUE(back.gradient_copies.measured());
  EXPECT_EQ(back.gradient_copies.parameters, 2 * p.parameters.block);
  EXPECT_EQ(back.gradient_copies.copy_out.median, p.gradient_copies.copy_out.median);
  EXPECT_EQ(back.gradient_copies.copy_in.quantiles, p.gradient_copies.copy_in.quantiles);
  ASSERT_TRUE(back.gradient_copies.sum_measured());
  EXPECT_EQ(back.gradient_copies.sum.quantiles, p.gradient_copies.sum.quantiles);
  ASSERT_TRUE(back.executor.measured());
  EXPECT_EQ(back.executor.op_gap.quantiles, p.executor.op_gap.quantiles);
  ASSERT_TRUE(back.link.sender_measured());
  EXPECT_EQ(back.link.wake.quantiles, p.link.wake.quantiles);
  EXPECT_EQ(back.link.samples[1].copy.median, p.link.samples[1].copy.median);
  // Without a curve there is no "interference" field, and none reads back.
  Profile flat = p;
  flat.interference = {};
  const std::string flat_text = profile_json_text(flat);
  EXPECT_FALSE(J::parse(flat_text).contains("interference"));
  EXPECT_FALSE(parse_profile(flat_text, "flat.json").interference.measured());
  // Without turns, no "shared_core" either.
  flat.shared_core = {};
  const std::string no_turns = profile_json_text(flat);
  EXPECT_FALSE(J::parse(no_turns).contains("shared_core"));
  EXPECT_FALSE(parse_profile(no_turns, "flat.json").shared_core.measured());
  // Without copies, no "gradient_copies".
  flat.gradient_copies = {};
  const std::string no_copies = profile_json_text(flat);
  EXPECT_FALSE(J::parse(no_copies).contains("gradient_copies"));
  EXPECT_FALSE(parse_profile(no_copies, "flat.json").gradient_copies.measured());
  // Without the executor's gaps, no "executor".
  flat.executor = {};
  EXPECT_FALSE(J::parse(profile_json_text(flat)).contains("executor"));
  EXPECT_FALSE(parse_profile(profile_json_text(flat), "flat.json").executor.measured());
  // Without the sender's parts, no "wake" and no sample's "copy".
  flat.link.wake = {};
  for (LinkSample& l : flat.link.samples) l.copy = {};
  const std::string no_sender = profile_json_text(flat);
  EXPECT_FALSE(J::parse(no_sender)["link"].contains("wake"));
  EXPECT_FALSE(J::parse(no_sender)["link"]["samples"][0].contains("copy"));
  EXPECT_FALSE(parse_profile(no_sender, "flat.json").link.sender_measured());
}

// The sender's copy of a message between and beyond the samples' sizes (LinkProfile::sender_copy).
TEST(ProfileVersion6, TheSendersCopyIsLinearBetweenSamples) {
  const Profile p = sample();  // copies of 4096 and 65536 bytes, means 1.05 x 0.4 and 6 us
  const double a = p.link.samples[0].copy.expected(), b = p.link.samples[1].copy.expected();
  EXPECT_DOUBLE_EQ(p.link.sender_copy(100), a);
  EXPECT_DOUBLE_EQ(p.link.sender_copy(4096), a);
  EXPECT_DOUBLE_EQ(p.link.sender_copy(4096 + 61440 / 4), a + (b - a) / 4);
  EXPECT_DOUBLE_EQ(p.link.sender_copy(65536), b);
  EXPECT_DOUBLE_EQ(p.link.sender_copy(3 * 65536), 3 * b);
}

// A version-5 file has no sender's parts: its hand-offs cost the sender nothing, and it may not
// hold version 6's fields.
TEST(ProfileVersion5, StillReadsWithoutTheSendersPartsOrTheExecutorsGaps) {
  J j = J::parse(profile_json_text(sample()));
  j["version"] = 5;
  j["gradient_copies"].erase("sum");  // version 7's
  const J executor = j["executor"];
  j.erase("executor");
  const J wake = j["link"]["wake"];
  j["link"].erase("wake");
  const J copy = j["link"]["samples"][0]["copy"];
  for (J& l : j["link"]["samples"]) l.erase("copy");
  const Profile p = parse_profile(j.dump(), "old.json");
  EXPECT_FALSE(p.link.sender_measured());
  EXPECT_EQ(p.link.samples[0].copy.repeats, 0);
  EXPECT_FALSE(p.executor.measured());
  J with_executor = j;
  with_executor["executor"] = executor;
  EXPECT_THAT(error_of([&] { parse_profile(with_executor.dump(), "old.json"); }),
              HasSubstr("old.json: /: unknown field 'executor' (expected format, version,"));
  J with_wake = j;
  with_wake["link"]["wake"] = wake;
  EXPECT_EQ(error_of([&] { parse_profile(with_wake.dump(), "old.json"); }),
            "old.json: /link: unknown field 'wake' (expected kind, latency_s, bandwidth_bytes_per_s, "
            "rms_relative_residual, max_relative_residual, samples)");
  j["link"]["samples"][0]["copy"] = copy;
  EXPECT_EQ(error_of([&] { parse_profile(j.dump(), "old.json"); }),
            "old.json: /link/samples/0: unknown field 'copy' (expected bytes, time)");
}

// The sample written as `version`, without the field that version lacks (`field`) and those
// added later: it reads, and with `field` put back that field is unknown.
Profile as_older_version(int version, const char* field, const std::vector<const char*>& later) {
  J j = J::parse(profile_json_text(sample()));
  j["version"] = version;
  j["shared_core"].erase("threads");  // version 5's
  j["shared_core"].erase("cores");
  j["gradient_copies"].erase("sum");  // version 7's
  j["link"].erase("wake");  // version 6's
  for (J& l : j["link"]["samples"]) l.erase("copy");
  j.erase("executor");
  const J kept = j[field];
  j.erase(field);
  for (const char* f : later) j.erase(f);
  const Profile p = parse_profile(j.dump(), "old.json");
  j[field] = kept;
  EXPECT_THAT(error_of([&] { parse_profile(j.dump(), "old.json"); }),
              HasSubstr("old.json: /: unknown field '" + std::string(field) + "' (expected format, version,"));
  return p;
}

// A version-6 file (no sum of the gradient copies) still reads, with the GradSync on the
// communication streams, and may not hold version 7's sum.
TEST(ProfileVersion6, StillReadsWithoutTheCopiesSum) {
  J j = J::parse(profile_json_text(sample()));
  j["version"] = 6;
  const J sum = j["gradient_copies"]["sum"];
  j["gradient_copies"].erase("sum");
  const Profile p = parse_profile(j.dump(), "old.json");
  EXPECT_TRUE(p.gradient_copies.measured());
  EXPECT_FALSE(p.gradient_copies.sum_measured());
  j["gradient_copies"]["sum"] = sum;
  EXPECT_EQ(error_of([&] { parse_profile(j.dump(), "old.json"); }),
            "old.json: /gradient_copies: unknown field 'sum' (expected parameters, copy_out, copy_in)");
}

// A version-4 file's turns are a pinned pair's: two threads on one core. It may not hold
// version 5's ring.
TEST(ProfileVersion4, TurnsAreAPinnedPairs) {
  J j = J::parse(profile_json_text(sample()));
  j["version"] = 4;
  j["shared_core"].erase("threads");
  j["shared_core"].erase("cores");
  j["gradient_copies"].erase("sum");  // version 7's
  j["link"].erase("wake");
  for (J& l : j["link"]["samples"]) l.erase("copy");
  j.erase("executor");
  const Profile p = parse_profile(j.dump(), "old.json");
  EXPECT_EQ(p.shared_core.threads, 2);
  EXPECT_EQ(p.shared_core.cores, 1);
  EXPECT_TRUE(p.gradient_copies.measured());
  j["shared_core"]["threads"] = 4;
  EXPECT_EQ(error_of([&] { parse_profile(j.dump(), "old.json"); }),
            "old.json: /shared_core: unknown field 'threads' (expected micro_batch_size, forward, input_grad, "
            "weight_grad, optimizer)");
}

// A version-3 file (turns, no gradient copies) still reads, and may not hold version 4's field.
TEST(ProfileVersion3, StillReadsWithoutGradientCopies) {
  const Profile p = as_older_version(3, "gradient_copies", {});
  EXPECT_TRUE(p.shared_core.measured());
  EXPECT_FALSE(p.gradient_copies.measured());
}

// A version-2 file (interference, no turns) still reads, and may not hold version 3's field.
TEST(ProfileVersion2, StillReadsWithoutTurns) {
  const Profile p = as_older_version(2, "shared_core", {"gradient_copies"});
  EXPECT_TRUE(p.interference.measured());
  EXPECT_FALSE(p.shared_core.measured());
}

// The version-1 profile committed with the CPU validation (docs/validation/), as a
// pipesim of that version wrote it: it reads, with no quantiles and no curve.
TEST(ProfileVersion1, StillReadsWithoutQuantilesOrCurve) {
  std::ifstream in(std::string(PIPESIM_EXAMPLES) + "/../docs/validation/gpt-small-cpu-profile.json");
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_EQ(J::parse(text.str())["version"], 1);
  const Profile p = parse_profile(text.str(), "v1.json");
  EXPECT_EQ(p.model.name, "gpt-small");
  EXPECT_FALSE(p.interference.measured());
  EXPECT_EQ(p.interference.neighbours(), 0);
  const TimingStats& f = p.micro_batches[0].block.forward;
  EXPECT_TRUE(f.quantiles.empty());
  EXPECT_EQ(f.at_quantile(0.5), f.median);
  EXPECT_EQ(f.at_quantile(0.9), f.p90);
  // Written again, it is a version-7 file (still without quantiles), which reads back the same.
  const std::string again = profile_json_text(p);
  EXPECT_EQ(J::parse(again)["version"], 7);
  EXPECT_EQ(profile_json_text(parse_profile(again, "again.json")), again);
  // A version-1 file has none of version 2's fields.
  J v1 = J::parse(text.str());
  v1["micro_batches"][0]["block"]["forward"]["quantiles_s"] = J::array({1e-3});
  EXPECT_EQ(error_of([&] { parse_profile(v1.dump(), "v1.json"); }),
            "v1.json: /micro_batches/0/block/forward: unknown field 'quantiles_s' (expected median_s, p10_s, p90_s, "
            "min_s, max_s, repeats)");
  J v1_curve = J::parse(text.str());
  v1_curve["interference"] = J::object();
  EXPECT_THAT(error_of([&] { parse_profile(v1_curve.dump(), "v1.json"); }),
              HasSubstr("v1.json: /: unknown field 'interference' (expected format, version,"));
}

struct Broken {
  std::string pointer;
  std::function<void(J&)> change;
  std::string error;  // after "bad.json: "
};

TEST(ProfileVersion6, EveryMalformedNewFieldHasItsOneLineError) {
  const J good = J::parse(profile_json_text(sample()));
  auto set = [](const char* ptr, J value) { return [=](J& j) { j[J::json_pointer(ptr)] = value; }; };
  auto erase = [](const char* parent, const char* key) { return [=](J& j) { j[J::json_pointer(parent)].erase(key); }; };
  const char* bf = "/micro_batches/0/block/forward";
  const double q0 = good[J::json_pointer(std::string(bf) + "/quantiles_s/0")].get<double>();
  const std::vector<Broken> cases = {
      {"/version", set("/version", 8), "/version: this pipesim reads versions 1 to 7; got 8 (written by another pipesim)"},
      {"/version", set("/version", 0), "/version: expected a positive integer; got 0"},
      {"quantiles", set("/micro_batches/0/block/forward/quantiles_s", J::array()),
       "/micro_batches/0/block/forward/quantiles_s: expected a non-empty array; got []"},
      {"quantiles", set("/micro_batches/0/block/forward/quantiles_s/1", "slow"),
       "/micro_batches/0/block/forward/quantiles_s/1: expected a positive number of seconds; got 'slow'"},
      {"quantiles", set("/micro_batches/0/block/forward/quantiles_s/2", q0),
       "/micro_batches/0/block/forward/quantiles_s/2: expected non-decreasing values; " + J(q0).dump() + " follows " +
           good[J::json_pointer(std::string(bf) + "/quantiles_s/1")].dump()},
      {"quantiles", [](J& j) { j["micro_batches"][0]["block"]["forward"]["quantiles_s"].erase(1); },
       "/micro_batches/0/block/forward/quantiles_s: expected 4 quantiles for 4 repeats (min(repeats, 51)); got 3"},
      {"quantiles", set("/micro_batches/0/block/forward/quantiles_s/3", 1.0),
       "/micro_batches/0/block/forward/quantiles_s: do not agree with min_s, p10_s, median_s, p90_s and max_s"},
      {"interference", set("/interference/micro_batch_size", 3),
       "/interference/micro_batch_size: expected one of the profiled micro-batch sizes; got 3"},
      {"interference", erase("/interference", "head"), "/interference: missing field 'head'"},
      {"interference", set("/interference/block/forward/slowdown/1", 0.1),
       "/interference/block/forward/slowdown/1: expected a slowdown in 0.5..100; got 0.1"},
      {"interference", set("/interference/block/forward/slowdown/1", 1e9),
       "/interference/block/forward/slowdown/1: expected a slowdown in 0.5..100; got 1000000000.0"},
      {"interference", set("/interference/block/forward/slowdown/0", 1.01),
       "/interference/block/forward/slowdown/0: expected 1 (the op alone); got 1.01"},
      {"interference", set("/interference/block/forward/slowdown", J::array({1})),
       "/interference/block/forward/slowdown: expected slowdowns for 0 and at least 1 neighbour; got 1"},
      {"interference", [](J& j) { j["interference"]["head"]["weight_grad"]["slowdown"].erase(2); },
       "/interference/head/weight_grad/slowdown: expected 3 slowdowns (0..2 neighbours, as the first curve); got 2"},
      {"interference", [](J& j) { j["interference"]["block"]["input_grad"]["times"].erase(2); },
       "/interference/block/input_grad/times: expected an array of 3 STATS, one per slowdown; got an array of 2 elements"},
      {"interference", set("/interference/block/input_grad/slowdown/2", 1.3),
       "/interference/block/input_grad/slowdown/2: expected times[2].median_s / times[0].median_s = 1.2; got 1.3"},
      {"interference", set("/interference/head/forward/times/1/median_s", -1),
       "/interference/head/forward/times/1/median_s: expected a positive number of seconds; got -1"},
      {"interference", set("/interference/embedding/input_grad", J::object()),
       "/interference/embedding: unknown field 'input_grad' (expected forward, weight_grad)"},
      {"shared_core", set("/shared_core/micro_batch_size", 4),
       "/shared_core/micro_batch_size: expected one of the profiled micro-batch sizes; got 4"},
      {"shared_core", erase("/shared_core", "optimizer"), "/shared_core: missing field 'optimizer'"},
      {"shared_core", erase("/shared_core", "cores"), "/shared_core: missing field 'cores'"},
      {"shared_core", set("/shared_core/threads", 2),
       "/shared_core/threads: expected more device threads than the 2 cores they took turns on; got 2"},
      {"shared_core", set("/shared_core/cores", 0), "/shared_core/cores: expected a positive integer; got 0"},
      {"shared_core", set("/shared_core/forward/slowdown", J::array({1, 1.05, 1.1})),
       "/shared_core/forward/slowdown: expected 2 slowdowns (alone: 1, and in turns); got 3"},
      {"shared_core", set("/shared_core/optimizer/slowdown/1", 1.5),
       "/shared_core/optimizer/slowdown/1: expected times[1].median_s / times[0].median_s = 1.3; got 1.5"},
      {"shared_core", set("/shared_core/input_grad/slowdown/1", 200),
       "/shared_core/input_grad/slowdown/1: expected a slowdown in 0.5..100; got 200"},
      {"shared_core", set("/shared_core/weight_grad/turns", 1),
       "/shared_core/weight_grad: unknown field 'turns' (expected slowdown, times)"},
      {"gradient_copies", set("/gradient_copies/parameters", 0),
       "/gradient_copies/parameters: expected a positive integer; got 0"},
      {"gradient_copies", set("/gradient_copies/parameters", 49985),
       "/gradient_copies/parameters: expected a whole number of blocks of 49984 parameters (a stage's gradient); got "
       "49985"},
      {"gradient_copies", erase("/gradient_copies", "copy_in"), "/gradient_copies: missing field 'copy_in'"},
      {"gradient_copies", set("/gradient_copies/copy_out/median_s", -1),
       "/gradient_copies/copy_out/median_s: expected a positive number of seconds; got -1"},
      {"gradient_copies", set("/gradient_copies/sum", 1), "/gradient_copies/sum: expected an object; got 1"},
      {"gradient_copies", set("/gradient_copies/sum/median_s", 0),
       "/gradient_copies/sum/median_s: expected a positive number of seconds; got 0"},
      {"link/wake", erase("/link/samples/1", "copy"),
       "/link/samples/1: missing field 'copy': with the sender's wake-up call (link/wake) every sample has its copy"},
      {"link/wake", erase("/link", "wake"),
       "/link/samples/0/copy: a sender's copy without its wake-up call (link/wake): both, or neither"},
      {"link/wake", set("/link/wake/median_s", "fast"), "/link/wake/median_s: expected a positive number of seconds; got 'fast'"},
      {"executor", set("/executor/op_gap/p10_s", 1.0),
       "/executor/op_gap: expected min_s <= p10_s <= median_s <= p90_s <= max_s"},
      {"executor", set("/executor/between", 1), "/executor: unknown field 'between' (expected op_gap)"},
      {"executor", erase("/executor", "op_gap"), "/executor: missing field 'op_gap'"},
      {"link/copy", set("/link/samples/0/copy/repeats", 0),
       "/link/samples/0/copy/repeats: expected a positive integer; got 0"},
  };
  for (const Broken& b : cases) {
    J j = good;
    b.change(j);
    EXPECT_EQ(error_of([&] { parse_profile(j.dump(), "bad.json"); }), "bad.json: " + b.error) << b.pointer;
  }
}

}  // namespace
}  // namespace pipesim
