#include "tools/sweep_grid.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include "core/error.hpp"
#include "schedules/generator.hpp"

namespace pipesim {
namespace {

// Big enough for any cluster, small enough that tp x pp x dp cannot overflow an int.
constexpr int kMaxValue = 1 << 20;

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> items;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    items.push_back(trim(text.substr(start, comma == std::string_view::npos ? text.npos : comma - start)));
    if (comma == std::string_view::npos) return items;
    start = comma + 1;
  }
}

std::string expected_form(std::string_view flag) {
  return std::string(flag) + ": expected positive integers or ranges A..B (powers of two from A to B), " +
         "comma-separated, e.g. 1,2,4 or 8..128";
}

int parse_value(std::string_view item, std::string_view whole, std::string_view flag, int minimum) {
  int value = 0;
  const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
  if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
    throw InputError(expected_form(flag) + "; got " + quote(whole));
  if (value < minimum || value > kMaxValue)
    throw InputError(std::string(flag) + ": values must lie in " + std::to_string(minimum) + ".." +
                     std::to_string(kMaxValue) + ", got '" + std::string(whole) + "'");
  return value;
}

}  // namespace

std::vector<int> parse_int_grid(std::string_view text, std::string_view flag, int minimum) {
  if (trim(text).empty()) throw InputError(std::string(flag) + ": empty grid; " + expected_form(flag));
  std::vector<int> values;
  for (std::string_view item : split_commas(text)) {
    const std::size_t dots = item.find("..");
    if (dots == std::string_view::npos) {
      values.push_back(parse_value(item, item, flag, minimum));
      continue;
    }
    const int a = parse_value(trim(item.substr(0, dots)), item, flag, minimum);
    const int b = parse_value(trim(item.substr(dots + 2)), item, flag, minimum);
    const std::size_t before = values.size();
    for (long long v = 1; v <= b; v *= 2)
      if (v >= a) values.push_back(static_cast<int>(v));
    if (values.size() == before)
      throw InputError(std::string(flag) + ": range " + quote(item) + " holds no power of two (A..B takes " +
                       "every power of two from A to B, A <= B)");
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::vector<std::string> parse_name_grid(std::string_view text, std::string_view flag) {
  if (trim(text).empty()) throw InputError(std::string(flag) + ": empty grid; expected comma-separated names");
  std::vector<std::string> names;
  for (std::string_view item : split_commas(text)) {
    if (item.empty())
      throw InputError(std::string(flag) + ": empty name in " + quote(text) + "; expected comma-separated names");
    if (std::find(names.begin(), names.end(), item) != names.end())
      throw InputError(std::string(flag) + ": " + quote(item) + " is listed twice");
    names.emplace_back(item);
  }
  return names;
}

std::vector<std::string> parse_choice_grid(std::string_view text, std::string_view setting) {
  const ScheduleSetting& s = find_setting(setting);
  std::vector<std::string> names = parse_name_grid(text, s.flag());
  for (const std::string& name : names)
    if (std::find(s.choices.begin(), s.choices.end(), name) == s.choices.end())
      throw InputError(s.flag() + ": expected " + s.choices_text() + ", got " + quote(name));
  return names;
}

std::vector<std::string> parse_schedule_grid(std::string_view text) {
  if (trim(text) == "all") {
    std::vector<std::string> all;
    for (const GeneratorInfo& g : generators()) all.emplace_back(g.name);
    return all;
  }
  std::vector<std::string> names = parse_name_grid(text, "--schedules");
  for (const std::string& name : names) {
    try {
      (void)find_generator(name);
    } catch (const InputError& e) {
      throw InputError(std::string("--schedules: ") + e.what());
    }
  }
  return names;
}

std::vector<SettingValue> parse_setting_grid(std::string_view text, const ScheduleSetting& setting) {
  std::vector<SettingValue> out;
  if (setting.is_text())
    for (std::string& name : parse_choice_grid(text, setting.name())) out.emplace_back(std::move(name));
  else
    for (int v : parse_int_grid(text, setting.flag(), setting.minimum)) out.emplace_back(v);
  return out;
}

std::vector<SweepVariant> expand_variants(const VariantLists& lists) {
  std::vector<SweepVariant> out;
  for (const std::string& name : lists.schedules) {
    const GeneratorInfo& g = find_generator(name);
    // The settings the generator reads, each with its list (several values only where it varies).
    struct Dimension {
      const ScheduleSetting* setting;
      std::vector<SettingValue> values;
    };
    std::vector<Dimension> dims;
    for (const ScheduleSetting& s : schedule_settings()) {
      if (!g.reads(s.name())) continue;
      const auto it = lists.values.find(s.name());
      dims.push_back({&s, it == lists.values.end() ? std::vector<SettingValue>{s.default_value()} : it->second});
    }
    // Odometer over the dimensions, the last fastest.
    std::vector<std::size_t> at(dims.size(), 0);
    for (bool more = true; more;) {
      ScheduleParams settings;
      std::string label = name;
      for (std::size_t d = 0; d < dims.size(); ++d) {
        const ScheduleSetting& s = *dims[d].setting;
        const SettingValue& value = dims[d].values[at[d]];
        s.set(settings, value);
        if (dims[d].values.size() > 1 || (lists.name_off_default && value != s.default_value()))
          label += " " + std::string(s.label_or_name()) + "=" + s.value(settings);
      }
      out.push_back({name, std::move(settings), std::move(label)});
      more = false;
      for (std::size_t d = dims.size(); d-- > 0 && !more;) {
        more = ++at[d] < dims[d].values.size();
        if (!more) at[d] = 0;
      }
    }
  }
  return out;
}

std::size_t SweepGrid::size() const {
  std::size_t n = 1;  // saturates: an absurd grid is refused by its size, not wrapped to a small one
  for (std::size_t d : {hardware.size(), variants.size(), tp.size(), pp.size(), batches().size(),
                        micro_batch_size.size(), recompute.size()})
    n = d != 0 && n > std::numeric_limits<std::size_t>::max() / d ? std::numeric_limits<std::size_t>::max() : n * d;
  return n;
}

// Mixed radix, the last dimension fastest.
std::size_t grid_index(const SweepGrid& g, const GridPoint& p) {
  std::size_t i = p.hardware;
  i = i * g.variants.size() + p.variant;
  i = i * g.tp.size() + p.tp;
  i = i * g.pp.size() + p.pp;
  i = i * g.batches().size() + p.batch;
  i = i * g.micro_batch_size.size() + p.micro_batch_size;
  return i * g.recompute.size() + p.recompute;
}

GridPoint grid_point(const SweepGrid& g, std::size_t i) {
  GridPoint p;
  auto digit = [&i](std::size_t radix) {
    const std::size_t d = i % radix;
    i /= radix;
    return d;
  };
  p.recompute = digit(g.recompute.size());
  p.micro_batch_size = digit(g.micro_batch_size.size());
  p.batch = digit(g.batches().size());
  p.pp = digit(g.pp.size());
  p.tp = digit(g.tp.size());
  p.variant = digit(g.variants.size());
  p.hardware = i;
  return p;
}

std::string grid_text(const std::vector<int>& values) {
  bool doubling = values.size() >= 3 && (values.front() & (values.front() - 1)) == 0;
  for (std::size_t i = 1; doubling && i < values.size(); ++i) doubling = values[i] == 2 * values[i - 1];
  if (doubling) return std::to_string(values.front()) + ".." + std::to_string(values.back());
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

}  // namespace pipesim
