#include "tools/config_file.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_input.hpp"
#include "tools/cli_checks.hpp"

namespace pipesim {
namespace {

// Options that name files the run writes or reads, or shape only them and the display, not
// settings of the experiment.
const std::vector<std::string> kNotSettings = {"help", "json", "breakdown", "config", "save-config", "trace", "trace-dir",
                                               "report", "report-capacity", "trace-budget", "max-trace-ops",
                                               "progress"};

std::string long_name(const CLI::Option* opt) {
  const std::string name = opt->get_name();
  return name.rfind("--", 0) == 0 ? name.substr(2) : std::string();
}

// Where the value of each option set from a file came from: "--fwd" -> "c.json: /fwd".
std::map<std::string, std::string>& origins() {
  static std::map<std::string, std::string> where;
  return where;
}

// A JSON value as the user wrote it, for a message: at most 60 characters.
std::string bounded_json(const nlohmann::json& v) {
  const std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

std::string joined_results(const CLI::Option* opt) {
  std::string value;
  for (const auto& r : opt->results()) value += (value.empty() ? "" : ",") + r;
  return value;
}

}  // namespace

void apply_config_file(CLI::App& app, const std::string& path) {
  const nlohmann::json root = parse_json_input(read_input_file(path, kConfigFileInput), path);
  if (!root.is_object()) throw InputError(path + ": expected a JSON object of settings like {\"tp\": 2}");
  apply_config_object(app, root, path, "", ConfigPrecedence::FlagsWin);
}

void apply_config_object(CLI::App& app, const nlohmann::json& object, const std::string& path,
                         const std::string& pointer, ConfigPrecedence precedence,
                         const std::vector<std::string>& refused) {
  PIPESIM_ASSERT(object.is_object());
  std::vector<const CLI::Option*> from_file;
  for (const auto& item : object.items()) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    const std::string where = path + ": " + pointer + "/" + key + ": ";
    if (std::find(refused.begin(), refused.end(), key) != refused.end())
      throw InputError(where + "not a setting here (give --" + key + " on the command line)");
    CLI::Option* opt = nullptr;
    try {
      opt = key.empty() ? nullptr : app.get_option("--" + key);
    } catch (const CLI::OptionNotFound&) {
    }
    if (!opt)
      throw InputError(where + "unknown setting (the keys are the flags of `pipesim " + app.get_name() +
                       " --help` without the dashes)");
    if (opt->count() > 0) {
      if (precedence == ConfigPrecedence::FlagsWin) continue;  // given on the command line: the flag wins
      opt->clear();
    }
    std::vector<std::string> values;
    auto scalar = [&](const nlohmann::json& v) {
      if (v.is_string()) return v.get<std::string>();
      if (v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
      if (v.is_number_integer()) return v.dump();
      if (v.is_number()) return v.dump();
      throw InputError(where + "expected a string, number or boolean, got " + v.type_name());
    };
    if (opt->get_expected_max() == 0) {  // a switch (--json, --synchronous-only): true or false, as --save-config writes it
      const bool on = value == true || value == "true", off = value == false || value == "false";
      if (!on && !off) throw InputError(where + "expected true or false, got " + bounded_json(value));
      values.push_back(on ? "true" : "false");
    } else if (value.is_array() && opt->get_expected_max() > 1) {  // a repeatable flag: one value per entry
      for (const auto& v : value) values.push_back(scalar(v));
    } else if (value.is_array()) {  // a list flag like --schedules: comma-separated
      std::string joined;
      for (const auto& v : value) joined += (joined.empty() ? "" : ",") + scalar(v);
      values.push_back(joined);
    } else {
      values.push_back(scalar(value));
    }
    try {
      opt->add_result(values);
      opt->run_callback();
    } catch (const CLI::Error& e) {
      // "--tp: 'two': expected a decimal integer" -> "c.json: /tp: 'two': expected ..."
      std::string text = cli_error_text(e);
      const std::string flag = opt->get_name() + ": ";
      if (text.rfind(flag, 0) == 0) text = text.substr(flag.size());
      throw InputError(where + text);
    }
    from_file.push_back(opt);
    origins()["--" + key] = path + ": " + pointer + "/" + key;
  }
  // What CLI11 checks for the command line, for the options the file set.
  for (const CLI::Option* opt : from_file) {
    for (const CLI::Option* other : opt->get_excludes())
      if (other->count() > 0)
        throw InputError(path + ": " + pointer + "/" + long_name(opt) + ": cannot be used with " + other->get_name() +
                         " (set too)");
    for (const CLI::Option* needed : opt->get_needs())
      if (needed->count() == 0)
        throw InputError(path + ": " + pointer + "/" + long_name(opt) + ": needs " + needed->get_name() + " too");
  }
}

std::string with_config_origin(const std::string& message) {
  const std::size_t end = message.find_first_of(": ");
  if (message.rfind("--", 0) != 0 || end == std::string::npos) return message;
  const auto it = origins().find(message.substr(0, end));
  if (it == origins().end()) return message;
  // "--fwd: expected ..." -> "c.json: /fwd: expected ..."; "--fwd 5ns is ..." -> "c.json: /fwd 5ns is ..."
  return it->second + message.substr(end);
}

std::string config_text(const CLI::App& app, const std::vector<std::string>& unused) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const CLI::Option* opt : app.get_options()) {
    const std::string name = long_name(opt);
    if (name.empty() || std::find(kNotSettings.begin(), kNotSettings.end(), name) != kNotSettings.end()) continue;
    if (opt->get_expected_max() > 1) {  // repeatable: an array of its values
      if (opt->count() > 0) j[name] = opt->results();
      continue;
    }
    if (opt->count() == 0 && std::find(unused.begin(), unused.end(), opt->get_name()) != unused.end()) continue;
    // The default of an option that a given one excludes (-m beside --global-batch-size).
    const auto& excluded_by = opt->get_excludes();
    if (opt->count() == 0 &&
        std::any_of(excluded_by.begin(), excluded_by.end(), [](const CLI::Option* o) { return o->count() > 0; }))
      continue;
    const std::string value = opt->count() > 0 ? joined_results(opt) : opt->get_default_str();
    if (!value.empty()) j[name] = value;
  }
  // Values are the user's text: invalid UTF-8 is replaced rather than thrown on.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void reject_given_flags(const CLI::App& app, const std::vector<std::string>& flags, const std::string& why) {
  for (const std::string& flag : flags)
    if (given(app, flag)) throw InputError(flag + ": " + why);
}

bool given(const CLI::App& app, const std::string& flag) {
  const CLI::Option* opt = app.get_option_no_throw(flag);
  return opt != nullptr && opt->count() > 0;
}

}  // namespace pipesim
