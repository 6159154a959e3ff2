#include "core/fd_buffer.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pipesim {

FdBuffer::FdBuffer(int fd, std::size_t capacity) : fd_(fd), buffer_(capacity) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

bool FdBuffer::flush_all() { return drain(pbase(), static_cast<std::size_t>(pptr() - pbase())); }

FdBuffer::int_type FdBuffer::overflow(int_type c) {
  if (!flush_all()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize FdBuffer::xsputn(const char* s, std::streamsize n) {
  if (n < static_cast<std::streamsize>(epptr() - pptr())) {
    std::memcpy(pptr(), s, static_cast<std::size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }
  if (!flush_all() || !drain(s, static_cast<std::size_t>(n))) return 0;
  return n;
}

int FdBuffer::sync() { return flush_all() ? 0 : -1; }

void FdBuffer::discard() { setp(buffer_.data(), buffer_.data() + buffer_.size()); }

bool FdBuffer::drain(const char* data, std::size_t n) {
  if (error_ != 0) return false;
  while (n > 0) {
    const ssize_t w = ::write(fd_, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      return false;
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return true;
}

}  // namespace pipesim
