#pragma once
// The grid of `pipesim sweep`: which values each dimension takes, how the flags spell them,
// and how a combination is numbered. docs/sweep.md has the syntax.
//
// Numbers: a comma-separated list of items, each a positive integer ("4") or a range
// "A..B", every power of two from A to B inclusive ("8..128" = 8,16,32,64,128). The values
// are sorted and duplicates dropped, so "4,1,2..4" and "1,2,4" give the same grid and the
// same combination numbers.
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/generator.hpp"

namespace pipesim {

// InputError naming `flag` for a bad item ("8..x"), an empty range ("16..8", "5..7"), a
// value below `minimum` or an empty list.
std::vector<int> parse_int_grid(std::string_view text, std::string_view flag, int minimum = 1);
// Comma-separated names in the order given; InputError for an empty list or a name given twice.
std::vector<std::string> parse_name_grid(std::string_view text, std::string_view flag);
// parse_name_grid for the text setting `setting` ("concat"): each name one of its choices
// (InputError "--concat: expected direct, doubling or halving, got 'x'").
std::vector<std::string> parse_choice_grid(std::string_view text, std::string_view setting);
// `all` or a list of generator names; InputError for unknown names (listing the known ones).
std::vector<std::string> parse_schedule_grid(std::string_view text);
// The values of `setting` in `text`: parse_int_grid from its minimum on for an integer
// setting, parse_choice_grid for a text one.
std::vector<SettingValue> parse_setting_grid(std::string_view text, const ScheduleSetting& setting);

// One generator with a value for each setting of it the sweep varies
// (GeneratorInfo::settings, named by their labels): "interleaved v=4", "chimera
// concat=halving", "amp keys=2 freq=4", "pipedream-2bw policy=naive", "amdp update=early".
// A setting varies only for the generators that read it, so no two variants give the same
// schedule because of a setting that has no effect.
struct SweepVariant {
  std::string schedule;
  ScheduleParams settings;  // the settings the generator reads (p, m per combination)
  std::string label;        // the schedule, and the settings whose list has several values
};

// The lists of the generators' settings that vary (-v, --concat, --max-active-keys, ...:
// every setting of schedule_settings() but p, m and iterations): every variant of each
// schedule, the product of the lists of the settings it reads in schedule_settings()
// order, the last fastest.
struct VariantLists {
  std::vector<std::string> schedules;
  // By setting name; a setting without a list takes its default.
  std::map<std::string_view, std::vector<SettingValue>, std::less<>> values;
  // Also name a setting whose one value is not its default (`converge`: "pipedream-2bw
  // policy=naive" for --twobw-policy naive); a sweep names only the settings that vary.
  bool name_off_default = false;
};
std::vector<SweepVariant> expand_variants(const VariantLists& lists);

// Every dimension of the sweep. A combination's index counts in this order, the last
// dimension fastest: hardware, variant, tp, pp, batch, micro_batch_size, recompute. The batch
// dimension is the global batch (sequences per optimizer step) when `global_batch` is given,
// the micro-batches per iteration otherwise.
struct SweepGrid {
  std::vector<std::string> hardware;
  std::vector<SweepVariant> variants;
  std::vector<int> tp;
  std::vector<int> pp;
  std::vector<int> microbatches;
  std::vector<int> global_batch;  // empty: m comes from `microbatches`
  std::vector<int> micro_batch_size;
  std::vector<std::string> recompute;

  bool by_global_batch() const { return !global_batch.empty(); }
  const std::vector<int>& batches() const { return by_global_batch() ? global_batch : microbatches; }
  std::size_t size() const;
};

// The position of one combination in every dimension.
struct GridPoint {
  std::size_t hardware = 0, variant = 0, tp = 0, pp = 0, batch = 0, micro_batch_size = 0, recompute = 0;
};

std::size_t grid_index(const SweepGrid& grid, const GridPoint& point);
GridPoint grid_point(const SweepGrid& grid, std::size_t index);

// "8..128" for a run of consecutive powers of two, else the values comma-separated: how
// tables and the report show a dimension.
std::string grid_text(const std::vector<int>& values);

}  // namespace pipesim
