// pipesim: the command-line front end. Thin: each subcommand lives in tools/cmd_*.cpp.
// Exit codes: 0 success, 2 bad input (flags, files, numbers, invalid schedules).
#include <CLI/CLI.hpp>
#include <iostream>

#include "schedules/error.hpp"
#include "tools/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"pipesim " PIPESIM_VERSION ": simulate pipeline-parallel training schedules"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "pipesim " PIPESIM_VERSION);
  pipesim::add_simulate_command(app);
  pipesim::add_compare_command(app);
  pipesim::add_schedule_command(app);
  pipesim::add_check_command(app);
  pipesim::add_catalog_command(app);
  pipesim::add_sweep_command(app);
  pipesim::add_profile_command(app);
  pipesim::add_run_command(app);
  pipesim::add_validate_command(app);
  pipesim::add_fit_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 quotes the arguments it rejects: escape them like InputError does, one line.
    std::cerr << "pipesim: error: " << pipesim::one_line(e.what()) << " (see pipesim --help)\n";
    return 2;
  } catch (const pipesim::InputError& e) {
    std::cerr << "pipesim: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
