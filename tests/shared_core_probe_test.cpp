// The profiler's shared-core turns (kernels/shared_core_probe.hpp) on a fake backend whose
// passes and optimizer steps take `factor` times as long when another device's began since
// their own last did (in the ring's laps) as right after their own (alone): the turns are
// that factor, exactly, and a factor no profile may hold drops them with its line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <sstream>
#include <vector>

#include "core/cpu_affinity.hpp"
#include "cost_models/catalog.hpp"
#include "cost_models/transformer.hpp"
#include "executor/backend_factory.hpp"
#include "kernels/profiler.hpp"
#include "kernels/shared_core_probe.hpp"

namespace pipesim {
namespace {

using ::testing::HasSubstr;

class TurnsBackend final : public ProfileBackend {
 public:
  explicit TurnsBackend(double factor) : factor_(factor) {}

  std::string name() const override { return "cpu"; }
  std::string link_kind() const override { return "thread-handoff"; }
  void describe(Profile& p) const override { cpu_->describe(p); }
  std::unique_ptr<ProfileWorkload> workload(const ModelSpec& m, int b, std::uint64_t seed) override {
    return std::make_unique<Workload>(*this, m, b, seed);
  }
  // The stage's steps (the turns ask for a stage's worth) are the fake's; the profile's own
  // optimizer groups are the CPU's.
  std::unique_ptr<OptimizerProbe> optimizer(std::int64_t count, std::int64_t stage_count, std::uint64_t seed) override {
    if (count == stage_count) return std::make_unique<Step>(*this, seed);
    return cpu_->optimizer(count, stage_count, seed);
  }
  std::unique_ptr<LinkProbe> link(std::int64_t bytes) override { return cpu_->link(bytes); }
  int max_neighbours() const override { return 0; }
  std::unique_ptr<ProfileWorkload> neighbour(const ModelSpec&, int, std::uint64_t, int) override {
    ADD_FAILURE() << "the turns make no neighbour";
    return nullptr;
  }

 private:
  // `factor` when another device's work of the same kind began last, 1 after its own. The
  // ring's threads run at once: `last` under a mutex.
  double scale(std::uint64_t& last, std::uint64_t device) {
    const std::lock_guard<std::mutex> lock(mu_);
    const double s = last != 0 && last != device ? factor_ : 1.0;
    last = device;
    return s;
  }
  struct Workload : ProfileWorkload {
    Workload(TurnsBackend& f, const ModelSpec& m, int b, std::uint64_t seed) : fake(f), model(m), size(b), device(seed + 1) {}
    PassTimes block_pass() override { return stage_passes(1).front(); }
    // A stage's passes in one turn: all of them after the same device's work.
    std::vector<PassTimes> stage_passes(int blocks) override {
      const double s = fake.scale(fake.last_pass_, device);
      return std::vector<PassTimes>(static_cast<std::size_t>(blocks), PassTimes{1e-3 * s, 2e-3 * s, 1.5e-3 * s});
    }
    PassTimes embedding_pass() override { return {1e-5, 0, 2e-5}; }
    PassTimes head_pass() override { return {3e-4, 2e-4, 1e-4}; }
    WorkloadBytes block_bytes() const override { return {1000, 800}; }
    WorkloadBytes embedding_bytes() const override { return {40, 40}; }
    WorkloadBytes head_bytes() const override { return {500, 400}; }
    std::int64_t message_bytes() const override { return 4 * size * model.seq_len * model.hidden; }
    ProfileParameters parameters() const override {
      return {layer_parameters(model), embedding_parameters(model), 2 * model.hidden,
              static_cast<std::int64_t>(model.vocab) * model.hidden};
    }
    TurnsBackend& fake;
    ModelSpec model;
    int size;
    std::uint64_t device;
  };
  struct Step : OptimizerProbe {
    Step(TurnsBackend& f, std::uint64_t seed) : fake(f), device(seed + 1) {}
    double step(OptimizerKind) override { return 4e-4 * fake.scale(fake.last_step_, device); }
    TurnsBackend& fake;
    std::uint64_t device;
  };

