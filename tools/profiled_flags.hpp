#pragma once
// --cost profile.json: the profiled cost model of a measured profile
// (cost_models/profiled.hpp, `pipesim profile`), with --model and --micro-batch-size from
// HardwareOptions.
#include <string>

#include "cost_models/profiled.hpp"
#include "tools/cli_app.hpp"
#include "tools/hardware_flags.hpp"

namespace pipesim {

struct ProfiledOptions {
  std::string cost;               // the profile file; empty: not this mode
  std::string optimizer = "adam"; // the optimizer step OptStep takes: adam or sgd
  std::string fit = "auto";       // durations between profiled sizes: auto, line or piecewise
  std::string hardware;           // the catalog GPU (name or file) it was measured on; empty: not priced
  // No flag: false where the run predicted is pipesim's executor (validate), which gives the
  // last stage its own head matrix, so no gradient is exchanged between the first and last.
  bool tied_embedding_sync = true;
};

void add_profiled_flags(CLI::App& app, ProfiledOptions& options);
// The profiled model's configuration: `profile`, read from `source` (a file, or "profiled
// now"), with --model (the simulated model; the profile's when empty), --micro-batch-size,
// --cost-optimizer and --cost-fit. The one place a profile and flags make it; InputError for
// a bad flag.
ProfiledCostConfig profiled_config(Profile profile, std::string source, const ProfiledOptions& options,
                                   const HardwareOptions& hw);
// profiled_config of --cost's file, read and checked.
ProfiledCostConfig make_profiled_config(const ProfiledOptions& options, const HardwareOptions& hw);

}  // namespace pipesim
