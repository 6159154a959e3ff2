#pragma once
// An output file written whole or not at all.
//
// The bytes go to a temporary file in the same folder (".NAME.pipesim-XXXXXX"); commit()
// renames it over NAME, atomically. Until then NAME keeps whatever it held: a run that
// fails at any point (a bad input found late, a full disk, a file-size limit, Ctrl-C)
// removes its temporary files and leaves every existing file as it was. Every write, the
// flush and the close are checked; the first failure is an OutputError naming the file.
//
// A path that names something other than a regular file (/dev/null, /dev/stdout, a pipe)
// is written directly: there is nothing there to lose.
//
// A path ending in ".gz" (any case) is written gzip-compressed (core/gzip_buffer.hpp):
// stream() takes the plain bytes, the file gets their gzip form, with the same temporary
// file, rename and checks; a zlib failure is an OutputError too.
#include <memory>
#include <ostream>
#include <string>

namespace pipesim {

class OutputFile {
 public:
  // Creates the temporary file. InputError (before any work is done) when the folder does
  // not exist or cannot be written, or `path` is a directory or empty; `flag` names the
  // option in messages ("--trace").
  OutputFile(std::string path, std::string flag);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream();
  // Flushes and closes the temporary file: OutputError if any byte did not reach it.
  void close();
  // close(), then moves the temporary file over the path (OutputError if that fails).
  void commit();

  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::string path_;
  std::string flag_;
  std::unique_ptr<Impl> impl_;
};

// Creates the folder `dir` for a run's outputs (and its parents) if it is not there: InputError
// naming `flag` and why not ("'t' is a file, not a folder", a dangling symbolic link's target).
void create_output_folder(const std::string& flag, const std::string& dir);

// Removes the temporary files of every OutputFile still open, then re-raises the signal:
// installed for SIGINT, SIGTERM and SIGHUP by install_output_signal_handlers().
void install_output_signal_handlers();

}  // namespace pipesim
