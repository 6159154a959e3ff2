// schedules/op_text + schedules/schedule_io: op text, PyTorch CSV, pipesim JSON, and the
// one-line error every malformed input class must produce.
#include "input_error.hpp"
#include "schedules/schedule_io.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;

const std::string kData = PIPESIM_TEST_DATA;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string csv_error(const std::string& text) { return error_of([&] { parse_schedule_csv(text, "sched.csv"); }); }
std::string json_error(const std::string& text) { return error_of([&] { parse_schedule_json(text, "sched.json"); }); }

// ---- op text -------------------------------------------------------------------------------

TEST(OpText, EveryKindRoundTrips) {
  const Op ops[] = {make_op(OpKind::F, 2, 0),   make_op(OpKind::B, 1, 4),     make_op(OpKind::I, 3, 5),
                    make_op(OpKind::W, 3, 5),   make_op(OpKind::F, 2, 0, 1),  make_op(OpKind::W, 0, 12, 3),
                    grad_sync(2),               opt_step(2),                  grad_sync(1, 1),
                    opt_step(0, 1)};
  const char* texts[] = {"2F0", "1B4", "3I5", "3W5", "1:2F0", "3:0W12", "2GRADSYNC", "2OPT", "1:1GRADSYNC", "1:0OPT"};
  for (std::size_t i = 0; i < std::size(ops); ++i) {
    EXPECT_EQ(to_string(ops[i]), texts[i]);
    const auto parsed = parse_op(texts[i]);
    ASSERT_TRUE(parsed) << texts[i];
    EXPECT_EQ(*parsed, ops[i]) << texts[i];
  }
  EXPECT_EQ(parse_op("2REDUCE_GRAD"), grad_sync(2));  // PyTorch's spelling
}

// ---- CSV -----------------------------------------------------------------------------------

TEST(Csv, ReadsPyTorchComputeOnlyDump) {
  const Schedule s = read_schedule_file(kData + "/pytorch_1f1b_p4_m8.csv");
  EXPECT_EQ(s.name, "pytorch_1f1b_p4_m8");
  EXPECT_EQ(s.num_devices, 4);
  EXPECT_EQ(s.num_stages, 4);
  EXPECT_EQ(s.num_pipelines, 1);
  EXPECT_EQ(s.microbatches, 8);
  EXPECT_EQ(s.iterations, 1);
  EXPECT_EQ(s.placement, (std::vector<std::vector<int>>{{0, 1, 2, 3}}));
  ASSERT_EQ(s.ops.size(), 4u);
  for (const auto& list : s.ops) EXPECT_EQ(list.size(), 16u);  // idle cells skipped
  const std::vector<Op> head = {make_op(OpKind::F, 0, 0), make_op(OpKind::F, 0, 1), make_op(OpKind::F, 0, 2),
                                make_op(OpKind::F, 0, 3), make_op(OpKind::B, 0, 0), make_op(OpKind::F, 0, 4),
                                make_op(OpKind::B, 0, 1)};
  EXPECT_EQ(std::vector<Op>(s.ops[0].begin(), s.ops[0].begin() + 7), head);
  EXPECT_EQ(s.ops[3].back(), make_op(OpKind::B, 3, 7));
}

TEST(Csv, RoundTripsThroughText) {
  const Schedule s = read_schedule_file(kData + "/pytorch_1f1b_p4_m8.csv");
  const std::string csv = schedule_to_csv(s);
  // PyTorch's blank cells (idle steps) come back where they were.
  EXPECT_THAT(csv, testing::StartsWith("0F0,0F1,0F2,0F3,,,,0B0,0F4,0B1,0F5,0B2"));
  std::string original = slurp(kData + "/pytorch_1f1b_p4_m8.csv");
  std::erase(original, '\r');  // the file has CRLF rows; pipesim writes LF
  EXPECT_EQ(csv, original);
  const Schedule back = parse_schedule_csv(csv, "again.csv");
  EXPECT_EQ(back.ops, s.ops);
  EXPECT_EQ(back.placement, s.placement);
  EXPECT_EQ(back.microbatches, s.microbatches);
  EXPECT_EQ(schedule_to_csv(back), csv);
}

