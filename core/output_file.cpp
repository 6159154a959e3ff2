#include "core/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "core/fd_buffer.hpp"
#include "core/gzip_buffer.hpp"

namespace pipesim {
namespace {

// ---- temporary files to remove on a signal ----------------------------------------------
// A fixed table of heap strings, so that the handler only loads pointers and calls unlink
// (both async-signal-safe). A run with more open outputs than slots still works; the rest
// are just not removed on Ctrl-C.
std::array<std::atomic<char*>, 1024> g_temps{};

int register_temp(const std::string& path) {
  char* copy = strdup(path.c_str());
  if (!copy) return -1;
  for (std::size_t i = 0; i < g_temps.size(); ++i) {
    char* expected = nullptr;
    if (g_temps[i].compare_exchange_strong(expected, copy)) return static_cast<int>(i);
  }
  std::free(copy);
  return -1;
}

void unregister_temp(int slot) {
  if (slot < 0) return;
  std::free(g_temps[static_cast<std::size_t>(slot)].exchange(nullptr));
}

extern "C" void remove_temps_and_reraise(int sig) {
  for (auto& t : g_temps)
    if (char* p = t.load()) ::unlink(p);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

mode_t default_mode() {
  static const mode_t mode = [] {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return static_cast<mode_t>(0666 & ~mask);
  }();
  return mode;
}

// Paths that name a stream of this process, not a file to replace.
bool names_a_stream(const std::string& path) {
  return path == "/dev/stdout" || path == "/dev/stderr" || path.rfind("/dev/fd/", 0) == 0 ||
         path.rfind("/proc/self/fd/", 0) == 0;
}

// "t.json.gz", "T.JSON.GZ": written gzip-compressed.
bool names_gzip(const std::string& path) {
  if (path.size() < 3) return false;
  std::string end = path.substr(path.size() - 3);
  for (char& c : end) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return end == ".gz";
}

}  // namespace

struct OutputFile::Impl {
  int fd = -1;
  std::string temp;    // empty: written directly (a device, a pipe, a stream)
  std::string target;  // where commit() renames to (symbolic links resolved)
  int slot = -1;
  bool closed = false;
  bool committed = false;
  std::unique_ptr<FdBuffer> buffer;
  std::unique_ptr<GzipBuffer> gzip;  // between os and buffer when the name ends in ".gz"
  std::unique_ptr<std::ostream> os;
};

OutputFile::OutputFile(std::string path, std::string flag)
    : path_(std::move(path)), flag_(std::move(flag)), impl_(std::make_unique<Impl>()) {
  const std::string name = quote(path_, 256);
  const std::string prefix = flag_.empty() ? "" : flag_ + ": ";
  if (path_.empty()) throw InputError(prefix + "the file name is empty");
  Impl& im = *impl_;
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw InputError(prefix + "cannot write " + name + ": it is a directory");
  if ((exists && !S_ISREG(st.st_mode)) || names_a_stream(path_)) {
    // O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO) instead of waiting.
    im.fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (im.fd < 0) {
      const int err = errno;
      throw InputError(prefix + "cannot write " + name + ": " +
                       (err == ENXIO ? std::string("a FIFO that no process reads") : std::strerror(err)));
    }
    ::fcntl(im.fd, F_SETFL, ::fcntl(im.fd, F_GETFL) & ~O_NONBLOCK);
  } else {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path target = fs::path(path_);
    if (exists) {  // through symbolic links: replace the file, not the link
      const fs::path real = fs::canonical(target, ec);
      if (!ec) target = real;
    } else {  // a dangling link: create what it names, not a file in its place
      for (int hops = 0; fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
        if (hops == 40) throw InputError(prefix + "cannot write " + name + ": too many levels of symbolic links");
        const fs::path next = fs::read_symlink(target, ec);
        if (ec) break;
        target = next.is_absolute() ? next : target.parent_path() / next;
      }
    }
    if (!target.has_filename()) throw InputError(prefix + "cannot write " + name + ": it names a folder, not a file");
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string base = target.filename().string().substr(0, 100);
    std::string temp = (dir / ("." + base + ".pipesim-XXXXXX")).string();
    im.fd = ::mkstemp(temp.data());
    if (im.fd < 0) {
      const int err = errno;
      std::error_code dir_ec;
      const bool folder = fs::is_directory(dir, dir_ec);
      if ((err == ENOENT || err == ENOTDIR) && !folder)
        throw InputError(prefix + "cannot write " + name + ": the folder " + quote(dir.string(), 256) +
                         " does not exist");
      // A folder that takes no new files (/proc, /sys: ENOENT there too).
      throw InputError(prefix + "cannot write " + name + ": cannot create a file in the folder " +
                       quote(dir.string(), 256) + " (" + std::strerror(err) + ")");
    }
    ::fcntl(im.fd, F_SETFD, FD_CLOEXEC);
    im.temp = temp;
    im.target = target.string();
    im.slot = register_temp(temp);
    if (exists) {  // the new file keeps the old one's permissions (and owner, where allowed)
      ::fchmod(im.fd, st.st_mode & 07777);
      if (::geteuid() == 0) (void)!::fchown(im.fd, st.st_uid, st.st_gid);
    } else {
      ::fchmod(im.fd, default_mode());
    }
  }
  im.buffer = std::make_unique<FdBuffer>(im.fd);
  if (names_gzip(path_)) im.gzip = std::make_unique<GzipBuffer>(*im.buffer);
  im.os = std::make_unique<std::ostream>(im.gzip ? static_cast<std::streambuf*>(im.gzip.get()) : im.buffer.get());
}

void create_output_folder(const std::string& flag, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string prefix = flag + ": cannot create " + quote(dir, 256) + ": ";
  const fs::file_status st = fs::status(dir, ec);  // through links
  if (!fs::exists(st) && fs::is_symlink(fs::symlink_status(dir, ec)))
    throw InputError(prefix + "a symbolic link to " + quote(fs::read_symlink(dir, ec).string(), 256) +
                     ", which does not exist");
  if (fs::exists(st) && !fs::is_directory(st)) throw InputError(prefix + "it exists and is not a folder");
  fs::create_directories(dir, ec);
  if (ec) throw InputError(prefix + ec.message());
}

OutputFile::~OutputFile() {
  if (!impl_) return;
  Impl& im = *impl_;
  if (im.fd >= 0) ::close(im.fd);
  if (!im.committed && !im.temp.empty()) ::unlink(im.temp.c_str());
  unregister_temp(im.slot);
}

std::ostream& OutputFile::stream() {
  PIPESIM_ASSERT(!impl_->closed);
  return *impl_->os;
}

void OutputFile::close() {
  Impl& im = *impl_;
  if (im.closed) return;
  im.closed = true;
  im.os->flush();
  // The compressor's own failure, unless the file's (which it would only echo) comes first.
  std::string gzip_error;
  if (im.gzip && !im.gzip->finish()) gzip_error = im.gzip->error();
  int err = im.buffer->error();
  if (err == 0 && gzip_error.empty() && !*im.os) err = EIO;
  const int fd = im.fd;
  im.fd = -1;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0 || !gzip_error.empty())
    throw OutputError((flag_.empty() ? "" : flag_ + ": ") + "cannot write " + quote(path_, 256) + ": " +
                      (err != 0 ? std::string(std::strerror(err)) : gzip_error) +
                      (im.temp.empty() ? "" : " (the file was left as it was)"));
}

void OutputFile::commit() {
  close();
  Impl& im = *impl_;
  if (im.committed) return;
  if (!im.temp.empty() && ::rename(im.temp.c_str(), im.target.c_str()) != 0)
    throw OutputError((flag_.empty() ? "" : flag_ + ": ") + "cannot replace " + quote(path_, 256) + ": " +
                      std::strerror(errno));
  im.committed = true;
  unregister_temp(im.slot);
  im.slot = -1;
}

void install_output_signal_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_temps_and_reraise);
}

}  // namespace pipesim
