#pragma once
// The files one run of a subcommand reads and writes, checked before any work starts:
// every output's folder exists and is writable, no two outputs name the same file, and no
// output names one of the run's inputs (`--config a.json --save-config a.json` would
// overwrite its own input). Each output is an OutputFile (core/output_file.hpp): written to
// a temporary file, and renamed into place together with the others by commit(), when the
// whole run has succeeded. A run that throws before commit() leaves every file as it was.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/fd_buffer.hpp"
#include "core/output_file.hpp"

namespace pipesim {

class CommandFiles {
 public:
  // An input file (nothing happens when `path` is empty).
  void input(const std::string& flag, const std::string& path);
  // --model / --hardware / --intra-link values: an input only when they name a catalog file.
  void catalog_input(const std::string& flag, const std::string& name_or_file);
  // Declares and opens an output (nullptr when `path` is empty). InputError when the path
  // cannot be written or is already an input or output of this run.
  OutputFile* output(const std::string& flag, const std::string& path);
  // Writes standard output through (OutputError if it cannot be written: a full disk, a
  // closed pipe), then moves every output into place.
  void commit();

 private:
  void check_new(const std::string& flag, const std::string& path, bool is_output) const;
  std::vector<std::pair<std::string, std::string>> inputs_;   // flag, path
  std::vector<std::pair<std::string, std::string>> outputs_;  // flag, path
  std::vector<std::unique_ptr<OutputFile>> files_;
};

// While one is alive (run_cli's whole run), std::cout writes through a buffer that keeps the
// first write error with its reason, which flush_stdout() reports.
class CheckedStdout {
 public:
  CheckedStdout();
  ~CheckedStdout();
  CheckedStdout(const CheckedStdout&) = delete;
  CheckedStdout& operator=(const CheckedStdout&) = delete;

 private:
  std::unique_ptr<FdBuffer> buffer_;
  std::streambuf* previous_;
};

// Flushes standard output: OutputError naming the reason when it cannot be written.
void flush_stdout();
// Drops what standard output holds and has not written yet (a run that fails says one line).
void discard_stdout();

// `name` as part of a file name inside an output folder: characters other than letters,
// digits, '.', '-' and '_' become '_' ("my.json:gpu" -> "my.json_gpu"), so that a name can
// never reach outside the folder.
std::string file_stem(const std::string& name);

}  // namespace pipesim
