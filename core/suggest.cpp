#include "core/suggest.hpp"

#include <algorithm>
#include <cctype>

#include "core/error.hpp"

namespace pipesim {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool starts_with(std::string_view text, std::string_view prefix) {
  return prefix.size() <= text.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) { return lower(a) == lower(b); });
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: i-2, i-1 and i.
  const std::size_t n = b.size();
  std::vector<std::size_t> before(n + 1), prev(n + 1), row(n + 1);
  for (std::size_t j = 0; j <= n; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= n; ++j) {
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[n];
}

std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& known,
                                       std::size_t limit) {
  if (name.empty()) return {};
  const std::size_t allowed = std::max<std::size_t>(1, name.size() / 3);
  std::size_t best = allowed + 1;
  std::vector<std::string> closest, prefixed;
  for (const std::string& k : known) {
    // The lengths bound the distance from below, so a huge name costs no quadratic work.
    const std::size_t gap = name.size() > k.size() ? name.size() - k.size() : k.size() - name.size();
    const std::size_t d = gap > allowed ? gap : edit_distance(name, k);
    if (d < best) {  // best starts beyond `allowed`
      best = d;
      closest = {k};
    } else if (d == best && d <= allowed) {
      closest.push_back(k);
    }
    if (name.size() >= 2 && starts_with(k, name)) prefixed.push_back(k);
  }
  std::vector<std::string> out = prefixed;
  for (const std::string& c : closest)
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& known) {
  const std::vector<std::string> names = closest_names(name, known);
  if (names.empty()) return {};
  std::string out = "did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += quote(names[i]);
  }
  return out + "? ";
}

}  // namespace pipesim