TEST(Csv, AcceptsPipesimExtensionsAndInfersShape) {
  const Schedule s = read_schedule_file(kData + "/chimera_p2_m2.csv");
  EXPECT_EQ(s.num_pipelines, 2);
  EXPECT_EQ(s.num_stages, 2);
  EXPECT_EQ(s.placement, (std::vector<std::vector<int>>{{0, 1}, {1, 0}}));
  EXPECT_EQ(s.microbatches, 2);
  EXPECT_EQ(s.iterations, 1);
  EXPECT_EQ(s.ops[0][1], make_op(OpKind::F, 1, 1, 1));
  EXPECT_EQ(s.ops[1][6], opt_step(1));
}

TEST(Csv, ToleratesWhitespaceQuotesBlankRowsAndBom) {
  const Schedule s = parse_schedule_csv("\xEF\xBB\xBF 0F0 , \"0F1\",,0B0,0B1\r\n\r\n1F0,1B0,1F1,1B1\n\n\n", "x.csv");
  EXPECT_EQ(s.num_devices, 3);  // the blank middle row is a device without ops
  EXPECT_EQ(s.ops[0].size(), 4u);
  EXPECT_TRUE(s.ops[1].empty());
  EXPECT_EQ(s.placement, (std::vector<std::vector<int>>{{0, 2}}));
}

TEST(Csv, InfersIterationsFromOptimizerSteps) {
  const Schedule s = parse_schedule_csv("0F0,0B0,0OPT,0F1,0B1,0OPT\n", "two_steps.csv");
  EXPECT_EQ(s.iterations, 2);
  EXPECT_EQ(s.microbatches, 1);
}

TEST(CsvErrors, EachClassNamesLineAndCell) {
  EXPECT_THAT(csv_error("0F0,0F1\n1F0,,,,2X0\n"), HasSubstr("sched.csv:2: cell 5: '2X0': unknown op kind (expected"));
  EXPECT_THAT(csv_error("0F0,0F\n"), HasSubstr("sched.csv:1: cell 2: '0F': no micro-batch number"));
  EXPECT_THAT(csv_error("0F0,0F-1\n"), HasSubstr("sched.csv:1: cell 2: '0F-1': no micro-batch number"));
  EXPECT_THAT(csv_error("0F0x\n"), HasSubstr("sched.csv:1: cell 1: '0F0x': trailing characters"));
  EXPECT_THAT(csv_error("0F0 0F1\n"), HasSubstr("trailing characters"));
  EXPECT_THAT(csv_error("F0\n"), HasSubstr("'F0': no stage number"));
  EXPECT_THAT(csv_error("0F0,1F0\n1B0,0B0\n"),
              HasSubstr("sched.csv:2: cell 1: '1B0': pipeline 0 stage 1 appears on device 1 and on device 0 "
                        "(line 1, cell 2)"));
  EXPECT_THAT(csv_error("0F0\n2F0\n"), HasSubstr("sched.csv: pipeline 0 stage 1 appears on no device"));
  EXPECT_THAT(csv_error("0F0\n1F0,1:1F0\n"), HasSubstr("pipeline 1 stage 0 appears on no device"));
  EXPECT_THAT(csv_error("0F0\n2147483647F0\n"), HasSubstr("appears on no device"));  // no giant allocation
  EXPECT_THAT(csv_error("0F0\n99999999999F0\n"), HasSubstr("stage number above 2147483647"));  // int overflow
  EXPECT_THAT(csv_error("0F2147483648,0B0\n"), HasSubstr("'0F2147483648': micro-batch number above 2147483647"));
  EXPECT_THAT(csv_error("0F0,(0F1;1B0\n"), HasSubstr("cell 2: '(0F1;1B0': expected an overlapped pair like (0F7;7B3)OVERLAP_F_B"));
  EXPECT_THAT(csv_error("0F0,(0F1;0SEND_F0)OVERLAP_F_B\n"),
              HasSubstr("cell 2: '(0F1;0SEND_F0)OVERLAP_F_B': an OVERLAP_F_B cell holds compute ops only (F, B, I, W), got '0SEND_F0'"));
  EXPECT_THAT(csv_error("0F0,(0F1;0X1)OVERLAP_F_B\n"), HasSubstr("cell 2: in (0F1;0X1)OVERLAP_F_B: '0X1': unknown op kind"));
  EXPECT_THAT(csv_error("0F0,()OVERLAP_F_B\n"), HasSubstr("cell 2: '()OVERLAP_F_B': an OVERLAP_F_B cell with no ops"));
  EXPECT_THAT(csv_error("0F0,0SEND_X0\n"), HasSubstr("cell 2: '0SEND_X0': unknown op kind"));
  EXPECT_THAT(csv_error(""), HasSubstr("sched.csv: empty file"));
  EXPECT_THAT(csv_error(" \r\n\n"), HasSubstr("sched.csv: empty file"));
  EXPECT_THAT(csv_error(",,,\n,,\n"), HasSubstr("sched.csv: no ops at all"));
  EXPECT_THAT(csv_error("0F0,2F0\n1F0\n"), HasSubstr("sched.csv: pipeline 0 spans 2 devices, but num_stages (3)"));
}

