#pragma once
// A stream buffer that gzip-compresses (RFC 1952, zlib's deflate) what is written to it
// and passes the compressed bytes to another stream buffer: OutputFile's, for outputs whose
// name ends in ".gz" (core/output_file.hpp), so the temporary file and the rename work as
// for any other output.
//
// The output is a pure function of the input bytes and the zlib version: the gzip header
// has no file name and modification time 0, so reruns are byte-identical.
//
// Errors: every zlib call is checked; the first failure (or a write the downstream buffer
// refused) is kept as a sentence ("zlib: deflateInit2: stream error (compression level
// 42)", "the compressed data could not be written"), and nothing is written after it.
// OutputFile::close() reports it as an OutputError naming the file.
#include <cstddef>
#include <memory>
#include <streambuf>
#include <string>
#include <vector>

namespace pipesim {

class GzipBuffer final : public std::streambuf {
 public:
  // zlib's levels: 1 (fastest) .. 9 (smallest); kDefaultLevel is fast and still shrinks a
  // Chrome trace about 10x (docs/traces.md).
  static constexpr int kDefaultLevel = 1;
  explicit GzipBuffer(std::streambuf& sink, int level = kDefaultLevel);
  ~GzipBuffer() override;
  GzipBuffer(const GzipBuffer&) = delete;
  GzipBuffer& operator=(const GzipBuffer&) = delete;

  // Compresses what is buffered, writes the gzip trailer and flushes the sink. Call once,
  // at the end; false (with error() set) if anything failed, now or before.
  bool finish();
  // Empty until something failed.
  const std::string& error() const { return error_; }
  // Input bytes taken so far (the uncompressed size).
  std::size_t bytes_in() const { return bytes_in_; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;

 private:
  struct Stream;  // zlib's z_stream, kept out of this header
  // Deflates `n` bytes at `data` with `flush` (Z_NO_FLUSH or Z_FINISH) into the sink.
  bool deflate_into_sink(const char* data, std::size_t n, int flush);
  bool drain_input();  // deflates the put area
  bool fail(std::string why);

  std::streambuf& sink_;
  std::unique_ptr<Stream> z_;
  std::vector<char> in_;
  std::vector<char> out_;
  std::string error_;
  std::size_t bytes_in_ = 0;
  bool finished_ = false;
};

}  // namespace pipesim
