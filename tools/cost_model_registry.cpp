#include "tools/cost_model_registry.hpp"

#include <optional>
#include <utility>

#include "assess/analytical_source.hpp"
#include "assess/profiled_source.hpp"
#include "core/error.hpp"
#include "core/suggest.hpp"
#include "cost_models/catalog.hpp"
#include "cost_models/profiled.hpp"
#include "cost_models/uniform.hpp"
#include "tools/analytical_setup.hpp"
#include "tools/global_batch.hpp"

namespace pipesim {
namespace {

class UniformSetup final : public CostModelSetup {
 public:
  explicit UniformSetup(const CostFlags& flags) : config_(make_cost_config(flags.uniform)) {}
  ScheduleParams params_for(std::string_view, const ScheduleParams& params) const override { return params; }
  ScheduleCosts make(const Schedule& schedule, const std::string&) const override {
    check_stage_costs(config_, schedule);
    return {std::make_unique<UniformCostModel>(config_), "uniform", nullptr, {}};
  }
  std::string label() const override { return "uniform"; }

 private:
  UniformCostConfig config_;
};

class AnalyticalSetup final : public CostModelSetup {
 public:
  explicit AnalyticalSetup(const CostFlags& flags) : hardware_(flags.hardware) {}
  std::vector<std::string> machines() const override { return split_list(hardware_.hardware); }
  ScheduleParams params_for(std::string_view name, const ScheduleParams& params) const override {
    ScheduleParams out = params;
    if (hardware_.global_batch_size > 0) out.m = microbatches_for_global_batch(hardware_, name, params, false);
    return out;
  }
  ScheduleCosts make(const Schedule& schedule, const std::string& gpu) const override {
    auto model = std::make_unique<AnalyticalCostModel>(analytical_model(hardware_, gpu, schedule, " (reduce -p or -v)"));
    auto machine = std::make_unique<AnalyticalSource>(*model);
    std::vector<int> nodes;
    for (int d = 0; d < schedule.num_devices; ++d) nodes.push_back(model->node_of_device(d));
    return {std::move(model), "analytical: " + hardware_.model + " on " + gpu, std::move(machine), std::move(nodes)};
  }
  std::string label() const override { return "analytical"; }

 private:
  HardwareOptions hardware_;
};

// One measured model for every schedule: the profile is read and fitted once.
class ProfiledSetup final : public CostModelSetup {
 public:
  ProfiledSetup(ProfiledCostConfig config, const CostFlags& flags)
      : hardware_(flags.hardware), model_(std::make_shared<const ProfiledCostModel>(std::move(config))) {
    if (!flags.profiled.hardware.empty()) {
      try {
        gpu_ = find_gpu(flags.profiled.hardware);
      } catch (const InputError& e) {
        throw InputError(std::string("--cost-hardware: ") + e.what());
      }
      const ProfiledSource check(*model_, *gpu_, 1);  // its InputErrors now, before any run
    }
  }
  ScheduleParams params_for(std::string_view name, const ScheduleParams& params) const override {
    ScheduleParams out = params;
    if (hardware_.global_batch_size > 0) out.m = microbatches_for_global_batch(hardware_, name, params, true);
    return out;
  }
  ScheduleCosts make(const Schedule& schedule, const std::string&) const override {
    check_global_batch(hardware_, schedule, 1);  // a profile measured one machine: dp 1
    std::unique_ptr<AssessmentSource> machine;
    if (gpu_) machine = std::make_unique<ProfiledSource>(*model_, *gpu_, schedule.num_devices);
    return {model_, model_->label(), std::move(machine), {}};
  }
  std::string label() const override { return model_->label(); }
  const ProfiledCostModel* measured() const override { return model_.get(); }

 private:
  HardwareOptions hardware_;
  std::shared_ptr<const ProfiledCostModel> model_;
  std::optional<GpuSpec> gpu_;  // --cost-hardware
};

template <typename Setup>
std::unique_ptr<CostModelSetup> make_setup(const CostFlags& flags) {
  return std::make_unique<Setup>(flags);
}

}  // namespace

const std::vector<CostModelInfo>& cost_models() {
  static const std::vector<CostModelInfo> all = {
      {"uniform", "the same forward, backward and weight-gradient time on every stage (--fwd, --bwd, --stage-cost), links from --link-latency and --link-bandwidth", "",
       {"--fwd", "--bwd", "--wgrad", "--optimizer-time", "--link-latency", "--link-bandwidth", "--activation-bytes",
        "--activation-memory", "--grad-bytes", "--input-grad-free-fraction", "--stage-cost"},
       make_setup<UniformSetup>},
      {"analytical", "a catalog model (--model) on catalog GPUs (--hardware): roofline kernels, TP, DP and p2p communication, memory, tokens/s, MFU and $ (docs/cost-model.md)", "--model",
       {"--hardware", "--nodes", "--gpus-per-node", "--tp", "--sequence-parallel", "--flash-attention", "--recompute",
        "--dtype", "--zero1", "--intra-link", "--inter-link", "--blocking-p2p", "--overlap-grad-reduce",
        "--scatter-gather", "--grad-reduce-bytes", "--tp-overlap", "--gradient-accumulation-fusion", "--vocab-multiple",
        "--partition", "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers", "--efficiency",
        "--price-per-hour"},
       make_setup<AnalyticalSetup>},
      {"profiled", "durations and sizes measured by `pipesim profile` (--cost FILE; docs/profile-format.md)", "--cost",
       {"--cost-optimizer", "--cost-fit", "--cost-hardware"},
       [](const CostFlags& flags) { return profiled_setup(make_profiled_config(flags.profiled, flags.hardware), flags); }},
  };
  return all;
}

std::unique_ptr<CostModelSetup> profiled_setup(ProfiledCostConfig config, const CostFlags& flags) {
  return std::make_unique<ProfiledSetup>(std::move(config), flags);
}

const CostModelInfo& find_cost_model(std::string_view name) {
  std::vector<std::string> names;
  std::string known;
  for (const CostModelInfo& m : cost_models()) {
    if (m.name == name) return m;
    names.emplace_back(m.name);
    known += (known.empty() ? "" : ", ") + std::string(m.name);
  }
  throw InputError("--cost-model: unknown cost model " + quote(name) + " (" + did_you_mean(name, names) +
                   "known: " + known + ")");
}

const CostModelInfo& chosen_cost_model(const std::string& name, const HardwareOptions& hardware,
                                       const ProfiledOptions& profiled) {
  const CostModelInfo& by_flags = find_cost_model(!profiled.cost.empty()   ? "profiled"
                                                  : !hardware.model.empty() ? "analytical"
                                                                            : "uniform");
  if (name.empty()) return by_flags;
  const CostModelInfo& named = find_cost_model(name);
  if (&named == &by_flags) return named;
  const bool chooser_given = named.chosen_by == "--model"  ? !hardware.model.empty()
                             : named.chosen_by == "--cost" ? !profiled.cost.empty()
                                                           : true;
  if (!chooser_given) throw InputError("--cost-model " + std::string(named.name) + ": needs " + std::string(named.chosen_by));
  throw InputError("--cost-model " + std::string(named.name) + ": not with " + std::string(by_flags.chosen_by) +
                   " (which chooses the " + std::string(by_flags.name) + " cost model)");
}

std::string cost_model_help(std::string_view otherwise) {
  std::string help = "The cost model [default: profiled with --cost, analytical with --model, else " +
                     std::string(otherwise) + "]:";
  for (const CostModelInfo& m : cost_models()) help += "\n  " + std::string(m.name) + ": " + std::string(m.summary);
  return help;
}

}  // namespace pipesim
