// The profiler's interference curve (kernels/profiler.hpp) on a fake backend whose passes
// take (1 + factor x busy neighbours) times their time alone: the curve is that line,
// exactly, with slowdown[0] = 1 and K + 1 points; the neighbour count's rules and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

#include "input_error.hpp"
#include "cost_models/catalog.hpp"
#include "cost_models/transformer.hpp"
#include "executor/backend_factory.hpp"
#include "kernels/profiler.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

using ::testing::HasSubstr;

class FakeBackend final : public ProfileBackend {
 public:
  FakeBackend(int max_neighbours, double factor) : max_(max_neighbours), factor_(factor) {}

  std::string name() const override { return "cpu"; }
  std::string link_kind() const override { return "thread-handoff"; }
  void describe(Profile& p) const override { cpu_->describe(p); }
  std::unique_ptr<ProfileWorkload> workload(const ModelSpec& m, int b, std::uint64_t) override {
    return std::make_unique<Timed>(*this, m, b);
  }
  std::unique_ptr<OptimizerProbe> optimizer(std::int64_t count, std::int64_t stage_count, std::uint64_t seed) override {
    return cpu_->optimizer(count, stage_count, seed);
  }
  std::unique_ptr<LinkProbe> link(std::int64_t bytes) override { return cpu_->link(bytes); }
  int max_neighbours() const override { return max_; }
  std::unique_ptr<ProfileWorkload> neighbour(const ModelSpec& m, int b, std::uint64_t, int slot) override {
    EXPECT_GE(slot, 1);
    EXPECT_LE(slot, max_);
    slots_seen += slot;
    return std::make_unique<Neighbour>(*this, m, b);
  }

  std::atomic<int> busy{0};  // neighbours that have started their first pass and not ended
  int slots_seen = 0;
  bool neighbours_fail = false;

 private:
  // The timed workload: times follow the busy neighbours, not a clock.
  struct Timed : ProfileWorkload {
    Timed(FakeBackend& f, const ModelSpec& m, int b) : fake(f), model(m), size(b) {}
    PassTimes scaled(double f, double i, double w) const {
      const double s = (1 + fake.factor_ * fake.busy.load()) * size;
      return {f * s, i * s, w * s};
    }
    PassTimes block_pass() override { return scaled(1e-3, 2e-3, 1.5e-3); }
    PassTimes embedding_pass() override { return scaled(1e-5, 0, 2e-5); }
    PassTimes head_pass() override { return scaled(3e-4, 2e-4, 1e-4); }
    WorkloadBytes block_bytes() const override { return {1000, 800}; }
    WorkloadBytes embedding_bytes() const override { return {40, 40}; }
    WorkloadBytes head_bytes() const override { return {500, 400}; }
    std::int64_t message_bytes() const override { return 4 * size * model.seq_len * model.hidden; }
    ProfileParameters parameters() const override {
      return {layer_parameters(model), embedding_parameters(model), 2 * model.hidden,
              static_cast<std::int64_t>(model.vocab) * model.hidden};
    }
    FakeBackend& fake;
    ModelSpec model;
    int size;
  };
  // A neighbour: busy from its first pass until it is destroyed (after its thread joined),
  // except while the profiler pauses it (the turns of time alone).
  struct Neighbour : Timed {
    using Timed::Timed;
    ~Neighbour() override {
      if (started && !is_paused) --fake.busy;
    }
    void paused(bool now_paused) override {
      if (!started || now_paused == is_paused) return;
      is_paused = now_paused;
      fake.busy += now_paused ? -1 : 1;
    }
    bool is_paused = false;
    PassTimes block_pass() override {
      if (fake.neighbours_fail) throw InputError("profile --backend fake: neighbour 1 lost its device");
      if (!started) ++fake.busy;
      started = true;
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // not a busy loop on CI's 2 cores
      return {};
    }
    bool started = false;
  };

  int max_;
  double factor_;
  std::unique_ptr<ProfileBackend> cpu_ = make_profile_backend("cpu", "thread-cpu");
};

ProfileOptions options() {
  ProfileOptions o;
  o.micro_batch_sizes = {4, 1, 2};
  o.repeats = 3;
  o.min_time_s = 0;  // exactly `repeats`
  o.warmup = 1;
  o.link_sizes = {4096, 1 << 20};
  o.shared_core = false;  // the turns: tests/profiler_test.cpp
  return o;
}