// ---- JSON ----------------------------------------------------------------------------------

TEST(Json, ReadsAndWritesByteIdentical) {
  const std::string path = kData + "/interleaved_p2_v2_m4.json";
  const Schedule s = read_schedule_file(path);
  EXPECT_EQ(s.name, "interleaved");
  EXPECT_EQ(s.num_stages, 4);
  EXPECT_EQ(s.chunks_per_device(), 2);
  EXPECT_TRUE(s.blocking_grad_sync);
  EXPECT_EQ(s.ops[1][3], make_op(OpKind::B, 3, 0));
  EXPECT_EQ(s.ops[0][16], grad_sync(2));
  EXPECT_EQ(schedule_to_json(s), slurp(path));
}

TEST(Json, WeightPolicyAndSplitRoundTripAndBadPolicyIsNamed) {
  Schedule s = read_schedule_file(kData + "/interleaved_p2_v2_m4.json");
  s.weight_policy = WeightPolicy::Stash;
  s.microbatch_split = 2;
  const Schedule back = parse_schedule_json(schedule_to_json(s), "x.json");
  EXPECT_EQ(back.weight_policy, WeightPolicy::Stash);
  EXPECT_EQ(back.microbatch_split, 2);
  std::string text = schedule_to_json(s);
  text.replace(text.find("\"stash\""), 7, "\"stale\"");
  EXPECT_THAT([&] { parse_schedule_json(text, "x.json"); },
              testing::ThrowsMessage<InputError>(HasSubstr("x.json: /weight_policy: expected \"current\", \"stash\" or \"2bw\", got \"stale\"")));
}

TEST(Json, RoundTripsCsvImportsByteIdentical) {
  for (const char* file : {"/pytorch_1f1b_p4_m8.csv", "/chimera_p2_m2.csv"}) {
    const Schedule s = read_schedule_file(kData + file);
    const std::string json = schedule_to_json(s);
    const Schedule back = parse_schedule_json(json, "copy.json");
    EXPECT_EQ(back.ops, s.ops);
    EXPECT_EQ(back.placement, s.placement);
    EXPECT_EQ(back.name, s.name);
    EXPECT_EQ(schedule_to_json(back), json) << file;
  }
}

TEST(Json, MissingOptionalFieldsGetDefaults) {
  const Schedule s = parse_schedule_json(R"({"ops": [["0F0","0F1","0B0","0B1"], ["1F0","1B0","1F1","1B1"]]})",
                                         "dir/minimal.json");
  EXPECT_EQ(s.name, "minimal");
  EXPECT_EQ(s.num_devices, 2);
  EXPECT_EQ(s.num_stages, 2);
  EXPECT_EQ(s.num_pipelines, 1);
  EXPECT_EQ(s.microbatches, 2);
  EXPECT_EQ(s.iterations, 1);
  EXPECT_FALSE(s.blocking_grad_sync);
  EXPECT_EQ(s.placement, (std::vector<std::vector<int>>{{0, 1}}));
}

TEST(Json, NameIsEscaped) {
  Schedule s = parse_schedule_json(R"({"name": "a \"q\" \\ b", "ops": [["0F0","0B0"]]})", "x.json");
  EXPECT_EQ(s.name, "a \"q\" \\ b");
  EXPECT_EQ(parse_schedule_json(schedule_to_json(s), "y.json").name, s.name);
}

// A valid document with one field replaced by `field_json` (or added, for new keys).
std::string with(const std::string& field, const std::string& value) {
  std::map<std::string, std::string> fields = {
      {"num_devices", "2"},       {"num_stages", "2"},
      {"num_pipelines", "1"},     {"placement", "[[0, 1]]"},
      {"ops", R"([["0F0", "0B0"], ["1F0", "1B0"]])"}};
  fields[field] = value;
  std::string out = "{";
  for (const auto& [k, v] : fields) out += (out.size() > 1 ? ", \"" : "\"") + k + "\": " + v;
  return out + "}";
}

