// The generators' metadata (schedules/generator.hpp) is the one place a schedule is
// described: these tests check that what derives from it does (the CLI's flags and --help,
// `pipesim schedule --list`, the docs' listing, the fuzz dictionaries), and that the
// metadata itself is consistent. The op-count estimate is checked against every
// generator's output in limits_test (MemoryGuard.EstimateIsAnUpperBound...).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "cli_runner.hpp"
#include "input_error.hpp"
#include "schedules/generator.hpp"

namespace pipesim {
using testing_cli::Result;
using testing_cli::run;
namespace {

using ::testing::HasSubstr;

const std::string kSource = std::string(PIPESIM_TEST_DATA) + "/../..";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The quoted tokens of a libFuzzer dictionary.
std::set<std::string> dictionary(const std::string& name) {
  std::set<std::string> out;
  std::istringstream in(read_text(kSource + "/fuzz/dict/" + name));
  for (std::string line; std::getline(in, line);)
    if (line.size() >= 2 && line.front() == '"' && line.back() == '"') out.insert(line.substr(1, line.size() - 2));
  return out;
}

TEST(GeneratorMetadata, NamesOrdersAndSettingsAreConsistent) {
  std::set<std::string_view> names;
  int order = -1;
  for (const GeneratorInfo& g : generators()) {
    SCOPED_TRACE(std::string(g.name));
    EXPECT_TRUE(names.insert(g.name).second) << "two generators named " << g.name;
    EXPECT_GT(g.order, order) << "generators() is sorted by order, and no two share one";
    order = g.order;
    EXPECT_FALSE(g.summary.empty());
    EXPECT_NE(g.ops_per_iteration, nullptr);
    for (std::string_view s : g.settings) {
      bool known = false;
      for (const ScheduleSetting& setting : schedule_settings()) known = known || setting.name() == s;
      EXPECT_TRUE(known) << "unknown setting " << s;
    }
  }
  for (const ScheduleSetting& s : schedule_settings()) {
    EXPECT_NE(s.number == nullptr, s.text == nullptr) << s.flags << ": an integer or a text setting";
    EXPECT_EQ(s.text == nullptr, s.choices.empty()) << s.flags << ": a text setting lists its choices";
    if (s.text) {
      const ScheduleParams defaults;
      EXPECT_THAT(s.choices, ::testing::Contains(std::string_view(defaults.*s.text))) << s.flags;
    }
  }
  EXPECT_EQ(find_setting("concat").choices_text(), "direct, doubling or halving");
  EXPECT_EQ(find_setting("chunks").letter(), "v");
  EXPECT_EQ(find_setting("width").letter(), "width");
}

// A text setting outside its choices is refused by generate() for every generator that
// reads it, naming the setting as the flag spells it.
TEST(GeneratorMetadata, TextSettingsAreCheckedAgainstTheirChoices) {
  for (const GeneratorInfo& g : generators())
    for (std::string_view name : g.settings) {
      const ScheduleSetting& s = find_setting(name);
      if (!s.text) continue;
      ScheduleParams q;
      q.*s.text = "no-such-value";
      EXPECT_EQ(error_of(g.name, q), std::string(g.name) + ": " + std::string(name) + " must be " + s.choices_text() +
                                         ", got 'no-such-value'");
    }
}

// Every setting is a flag of the subcommands that generate, with its help text.
TEST(GeneratorMetadata, EverySettingIsAFlagWithItsHelp) {
  for (const char* command : {"schedule", "check", "simulate", "compare"}) {
    const Result r = run(std::string(command) + " --help");
    EXPECT_EQ(r.code, 0) << command;
    for (const ScheduleSetting& s : schedule_settings()) {
      EXPECT_THAT(r.out, HasSubstr(std::string(s.help))) << command << " " << s.flags;
      EXPECT_THAT(r.out, HasSubstr(s.flag())) << command;
    }
  }
}

// `pipesim schedule --list`: one row per generator in generators() order, the name first
// (fuzz/run.sh takes the names for its dictionaries from there), then its summary, the
// flags of its settings and its constraints.
TEST(GeneratorMetadata, ListShowsEveryGeneratorWithItsSettingsAndConstraints) {
  const Result r = run("schedule --list");
  ASSERT_EQ(r.code, 0);
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  EXPECT_THAT(line, HasSubstr("settings"));
  std::getline(in, line);  // the rule under the header
  for (const GeneratorInfo& g : generators()) {
    ASSERT_TRUE(std::getline(in, line)) << "no row for " << g.name;
    EXPECT_EQ(line.substr(0, line.find(' ')), g.name);
    EXPECT_THAT(line, HasSubstr(std::string(g.summary)));
    for (std::string_view s : g.settings) {
      const std::string_view flags = find_setting(s).flags;
      EXPECT_THAT(line, HasSubstr(std::string(flags.substr(0, flags.find(',')))));
    }
    for (const Constraint& c : g.constraints) EXPECT_THAT(line, HasSubstr(std::string(c.rule)));
  }
  EXPECT_FALSE(std::getline(in, line)) << "an extra row: " << line;
}

// The fuzz dictionaries hold the flags and the values of every setting; the generator
// names are not written there but added by fuzz/run.sh from `pipesim schedule --list`, so
// a new schedule needs no dictionary edit.
TEST(GeneratorMetadata, FuzzDictionariesCarryTheSettingsButNoGeneratorName) {
  const std::set<std::string> flags = dictionary("cli_flags.dict");
  for (const ScheduleSetting& s : schedule_settings()) {
    EXPECT_TRUE(flags.count(std::string(s.flags.substr(0, s.flags.find(','))))) << s.flags << " in cli_flags.dict";
    for (std::string_view choice : s.choices) EXPECT_TRUE(flags.count(std::string(choice))) << choice;
  }
  for (const char* dict : {"cli_flags.dict", "experiment_config.dict", "cli.dict"}) {
    const std::set<std::string> tokens = dictionary(dict);
    for (const GeneratorInfo& g : generators())
      EXPECT_FALSE(tokens.count(std::string(g.name))) << g.name << " is written in " << dict << " (run.sh adds it)";
  }
  EXPECT_THAT(read_text(kSource + "/fuzz/run.sh"), HasSubstr("schedule --list"));
}

// docs/schedules.md carries `pipesim schedule --list` between two markers. Rerun with
// PIPESIM_UPDATE_DOCS=1 to rewrite it after adding or changing a generator.
TEST(GeneratorMetadata, DocsListingIsTheCurrentList) {
  const std::string path = kSource + "/docs/schedules.md";
  const std::string begin = "<!-- pipesim schedule --list: begin -->\n```\n", end = "```\n<!-- pipesim schedule --list: end -->";
  std::string doc = read_text(path);
  const std::size_t a = doc.find(begin), b = doc.find(end);
  ASSERT_NE(a, std::string::npos) << path << " has no listing";
  ASSERT_NE(b, std::string::npos);
  const Result r = run("schedule --list");
  ASSERT_EQ(r.code, 0);
  const std::string listed = doc.substr(a + begin.size(), b - a - begin.size());
  if (listed != r.out && std::getenv("PIPESIM_UPDATE_DOCS")) {
    doc.replace(a + begin.size(), b - a - begin.size(), r.out);
    std::ofstream(path, std::ios::binary) << doc;
    return;
  }
  EXPECT_EQ(listed, r.out) << path << " lists other generators than `pipesim schedule --list`: rerun this test with "
                           << "PIPESIM_UPDATE_DOCS=1 to rewrite it";
}

}  // namespace
}  // namespace pipesim
