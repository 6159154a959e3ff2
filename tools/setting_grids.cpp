#include "tools/setting_grids.hpp"

namespace pipesim {

SettingGridFlags::SettingGridFlags() {
  for (const ScheduleSetting& s : schedule_settings()) text_.push_back(s.every ? "" : s.value(ScheduleParams{}));
}

SettingGridFlags& SettingGridFlags::operator=(const SettingGridFlags& other) {
  for (std::size_t i = 0; i < text_.size(); ++i) text_[i] = other.text_[i];
  return *this;
}

void SettingGridFlags::add(CLI::App& app, std::string_view number_suffix, std::string_view text_suffix) {
  const auto& all = schedule_settings();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const ScheduleSetting& s = all[i];
    if (s.every) continue;
    app.add_option(std::string(s.flags), text_[i],
                   std::string(s.help) + std::string(s.is_text() ? text_suffix : number_suffix))
        ->capture_default_str();
  }
}

void SettingGridFlags::parse(VariantLists& lists) const {
  const auto& all = schedule_settings();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (!all[i].every) lists.values[all[i].name()] = parse_setting_grid(text_[i], all[i]);
}

}  // namespace pipesim
