#pragma once
// gunzip for the tests: the bytes a gzip file holds, decompressed by zlib itself (inflate,
// independent of pipesim's writer). Fails the test on a corrupt or truncated stream.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace pipesim::testing_gzip {

inline std::string gunzip(const std::string& compressed) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);  // gzip header and trailer expected
  std::string out;
  char buf[1 << 14];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z.avail_in = static_cast<uInt>(compressed.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_in > 0) rc = Z_OK;  // output space only
  }
  EXPECT_EQ(rc, Z_STREAM_END) << "not a complete gzip stream";
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the gzip stream";
  inflateEnd(&z);
  return out;
}

}  // namespace pipesim::testing_gzip
