#pragma once
// The subcommands of the `pipesim` CLI; each adds itself to the app.
#include "tools/cli_app.hpp"

namespace pipesim {

void add_simulate_command(CLI::App& app);  // tools/cmd_simulate.cpp
void add_compare_command(CLI::App& app);   // tools/cmd_simulate.cpp
void add_schedule_command(CLI::App& app);  // tools/cmd_schedule.cpp
void add_check_command(CLI::App& app);     // tools/cmd_schedule.cpp
void add_catalog_command(CLI::App& app);   // tools/cmd_catalog.cpp
void add_sweep_command(CLI::App& app);     // tools/cmd_sweep.cpp
void add_profile_command(CLI::App& app);   // tools/cmd_profile.cpp
void add_run_command(CLI::App& app);       // tools/cmd_run.cpp
void add_converge_command(CLI::App& app);  // tools/cmd_converge.cpp
void add_validate_command(CLI::App& app);  // tools/cmd_validate.cpp
void add_fit_command(CLI::App& app);       // tools/cmd_fit.cpp

}  // namespace pipesim
