// core/: reading the user's files, writing outputs whole or not at all, strict JSON and
// integers, and how messages quote input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/decimal.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_input.hpp"
#include "core/json_object.hpp"
#include "core/output_file.hpp"

namespace pipesim {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

class Folder {
 public:
  Folder() : dir_(fs::temp_directory_path() / ("pipesim_core_test_" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Folder() { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string read(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void write(const std::string& name, const std::string& bytes) const { std::ofstream(path(name)) << bytes; }
  std::size_t entries() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
    return n;
  }

 private:
  fs::path dir_;
};

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(OutputFile, ReplacesTheFileOnlyOnCommit) {
  const Folder dir;
  dir.write("out.txt", "old");
  {
    OutputFile f(dir.path("out.txt"), "--out");
    f.stream() << "new";
    EXPECT_EQ(dir.read("out.txt"), "old");  // written to the temporary file so far
    EXPECT_EQ(dir.entries(), 2u);
    f.commit();
  }
  EXPECT_EQ(dir.read("out.txt"), "new");
  EXPECT_EQ(dir.entries(), 1u);
}

TEST(OutputFile, WithoutCommitTheOldFileStaysAndTheTemporaryGoes) {
  const Folder dir;
  dir.write("out.txt", "old");
  {
    OutputFile f(dir.path("out.txt"), "--out");
    f.stream() << std::string(1 << 20, 'x');
    f.close();
  }
  EXPECT_EQ(dir.read("out.txt"), "old");
  EXPECT_EQ(dir.entries(), 1u);
  {
    OutputFile f(dir.path("new.txt"), "--out");  // no file before: none after
  }
  EXPECT_FALSE(fs::exists(dir.path("new.txt")));
  EXPECT_EQ(dir.entries(), 1u);
}

TEST(OutputFile, PathErrorsComeBeforeAnyWork) {
  const Folder dir;
  EXPECT_EQ(error_of([&] { OutputFile(dir.path("no/such/f.json"), "--trace"); }),
            "--trace: cannot write '" + dir.path("no/such/f.json") + "': the folder '" + dir.path("no/such") +
                "' does not exist");
  fs::create_directories(dir.path("d"));
  EXPECT_THAT(error_of([&] { OutputFile(dir.path("d"), "--trace"); }), HasSubstr("it is a directory"));
  EXPECT_EQ(error_of([&] { OutputFile("", "--trace"); }), "--trace: the file name is empty");
  // A folder that exists but takes no files: procfs answers ENOENT, which is not "no folder".
  if (fs::is_directory("/proc/self")) {
    EXPECT_THAT(error_of([&] { OutputFile("/proc/self/pipesim-test.json", "--trace"); }),
                HasSubstr("--trace: cannot write '/proc/self/pipesim-test.json': cannot create a file in the folder "
                          "'/proc/self' ("));  // "No such file or directory" on Linux's procfs
  }
}

TEST(OutputFile, AFailedWriteIsAnOutputErrorWithItsReason) {
  OutputFile f("/dev/full", "--report");
  f.stream() << std::string(100000, 'x');
  try {
    f.close();
    FAIL() << "expected OutputError";
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()), "--report: cannot write '/dev/full': No space left on device");
  }
}

TEST(InputFile, RegularFilesOnlyWithinTheLimit) {
  const Folder dir;
  dir.write("small.json", "{}");
  EXPECT_EQ(read_input_file(dir.path("small.json"), kConfigFileInput), "{}");
  dir.write("big.json", std::string(2000, ' '));
  EXPECT_EQ(error_of([&] { read_input_file(dir.path("big.json"), InputKind{"config file", 1024}); }),
            "config file '" + dir.path("big.json") + "' has 2000 bytes, more than the 1.0 KiB (1024 bytes) a config file may have");
  ASSERT_EQ(::mkfifo(dir.path("fifo").c_str(), 0600), 0);
  EXPECT_THAT(error_of([&] { read_input_file(dir.path("fifo"), kScheduleFileInput); }),
              HasSubstr("a FIFO (named pipe), not a regular file"));
  EXPECT_THAT(error_of([&] { read_input_file(dir.path("none"), kProfileFileInput); }),
              HasSubstr("cannot read profile '" + dir.path("none") + "': No such file or directory"));
  EXPECT_EQ(byte_count_text(1536), "1.5 KiB");
}

TEST(JsonInput, DuplicateKeysAreNamedByTheirPath) {
  EXPECT_EQ(error_of([] { parse_json_input(R"({"a": [1, {"b": 1, "b": 2}]})", "f.json"); }),
            "f.json: /a/1/b: the key 'b' is given twice in one object (which one is meant?)");
  EXPECT_EQ(error_of([] { parse_json_input(R"({"a": {"x": 1}, "b": {"x": 2}})", "f.json"); }), "");  // other objects
  EXPECT_EQ(error_of([] { parse_json_input("{\n  \"a\": ,\n}", "f.json"); }),
            "f.json: line 2, column 8: invalid JSON (syntax error while parsing value - unexpected ','; expected '[', '{', "
            "or a literal)");
  EXPECT_EQ(error_of([] { parse_json_input("[1e400]", "f.json"); }), "f.json: invalid JSON (number overflow parsing '1e400')");
  EXPECT_EQ(parse_json_input(R"({"k": [1, 2]})", "f.json")["k"][1], 2);
}

// Every reader's fields (core/json_object.hpp): one line naming the file and JSON path.
TEST(JsonObject, EachProblemNamesTheFileAndThePath) {
  using nlohmann::json;
  const json j = json::parse(R"({"m": [{"n": 0, "big": 18446744073709551615, "s": "", "list": [2, 1], "x": 1.5,
                                        "long": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]}]})");
  const JsonObject root(j, "f.json", "", {"m"});
  const JsonObject m = root.element(root.at("m"), "m", 0, {"n", "big", "s", "list", "x", "long"});
  EXPECT_EQ(m.where("n"), "f.json: /m/0/n");
  EXPECT_EQ(root.where(), "f.json: /");
  EXPECT_EQ(error_of([&] { m.count("n"); }), "f.json: /m/0/n: expected a positive integer; got 0");
  EXPECT_EQ(m.count("n", 0), 0);
  EXPECT_EQ(error_of([&] { m.count("big", 0); }),
            "f.json: /m/0/big: expected a non-negative integer; got 18446744073709551615");
  EXPECT_EQ(error_of([&] { m.integer("n", 2, 7); }), "f.json: /m/0/n: expected an integer in 2..7; got 0");
  EXPECT_EQ(error_of([&] { m.count("n", 2); }), "f.json: /m/0/n: expected an integer of at least 2; got 0");
  EXPECT_EQ(error_of([&] { root.object("m"); }), "f.json: /m: expected an object; got an array of 1 element");
  EXPECT_EQ(error_of([&] { root.object("gone"); }), "f.json: /: missing field 'gone'");
  EXPECT_EQ(error_of([&] { m.count("x"); }), "f.json: /m/0/x: expected a positive integer; got 1.5");
  EXPECT_EQ(error_of([&] { m.text("s"); }), "f.json: /m/0/s: expected a non-empty string; got ''");
  EXPECT_EQ(error_of([&] { m.numbers("list", 0, 9, true, "a number"); }),
            "f.json: /m/0/list/1: expected non-decreasing values; 1 follows 2");
  EXPECT_EQ(error_of([&] { m.text("long"); }), "f.json: /m/0/long: expected a non-empty string; got an array of 25 elements");
  EXPECT_EQ(error_of([&] { m.flag("gone"); }), "f.json: /m/0: missing field 'gone'");
  EXPECT_EQ(error_of([&] { JsonObject(j, "f.json", "", {"other"}); }),
            "f.json: /: unknown field 'm' (expected other)");
  EXPECT_EQ(error_of([&] { JsonObject(j["m"], "f.json", "/m"); }), "f.json: /m: expected an object; got an array of 1 element");
  EXPECT_EQ(json_shown(json::parse(std::string(100, '[') + std::string(100, ']'))), "a deeply nested array");
  EXPECT_EQ(json_shown(json::parse("[1]")), "[1]");
  EXPECT_EQ(json_shown(json::parse(R"({"a": "0123456789", "b": "0123456789", "c": "0123456789", "d": "0123456789"})")),
            "an object of 4 fields");
}

