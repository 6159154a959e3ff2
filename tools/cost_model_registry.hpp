#pragma once
// The cost models a run can be simulated with, by name, as generators() is for schedules:
// each with its one-line help, the flags only it reads, and the factory that makes it from
// a command's flags. simulate, compare and converge choose one with --cost-model NAME, or,
// without it, by the flags given: --cost (a profile) the profiled model, --model the
// analytical one, neither uniform costs (converge: none, its time measured on the proxy).
// The unused-flag checks (tools/unused_flags.hpp) take each model's flags from here.
// validate takes its profiled model from profiled_setup (a profile it read or measured now),
// schedule and check their chart's and critical path's costs from the uniform entry.
// Not here: sweep and fit advice build the analytical model themselves
// (tools/analytical_setup.hpp), since they vary its parallelism per configuration; `pipesim
// fit` (tools/cmd_fit.cpp, fit_runs.cpp) fits the analytical model's efficiencies to
// measured runs, so it builds that model, with the parameters it is fitting, itself.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "assess/assessment.hpp"
#include "cost_models/cost_model.hpp"
#include "cost_models/profiled.hpp"
#include "schedules/generator.hpp"
#include "schedules/schedule.hpp"
#include "tools/cli_options.hpp"
#include "tools/hardware_flags.hpp"
#include "tools/profiled_flags.hpp"

namespace pipesim {

// Every cost model's flags, as a command parsed them.
struct CostFlags {
  const CostOptions& uniform;
  const HardwareOptions& hardware;
  const ProfiledOptions& profiled;
};

// One schedule's cost model, with what a run needs of it besides durations.
struct ScheduleCosts {
  std::shared_ptr<const CostModel> model;  // shared: a profiled model serves every schedule
  std::string label;  // names it in a trace's metadata, e.g. "analytical: gpt3-13b on h100-sxm"
  // What assesses the run (tokens/s, MFU, memory, $): the machine the model knows. Null for
  // a model that knows none. Refers to `model`.
  std::unique_ptr<AssessmentSource> machine;
  // The node each device is on, as the model places them (the analytical model: by
  // --gpus-per-node and --tp); empty: the model places none. --nics-per-node reads it.
  std::vector<int> node_of_device;
};

// A command's cost model, made once from its flags (a profile is read once) and asked for
// each schedule the command runs.
class CostModelSetup {
 public:
  virtual ~CostModelSetup() = default;
  // The machines every schedule runs on, one run each: the GPU types of --hardware for the
  // analytical model, one unnamed machine for the others.
  virtual std::vector<std::string> machines() const { return {""}; }
  // The parameters of generator `name`: with --global-batch-size, m is what makes that batch.
  virtual ScheduleParams params_for(std::string_view name, const ScheduleParams& params) const = 0;
  // The cost model of `schedule` on `machine` (one of machines()), checked against the
  // schedule. InputError.
  virtual ScheduleCosts make(const Schedule& schedule, const std::string& machine) const = 0;
  // What --json's "cost_model" says: the model's name, or a profile's one-line description.
  virtual std::string label() const = 0;
  // The measured model whose distributions --samples draws from; null for a model without
  // (uniform, analytical).
  virtual const ProfiledCostModel* measured() const { return nullptr; }
};

struct CostModelInfo {
  std::string_view name;     // --cost-model NAME, e.g. "analytical"
  std::string_view summary;  // one line for --cost-model's help
  std::string_view chosen_by;  // the flag that chooses it without --cost-model; empty: the default
  std::vector<std::string> flags;  // the flags only it reads (the others refuse them)
  std::unique_ptr<CostModelSetup> (*setup)(const CostFlags& flags);  // InputError for bad flags
};

// The profiled model's setup for `config`, a profile the command has in hand with its flags
// (tools/profiled_flags.hpp's profiled_config; validate's: read from --cost or measured now),
// as `profiled` makes it of --cost's file; --cost-hardware and --global-batch-size from
// `flags`. InputError as there.
std::unique_ptr<CostModelSetup> profiled_setup(ProfiledCostConfig config, const CostFlags& flags);

// Every cost model, the default (uniform) first.
const std::vector<CostModelInfo>& cost_models();
// Looks a cost model up by name; InputError with the closest names and the known ones.
const CostModelInfo& find_cost_model(std::string_view name);
// The model a run uses: `name` (--cost-model) when given, else the one its flags choose
// (--cost: profiled, --model: analytical, neither: uniform). InputError when --cost-model
// names another than the flags choose.
const CostModelInfo& chosen_cost_model(const std::string& name, const HardwareOptions& hardware,
                                       const ProfiledOptions& profiled);
// The help of --cost-model: every name with its summary. `otherwise`: what a run without
// --cost-model, --cost and --model uses.
std::string cost_model_help(std::string_view otherwise = "uniform");

}  // namespace pipesim
