#pragma once
// Physical quantities with units: integer nanosecond ticks, bytes, bytes per second.
// Parsers accept what people type ("1ms", "2.5 us", "64MiB", "1.5GB", "50GB/s", "400Gb/s")
// and throw InputError naming `what` (a flag or JSON path) and the accepted forms.
// Formatters produce what people read ("1.250 ms", "64.0 MiB").
#include <cstdint>
#include <string>
#include <string_view>

namespace pipesim {

using Tick = std::int64_t;  // simulated time, nanoseconds

inline constexpr Tick kNsPerUs = 1'000;
inline constexpr Tick kNsPerMs = 1'000'000;
inline constexpr Tick kNsPerS = 1'000'000'000;

// Durations: ns, us, ms, s (a bare number is rejected: units are required). Non-negative.
Tick parse_duration(std::string_view text, std::string_view what);
// Sizes: B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024). Non-negative.
std::int64_t parse_bytes(std::string_view text, std::string_view what);
// Bandwidth in bytes per second: a size per second ("50GB/s", "25GiB/s") or bits ("400Gb/s",
// "100Gbit/s"). Strictly positive.
double parse_bandwidth(std::string_view text, std::string_view what);
// Compute rate in FLOP/s: "989.4TFLOP/s", "2.25 PFLOP/s", "19.5TFLOPS" (SI prefixes K M G T P E,
// powers of 1000). Strictly positive.
double parse_flops(std::string_view text, std::string_view what);

std::string format_duration(Tick ns);     // picks ns/us/ms/s, 3 decimals
std::string format_duration_seconds(double s);  // format_duration of the nearest ns
std::string format_bytes(double bytes);   // picks B/KiB/MiB/GiB/TiB, 1 decimal
double ticks_to_seconds(Tick ns);

}  // namespace pipesim