TEST(InterferenceCurve, FollowsTheBusyNeighboursExactly) {
  FakeBackend fake(3, 0.25);
  std::ostringstream log;
  ProfileOptions o = options();
  o.progress = &log;
  const Profile p = profile_model(find_model("gpt-tiny"), o, fake);
  const ProfileInterference& in = p.interference;
  ASSERT_TRUE(in.measured());
  EXPECT_EQ(in.neighbours(), 3);  // the default: min(max_neighbours, 3)
  EXPECT_EQ(in.micro_batch_size, 2);  // the middle of 1, 2, 4
  EXPECT_EQ(fake.slots_seen, 1 + (1 + 2) + (1 + 2 + 3));  // k = 1, 2, 3 neighbours in turn
  EXPECT_EQ(fake.busy.load(), 0);  // every neighbour stopped
  EXPECT_FALSE(p.gradient_copies.measured());  // a backend without a copy probe: none
  for (const InterferenceCurve* c : {&in.block.forward, &in.block.input_grad, &in.block.weight_grad,
                                     &in.embedding.forward, &in.embedding.weight_grad, &in.head.forward,
                                     &in.head.input_grad, &in.head.weight_grad}) {
    ASSERT_EQ(c->slowdown.size(), 4u);
    ASSERT_EQ(c->times.size(), 4u);
    EXPECT_EQ(c->slowdown[0], 1);
    for (int k = 1; k <= 3; ++k) EXPECT_DOUBLE_EQ(c->slowdown[static_cast<std::size_t>(k)], 1 + 0.25 * k) << k;
    // A turn of the block is a stage of default_stage_blocks (4 for gpt-tiny): one run per block.
    const bool block = c == &in.block.forward || c == &in.block.input_grad || c == &in.block.weight_grad;
    EXPECT_EQ(c->times[1].repeats, block ? 4 : 3);
  }
  EXPECT_TRUE(in.embedding.input_grad.slowdown.empty());
  // k = 0: the passes alone in turns with the busy ones, a stage of 4 per k; the fake's time
  // alone is the micro-batch's own measurement's.
  EXPECT_EQ(in.block.forward.times[0].repeats, 12);
  EXPECT_EQ(in.head.forward.times[0].repeats, 9);
  EXPECT_EQ(in.block.forward.times[0].median, p.micro_batches[1].block.forward.median);
  EXPECT_DOUBLE_EQ(in.block.forward.times[3].median, 1.75 * 2e-3);
  EXPECT_THAT(log.str(), HasSubstr("profile: 2 neighbours busy (micro-batch size 2): block F x1.500 I x1.500 W x1.500; "
                                   "head F x1.500"));
  // The file keeps the curve.
  const Profile back = parse_profile(profile_json_text(p), "fake.json");
  EXPECT_EQ(back.interference.block.weight_grad.slowdown, in.block.weight_grad.slowdown);
}

TEST(InterferenceCurve, NeighbourCountRules) {
  const ModelSpec tiny = find_model("gpt-tiny");
  {
    FakeBackend fake(3, 0.25);
    ProfileOptions o = options();
    o.neighbours = 1;
    EXPECT_EQ(profile_model(tiny, o, fake).interference.neighbours(), 1);
    o.neighbours = 0;  // no curve, and no neighbour made
    fake.slots_seen = 0;
    EXPECT_FALSE(profile_model(tiny, o, fake).interference.measured());
    EXPECT_EQ(fake.slots_seen, 0);
    o.neighbours = 4;
    EXPECT_EQ(error_of([&] { profile_model(tiny, o, fake); }),
              "--neighbours: at most 3 here, this machine's cores - 1 (past the cores the simulator shares them "
              "itself); got 4");
    o.neighbours = -1;
    EXPECT_EQ(error_of([&] { profile_model(tiny, o, fake); }), "--neighbours: expected 0 or more, got -1");
  }
  {
    FakeBackend one_core(0, 0.25);  // nothing fits beside the timed device: no curve by default
    EXPECT_FALSE(profile_model(tiny, options(), one_core).interference.measured());
    // ... but the turns of two devices on its one core are measured, with no neighbour made.
    ProfileOptions turns = options();
    turns.shared_core = true;
    EXPECT_TRUE(profile_model(tiny, turns, one_core).shared_core.measured());
    EXPECT_EQ(one_core.slots_seen, 0);
  }
  EXPECT_EQ(default_neighbours(0), 0);
  EXPECT_EQ(default_neighbours(1), 1);
  EXPECT_EQ(default_neighbours(15), 3);
}

TEST(InterferenceCurve, ANeighboursFailureIsTheProfilesError) {
  FakeBackend fake(1, 0.25);
  fake.neighbours_fail = true;
  EXPECT_EQ(error_of([&] { profile_model(find_model("gpt-tiny"), options(), fake); }),
            "profile --backend fake: neighbour 1 lost its device");
}

TEST(InterferenceCurve, ASlowdownNoProfileMayHoldDropsTheCurve) {
  FakeBackend fake(1, 200);  // 201 x slower beside one neighbour: a broken measurement
  std::ostringstream log;
  ProfileOptions o = options();
  o.progress = &log;
  const Profile p = profile_model(find_model("gpt-tiny"), o, fake);
  EXPECT_FALSE(p.interference.measured());
  EXPECT_THAT(log.str(), HasSubstr("profile: an interference slowdown of 201.000 is outside 0.5..100 (other load on "
                                   "the machine?): the profile gets no interference curve"));
  EXPECT_NO_THROW(parse_profile(profile_json_text(p), "p.json"));
}

}  // namespace
}  // namespace pipesim
