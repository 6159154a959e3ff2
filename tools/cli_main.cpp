#include "tools/cli_main.hpp"

#include <csignal>
#include <cstdio>
#include <iostream>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "core/output_file.hpp"
#include "core/suggest.hpp"
#include "executor/cuda_plugin.hpp"
#include "tools/activity.hpp"
#include "tools/cli_checks.hpp"
#include "tools/command_files.hpp"
#include "tools/commands.hpp"
#include "tools/config_file.hpp"
#include "tools/exit_codes.hpp"
#include "tools/mpi_job.hpp"
#include "tools/version.hpp"

namespace pipesim {
namespace {

// Only one process of an MPI job prints: rank 0 (tools/mpi_job.hpp).
int fail(const std::string& line, int code) {
  report_failure(line);
  return code;
}

}  // namespace

void report_failure(const std::string& line) {
  if (!line.empty() && mpi_launch().rank == 0) std::cerr << "pipesim: " << line << std::endl;
}

int run_cli(int argc, const char* const* argv) {
  // A closed pipe or a file-size limit is an error the writes report (EPIPE, EFBIG), not a
  // signal that kills the process half-way; Ctrl-C removes the temporary output files.
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);
  install_output_signal_handlers();
  const CheckedStdout checked_stdout;
  try {
    CLI::App app{"pipesim " PIPESIM_VERSION ": simulate pipeline-parallel training schedules"};
    app.require_subcommand(1);
    app.set_version_flag("--version", version_text, "Print the version and what this build has (CUDA, zlib, ...), and exit");
    app.add_flag_callback(
        "--check-cuda",
        [] {
          check_cuda(std::cout);
          throw CLI::Success();
        },
        "Load the CUDA plugin as --backend cuda would, list the runtime, driver and GPUs, and exit (6: none usable)");
    add_simulate_command(app);
    add_compare_command(app);
    add_schedule_command(app);
    add_check_command(app);
    add_catalog_command(app);
    add_sweep_command(app);
    add_profile_command(app);
    add_run_command(app);
    add_converge_command(app);
    add_validate_command(app);
    add_fit_command(app);
    add_value_checks(app);
    int code = exit_code::kOk;
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      code = app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      code = app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      code = app.exit(e);
    } catch (const CLI::Success& e) {  // --check-cuda, which printed its answer
      code = app.exit(e);
    } catch (const CLI::ParseError& e) {
      // A first word that is no command: CLI11 says only "A subcommand is required".
      if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
        std::vector<std::string> names;
        std::string known;
        for (const CLI::App* sub : app.get_subcommands({})) {
          names.push_back(sub->get_name());
          known += (known.empty() ? "" : ", ") + sub->get_name();
        }
        return fail("error: unknown command " + quote(argv[1]) + " (" + did_you_mean(argv[1], names) + "commands: " +
                        known + "; see pipesim --help)",
                    exit_code::kBadInput);
      }
      // CLI11 quotes the arguments it rejects: escaped like InputError's, one line.
      std::string command;
      for (const CLI::App* sub : app.get_subcommands()) command = sub->get_name() + " ";
      return fail("error: " + bounded_line(cli_error_text(e)) + " (see pipesim " + command + "--help)",
                  exit_code::kBadInput);
    }
    flush_stdout();
    return code;
  } catch (...) {
    const auto [code, line] = failure_of(std::current_exception());
    // Bad input, a failed write or no memory: the run's one line, not tables printed before it
    // (what was already written stays; validate's disagreement keeps its tables).
    if (code == exit_code::kBadInput || code == exit_code::kOutputFailed || code == exit_code::kOutOfMemory)
      discard_stdout();
    return fail(line, code);
  }
}

std::pair<int, std::string> failure_of(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const ExitWith& e) {
    return {e.code(), e.what()};
  } catch (const CudaUnavailable& e) {
    return {exit_code::kNoCuda, std::string("error: ") + e.what()};
  } catch (const InputError& e) {
    return {exit_code::kBadInput, "error: " + with_config_origin(e.what())};
  } catch (const Disagreement& e) {
    return {exit_code::kDisagrees, e.what()};
  } catch (const OutputError& e) {
    return {exit_code::kOutputFailed, std::string("error: ") + e.what()};
  } catch (const CLI::Error& e) {  // from a command's own use of CLI11 (a --config value)
    return {exit_code::kBadInput, "error: " + bounded_line(e.what())};
  } catch (const std::bad_alloc&) {
    const std::string what = Activity::current();
    return {exit_code::kOutOfMemory,
            "error: out of memory" + (what.empty() ? std::string() : " while " + what) +
                ": the run needs more memory than this machine gives it; make it smaller (--max-memory "
                "tells pipesim how much it may use)"};
  } catch (const std::exception& e) {
    return {exit_code::kInternalError,
            "internal error: " + bounded_line(e.what()) + " (a bug in pipesim; please report it with the command)"};
  } catch (...) {
    return {exit_code::kInternalError,
            "internal error: an unknown exception (a bug in pipesim; please report it with the command)"};
  }
}

}  // namespace pipesim
