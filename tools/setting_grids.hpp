#pragma once
// The generators' settings as list flags of `sweep` and `converge`: one comma-separated
// flag per setting of schedule_settings() but p, m and iterations (-v, --pipelines,
// --concat, ...), made from its declaration, so a setting a new generator declares is a
// grid dimension of both with no edit here. Each generator varies over the lists of the
// settings it reads (expand_variants).
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "tools/sweep_grid.hpp"

namespace pipesim {

class SettingGridFlags {
 public:
  SettingGridFlags();  // each list its setting's default
  SettingGridFlags(const SettingGridFlags&) = default;
  // The flags are bound to the lists (add): assignment copies the texts in place, as
  // `sweep` does to put the command line back after a block of a grid file.
  SettingGridFlags& operator=(const SettingGridFlags& other);

  // Adds the flags in schedule_settings() order, each with its setting's help followed by
  // `number_suffix` (an integer setting) or `text_suffix`, and the setting's default.
  void add(CLI::App& app, std::string_view number_suffix, std::string_view text_suffix);
  // Every flag's list (parse_setting_grid; InputError naming the flag), into `lists`.
  void parse(VariantLists& lists) const;

 private:
  std::vector<std::string> text_;  // in schedule_settings() order ("" for p, m, iterations)
};

}  // namespace pipesim
