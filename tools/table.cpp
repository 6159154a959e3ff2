#include "tools/table.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "core/error.hpp"

namespace pipesim {

void Table::add_column(std::string header, Align align) {
  headers_.push_back(std::move(header));
  aligns_.push_back(align);
}

void Table::add_row(std::vector<std::string> cells) {
  PIPESIM_ASSERT(cells.size() == headers_.size());
  // Names from the user's files reach the terminal escaped, and a huge one cut.
  for (std::string& cell : cells) cell = one_line(cell.size() > 200 ? cell.substr(0, 200) + "..." : cell);
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  std::vector<std::size_t> width(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) {
    width[c] = headers_[c].size();
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      if (c) out += "  ";
      out += aligns_[c] == Align::Left ? cells[c] + (c + 1 < cells.size() ? pad : "") : pad + cells[c];
    }
    return out + "\n";
  };
  std::string out = line(headers_);
  std::size_t total = 0;
  for (std::size_t c = 0; c < width.size(); ++c) total += width[c] + (c ? 2 : 0);
  out += std::string(total, '-') + "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string format_percent(double fraction) { return format_fixed(fraction * 100.0, 2) + " %"; }

std::string format_signed_percent(double fraction) { return (fraction >= 0 ? "+" : "") + format_percent(fraction); }

std::string wrap_note(const std::string& text) {
  std::string out, line;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    const std::string word = text.substr(at, end - at);
    if (!line.empty() && line.size() + 1 + word.size() > 95) out += std::exchange(line, {}) + "\n";
    line += (line.empty() ? "" : " ") + word;
    at = end + 1;
  }
  return out + line + "\n";
}

}  // namespace pipesim
