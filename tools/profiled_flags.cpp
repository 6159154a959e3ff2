#include "tools/profiled_flags.hpp"

#include <utility>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "cost_models/catalog.hpp"

namespace pipesim {

void add_profiled_flags(CLI::App& app, ProfiledOptions& o) {
  app.add_option("--cost", o.cost, "Measured costs: a profile file from `pipesim profile` (with --model, --micro-batch-size)");
  app.add_option("--cost-optimizer", o.optimizer, "With --cost: the optimizer step OptStep takes, adam or sgd")
      ->capture_default_str();
  app.add_option("--cost-fit", o.fit, "With --cost: durations between profiled sizes: auto, line or piecewise")
      ->capture_default_str();
  app.add_option("--cost-hardware", o.hardware,
                 "With --cost: the catalog GPU (name or file) the profile was measured on, to give tokens/s, MFU, memory "
                 "against its capacity and $");
}

ProfiledCostConfig profiled_config(Profile profile, std::string source, const ProfiledOptions& o,
                                   const HardwareOptions& hw) {
  if (o.optimizer != "adam" && o.optimizer != "sgd")
    throw InputError("--cost-optimizer: expected adam or sgd, got " + quote(o.optimizer));
  ProfiledCostConfig c;
  c.profile = std::move(profile);
  c.source = std::move(source);
  if (!hw.model.empty()) c.model = find_model(hw.model);
  c.micro_batch_size = hw.micro_batch_size;
  c.optimizer = o.optimizer;
  c.fit = parse_fit_policy(o.fit, "--cost-fit");
  c.tied_embedding_sync = o.tied_embedding_sync;
  return c;
}

ProfiledCostConfig make_profiled_config(const ProfiledOptions& o, const HardwareOptions& hw) {
  return profiled_config(read_profile_file(o.cost), o.cost, o, hw);
}

}  // namespace pipesim
