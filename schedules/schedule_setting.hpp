#pragma once
// One setting of the generators and the CLI flag that sets it. The shape settings (p, m,
// v, iterations) are declared here; every other one by the generator file that reads it,
// in its GeneratorInfo::settings. schedule_settings() is their union: the CLI's flags and
// their help (add_schedule_flags), the grids of sweep and converge, `pipesim schedule
// --list`, the Python module's keyword arguments and the tests all read it.
#include <string>
#include <string_view>
#include <vector>

#include "schedules/schedule_params.hpp"

namespace pipesim {

struct ScheduleSetting {
  std::string_view flags;  // CLI11 spelling: "-v,--chunks", "--pipelines"
  std::string_view help;   // the flag's --help line
  // Where it stands in --help (after p, m, v, iterations) and in sweep's variant order.
  int order = 0;
  // How a variant label names it ("amp keys=2"); empty: name().
  std::string_view label = {};
  int default_number = 0;                     // an integer setting's default, or
  std::string_view default_text = {};         // a text setting's default ...
  std::vector<std::string_view> choices = {};  // ... one of these values
  // The smallest value a list of sweep or converge takes (0 where 0 means something).
  int minimum = 1;
  int ScheduleParams::*field = nullptr;  // p, m, v, iterations: a field (a schedule file has them too)
  bool every = false;                    // read by every generator (p, m, iterations)

  bool operator==(const ScheduleSetting&) const = default;

  bool is_text() const { return !choices.empty(); }
  bool shape() const { return field != nullptr; }
  std::string_view name() const;    // the long flag without "--": "chunks"
  std::string_view letter() const;  // how messages name it: the short flag's letter ("v") or name()
  std::string_view label_or_name() const;
  std::string flag() const;         // "--chunks"
  std::string choices_text() const;  // "direct, doubling or halving"
  SettingValue default_value() const;
  SettingValue get(const ScheduleParams& params) const;
  void set(ScheduleParams& params, SettingValue value) const;
  std::string value(const ScheduleParams& params) const;  // "4", "halving"
};

// -v,--chunks: the shape setting the interleaved generators list among their settings.
const ScheduleSetting& chunks_setting();

// p, m, v, iterations, then every setting the generators declare, by order: --help's order.
const std::vector<ScheduleSetting>& schedule_settings();
// The setting named `name` ("chunks"), or nullptr.
const ScheduleSetting* setting_named(std::string_view name);
// The same; PIPESIM_ASSERT that it exists.
const ScheduleSetting& find_setting(std::string_view name);

}  // namespace pipesim