TEST(JsonErrors, SyntaxNamesLineAndColumn) {
  EXPECT_THAT(json_error(R"({"ops": [["0F0", "0B0")"), HasSubstr("sched.json: line 1, column 23: invalid JSON ("));
  EXPECT_THAT(json_error("{\n  \"name\": \"x\",\n  \"ops\": [],\n  oops\n}"),
              HasSubstr("sched.json: line 4, column 3: invalid JSON (syntax error"));
  EXPECT_THAT(json_error(""), HasSubstr("sched.json: empty file"));
  EXPECT_THAT(json_error("  \n"), HasSubstr("sched.json: empty file"));
  EXPECT_THAT(json_error("[1, 2]"), HasSubstr("sched.json: expected a JSON object at the top level, got array"));
}

TEST(JsonErrors, WrongTypesNameThePointer) {
  EXPECT_THAT(json_error(with("ops", R"([["0F0", 7], ["1F0"]])")),
              HasSubstr("sched.json: /ops/0/1: expected a string like \"2F0\", got number"));
  EXPECT_THAT(json_error(with("ops", R"([["0F0"], "1F0"])")), HasSubstr("/ops/1: expected an array of ops"));
  EXPECT_THAT(json_error(with("ops", R"({"a": 1})")), HasSubstr("/ops: expected an array"));
  EXPECT_THAT(json_error(with("num_devices", "\"2\"")),
              HasSubstr("/num_devices: expected a positive integer, got string"));
  EXPECT_THAT(json_error(with("num_devices", "2.5")), HasSubstr("/num_devices: expected a positive integer, got 2.5"));
  EXPECT_THAT(json_error(with("num_stages", "0")), HasSubstr("/num_stages: expected a positive integer, got 0"));
  EXPECT_THAT(json_error(with("microbatches", "-3")), HasSubstr("/microbatches: expected a positive integer, got -3"));
  EXPECT_THAT(json_error(with("iterations", "99999999999")), HasSubstr("/iterations: expected a positive integer"));
  EXPECT_THAT(json_error(with("blocking_grad_sync", "1")),
              HasSubstr("/blocking_grad_sync: expected true or false, got 1"));
  EXPECT_THAT(json_error(with("name", "null")), HasSubstr("/name: expected a string, got null"));
  EXPECT_THAT(json_error(with("placement", "[[0, \"1\"]]")),
              HasSubstr("/placement/0/1: expected a device number, got string"));
  EXPECT_THAT(json_error(with("placement", "[0]")),
              HasSubstr("/placement/0: expected an array of devices, got number"));
  EXPECT_THAT(json_error(with("placement", "{}")), HasSubstr("/placement: expected an array"));
  EXPECT_THAT(json_error(with("format", "\"csv\"")), HasSubstr("/format: expected \"pipesim-schedule\""));
  EXPECT_THAT(json_error(with("version", "2")), HasSubstr("/version: unsupported version 2"));
  EXPECT_THAT(json_error(with("num_stage", "2")), HasSubstr("sched.json: /num_stage: unknown field"));
}