TEST(Decimal, OnlyDecimalDigitsInRange) {
  EXPECT_EQ(parse_decimal<int>("010"), 10);
  EXPECT_EQ(parse_decimal<int>("-7"), -7);
  for (const char* bad : {"0x10", "1e3", "+5", " 5", "5 ", "", "-", "1.0"}) EXPECT_FALSE(parse_decimal<int>(bad)) << bad;
  EXPECT_FALSE(parse_decimal<int>("2147483648"));
  EXPECT_FALSE(parse_decimal<std::uint64_t>("-1"));
  EXPECT_EQ(decimal_problem<int>("0x10"), "expected a decimal integer (hexadecimal, binary and octal are not accepted)");
  EXPECT_EQ(decimal_problem<int>("99999999999"), "out of range (-2147483648 to 2147483647)");
  EXPECT_EQ(decimal_problem<std::uint64_t>("-3"), "must not be negative");
  EXPECT_EQ(decimal_problem<int>("12"), "");
}

TEST(Messages, QuotedInputIsBoundedAndOneLine) {
  EXPECT_EQ(quote("abc"), "'abc'");
  EXPECT_EQ(quote(std::string(100, 'a'), 4), "'aaaa...' (100 characters)");
  EXPECT_EQ(quote("\xc3\xa9\xc3\xa9", 3), "'\xc3\xa9...' (4 characters)");  // not cut inside a UTF-8 sequence
  const InputError e("x: " + std::string(5000, 'y') + "\n");
  EXPECT_LT(std::string(e.what()).size(), kMaxMessageChars + 40);
  EXPECT_THAT(e.what(), HasSubstr("more characters)"));
  EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
}

}  // namespace
}  // namespace pipesim
