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
};

void add_profiled_flags(CLI::App& app, ProfiledOptions& options);
// Reads and checks the profile. --model names the simulated model (the profile's when
// empty); InputError if --hardware or other GPU flags were given too.
ProfiledCostConfig make_profiled_config(const ProfiledOptions& options, const HardwareOptions& hw);

}  // namespace pipesim
