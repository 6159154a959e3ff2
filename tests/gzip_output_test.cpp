// Gzip-compressed outputs (core/gzip_buffer.hpp, core/output_file.hpp): what is written
// decompresses (with zlib's own inflate) to exactly the bytes written, the header is
// deterministic, every failure is reported, and a ".gz" output keeps OutputFile's
// temporary-file-and-rename guarantee.
#include "core/gzip_buffer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "core/output_file.hpp"
#include "tests/gunzip.hpp"

namespace pipesim {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing_gzip::gunzip;

// Bytes that compress a little, like a trace: repeated structure with changing numbers.
std::string sample(std::size_t n) {
  std::string s;
  std::uint64_t x = 12345;
  while (s.size() < n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    s += "{\"name\":\"F" + std::to_string(x >> 52) + "\",\"ts\":" + std::to_string(x >> 40) + "},\n";
  }
  s.resize(n);
  return s;
}

std::string compress(const std::string& plain, int level = GzipBuffer::kDefaultLevel) {
  std::stringbuf sink;
  GzipBuffer gz(sink, level);
  std::ostream out(&gz);
  out << plain;
  EXPECT_TRUE(gz.finish()) << gz.error();
  EXPECT_EQ(gz.bytes_in(), plain.size());
  return sink.str();
}

TEST(GzipBuffer, DecompressesToExactlyTheBytesWritten) {
  for (std::size_t n : {0, 1, 100, 65535, 65536, 65537, 3 << 20}) {
    const std::string plain = sample(n);
    const std::string packed = compress(plain);
    EXPECT_EQ(gunzip(packed), plain) << n << " bytes";
    if (n >= 65536) {
      EXPECT_LT(packed.size(), plain.size() / 2) << n;
    }
  }
  // Many small writes and one large block (past the buffer, straight to deflate) alike.
  const std::string plain = sample(1 << 20);
  std::stringbuf sink;
  GzipBuffer gz(sink);
  std::ostream out(&gz);
  for (std::size_t i = 0; i < 1000; ++i) out.put(plain[i]);
  out.write(plain.data() + 1000, static_cast<std::streamsize>(plain.size() - 1000));
  ASSERT_TRUE(gz.finish()) << gz.error();
  EXPECT_EQ(gunzip(sink.str()), plain);
}

TEST(GzipBuffer, DeterministicHeader) {
  const std::string plain = sample(100000);
  const std::string a = compress(plain);
  EXPECT_EQ(a, compress(plain));
  ASSERT_GE(a.size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>(a[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(a[1]), 0x8b);
  EXPECT_EQ(a[3], 0) << "no file name or other optional fields";
  EXPECT_EQ(a.substr(4, 4), std::string(4, '\0')) << "modification time 0";
}

TEST(GzipBuffer, ReportsZlibFailures) {
  std::stringbuf sink;
  GzipBuffer gz(sink, 42);  // not a compression level
  std::ostream out(&gz);
  out << "data";
  out.flush();
  EXPECT_FALSE(out.good());
  EXPECT_FALSE(gz.finish());
  EXPECT_EQ(gz.error(), "zlib: deflateInit2: stream error (compression level 42)");
  EXPECT_EQ(sink.str(), "");
}

// A sink that takes `room` bytes, then refuses.
class FullSink final : public std::streambuf {
 public:
  explicit FullSink(std::size_t room) : room_(room) {}

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    if (static_cast<std::size_t>(n) > room_) return 0;
    room_ -= static_cast<std::size_t>(n);
    return n;
  }
  int_type overflow(int_type) override { return traits_type::eof(); }

 private:
  std::size_t room_;
};

TEST(GzipBuffer, ReportsASinkThatRefusesBytes) {
  FullSink sink(100);
  GzipBuffer gz(sink);
  std::ostream out(&gz);
  out << sample(1 << 20);
  EXPECT_FALSE(gz.finish());
  EXPECT_EQ(gz.error(), "the compressed data could not be written");
  // Also when only the last block (the trailer) does not fit.
  FullSink tight(0);
  GzipBuffer small(tight);
  std::ostream(&small) << "x";
  EXPECT_FALSE(small.finish());
  EXPECT_EQ(small.error(), "the compressed data could not be written");
}

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "pipesim_gzip_test_XXXXXX").string();
    dir_ = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::size_t entries() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
    return n;
  }

 private:
  std::string dir_;
};

TEST(GzipOutputFile, WritesGzipForGzNamesWithTheRenameGuarantee) {
  const TempDir dir;
  const std::string path = dir.path("t.json.gz");
  std::ofstream(path) << "old";
  const std::string plain = sample(500000);
  {
    OutputFile file(path, "--trace");
    file.stream() << plain;
    file.close();
    EXPECT_EQ(TempDir::read(path), "old") << "replaced before commit";
    EXPECT_EQ(dir.entries(), 2u) << "the temporary file sits beside it";
  }  // not committed: the temporary file goes, the old file stays
  EXPECT_EQ(TempDir::read(path), "old");
  EXPECT_EQ(dir.entries(), 1u);
  {
    OutputFile file(path, "--trace");
    file.stream() << plain;
    file.commit();
  }
  EXPECT_EQ(gunzip(TempDir::read(path)), plain);
  EXPECT_EQ(dir.entries(), 1u);
  // Upper case too; any other name is written as it is.
  for (const char* name : {"T.JSON.GZ", "t.json", "t.gzip"}) {
    OutputFile file(dir.path(name), "--trace");
    file.stream() << "plain text";
    file.commit();
    const std::string bytes = TempDir::read(dir.path(name));
    EXPECT_EQ(std::string(name) == "T.JSON.GZ" ? gunzip(bytes) : bytes, "plain text") << name;
  }
}

TEST(GzipOutputFile, AWriteFailureNamesTheFileAndTheReason) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  // /dev/full is written directly (not a regular file): every write fails with ENOSPC.
  const TempDir dir;
  const std::string link = dir.path("full.gz");
  fs::create_symlink("/dev/full", link);
  OutputFile file(link, "--trace");
  file.stream() << sample(1 << 20);
  try {
    file.close();
    FAIL() << "no error";
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()), "--trace: cannot write '" + link + "': No space left on device");
  }
}

}  // namespace
}  // namespace pipesim
