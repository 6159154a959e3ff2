#include "tools/command_files.hpp"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "core/error.hpp"
#include "cost_models/catalog.hpp"

namespace pipesim {
namespace {

namespace fs = std::filesystem;

// Whether two paths name the same file: the same inode where both exist, else the same
// absolute path once symbolic links and "..", "." are resolved as far as they exist.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec) && !ec;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return !ec && ca == cb;
}

// Paths that are streams, not files: several outputs may share them (/dev/null).
bool is_special(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  return !ec && fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st);
}

FdBuffer* g_stdout = nullptr;  // CheckedStdout's buffer while one is alive

}  // namespace

CheckedStdout::CheckedStdout() : buffer_(std::make_unique<FdBuffer>(STDOUT_FILENO)) {
  std::cout.flush();
  previous_ = std::cout.rdbuf(buffer_.get());
  g_stdout = buffer_.get();
}

CheckedStdout::~CheckedStdout() {
  std::cout.flush();
  std::cout.rdbuf(previous_);
  std::cout.clear();
  g_stdout = nullptr;
}

void flush_stdout() {
  std::cout.flush();
  int err = g_stdout ? g_stdout->error() : 0;
  if (!g_stdout && (std::fflush(stdout) != 0 || std::ferror(stdout))) err = errno != 0 ? errno : EIO;
  if (err == 0 && !std::cout) err = EIO;
  if (err != 0) throw OutputError(std::string("cannot write to standard output: ") + std::strerror(err));
}

void discard_stdout() {
  if (g_stdout) g_stdout->discard();
}

std::string file_stem(const std::string& name) {
  std::string out = name.substr(0, 100);
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  if (out.empty() || out.find_first_not_of('.') == std::string::npos) out = "_" + out;  // never "." or ".."
  return out;
}

void CommandFiles::check_new(const std::string& flag, const std::string& path, bool is_output) const {
  if (is_special(path)) return;
  for (const auto& [f, p] : outputs_)
    if (same_file(p, path))
      throw InputError(is_output ? flag + " and " + f + " both name " + quote(path, 256) +
                                       ": give each output its own file"
                                 : flag + " " + quote(path, 256) + " is also the output of " + f +
                                       ": the run would overwrite its own input");
  if (!is_output) return;
  for (const auto& [f, p] : inputs_)
    if (same_file(p, path))
      throw InputError(flag + " " + quote(path, 256) + " is also the input of " + f +
                       ": the run would overwrite its own input");
}

void CommandFiles::input(const std::string& flag, const std::string& path) {
  if (path.empty()) return;
  check_new(flag, path, false);
  inputs_.emplace_back(flag, path);
}

void CommandFiles::catalog_input(const std::string& flag, const std::string& name_or_file) {
  input(flag, catalog_file_of(name_or_file));
}

OutputFile* CommandFiles::output(const std::string& flag, const std::string& path) {
  if (path.empty()) return nullptr;
  check_new(flag, path, true);
  files_.push_back(std::make_unique<OutputFile>(path, flag));
  outputs_.emplace_back(flag, path);
  return files_.back().get();
}

void CommandFiles::commit() {
  // Every output complete before standard output is written and before the first one moves:
  // a write that fails here (a full disk, /dev/full) leaves the tables unprinted
  // (discard_stdout) and every file as it was; a closed standard output, the files unmoved.
  for (auto& f : files_) f->close();
  flush_stdout();
  for (auto& f : files_) f->commit();
}

}  // namespace pipesim
