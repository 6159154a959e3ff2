// tools/cost_model_registry.hpp: every registered cost model builds from its flags and
// answers for a schedule; names are found, mistyped ones get the did-you-mean line; the
// flags choose the model unless --cost-model does, and the two must agree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "tools/cost_model_registry.hpp"
#include "tools/unused_flags.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;

const std::string kProfile = std::string(PIPESIM_TEST_DATA) + "/../../docs/validation/gpu-h200/profile-cuda-gpt3-1.3b.json";

// The flags with which each model has what it needs: a model for the analytical one, a
// profile for the profiled one.
struct Flags {
  CostOptions uniform;
  HardwareOptions hardware;
  ProfiledOptions profiled;
  explicit Flags(std::string_view model) {
    if (model == "analytical") hardware.model = "gpt3-1.3b";
    if (model == "profiled") profiled.cost = kProfile;
  }
  CostFlags get() const { return {uniform, hardware, profiled}; }
};

TEST(CostModelRegistry, EveryModelBuildsAndAnswers) {
  ASSERT_EQ(cost_models().size(), 3u);
  EXPECT_EQ(cost_models().front().name, "uniform");  // the default first
  const Schedule s = generate("1f1b", ScheduleParams{});
  for (const CostModelInfo& info : cost_models()) {
    SCOPED_TRACE(std::string(info.name));
    EXPECT_FALSE(info.summary.empty());
    EXPECT_FALSE(info.flags.empty());
    const Flags flags(info.name);
    EXPECT_EQ(&chosen_cost_model("", flags.hardware, flags.profiled), &info);  // the flags choose it
    const std::unique_ptr<CostModelSetup> setup = info.setup(flags.get());
    const std::vector<std::string> machines = setup->machines();
    ASSERT_EQ(machines.size(), 1u);
    const ScheduleCosts costs = setup->make(s, machines.front());
    ASSERT_NE(costs.model, nullptr);
    EXPECT_GT(costs.model->compute_time(Op{OpKind::F, 0, 0, 0}, scale_of(s)), 0);
    EXPECT_FALSE(costs.label.empty());
    EXPECT_EQ(costs.machine != nullptr, info.name == "analytical");  // the one that knows its machine
    if (info.name != "profiled") {
      EXPECT_EQ(setup->label(), info.name);
    }
  }
}

TEST(CostModelRegistry, NoFlagBelongsToTwoModels) {
  std::set<std::string> seen;
  for (const CostModelInfo& info : cost_models())
    for (const std::string& flag : info.flags) EXPECT_TRUE(seen.insert(flag).second) << flag;
}

TEST(CostModelRegistry, UnknownNamesGetTheClosestAndTheKnownOnes) {
  EXPECT_EQ(find_cost_model("profiled").name, "profiled");
  try {
    find_cost_model("analytic");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "--cost-model: unknown cost model 'analytic' (did you mean 'analytical'? known: uniform, analytical, "
                 "profiled)");
  }
  try {
    find_cost_model("roofline");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--cost-model: unknown cost model 'roofline' (known: uniform, analytical, profiled)");
  }
}

TEST(CostModelRegistry, CostModelMustAgreeWithTheFlags) {
  const Flags none("uniform"), model("analytical"), cost("profiled");
  EXPECT_EQ(chosen_cost_model("analytical", model.hardware, model.profiled).name, "analytical");
  const auto error = [](const std::string& name, const Flags& f) {
    try {
      chosen_cost_model(name, f.hardware, f.profiled);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("analytical", none), "--cost-model analytical: needs --model");
  EXPECT_EQ(error("profiled", model), "--cost-model profiled: needs --cost");
  EXPECT_EQ(error("uniform", model), "--cost-model uniform: not with --model (which chooses the analytical cost model)");
  EXPECT_EQ(error("uniform", cost), "--cost-model uniform: not with --cost (which chooses the profiled cost model)");
}

TEST(CostModelRegistry, TheOtherModelsFlagsAreRefused) {
  for (const CostModelInfo& chosen : cost_models()) {
    std::set<std::string> refused;
    for (const UnusedFlags& group : unused_flags(&chosen, false, {"1f1b"}))
      if (group.reject) refused.insert(group.flags.begin(), group.flags.end());
    for (const CostModelInfo& other : cost_models())
      for (const std::string& flag : other.flags)
        EXPECT_EQ(refused.count(flag) > 0, &other != &chosen) << chosen.name << " " << flag;
  }
}

// No cost model (converge without one measures its time on the proxy): every model's flags.
TEST(CostModelRegistry, WithoutAModelEveryModelsFlagsAreRefused) {
  std::set<std::string> refused;
  for (const UnusedFlags& group : unused_flags(nullptr, false, {"1f1b"}))
    if (group.reject) refused.insert(group.flags.begin(), group.flags.end());
  for (const CostModelInfo& model : cost_models())
    for (const std::string& flag : model.flags) EXPECT_EQ(refused.count(flag), 1u) << flag;
  EXPECT_EQ(refused.count("--micro-batch-size"), 1u);
}

// validate's way in: a profile in hand makes the model --cost's file makes.
TEST(CostModelRegistry, AProfileInHandMakesTheModelOfItsFile) {
  const Flags flags("profiled");
  const std::unique_ptr<CostModelSetup> from_file = find_cost_model("profiled").setup(flags.get());
  const std::unique_ptr<CostModelSetup> in_hand =
      profiled_setup(profiled_config(read_profile_file(kProfile), kProfile, flags.profiled, flags.hardware), flags.get());
  ASSERT_NE(in_hand->measured(), nullptr);
  EXPECT_EQ(in_hand->label(), from_file->label());
  const Schedule s = generate("1f1b", ScheduleParams{});
  for (const OpKind kind : {OpKind::F, OpKind::B})
    EXPECT_EQ(in_hand->measured()->compute_time(Op{kind, 0, 0, 0}, scale_of(s)),
              from_file->measured()->compute_time(Op{kind, 0, 0, 0}, scale_of(s)));
}

TEST(CostModelRegistry, TheHelpListsEveryModel) {
  for (const CostModelInfo& info : cost_models()) EXPECT_THAT(cost_model_help(), HasSubstr(std::string(info.name) + ": "));
  EXPECT_THAT(cost_model_help(), HasSubstr("[default: profiled with --cost, analytical with --model, else uniform]"));
  EXPECT_THAT(cost_model_help("none"), HasSubstr(", else none]"));
}

}  // namespace
}  // namespace pipesim