TEST(JsonErrors, ShapeAndRanges) {
  EXPECT_THAT(json_error(with("placement", "[[0, 9]]")),
              HasSubstr("sched.json: /placement/0/1: device 9 out of range [0, 2)"));
  EXPECT_THAT(json_error(with("placement", "[[-1, 1]]")), HasSubstr("/placement/0/0: device -1 out of range [0, 2)"));
  EXPECT_THAT(json_error(with("placement", "[[0, 18446744073709551615]]")), HasSubstr("out of range"));
  EXPECT_THAT(json_error(with("placement", "[[0, 1], [1, 0]]")),
              HasSubstr("/placement: has 2 pipeline rows, but num_pipelines is 1"));
  EXPECT_THAT(json_error(with("placement", "[[0, 1, 0]]")),
              HasSubstr("/placement/0: has 3 stages, expected 2 (num_stages)"));
  EXPECT_THAT(json_error(with("placement", "[[]]")), HasSubstr("/placement/0: has 0 stages, expected 2"));
  EXPECT_THAT(json_error(R"({"ops": [["0F0"]], "placement": [[]]})"), HasSubstr("/placement/0: has no stages"));
  EXPECT_THAT(json_error(R"({"ops": [["0F0"]], "placement": [[0], [0, 0]]})"),
              HasSubstr("/placement/1: has 2 stages, expected 1 (like /placement/0)"));
  EXPECT_THAT(json_error(with("num_devices", "4")), HasSubstr("/ops: has 2 device rows, but num_devices is 4"));
  EXPECT_THAT(json_error(with("ops", R"([["0F0", "0B0"], ["1F0", "1:1B0"]])")),
              HasSubstr("sched.json: /ops/1/1: '1:1B0': pipeline 1 out of range [0, 1)"));
  EXPECT_THAT(json_error(with("ops", R"([["0F0", "0B0"], ["1F0", "5B0"]])")),
              HasSubstr("/ops/1/1: '5B0': stage 5 out of range [0, 2)"));
  EXPECT_THAT(json_error(with("ops", R"([["0F0", "1B0"], ["1F0", "0B0"]])")),
              HasSubstr("/ops/0/1: '1B0' is listed on device 0, but placement puts pipeline 0 stage 1 on device 1"));
  EXPECT_THAT(json_error(with("ops", R"([["0F0", "0Q0"], ["1F0"]])")), HasSubstr("/ops/0/1: '0Q0': unknown op kind"));
  EXPECT_THAT(json_error(with("ops", R"([[], []])")), HasSubstr("sched.json: no ops at all"));
  EXPECT_THAT(json_error(R"({"ops": []})"), HasSubstr("/ops: no devices"));
  EXPECT_THAT(json_error(R"({"name": "x"})"), HasSubstr("sched.json: missing field /ops"));
  EXPECT_THAT(json_error(R"({"ops": [["0F0", "2F0"], ["1F0"], []], "placement": [[0, 1, 0]]})"),
              HasSubstr("sched.json: /placement/0: pipeline 0 spans 2 devices, but num_stages (3) is not a multiple"));
  EXPECT_THAT(json_error(R"({"ops": [["0F0", "1F0"], ["1B0"]]})"),
              HasSubstr("/ops/1/0: '1B0': pipeline 0 stage 1 appears on device 1 and on device 0 (/ops/0/1)"));
}

// ---- files ---------------------------------------------------------------------------------

TEST(Files, ExtensionAndReadErrors) {
  EXPECT_THAT(error_of([] { read_schedule_file("sched.txt"); }),
              HasSubstr("sched.txt: unknown schedule file extension '.txt' (expected .csv or .json)"));
  EXPECT_THAT(error_of([] { read_schedule_file("sched"); }), HasSubstr("unknown schedule file extension ''"));
  EXPECT_THAT(error_of([] { read_schedule_file("/nonexistent/x.csv"); }),
              HasSubstr("cannot read schedule file '/nonexistent/x.csv': No such file or directory"));
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "schedule_io_dir.json";
  std::filesystem::create_directories(dir);
  EXPECT_THAT(error_of([&] { read_schedule_file(dir.string()); }), HasSubstr("a directory, not a regular file"));
}

TEST(Files, WriteThenReadBack) {
  const Schedule s = read_schedule_file(kData + "/chimera_p2_m2.csv");
  for (const char* name : {"schedule_io_out.json", "schedule_io_out.CSV"}) {
    const std::string path = (std::filesystem::path(testing::TempDir()) / name).string();
    write_schedule_file(s, path);
    const Schedule back = read_schedule_file(path);
    EXPECT_EQ(back.ops, s.ops) << name;
    EXPECT_EQ(back.placement, s.placement) << name;
  }
  EXPECT_THAT(error_of([&] { write_schedule_file(s, "/nonexistent/out.csv"); }), HasSubstr("cannot write"));
}

// Never crash: random byte edits of valid inputs either parse or throw an InputError.
TEST(Robustness, MutatedInputsNeverEscapeAsOtherErrors) {
  const std::string json = slurp(kData + "/interleaved_p2_v2_m4.json");
  const std::string csv = slurp(kData + "/chimera_p2_m2.csv");
  const std::string alphabet = "0123456789FBIW:,\"[]{}-. \nxGRADSYNCOPT";
  std::mt19937 rng(12345);
  for (int round = 0; round < 3000; ++round) {
    const bool is_json = round % 2 == 0;
    std::string text = is_json ? json : csv;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t pos = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.erase(pos, 1 + rng() % 8); break;
        default: text.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    try {
      const Schedule s = is_json ? parse_schedule_json(text, "m.json") : parse_schedule_csv(text, "m.csv");
      EXPECT_EQ(static_cast<int>(s.ops.size()), s.num_devices);
      EXPECT_EQ(static_cast<int>(s.placement.size()), s.num_pipelines);
    } catch (const InputError& err) {
      EXPECT_EQ(std::string(err.what()).find('\n'), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace pipesim
