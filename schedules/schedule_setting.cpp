#include "schedules/schedule_setting.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "schedules/generator.hpp"

namespace pipesim {
namespace {

using P = ScheduleParams;

const std::vector<ScheduleSetting>& shape_settings() {
  static const std::vector<ScheduleSetting> shape = {
      {.flags = "-p,--stages", .help = "Pipeline stages (devices per pipeline)", .field = &P::p, .every = true},
      {.flags = "-m,--microbatches", .help = "Micro-batches per iteration", .field = &P::m, .every = true},
      chunks_setting(),
      {.flags = "--iterations", .help = "Iterations (optimizer steps)", .field = &P::iterations, .every = true}};
  return shape;
}

// A family setting's declaration, checked to be of the type it is read as.
const ScheduleSetting& family_setting(std::string_view name, bool text) {
  const ScheduleSetting& s = find_setting(name);
  PIPESIM_ASSERT(!s.shape() && s.is_text() == text);
  return s;
}

}  // namespace

const ScheduleSetting& chunks_setting() {
  static const ScheduleSetting chunks{
      .flags = "-v,--chunks", .help = "Chunks per device (interleaved)", .label = "v", .field = &P::v};
  return chunks;
}

const std::vector<ScheduleSetting>& schedule_settings() {
  static const std::vector<ScheduleSetting> all = [] {
    std::vector<ScheduleSetting> family;
    for (const GeneratorInfo& g : generators())
      for (const ScheduleSetting& s : g.settings) {
        const auto same = [&](const ScheduleSetting& o) { return o.name() == s.name(); };
        const auto& shape = shape_settings();
        if (const auto it = std::find_if(shape.begin(), shape.end(), same); it != shape.end()) {
          PIPESIM_ASSERT(*it == s);  // a generator lists a shape setting as declared here
          continue;
        }
        const auto it = std::find_if(family.begin(), family.end(), same);
        if (it == family.end())
          family.push_back(s);
        else
          PIPESIM_ASSERT(*it == s);  // a setting two generators read is declared the same by both
      }
    std::stable_sort(family.begin(), family.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
    std::vector<ScheduleSetting> out = shape_settings();
    out.insert(out.end(), family.begin(), family.end());
    return out;
  }();
  return all;
}

const ScheduleSetting* setting_named(std::string_view name) {
  const auto& all = schedule_settings();
  const auto it = std::find_if(all.begin(), all.end(), [&](const ScheduleSetting& s) { return s.name() == name; });
  return it == all.end() ? nullptr : &*it;
}

const ScheduleSetting& find_setting(std::string_view name) {
  const ScheduleSetting* s = setting_named(name);
  PIPESIM_ASSERT(s != nullptr);
  return *s;
}

std::string_view ScheduleSetting::name() const { return flags.substr(flags.find("--") + 2); }

std::string_view ScheduleSetting::letter() const {
  return flags.substr(0, 2) == "--" ? name() : flags.substr(1, 1);
}

std::string_view ScheduleSetting::label_or_name() const { return label.empty() ? name() : label; }

std::string ScheduleSetting::flag() const { return "--" + std::string(name()); }

std::string ScheduleSetting::choices_text() const {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i)
    out += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(choices[i]);
  return out;
}

SettingValue ScheduleSetting::default_value() const {
  if (is_text()) return std::string(default_text);
  return field ? ScheduleParams{}.*field : default_number;
}

SettingValue ScheduleSetting::get(const ScheduleParams& params) const {
  if (field) return params.*field;
  if (is_text()) return params.text(name());
  return params.number(name());
}

void ScheduleSetting::set(ScheduleParams& params, SettingValue value) const {
  if (field) {
    PIPESIM_ASSERT(std::holds_alternative<int>(value));
    params.*field = std::get<int>(value);
  } else {
    params.set(name(), std::move(value));
  }
}

std::string ScheduleSetting::value(const ScheduleParams& params) const {
  const SettingValue v = get(params);
  return std::holds_alternative<int>(v) ? std::to_string(std::get<int>(v)) : std::get<std::string>(v);
}

int FamilySettings::number(std::string_view name) const {
  const ScheduleSetting& s = family_setting(name, false);
  const auto it = values_.find(name);
  return it == values_.end() ? s.default_number : std::get<int>(it->second);
}

std::string FamilySettings::text(std::string_view name) const {
  const ScheduleSetting& s = family_setting(name, true);
  const auto it = values_.find(name);
  return it == values_.end() ? std::string(s.default_text) : std::get<std::string>(it->second);
}

void FamilySettings::set(std::string_view name, SettingValue value) {
  const ScheduleSetting& s = family_setting(name, std::holds_alternative<std::string>(value));
  values_.insert_or_assign(s.name(), std::move(value));
}

}  // namespace pipesim
