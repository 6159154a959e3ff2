#pragma once
// JsonWriter: the minimal streaming JSON output the trace writers share. It writes straight
// to an ostream, never builds a document: integers via std::to_chars (ostream << would
// follow the global locale and could insert digit grouping), strings escaped per RFC 8259,
// times as microseconds with exactly three decimals (format_trace_us), so identical input
// always gives identical bytes.
#include <charconv>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "core/units.hpp"

namespace pipesim {

// "1234.567": ns as microseconds with exactly three decimals, i.e. integer nanoseconds
// without any floating-point rounding (the Chrome trace format's "ts"/"dur" unit).
std::string format_trace_us(Tick ns);

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  JsonWriter& raw(std::string_view text) {
    out_.write(text.data(), static_cast<std::streamsize>(text.size()));
    return *this;
  }
  JsonWriter& integer(std::int64_t value) {
    char buf[24];
    const auto res = std::to_chars(buf, buf + sizeof buf, value);
    return raw(std::string_view(buf, static_cast<std::size_t>(res.ptr - buf)));
  }
  JsonWriter& micros(Tick ns) { return raw(format_trace_us(ns)); }
  JsonWriter& string(std::string_view text) {
    raw("\"");
    std::size_t plain = 0;  // start of the run of characters that need no escaping
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      raw(text.substr(plain, i - plain));
      plain = i + 1;
      switch (c) {
        case '"': raw("\\\""); break;
        case '\\': raw("\\\\"); break;
        case '\n': raw("\\n"); break;
        case '\t': raw("\\t"); break;
        case '\r': raw("\\r"); break;
        default: {
          static constexpr char kHex[] = "0123456789abcdef";
          const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
          raw(std::string_view(esc, 6));
        }
      }
    }
    return raw(text.substr(plain)).raw("\"");
  }
  // ,"key": — every field after an object's first.
  JsonWriter& key(std::string_view name) { return raw(",\"").raw(name).raw("\":"); }

 private:
  std::ostream& out_;
};

}  // namespace pipesim
