#pragma once
// The whole `pipesim` command line as a function: tools/pipesim.cpp's main, and the fuzz
// target that runs every subcommand in-process. Returns the exit code (tools/exit_codes.hpp);
// nothing escapes it: every failure is one line on stderr.
namespace pipesim {

int run_cli(int argc, const char* const* argv);

}  // namespace pipesim
