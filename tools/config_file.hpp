#pragma once
// `--config FILE` / `--save-config FILE`: every flag of a subcommand as one JSON object
// (schema: docs/experiment-config.md). A value from the file goes through the same option,
// so it meets the same checks as the flag (tools/cli_checks.hpp) and gets the same
// messages, prefixed with the file and key: "c.json: /tp: 'two': expected a decimal integer".
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/cli_app.hpp"

namespace pipesim {

// Sets every option of `app` named in the JSON object at `path` ("tp": 2 sets --tp) that
// was not given on the command line (flags override the file). InputError naming the file
// and key for unknown keys, bad values, keys given twice, and combinations the command
// line refuses (a key that excludes another set one, or needs one that is not set).
void apply_config_file(CLI::App& app, const std::string& path);

// Who wins where the command line and the object both set an option.
enum class ConfigPrecedence { FlagsWin, ObjectWins };
// apply_config_file for the JSON object `object` at JSON path `pointer` ("" for the root,
// "/blocks/2") of file `path`: messages name "path: pointer/key". Keys in `refused` are an
// InputError (settings that cannot be set there). With ObjectWins, an option given on the
// command line is replaced (its results cleared first).
void apply_config_object(CLI::App& app, const nlohmann::json& object, const std::string& path,
                         const std::string& pointer, ConfigPrecedence precedence,
                         const std::vector<std::string>& refused = {});

// The effective settings of `app` as such a JSON object (options with a value or a
// default), as text. Outputs (--trace, --report, ...) and --config itself are left out, and
// so are the defaults of `unused` (flags this run does not use, which loading the file
// again would refuse) and of options that a given option excludes.
std::string config_text(const CLI::App& app, const std::vector<std::string>& unused = {});

// `message` of a check that names a flag first ("--fwd: expected a duration ...") with the file
// and key instead where the value came from a file ("c.json: /fwd: expected ..."): bad values
// found after parsing are named where the user wrote them.
std::string with_config_origin(const std::string& message);

// Whether the user gave `flag`, on the command line or in --config.
bool given(const CLI::App& app, const std::string& flag);
// InputError "<flag>: <why>" for the first of `flags` given: a flag the run would silently
// ignore is an error.
void reject_given_flags(const CLI::App& app, const std::vector<std::string>& flags, const std::string& why);

}  // namespace pipesim
