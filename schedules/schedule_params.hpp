#pragma once
// What a generator is asked for: the shape every schedule has (p, m, v, iterations, which a
// schedule file has too), and the settings of the generator families by name ("pipelines",
// "max-active-keys", ...). A family setting is declared, with its default, flag, help and
// choices, by the generator file that reads it (ScheduleSetting in GeneratorInfo::settings),
// so a new setting is added there and nowhere else: the CLI, sweep, converge and the Python
// module set it by name (schedules/schedule_setting.hpp).
//
// Generators read each setting once, at the top (a map look-up, never in their loops).
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <variant>

namespace pipesim {

// A setting's value: an integer or a text (one of the setting's choices).
using SettingValue = std::variant<int, std::string>;

// The family settings of one ScheduleParams: those set, by name; the others are their
// declared defaults. A name no generator declares, or a value of the other type, is an
// internal error (PIPESIM_ASSERT): names come from the declarations, not from input.
class FamilySettings {
 public:
  int number(std::string_view name) const;
  std::string text(std::string_view name) const;
  void set(std::string_view name, SettingValue value);

 private:
  // Keyed by the declaration's own name (static storage), in name order.
  std::map<std::string_view, SettingValue, std::less<>> values_;
};

struct ScheduleParams {
  int p = 4;           // pipeline stages = devices per pipeline (the spec's D)
  int m = 8;           // micro-batches each device executes per iteration (the spec's N)
  int v = 2;           // chunks per device (the interleaved schedules)
  int iterations = 1;  // optimizer steps to generate (T)
  FamilySettings settings = {};

  int number(std::string_view name) const { return settings.number(name); }
  std::string text(std::string_view name) const { return settings.text(name); }
  void set(std::string_view name, SettingValue value) { settings.set(name, std::move(value)); }
};

}  // namespace pipesim
