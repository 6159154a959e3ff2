#include "core/gzip_buffer.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace pipesim {
namespace {

constexpr std::size_t kBufferBytes = 1 << 16;
constexpr int kGzipWindowBits = 15 + 16;  // the largest window, with a gzip header and trailer
constexpr int kMemLevel = 8;              // zlib's default

std::string zlib_error(const char* call, int code, const z_stream& z) {
  std::string text = std::string("zlib: ") + call + ": " + zError(code);
  if (z.msg != nullptr) text += std::string(" (") + z.msg + ")";
  return text;
}

}  // namespace

struct GzipBuffer::Stream {
  z_stream z{};
  bool open = false;
};

GzipBuffer::GzipBuffer(std::streambuf& sink, int level)
    : sink_(sink), z_(std::make_unique<Stream>()), in_(kBufferBytes), out_(kBufferBytes) {
  setp(in_.data(), in_.data() + in_.size());
  const int rc = deflateInit2(&z_->z, level, Z_DEFLATED, kGzipWindowBits, kMemLevel, Z_DEFAULT_STRATEGY);
  if (rc != Z_OK) {
    fail(zlib_error("deflateInit2", rc, z_->z) + " (compression level " + std::to_string(level) + ")");
    return;
  }
  z_->open = true;
}

GzipBuffer::~GzipBuffer() {
  if (z_->open) deflateEnd(&z_->z);  // a buffer never finished (the run failed): nothing to report
}

bool GzipBuffer::fail(std::string why) {
  if (error_.empty()) error_ = std::move(why);
  setp(nullptr, nullptr);  // every later write goes to overflow/xsputn, which refuse it
  return false;
}

bool GzipBuffer::deflate_into_sink(const char* data, std::size_t n, int flush) {
  if (!error_.empty()) return false;
  z_stream& z = z_->z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  for (;;) {
    // avail_in is 32 bits: a larger block goes in pieces.
    const std::size_t piece = std::min<std::size_t>(n, std::numeric_limits<uInt>::max());
    z.avail_in = static_cast<uInt>(piece);
    const bool last = piece == n;
    const int mode = last ? flush : Z_NO_FLUSH;
    int rc = Z_OK;
    do {
      z.next_out = reinterpret_cast<Bytef*>(out_.data());
      z.avail_out = static_cast<uInt>(out_.size());
      rc = deflate(&z, mode);
      // Z_BUF_ERROR only says that this call could not progress: not an error while
      // output space was given and input is used up; anything else is.
      if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && z.avail_in == 0 && mode == Z_NO_FLUSH))
        return fail(zlib_error("deflate", rc, z));
      const auto have = static_cast<std::streamsize>(out_.size() - z.avail_out);
      if (have > 0 && sink_.sputn(out_.data(), have) != have) return fail("the compressed data could not be written");
    } while (z.avail_out == 0 || (mode == Z_FINISH && rc != Z_STREAM_END));
    n -= piece;
    if (last) return true;
  }
}

bool GzipBuffer::drain_input() {
  const auto n = static_cast<std::size_t>(pptr() - pbase());
  bytes_in_ += n;
  if (!deflate_into_sink(pbase(), n, Z_NO_FLUSH)) return false;
  setp(in_.data(), in_.data() + in_.size());
  return true;
}

GzipBuffer::int_type GzipBuffer::overflow(int_type c) {
  if (finished_ || !error_.empty() || !drain_input()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize GzipBuffer::xsputn(const char* s, std::streamsize n) {
  if (finished_ || !error_.empty()) return 0;
  if (n < epptr() - pptr()) {
    std::memcpy(pptr(), s, static_cast<std::size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }
  // A large block goes straight to deflate, without the copy.
  if (!drain_input() || !deflate_into_sink(s, static_cast<std::size_t>(n), Z_NO_FLUSH)) return 0;
  bytes_in_ += static_cast<std::size_t>(n);
  return n;
}

bool GzipBuffer::finish() {
  if (finished_) return error_.empty();
  finished_ = true;
  if (!error_.empty()) return false;
  const auto n = static_cast<std::size_t>(pptr() - pbase());
  bytes_in_ += n;
  if (!deflate_into_sink(pbase(), n, Z_FINISH)) return false;
  setp(nullptr, nullptr);
  z_->open = false;
  if (const int rc = deflateEnd(&z_->z); rc != Z_OK) return fail(zlib_error("deflateEnd", rc, z_->z));
  if (sink_.pubsync() != 0) return fail("the compressed data could not be written");
  return true;
}

}  // namespace pipesim
