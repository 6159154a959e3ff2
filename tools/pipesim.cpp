// pipesim: the command-line front end. Thin: each subcommand lives in tools/cmd_*.cpp, and
// the whole command line is run_cli (tools/cli_main.hpp). Exit codes: tools/exit_codes.hpp.
#include "tools/cli_main.hpp"

int main(int argc, char** argv) { return pipesim::run_cli(argc, argv); }
