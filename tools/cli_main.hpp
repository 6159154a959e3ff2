#pragma once
// The whole `pipesim` command line as a function: tools/pipesim.cpp's main, and the fuzz
// target that runs every subcommand in-process. Returns the exit code (tools/exit_codes.hpp);
// nothing escapes it: every failure is one line on stderr.
#include <exception>
#include <string>
#include <utility>

namespace pipesim {

int run_cli(int argc, const char* const* argv);

// The exit code and line (without "pipesim: ") run_cli reports for an exception that ended a
// command: one rule for the whole CLI, and for the ranks of an MPI job (tools/mpi_job.hpp).
std::pair<int, std::string> failure_of(std::exception_ptr error);

// Writes that line as run_cli does ("pipesim: LINE" on stderr, flushed), on rank 0 only.
void report_failure(const std::string& line);

}  // namespace pipesim
