#pragma once
// The exit codes of `pipesim` (the README's table). Every failure prints one line on stderr.
namespace pipesim::exit_code {

inline constexpr int kOk = 0;
inline constexpr int kDisagrees = 1;       // validate: predicted and measured weight versions differ
inline constexpr int kBadInput = 2;        // flags, files, numbers, paths, schedules (InputError)
inline constexpr int kOutOfMemory = 3;     // the run needed more memory than the machine gave it
inline constexpr int kOutputFailed = 4;    // an output could not be written to the end (OutputError)
inline constexpr int kInternalError = 5;   // a bug in pipesim: anything else that reached main
inline constexpr int kNoCuda = 6;          // --backend cuda (or --check-cuda) cannot run here: CudaUnavailable
                                           // (executor/cuda_plugin.hpp): no plugin, runtime, driver or GPU
// A broken internal invariant (PIPESIM_ASSERT) aborts: 134 (SIGABRT), also a bug.

}  // namespace pipesim::exit_code

#include <stdexcept>
#include <string>

namespace pipesim {

// The answer of a check that ran to the end and disagrees (kDisagrees): its outputs are
// written, and the message says what disagrees.
class Disagreement : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failure that knows its exit code and its whole line ("error: ...", "internal error: ...";
// run_cli prefixes "pipesim: "). An empty line prints nothing: the other ranks of an MPI job
// whose rank 0 reports the failure (tools/mpi_job.hpp).
class ExitWith : public std::runtime_error {
 public:
  ExitWith(const std::string& line, int code) : std::runtime_error(line), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

}  // namespace pipesim
