#pragma once
// Reading a file the user named: regular files only, each kind with a size limit.
//
// A directory, FIFO, socket or device gets one line instead of a blocking open or an
// unbounded read (the file is opened non-blocking and checked with fstat before a byte is
// read); a file over its kind's limit is refused before it is read. The limits are in
// docs/reliability.md.
#include <cstdint>
#include <string>
#include <string_view>

namespace pipesim {

// What the file is, for messages ("schedule file"), and the most bytes it may have.
struct InputKind {
  std::string_view what;
  std::uint64_t max_bytes;
};

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
inline constexpr InputKind kScheduleFileInput{"schedule file", 1024 * kMiB};  // ~2e8 ops of CSV
inline constexpr InputKind kConfigFileInput{"config file", 1 * kMiB};
inline constexpr InputKind kCatalogFileInput{"catalog file", 16 * kMiB};
inline constexpr InputKind kProfileFileInput{"profile", 64 * kMiB};
inline constexpr InputKind kRunsFileInput{"runs file", 16 * kMiB};  // pipesim fit --measurements

// The whole file. InputError naming the file for a missing or unreadable file, a file that
// is not a regular file, and a file larger than kind.max_bytes.
std::string read_input_file(const std::string& path, const InputKind& kind);

// "2.5 GiB": a byte count for messages (core cannot use cost_models' formatter).
std::string byte_count_text(std::uint64_t bytes);

}  // namespace pipesim