  double factor_;
  std::mutex mu_;
  std::uint64_t last_pass_ = 0, last_step_ = 0;  // the device whose pass (step) began last
  std::unique_ptr<ProfileBackend> cpu_ = make_profile_backend("cpu", "thread-cpu");
};

ProfileOptions options() {
  ProfileOptions o;
  o.micro_batch_sizes = {1, 2, 4};
  o.repeats = 3;
  o.min_time_s = 0;  // exactly `repeats`
  o.warmup = 1;
  o.stage_blocks = 2;
  o.link_sizes = {4096, 1 << 20};
  o.neighbours = 0;
  return o;
}

TEST(SharedCoreTurns, AreTheSlowdownAfterAnotherDevicesWorkExactly) {
  TurnsBackend fake(1.25);
  std::ostringstream log;
  ProfileOptions o = options();
  o.progress = &log;
  const Profile p = profile_model(find_model("gpt-tiny"), o, fake);
  const ProfileSharedCore& t = p.shared_core;
  ASSERT_TRUE(t.measured()) << log.str();
  EXPECT_EQ(t.micro_batch_size, 2);  // the middle of 1, 2, 4
  for (const InterferenceCurve* c : {&t.forward, &t.input_grad, &t.weight_grad, &t.optimizer}) {
    ASSERT_EQ(c->slowdown.size(), 2u);
    EXPECT_EQ(c->slowdown[0], 1);
    EXPECT_DOUBLE_EQ(c->slowdown[1], 1.25);
  }
  EXPECT_DOUBLE_EQ(t.forward.times[0].median, 1e-3);
  EXPECT_DOUBLE_EQ(t.optimizer.times[1].median, 1.25 * 4e-4);
  // Alone, exactly `repeats` turns (--min-time 0); in turns, the lap's threads - cores that
  // waited for theirs, each of two blocks.
  EXPECT_EQ(t.threads, shared_core_threads(o));
  EXPECT_GT(t.threads, t.cores);
  EXPECT_EQ(t.optimizer.times[0].repeats, o.repeats);
  EXPECT_EQ(t.forward.times[0].repeats, 2 * o.repeats);
  EXPECT_EQ(t.optimizer.times[1].repeats, (t.threads - t.cores) * o.repeats);
  EXPECT_EQ(t.forward.times[1].repeats, 2 * (t.threads - t.cores) * o.repeats);
  EXPECT_THAT(log.str(), HasSubstr("profile: " + std::to_string(t.threads) + " device threads taking turns on " +
                                   std::to_string(t.cores) + " cores (micro-batch size 2), means: block F x1.250 I "
                                   "x1.250 W x1.250; Adam x1.250"));
}

TEST(SharedCoreTurns, ASlowdownNoProfileMayHoldDropsThem) {
  TurnsBackend fake(200);
  std::ostringstream log;
  ProfileOptions o = options();
  o.progress = &log;
  const Profile p = profile_model(find_model("gpt-tiny"), o, fake);
  EXPECT_FALSE(p.shared_core.measured());
  EXPECT_THAT(log.str(), HasSubstr("profile: no shared-core turns (a slowdown outside what a profile may hold: other "
                                   "load on the machine?)"));
  EXPECT_NO_THROW(parse_profile(profile_json_text(p), "p.json"));
}

// Too few device threads to outnumber the cores, or too many for the memory the measurement
// may use: no turns, and a line that says why.
TEST(SharedCoreTurns, TooFewThreadsOrTooLittleMemoryLeaveThemOut) {
  TurnsBackend fake(1.25);
  std::ostringstream log;
  ProfileOptions o = options();
  o.progress = &log;
  o.shared_core_threads = 1;
  EXPECT_FALSE(profile_model(find_model("gpt-tiny"), o, fake).shared_core.measured());
  EXPECT_THAT(log.str(), HasSubstr("profile: no shared-core turns (1 device threads do not outnumber the " +
                                   std::to_string(usable_cores()) + " cores)"));
  // Room for the largest size's workload (the profile's own check), not for 8 of the middle's.
  log.str("");
  o.shared_core_threads = 8;
  o.max_workload_bytes = profile_workload_bytes(find_model("gpt-tiny"), 4, o.stage_blocks);
  EXPECT_FALSE(profile_model(find_model("gpt-tiny"), o, fake).shared_core.measured());
  EXPECT_THAT(log.str(), HasSubstr("profile: no shared-core turns (the 8 devices' workloads need about "));
  EXPECT_THAT(log.str(), HasSubstr(", more than the limit of "));
}

}  // namespace
}  // namespace pipesim
