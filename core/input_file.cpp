#include "core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"

namespace pipesim {
namespace {

std::string what_it_is(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string byte_count_text(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string read_input_file(const std::string& path, const InputKind& kind) {
  const std::string what(kind.what);
  if (path.empty()) throw InputError(what + ": the file name is empty");
  const std::string name = quote(path, 256);
  const auto not_regular = [&](mode_t mode) {
    return InputError("cannot read " + what + " " + name + ": " + what_it_is(mode) +
                      ", not a regular file (pipesim reads " + what + "s from regular files only)");
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) throw not_regular(st.st_mode);  // a socket cannot be opened
  // O_NONBLOCK: opening a FIFO with no writer must not wait (regular files ignore it).
  const Fd file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (file.fd < 0) throw InputError("cannot read " + what + " " + name + ": " + std::strerror(errno));
  if (::fstat(file.fd, &st) != 0) throw InputError("cannot read " + what + " " + name + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw not_regular(st.st_mode);  // replaced since the stat above
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const auto too_large = [&](std::uint64_t bytes) {
    return InputError(what + " " + name + " has " + std::to_string(bytes) + " bytes, more than the " +
                      byte_count_text(kind.max_bytes) + " (" + std::to_string(kind.max_bytes) + " bytes) a " + what +
                      " may have");
  };
  if (size > kind.max_bytes) throw too_large(size);
  std::string text;
  text.resize(static_cast<std::size_t>(size));
  std::size_t have = 0;
  for (;;) {
    if (have == text.size()) {  // the file may have grown since fstat: read on, up to the limit
      if (text.size() > kind.max_bytes) throw too_large(text.size());
      text.resize(text.size() + 65536);
    }
    const ssize_t n = ::read(file.fd, text.data() + have, text.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError("cannot read " + what + " " + name + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  if (have > kind.max_bytes) throw too_large(have);
  text.resize(have);
  return text;
}

}  // namespace pipesim
