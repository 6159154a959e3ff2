// What the fuzzers (fuzz/, docs/reliability.md) and the review around them found, kept as
// tests: every input that crashed, hung, allocated without bound or produced a wrong
// number, with the one-line error it gets now. Then a replay of fuzz/corpus/ through the
// fuzz targets' checks, so that the normal build (gcc, and ASan + UBSan in CI) keeps
// proving the parsers' contract without clang or libFuzzer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "input_error.hpp"
#include "cost_models/catalog.hpp"
#include "cost_models/uniform.hpp"
#include "fuzz/targets.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "schedules/schedule_io.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"

namespace pipesim {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

std::string csv_error(const std::string& text) { return error_of([&] { parse_schedule_csv(text, "x.csv"); }); }
std::string json_error(const std::string& text) { return error_of([&] { parse_schedule_json(text, "x.json"); }); }

constexpr const char* kExpectedOp = "(expected an op like 2F0, 3I5, 3W5, 1B4, 1:2F0, 0SEND_F0, 1RECV_F0, 2GRADSYNC or 2OPT)";

// ---- messages -------------------------------------------------------------------------

// Found by the op_text and schedule_csv fuzzers: messages quote the input, and a newline or
// carriage return inside a JSON string or a CSV cell made them two lines (and an escape
// sequence could recolour the terminal). InputError now escapes control characters.
TEST(FuzzRegression, MessagesQuotingTheInputStayOneLine) {
  EXPECT_EQ(json_error(R"({"ops": [["0F0\n0B0"]]})"),
            std::string("x.json: /ops/0/0: '0F0\\n0B0': trailing characters ") + kExpectedOp);
  EXPECT_EQ(csv_error("0F0,0B0\r\n0X\x1b[31m\n"),
            std::string("x.csv:2: cell 1: '0X\\x1b[31m': unknown op kind ") + kExpectedOp);
  EXPECT_EQ(csv_error(std::string("1F\xfeG\r\0``", 8) + "\n"),
            std::string("x.csv:1: cell 1: '1F\\xfeG\\r\\x00``': no micro-batch number ") + kExpectedOp);
  EXPECT_EQ(one_line("a\tb\x7f"), "a\\tb\\x7f");
  // Bytes that are not UTF-8, and C1 controls (U+009B is a CSI to some terminals), are
  // escaped too; UTF-8 text is kept.
  EXPECT_EQ(one_line("250\xC2\xB5s \xE2\x82\xAC 0\xff" "0 \xC2\x9B" "31m \xC0\xAF \xED\xA0\x80"),
            "250\xC2\xB5s \xE2\x82\xAC 0\\xff0 \\xc2\\x9b31m \\xc0\\xaf \\xed\\xa0\\x80");
}

// Found by the schedule_json fuzzer: nlohmann reports a number beyond double as
// out_of_range, not parse_error, so it escaped the readers as a foreign exception.
TEST(FuzzRegression, NumberOverflowInJsonIsAnInputError) {
  EXPECT_EQ(json_error(R"({"ops": 1e400})"), "x.json: invalid JSON (number overflow parsing '1e400')");
  EXPECT_EQ(error_of([] { parse_catalog(R"({"models": [{"layers": 1e400}]})", "my.json"); }),
            "my.json: invalid JSON (number overflow parsing '1e400')");
}

// Deeply nested JSON: messages dumped the offending value, recursively: a stack overflow
// (segmentation fault) at ~10^5 levels.
TEST(FuzzRegression, DeeplyNestedJsonDoesNotOverflowTheStack) {
  const std::string deep = std::string(200'000, '[') + std::string(200'000, ']');
  EXPECT_EQ(json_error(R"({"version": )" + deep + R"(, "ops": [["0F0", "0B0"]]})"),
            "x.json: /version: unsupported version array (this pipesim reads version 1)");
  EXPECT_EQ(error_of([&] { parse_catalog(R"({"models": [)" + deep + "]}", "my.json"); }),
            "my.json: /models/0: expected an object; got a deeply nested array");
  EXPECT_EQ(json_error(deep), "x.json: expected a JSON object at the top level, got array");
}

// ---- unbounded allocation ---------------------------------------------------------------

// A 26-byte CSV made the engine size its per-iteration table by the micro-batch id:
// 15.6 GB and 69 s. Ids must lie below micro-batches x iterations (docs/schedule-format.md).
TEST(FuzzRegression, MicrobatchIdBeyondTheIterationsIsAnError) {
  EXPECT_EQ(csv_error("0F2000000000,0B2000000000\n"),
            "x.csv:1: cell 1: '0F2000000000': micro-batch id 2000000000 is not below micro-batches x iterations "
            "(1 x 1); number them from 0, iteration t using t*m .. t*m+m-1");
  EXPECT_EQ(json_error(R"({"microbatches": 2, "ops": [["0F0", "0B0", "0F2", "0B2"]]})"),
            "x.json: /ops/0/2: '0F2': micro-batch id 2 is not below micro-batches x iterations (2 x 1); number them "
            "from 0, iteration t using t*m .. t*m+m-1");
  // Dense ids over several iterations are what generators write: still fine.
  EXPECT_EQ(csv_error("0F0,0B0,0OPT,0F1,0B1,0OPT\n"), "");
}

// "iterations": 2147483647 asked the engine for a 16 GiB table (std::bad_alloc).
TEST(FuzzRegression, IterationsBeyondTheOpsAreAnError) {
  EXPECT_EQ(json_error(R"({"iterations": 2147483647, "ops": [["0F0", "0B0"]]})"),
            "x.json: /iterations: iterations (2147483647) is more than the 2 ops of the schedule");
}

// 100000 CSV rows are 100000 devices; the engine's devices x devices link table asked for
// 80 GB. Above 2048 devices it keeps only the links in use.
TEST(FuzzRegression, ManyDevicesDoNotAllocateALinkTablePerPair) {
  const std::string csv = "0F0,0B0\n" + std::string(99'998, '\n') + "1F0,1B0\n";
  const Schedule s = parse_schedule_csv(csv, "wide.csv");
  ASSERT_EQ(s.num_devices, 100'000);
  ASSERT_TRUE(validate(s).ok());
  UniformCostConfig c;
  c.link_latency = 10;
  const SimResult r = simulate(s, UniformCostModel(c));
  EXPECT_EQ(r.makespan, 6 * kNsPerMs + 2 * 10);  // F 1 ms, B 2 ms per stage, two hops of 10 ns
}

// ---- wrong numbers and aborts ---------------------------------------------------------

// Iteration 1 ending before iteration 0 gave a negative time per iteration (-3 ms).
TEST(FuzzRegression, IterationsEndingOutOfOrderGiveAPositiveTimePerIteration) {
  const Schedule s =
      parse_schedule_json(R"({"microbatches": 1, "iterations": 2, "ops": [["0F1", "0B1", "0OPT", "0F0", "0B0", "0OPT"]]})",
                          "x.json");
  const Metrics m = summarize(s, simulate(s, UniformCostModel(UniformCostConfig{})));
  EXPECT_EQ(m.time_per_iteration, 3 * kNsPerMs);
}

// A 2bw file listing batch 2 before the stage's first OPT hit PIPESIM_ASSERT (abort).
TEST(FuzzRegression, TwoBwBatchBeforeItsWeightsIsAnInputError) {
  const Schedule s = parse_schedule_json(
      R"({"weight_policy": "2bw", "microbatches": 1, "iterations": 3,
          "ops": [["0F2", "0B2", "0OPT", "0F0", "0B0", "0OPT", "0F1", "0B1", "0OPT"]]})",
      "x.json");
  ASSERT_TRUE(validate(s).ok());
  EXPECT_EQ(error_of([&] { simulate(s, UniformCostModel(UniformCostConfig{})); }),
            "2bw: 0F2 (iteration 2) starts before weight version 1 exists: pipeline 0 stage 0 has run 0 OPT(s) by then");
}

// chunks x microbatch_split overflowed int (UBSan: signed integer overflow).
TEST(FuzzRegression, HugeMicrobatchSplitDoesNotOverflow) {
  const Schedule s = parse_schedule_json(
      R"({"microbatch_split": 2147483647, "placement": [[0, 0]], "ops": [["0F0", "1F0", "1B0", "0B0"]]})", "x.json");
  const SimResult r = simulate(s, UniformCostModel(UniformCostConfig{}));
  EXPECT_EQ(r.makespan, 0);  // 1 ms / (2 x (2^31 - 1)) rounds to 0
}

// A schedule of stage ops only inferred 0 micro-batches, which its own JSON export then
// rejected ("/microbatches: expected a positive integer, got 0").
TEST(FuzzRegression, StageOpsOnlyScheduleSurvivesAJsonRoundTrip) {
  const Schedule s = parse_schedule_csv("0OPT\n", "opt.csv");
  EXPECT_EQ(s.microbatches, 1);
  EXPECT_EQ(schedule_to_json(parse_schedule_json(schedule_to_json(s), "opt.json")), schedule_to_json(s));
}

// Durations and sizes near 2^63 wrapped around (UBSan: signed overflow; then
// PIPESIM_ASSERT(time >= now) in the event queue, an abort).
TEST(FuzzRegression, TimeAndMemoryOverflowsAreInputErrors) {
  ScheduleParams p;
  p.p = 2;
  p.m = 4;
  const Schedule s = generate("1f1b", p);
  UniformCostConfig slow;
  slow.stage.fwd = 9'000'000'000 * kNsPerS;
  EXPECT_EQ(error_of([&] { simulate(s, UniformCostModel(slow)); }),
            "simulated time overflows 2^63 ns (292 years): the durations are too large");
  EXPECT_EQ(error_of([&] { validate(s, [&](const Op&) { return slow.stage.fwd; }); }),
            "critical path overflows 2^63 ns (292 years): the durations are too large");
  UniformCostConfig big;
  big.activation_bytes = 5'000'000'000'000'000'000;
  EXPECT_EQ(error_of([&] { simulate(s, UniformCostModel(big)); }),
            "activation memory of device 0 overflows 8 EiB: the activation size is too large");
  UniformCostConfig narrow;
  narrow.message_bytes = 8'000'000'000'000'000'000;
  narrow.link_bandwidth = 0.125;  // 1 bit/s
  EXPECT_EQ(error_of([&] { simulate(s, UniformCostModel(narrow)); }),
            "cost model: sending 7275957.6 TiB takes longer than 292 years at this link bandwidth");
}

// A model file with 2^31 layers of hidden 2^30 gave negative parameter counts (int64
// overflow) in `pipesim catalog`, and `simulate --model` hit PIPESIM_ASSERT(dur >= 0): a
// duration past int64 nanoseconds converted from double. Shapes are bounded now, and so
// is the micro-batch size; a duration that still does not fit is an InputError.
TEST(FuzzRegression, AbsurdModelsAndHardwareAreInputErrors) {
  EXPECT_EQ(error_of([] {
              parse_catalog(R"({"models": [{"name": "huge", "layers": 2147483647, "hidden": 1073741824, "heads": 1,
                  "ffn_hidden": 2147483647, "seq_len": 2147483647, "vocab": 2147483647, "source": "t"}]})",
                            "my.json");
            }),
            "my.json: /models/0: model huge is too large: ~2.5e+28 parameters and ~3.8e+29 activation bytes per "
            "sequence (at most 1e15 each, so that 64-bit counts cannot overflow)");
  const std::string gpu = (fs::temp_directory_path() / "pipesim_fuzz_slow_gpu.json").string();
  std::ofstream(gpu) << R"({"gpus": [{"name": "slow", "peak_flops": {"bf16": "1FLOP/s"}, "hbm_bandwidth": "1TB/s",
      "memory": "80GiB", "intra_node_link": "nvlink4", "inter_node_link": "ib-ndr", "source": "t"}]})";
  const auto run = [](const std::string& args) {
    std::string out;
    FILE* pipe = popen((std::string(PIPESIM_CLI) + " " + args + " 2>&1").c_str(), "r");
    for (char buf[512]; std::fgets(buf, sizeof buf, pipe);) out += buf;
    pclose(pipe);
    return out;
  };
  // A GPU of 1 FLOP/s made an op take longer than 292 years; the catalog refuses it now.
  EXPECT_EQ(run("simulate --model gpt3-175b --hardware " + gpu + " -p 8 -m 8"),
            "pipesim: error: " + gpu + ": /gpus/0/peak_flops/bf16: at least 1 MFLOP/s; got '1FLOP/s'\n");
  EXPECT_EQ(run("simulate --model gpt3-1.3b -p 2 -m 2 --micro-batch-size 2000000000"),
            "pipesim: error: analytical: micro_batch_size must be at most 4096, got 2000000000\n");
}

// ---- the seed corpora -----------------------------------------------------------------

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every file of fuzz/corpus/<target>/ through the target's checks (fuzz/targets.hpp).
TEST(FuzzCorpus, EverySeedKeepsTheContract) {
  for (const fuzz::NamedTarget& t : fuzz::kTargets) {
    const fs::path dir = fs::path(PIPESIM_FUZZ_CORPUS) / t.name;
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    EXPECT_FALSE(files.empty()) << dir;
    for (const fs::path& file : files) {
      const std::string bytes = slurp(file);
      try {
        t.fn(bytes);
      } catch (const std::exception& e) {
        ADD_FAILURE() << file << ": " << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace pipesim
