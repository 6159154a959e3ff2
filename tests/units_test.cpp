// cost_models/units: parsing what people type, formatting what people read.
#include "input_error.hpp"
#include "core/units.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;

TEST(ParseDuration, EachUnit) {
  EXPECT_EQ(parse_duration("7ns", "--x"), 7);
  EXPECT_EQ(parse_duration("250us", "--x"), 250'000);
  EXPECT_EQ(parse_duration("250\xC2\xB5s", "--x"), 250'000);  // µs
  EXPECT_EQ(parse_duration("1ms", "--x"), kNsPerMs);
  EXPECT_EQ(parse_duration("3s", "--x"), 3 * kNsPerS);
  EXPECT_EQ(parse_duration("0ms", "--x"), 0);
}

TEST(ParseDuration, DecimalsAndSpaces) {
  EXPECT_EQ(parse_duration("2.5 us", "--x"), 2'500);
  EXPECT_EQ(parse_duration("  2.5us\t", "--x"), 2'500);
  EXPECT_EQ(parse_duration("0.1s", "--x"), 100'000'000);  // exact, no binary rounding
  EXPECT_EQ(parse_duration(".5ms", "--x"), 500'000);
  EXPECT_EQ(parse_duration("1.0000000005s", "--x"), 1'000'000'001);  // rounds half up to 1 ns
  EXPECT_EQ(parse_duration("1.25ns", "--x"), 1);
  EXPECT_EQ(parse_duration("+4ms", "--x"), 4 * kNsPerMs);
}

TEST(ParseDuration, LimitsOfInt64) {
  EXPECT_EQ(parse_duration("9223372036854775807ns", "--x"), std::numeric_limits<Tick>::max());
  EXPECT_THAT(error_of([] { parse_duration("9223372036854775808ns", "--x"); }), HasSubstr("too large"));
  EXPECT_THAT(error_of([] { parse_duration("9300000000s", "--x"); }), HasSubstr("too large"));
  EXPECT_THAT(error_of([] { parse_duration("99999999999999999999999999999s", "--x"); }), HasSubstr("too large"));
}

TEST(ParseDuration, Rejects) {
  EXPECT_EQ(error_of([] { parse_duration("abc", "--fwd"); }),
            "--fwd: expected a duration with a unit such as 1ms, 250us, 2.5s; got 'abc'");
  EXPECT_THAT(error_of([] { parse_duration("5", "--fwd"); }), HasSubstr("missing unit"));
  EXPECT_THAT(error_of([] { parse_duration("", "--fwd"); }), HasSubstr("empty"));
  EXPECT_THAT(error_of([] { parse_duration("   ", "--fwd"); }), HasSubstr("empty"));
  EXPECT_THAT(error_of([] { parse_duration("-1ms", "--fwd"); }), HasSubstr("--fwd: must not be negative"));
  EXPECT_THAT(error_of([] { parse_duration("5 parsecs", "--fwd"); }), HasSubstr("unknown unit 'parsecs'"));
  EXPECT_THAT(error_of([] { parse_duration("5MB", "--fwd"); }), HasSubstr("unknown unit 'MB'"));
  EXPECT_THAT(error_of([] { parse_duration("1ms2", "--fwd"); }), HasSubstr("unknown unit"));
  EXPECT_THAT(error_of([] { parse_duration("1.2.3ms", "--fwd"); }), HasSubstr("unknown unit"));
  EXPECT_THAT(error_of([] { parse_duration("1e3us", "--fwd"); }), HasSubstr("unknown unit"));
  EXPECT_THAT(error_of([] { parse_duration(".ms", "--fwd"); }), HasSubstr("got '.ms'"));
  EXPECT_THAT(error_of([] { parse_duration("nan ms", "--fwd"); }), HasSubstr("expected a duration"));
  EXPECT_THAT(error_of([] { parse_duration("inf s", "--fwd"); }), HasSubstr("expected a duration"));
}

TEST(ParseBytes, EachUnit) {
  EXPECT_EQ(parse_bytes("512B", "--m"), 512);
  EXPECT_EQ(parse_bytes("2KB", "--m"), 2'000);
  EXPECT_EQ(parse_bytes("2kB", "--m"), 2'000);
  EXPECT_EQ(parse_bytes("3MB", "--m"), 3'000'000);
  EXPECT_EQ(parse_bytes("1.5GB", "--m"), 1'500'000'000);
  EXPECT_EQ(parse_bytes("2TB", "--m"), 2'000'000'000'000);
  EXPECT_EQ(parse_bytes("1KiB", "--m"), 1024);
  EXPECT_EQ(parse_bytes("64 MiB", "--m"), 64 * 1024 * 1024);
  EXPECT_EQ(parse_bytes("0.5GiB", "--m"), 512 * 1024 * 1024);
  EXPECT_EQ(parse_bytes("1TiB", "--m"), 1024LL * 1024 * 1024 * 1024);
}

TEST(ParseBytes, Rejects) {
  EXPECT_THAT(error_of([] { parse_bytes("64", "--mem"); }),
              HasSubstr("--mem: expected a size with a unit such as 512B, 64MiB, 1.5GB; got '64' (missing unit)"));
  EXPECT_THAT(error_of([] { parse_bytes("-1GB", "--mem"); }), HasSubstr("must not be negative"));
  EXPECT_THAT(error_of([] { parse_bytes("10000000TiB", "--mem"); }), HasSubstr("too large"));
  EXPECT_THAT(error_of([] { parse_bytes("1 mib", "--mem"); }), HasSubstr("unknown unit 'mib'"));
  EXPECT_THAT(error_of([] { parse_bytes("1Gb", "--mem"); }), HasSubstr("unknown unit 'Gb'"));  // bits are no size
  EXPECT_THAT(error_of([] { parse_bytes("lots", "--mem"); }), HasSubstr("got 'lots'"));
}

TEST(ParseBandwidth, BytesVersusBits) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("50GB/s", "--bw"), 50e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("25GiB/s", "--bw"), 25.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse_bandwidth("400Gb/s", "--bw"), 50e9);  // bits / 8
  EXPECT_DOUBLE_EQ(parse_bandwidth("100Gbit/s", "--bw"), 12.5e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1.5 MB / s", "--bw"), 1.5e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("8b/s", "--bw"), 1.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1b/s", "--bw"), 0.125);
}

TEST(ParseBandwidth, Rejects) {
  EXPECT_THAT(error_of([] { parse_bandwidth("0GB/s", "--bw"); }), HasSubstr("--bw: must be positive"));
  EXPECT_THAT(error_of([] { parse_bandwidth("-5GB/s", "--bw"); }), HasSubstr("must not be negative"));
  EXPECT_THAT(error_of([] { parse_bandwidth("50GB", "--bw"); }), HasSubstr("missing '/s'"));
  EXPECT_THAT(error_of([] { parse_bandwidth("50", "--bw"); }), HasSubstr("missing unit"));
  EXPECT_THAT(error_of([] { parse_bandwidth("50Gx/s", "--bw"); }), HasSubstr("unknown unit 'Gx/s'"));
  EXPECT_THAT(error_of([] { parse_bandwidth("", "--bw"); }), HasSubstr("empty"));
  EXPECT_THAT(error_of([] { parse_bandwidth("nanGB/s", "--bw"); }), HasSubstr("expected a bandwidth"));
  EXPECT_THAT(error_of([] { parse_bandwidth(std::string(400, '9') + "TB/s", "--bw"); }), HasSubstr("too large"));
}

TEST(ParseFlops, PrefixesAndSpellings) {
  EXPECT_DOUBLE_EQ(parse_flops("989.4TFLOP/s", "--peak"), 989.4e12);
  EXPECT_DOUBLE_EQ(parse_flops("2.25 PFLOP/s", "--peak"), 2.25e15);
  EXPECT_DOUBLE_EQ(parse_flops("19.5TFLOPS", "--peak"), 19.5e12);
  EXPECT_DOUBLE_EQ(parse_flops("100GFLOP/s", "--peak"), 100e9);
  EXPECT_DOUBLE_EQ(parse_flops("3MFLOPS", "--peak"), 3e6);
  EXPECT_DOUBLE_EQ(parse_flops("7MFLOP/s", "--peak"), 7e6);
  EXPECT_THROW(parse_flops("7KFLOP/s", "--peak"), InputError);  // below 1 MFLOP/s: no processor
  EXPECT_DOUBLE_EQ(parse_flops("1.5EFLOP/s", "--peak"), 1.5e18);
  EXPECT_DOUBLE_EQ(parse_flops("4200000FLOP/s", "--peak"), 4.2e6);
}

TEST(ParseFlops, Rejects) {
  EXPECT_THAT(error_of([] { parse_flops("989.4", "gpus.json: /gpus/0/peak_flops/bf16"); }),
              HasSubstr("gpus.json: /gpus/0/peak_flops/bf16: expected a compute rate such as 989.4TFLOP/s, "
                        "2.25 PFLOP/s or 19.5TFLOPS; got '989.4' (missing unit)"));
  EXPECT_THAT(error_of([] { parse_flops("0TFLOP/s", "--peak"); }), HasSubstr("--peak: must be positive"));
  EXPECT_THAT(error_of([] { parse_flops("-1TFLOP/s", "--peak"); }), HasSubstr("must not be negative"));
  EXPECT_THAT(error_of([] { parse_flops("", "--peak"); }), HasSubstr("empty"));
  EXPECT_THAT(error_of([] { parse_flops("5TFLOPs", "--peak"); }), HasSubstr("unknown unit 'TFLOPs'"));
  EXPECT_THAT(error_of([] { parse_flops("5XFLOP/s", "--peak"); }), HasSubstr("unknown unit 'XFLOP/s'"));
  EXPECT_THAT(error_of([] { parse_flops("5TB/s", "--peak"); }), HasSubstr("unknown unit 'TB/s'"));
  EXPECT_THAT(error_of([] { parse_flops("nanTFLOP/s", "--peak"); }), HasSubstr("expected a compute rate"));
  EXPECT_THAT(error_of([] { parse_flops(std::string(400, '9') + "EFLOP/s", "--peak"); }), HasSubstr("too large"));
}

TEST(FormatDuration, PicksUnit) {
  EXPECT_EQ(format_duration(0), "0 ns");
  EXPECT_EQ(format_duration(999), "999 ns");
  EXPECT_EQ(format_duration(1'000), "1.000 us");
  EXPECT_EQ(format_duration(1'250'000), "1.250 ms");
  EXPECT_EQ(format_duration(2'500'000'000), "2.500 s");
  EXPECT_EQ(format_duration(1'234'567), "1.235 ms");  // rounded, not truncated
  EXPECT_EQ(format_duration(999'999'999), "1.000 s");  // never "1000.000 ms"
  EXPECT_EQ(format_duration(999'499), "999.499 us");
  EXPECT_EQ(format_duration(999'500), "1.000 ms");
  EXPECT_EQ(format_duration(-1'500), "-1.500 us");
  EXPECT_EQ(format_duration(std::numeric_limits<Tick>::max()), "9223372036.855 s");
  EXPECT_EQ(format_duration(std::numeric_limits<Tick>::min()), "-9223372036.855 s");
}

TEST(FormatDuration, RoundTripsThroughParse) {
  for (Tick t : {Tick{0}, Tick{17}, Tick{1'250'000}, Tick{3'000'000'000}})
    EXPECT_EQ(parse_duration(format_duration(t), "x"), t);
}

TEST(FormatBytes, PicksBinaryUnit) {
  EXPECT_EQ(format_bytes(0), "0.0 B");
  EXPECT_EQ(format_bytes(512), "512.0 B");
  EXPECT_EQ(format_bytes(1024), "1.0 KiB");
  EXPECT_EQ(format_bytes(1023.99), "1.0 KiB");  // never "1024.0 B"
  EXPECT_EQ(format_bytes(64.0 * 1024 * 1024), "64.0 MiB");
  EXPECT_EQ(format_bytes(1.5 * 1024 * 1024 * 1024), "1.5 GiB");
  EXPECT_EQ(format_bytes(2.0 * 1024 * 1024 * 1024 * 1024), "2.0 TiB");
  EXPECT_EQ(format_bytes(4096.0 * 1024 * 1024 * 1024 * 1024), "4096.0 TiB");
  EXPECT_EQ(format_bytes(-2048), "-2.0 KiB");
  EXPECT_EQ(format_bytes(std::nan("")), "nan B");
}

TEST(TicksToSeconds, Converts) {
  EXPECT_DOUBLE_EQ(ticks_to_seconds(1'500'000'000), 1.5);
  EXPECT_DOUBLE_EQ(ticks_to_seconds(0), 0.0);
}

}  // namespace
}  // namespace pipesim
