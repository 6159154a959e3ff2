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
    for (const ScheduleSetting& s : g.settings) {
      EXPECT_FALSE(s.every) << s.flags << ": p, m and iterations are every generator's";
      ASSERT_NE(setting_named(s.name()), nullptr) << s.flags << " is not in schedule_settings()";
    }
  }
  std::set<std::string_view> flags;
  std::set<int> orders;
  for (const ScheduleSetting& s : schedule_settings()) {
    EXPECT_TRUE(flags.insert(s.name()).second) << s.flags << " twice in schedule_settings()";
    EXPECT_FALSE(s.help.empty()) << s.flags;
    if (!s.shape()) {
      EXPECT_TRUE(orders.insert(s.order).second) << s.flags << ": two settings share order " << s.order;
    }
    if (s.is_text()) {
      EXPECT_THAT(s.choices, ::testing::Contains(s.default_text)) << s.flags;
      EXPECT_EQ(s.default_number, 0) << s.flags << ": a text setting has no integer default";
    } else {
      EXPECT_TRUE(s.default_text.empty()) << s.flags << ": an integer setting has no text default";
      EXPECT_GE(std::get<int>(s.default_value()), s.minimum) << s.flags << ": its default is a value of its lists";
    }
  }
  EXPECT_EQ(find_setting("concat").choices_text(), "direct, doubling or halving");
  EXPECT_EQ(find_setting("chunks").letter(), "v");
  EXPECT_EQ(find_setting("width").letter(), "width");
}

// A setting two generators read is declared the same by both (flags, help, default,
// choices, order, label): schedule_settings() holds one declaration per name.
TEST(GeneratorMetadata, ASharedSettingIsDeclaredTheSameByEveryGeneratorThatReadsIt) {
  int shared = 0;
  for (const ScheduleSetting& s : schedule_settings()) {
    int readers = 0;
    for (const GeneratorInfo& g : generators())
      for (const ScheduleSetting& declared : g.settings)
        if (declared.name() == s.name()) {
          ++readers;
          EXPECT_TRUE(declared == s) << g.name << " declares " << s.flags << " otherwise than another generator";
        }
    shared += readers > 1 ? 1 : 0;
  }
  EXPECT_GT(shared, 0) << "-v is read by several generators: the check above checked something";
}

// Reading a setting no generator declares is a bug in the generator, not bad input: an
// internal error, never a silent default.
TEST(GeneratorMetadataDeathTest, ReadingAnUndeclaredSettingIsAnInternalError) {
  const ScheduleParams q;
  EXPECT_DEATH((void)q.number("no-such-setting"), "internal error");
  EXPECT_DEATH((void)q.text("pipelines"), "internal error");  // declared, but as an integer
}

// A text setting outside its choices is refused by generate() for every generator that
// reads it, naming the setting as the flag spells it.
TEST(GeneratorMetadata, TextSettingsAreCheckedAgainstTheirChoices) {
  for (const GeneratorInfo& g : generators())
    for (const ScheduleSetting& s : g.settings) {
      if (!s.is_text()) continue;
      ScheduleParams q;
      s.set(q, std::string("no-such-value"));
      EXPECT_EQ(error_of(g.name, q), std::string(g.name) + ": " + std::string(s.name()) + " must be " +
                                         s.choices_text() + ", got 'no-such-value'");
    }
}

// Every setting is a flag of the subcommands that generate, with its help text, and a list
// flag of sweep and converge (all but p, m and iterations, which they set otherwise).
TEST(GeneratorMetadata, EverySettingIsAFlagWithItsHelp) {
  for (const char* command : {"schedule", "check", "simulate", "compare", "run", "sweep", "converge"}) {
    const Result r = run(std::string(command) + " --help");
    EXPECT_EQ(r.code, 0) << command;
    const bool lists = std::string(command) == "sweep" || std::string(command) == "converge";
    for (const ScheduleSetting& s : schedule_settings()) {
      if (lists && s.every) continue;
      EXPECT_THAT(r.out, HasSubstr(std::string(s.help))) << command << " " << s.flags;
      EXPECT_THAT(r.out, HasSubstr(s.flag())) << command;
    }
  }
}

// `pipesim schedule --list`: one row per generator in generators() order, the name first
// (fuzz/run.sh takes the names for its dictionaries from there), then its summary, the
// flags of its settings with the choices of a text one, and its constraints.
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
    for (const ScheduleSetting& s : g.settings) {
      std::string shown(s.flags.substr(0, s.flags.find(',')));
      for (std::size_t i = 0; i < s.choices.size(); ++i) shown += (i == 0 ? " " : "|") + std::string(s.choices[i]);
      EXPECT_THAT(line, HasSubstr(shown));
    }
    for (const Constraint& c : g.constraints) EXPECT_THAT(line, HasSubstr(std::string(c.rule)));
  }
  EXPECT_FALSE(std::getline(in, line)) << "an extra row: " << line;
}

// The fuzz dictionaries hold the shape flags (-p, -m, -v, --iterations); the generator
// names and the flags and choices of the generators' own settings are not written there
// but added by fuzz/run.sh from `pipesim schedule --list` (checked above to carry them), so
// a new schedule or setting needs no dictionary edit.
TEST(GeneratorMetadata, FuzzDictionariesCarryTheShapeFlagsButNoGeneratorNameOrSetting) {
  const std::set<std::string> flags = dictionary("cli_flags.dict");
  for (const ScheduleSetting& s : schedule_settings()) {
    if (s.shape()) {
      EXPECT_TRUE(flags.count(std::string(s.flags.substr(0, s.flags.find(','))))) << s.flags << " in cli_flags.dict";
    }
  }
  for (const char* dict : {"cli_flags.dict", "experiment_config.dict", "cli.dict"}) {
    const std::set<std::string> tokens = dictionary(dict);
    for (const GeneratorInfo& g : generators()) {
      EXPECT_FALSE(tokens.count(std::string(g.name))) << g.name << " is written in " << dict << " (run.sh adds it)";
      for (const ScheduleSetting& s : g.settings) {
        if (s.shape()) continue;
        EXPECT_FALSE(tokens.count(s.flag())) << s.flag() << " is written in " << dict << " (run.sh adds it)";
        const std::string key = "\\\"" + std::string(s.name()) + "\\\"";  // \"concat\": a config file's key
        EXPECT_FALSE(tokens.count(key)) << key << " is written in " << dict << " (run.sh adds it)";
        for (std::string_view choice : s.choices)
          EXPECT_FALSE(tokens.count(std::string(choice))) << choice << " is written in " << dict << " (run.sh adds it)";
      }
    }
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
