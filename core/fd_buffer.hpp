#pragma once
// A stream buffer that writes to a file descriptor and remembers the first error (errno):
// OutputFile's, and standard output's while the CLI runs, so that a full disk or a closed
// pipe is reported with its reason ("No space left on device", "Broken pipe").
#include <streambuf>
#include <vector>

namespace pipesim {

class FdBuffer final : public std::streambuf {
 public:
  explicit FdBuffer(int fd, std::size_t capacity = 1 << 16);
  int error() const { return error_; }  // 0 until a write failed
  bool flush_all();                     // false once a write failed
  void discard();                       // drops what is buffered and not yet written

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  bool drain(const char* data, std::size_t n);  // writes it all, or records the error

  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

}  // namespace pipesim
