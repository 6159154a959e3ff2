#include "traces/html_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <tuple>

#include "core/units.hpp"
#include "core/error.hpp"
#include "traces/html_style.hpp"
#include "traces/svg.hpp"

namespace pipesim {
namespace {

constexpr double kLeft = 78, kRight = 24, kTop = 30, kHeight = 320, kBottom = 46;

void put(std::ostream& out, const std::string& text) {
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

// Decimals an axis label needs so that neighbouring ticks `step` apart differ.
int decimals_for(double step) {
  int d = 0;
  for (double s = step; d < 6 && s < 1 - 1e-9; s *= 10) ++d;
  return d;
}

// tokens/s in a unit that keeps axis labels short.
struct RateUnit {
  std::string_view title;
  double size = 1;
};
RateUnit rate_unit_for(double max) {
  if (max >= 1e7) return {"tokens/s (millions)", 1e6};
  if (max >= 1e4) return {"tokens/s (thousands)", 1e3};
  return {"tokens/s", 1};
}

// A linear axis from 0 to a round number at or above `max`.
struct Axis {
  double step = 1, end = 1;
};
Axis axis_for(double max, int ticks, double min_step) {
  Axis a;
  a.step = std::max(min_step, nice_step(std::max(max, min_step), ticks));
  a.end = std::max(1.0, std::ceil(max / a.step - 1e-9)) * a.step;
  return a;
}

// What the scatter plot needs to know about its x axis.
struct XAxis {
  std::string title;
  double end = 1, step = 1, unit = 1;
  int decimals = 0;
};

std::string front_note(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " configuration" : " configurations") + " on the front";
}

// A scatter plot of tokens/s (y) against `x_of` (x) with the front as a staircase. Points
// are drawn in three layers (does not fit, fits, on the front) and merged per pixel.
template <typename XOf>
std::string scatter(const SweepPage& page, const std::vector<std::size_t>& front, XOf x_of, const XAxis& xa,
                    const std::vector<SweepCapacity>& capacities, std::string_view label) {
  double max_rate = 0;
  for (const SweepPoint& p : page.points) max_rate = std::max(max_rate, p.tokens_per_s);
  const RateUnit ru = rate_unit_for(max_rate);
  const Axis ya = axis_for(max_rate / ru.size, 6, 0);
  const double w = std::max(page.width, 320), plot_w = w - kLeft - kRight, bottom = kTop + kHeight;
  // Beyond the axis (configurations far over capacity): on the right edge.
  auto px = [&](double v) { return kLeft + std::min(v, xa.end) / xa.end * plot_w; };
  auto py = [&](double rate) { return bottom - rate / ru.size / ya.end * kHeight; };

  SvgWriter svg(w, bottom + kBottom, "scatter", label);
  svg.text(kLeft - 8, 16, ru.title, "atitle");
  svg.open_group("axis");
  for (int i = 0; i * ya.step <= ya.end + 1e-9; ++i) {
    const double y = py(i * ya.step * ru.size);
    svg.line(kLeft, y, kLeft + plot_w, y, "grid");
    svg.text(kLeft - 6, y + 4, format_fixed_number(i * ya.step, decimals_for(ya.step)), "tick", "end");
  }
  for (int i = 0; i * xa.step <= xa.end + 1e-9; ++i) {
    const double x = px(i * xa.step);
    svg.line(x, bottom, x, bottom + 4, "base");
    svg.text(x, bottom + 17, format_fixed_number(i * xa.step / xa.unit, xa.decimals), "tick", "middle");
  }
  svg.line(kLeft, bottom, kLeft + plot_w, bottom, "base");
  svg.line(kLeft, kTop, kLeft, bottom, "base");
  svg.text(kLeft + plot_w / 2, bottom + 36, xa.title, "atitle", "middle");
  svg.close_group();

  for (const SweepCapacity& c : capacities) {
    const double x = px(static_cast<double>(c.bytes));
    svg.line(x, kTop - 6, x, bottom, "cap");
    svg.text(x + 4, kTop + 6, c.label + " " + format_bytes(static_cast<double>(c.bytes)), "caplbl");
  }

  std::vector<bool> on_front(page.points.size(), false);
  for (std::size_t i : front) on_front[i] = true;
  // Layer 0: does not fit; 1: fits; 2: on the front (never merged: each is a row of its table).
  for (int layer = 0; layer < 3; ++layer) {
    std::map<std::pair<long, long>, std::pair<std::size_t, int>> merged;  // pixel -> first point, count
    std::vector<std::pair<long, long>> order;
    for (std::size_t i = 0; i < page.points.size(); ++i) {
      const SweepPoint& p = page.points[i];
      const int l = on_front[i] ? 2 : p.fits ? 1 : 0;
      if (l != layer) continue;
      std::pair<long, long> key{std::lround(px(x_of(p))), std::lround(py(p.tokens_per_s))};
      if (layer == 2) key = {static_cast<long>(i), -1};
      auto [it, fresh] = merged.try_emplace(key, i, 0);
      if (fresh) order.push_back(key);
      ++it->second.second;
    }
    static constexpr std::string_view kClass[] = {"pt no", "pt", "pt fr"};
    svg.open_group(layer == 2 ? "front" : "points");
    for (const auto& key : order) {
      const auto [i, count] = merged.at(key);
      const SweepPoint& p = page.points[i];
      std::string title = p.label;
      if (count > 1) title += " (and " + std::to_string(count - 1) + " more here)";
      svg.raw("<circle cx=\"" + svg_coord(px(x_of(p))) + "\" cy=\"" + svg_coord(py(p.tokens_per_s)) + "\" r=\"" +
              (layer == 2 ? "4.5" : "3") + "\" class=\"" + std::string(kClass[layer]) + "\"><title>" +
              xml_escape(title) + "</title></circle>");
    }
    svg.close_group();
  }
  // The front as a staircase: between two front points the best reachable throughput is the
  // left one's.
  if (!front.empty()) {
    std::string d;
    for (std::size_t k = 0; k < front.size(); ++k) {
      const SweepPoint& p = page.points[front[k]];
      d += k == 0 ? "M" + svg_coord(px(x_of(p))) + " " + svg_coord(py(p.tokens_per_s))
                  : "H" + svg_coord(px(x_of(p))) + "V" + svg_coord(py(p.tokens_per_s));
    }
    svg.path(d, "stair");
  }
  return svg.finish();
}

std::string table_html(const SweepTable& t) {
  std::string out = "<div class=\"wide\"><table>\n<tr>";
  for (const std::string& h : t.headers) out += "<th>" + xml_escape(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c)
      out += (c < t.left.size() && t.left[c] ? "<td class=\"l\">" : "<td>") + xml_escape(row[c]) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table></div>\n";
}

std::string legend(bool capacity) {
  std::string out =
      "<div class=\"legend\"><span><i class=\"sw dot fr\"></i>on the Pareto front</span>"
      "<span><i class=\"sw dot\"></i>fits in memory</span><span><i class=\"sw dot no\"></i>does not fit</span>";
  if (capacity) out += "<span><i class=\"sw line capsw\"></i>GPU memory capacity</span>";
  return out + "</div>\n";
}

const char* kSweepCss =
    ".pt{fill:#0072B2;fill-opacity:.45}.pt.no{fill:#999;fill-opacity:.35}.pt.fr{fill:#D55E00;fill-opacity:1;"
    "stroke:#fff;stroke-width:1}\n.stair{fill:none;stroke:#D55E00;stroke-width:1.5;stroke-opacity:.8}\n"
    ".sw.dot{border-radius:50%;background:#0072B2;opacity:.6}.sw.dot.no{background:#999}"
    ".sw.dot.fr{background:#D55E00;opacity:1}.sw.capsw{background:#b3261e}\ntd.l{text-align:left}\n";

}  // namespace

namespace {

void put_head(std::ostream& out, const std::string& title) {
  put(out,
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
          xml_escape(title) + "</title>\n<style>\n" + report_css() + kSweepCss + "</style>\n</head>\n<body>\n<main>\n");
  put(out, "<h1>" + xml_escape(title) + "</h1>\n");
}

void put_foot(std::ostream& out, const std::string& generator) {
  put(out, "<footer><p class=\"note\">Generated by " + xml_escape(generator) +
               ". Self-contained: no scripts, fonts or network.</p></footer>\n</main>\n</body>\n</html>\n");
}

// One sweep's settings, summary, best table and both fronts. `id`: the prefix of its
// sections' ids (empty on a page of one sweep, "block-2-" on a page of blocks); `h`: the
// heading of its sections, "h2" or "h3".
void put_sweep(std::ostream& out, const SweepPage& page, const std::string& id, const std::string& h) {
  const std::string open = "<" + h + ">", close = "</" + h + ">\n";
  if (!page.settings.empty()) {
    std::string line;
    for (const auto& [key, value] : page.settings)
      line += (line.empty() ? "" : " &middot; ") + xml_escape(key) + "=" + xml_escape(value);
    put(out, "<p class=\"settings\">" + line + "</p>\n");
  }
  put(out, "<nav><a href=\"#" + id + "best\">best</a><a href=\"#" + id + "pareto-memory\">throughput vs memory</a>"
           "<a href=\"#" + id + "pareto-staleness\">throughput vs staleness</a></nav>\n<section id=\"" + id +
           "summary\">\n");
  for (const std::string& line : page.summary) put(out, "<p class=\"note\">" + xml_escape(line) + "</p>\n");
  put(out, "</section>\n<section id=\"" + id + "best\">\n" + open + xml_escape(page.best_title) + close);
  put(out, page.best.rows.empty() ? std::string("<p class=\"warn\">No configuration fits in memory.</p>\n")
                                  : table_html(page.best));
  put(out, "</section>\n");

  double max_bytes = 0, max_capacity = 0;
  std::int32_t max_mismatch = 0;
  for (const SweepPoint& p : page.points) {
    max_bytes = std::max(max_bytes, static_cast<double>(p.peak_memory_bytes));
    max_mismatch = std::max(max_mismatch, p.max_mismatch);
  }
  for (const SweepCapacity& c : page.capacities) max_capacity = std::max(max_capacity, static_cast<double>(c.bytes));
  // Up to twice the largest capacity: configurations far over it (GPipe's activations can
  // need terabytes) would squeeze everything that fits into the first pixels.
  if (max_capacity > 0) max_bytes = std::max(std::min(max_bytes, 2 * max_capacity), max_capacity);
  const ByteUnit bu = byte_unit_for(max_bytes);
  const Axis mem = axis_for(max_bytes * 1.02 / bu.bytes, 8, 0);
  XAxis mx{"peak memory per GPU (" + std::string(bu.name) + ")", mem.end * bu.bytes, mem.step * bu.bytes, bu.bytes,
           decimals_for(mem.step)};
  std::size_t beyond = 0;
  for (const SweepPoint& p : page.points) beyond += static_cast<double>(p.peak_memory_bytes) > mx.end ? 1 : 0;
  put(out, "<section id=\"" + id + "pareto-memory\">\n" + open + "Throughput against peak memory" + close);
  put(out,
      "<p class=\"note\">Each point is one configuration; the staircase is the Pareto front among those that fit: "
      "no configuration that fits has at least its throughput with less memory. " +
          front_note(page.memory_front.size()) + "." +
          (beyond > 0 ? " " + std::to_string(beyond) + (beyond == 1 ? " configuration needs" : " configurations need") +
                            " more than " + format_bytes(mx.end) + ": they sit on the right edge."
                      : std::string()) +
          "</p>\n" + legend(!page.capacities.empty()));
  put(out, scatter(page, page.memory_front, [](const SweepPoint& p) { return static_cast<double>(p.peak_memory_bytes); },
                   mx, page.capacities, "tokens per second against peak memory per GPU") +
               "\n");
  put(out, table_html(page.memory_table) + "</section>\n");

  const Axis st = axis_for(static_cast<double>(max_mismatch), 8, 1);
  const XAxis sx{"max mismatch (optimizer steps between a micro-batch's forward and backward)", st.end, st.step, 1, 0};
  put(out, "<section id=\"" + id + "pareto-staleness\">\n" + open + "Throughput against staleness" + close);
  put(out,
      "<p class=\"note\">Staleness is the max mismatch: updates between a micro-batch's forward and its backward at "
      "one stage (0: every backward sees its forward's weights). The staircase is the Pareto front among the "
      "configurations that fit. " +
          front_note(page.staleness_front.size()) + ".</p>\n" + legend(false));
  put(out, scatter(page, page.staleness_front, [](const SweepPoint& p) { return static_cast<double>(p.max_mismatch); },
                   sx, {}, "tokens per second against max mismatch") +
               "\n");
  put(out, table_html(page.staleness_table) + "</section>\n");
}

}  // namespace

void write_html_sweep(std::ostream& out, const SweepPage& page) {
  put_head(out, page.title);
  put_sweep(out, page, "", "h2");
  put_foot(out, page.generator);
}

void write_html_sweep_blocks(std::ostream& out, const SweepBlocksPage& page) {
  PIPESIM_ASSERT(!page.blocks.empty());
  put_head(out, page.title);
  std::string nav = "<nav class=\"blocks\">";
  for (std::size_t k = 0; k < page.blocks.size(); ++k)
    nav += "<a href=\"#block-" + std::to_string(k + 1) + "\">" + xml_escape(page.blocks[k].name) + "</a>";
  put(out, nav + "<a href=\"#across-blocks\">across blocks</a></nav>\n");
  for (std::size_t k = 0; k < page.blocks.size(); ++k) {
    const std::string id = "block-" + std::to_string(k + 1);
    const SweepBlocksPage::Block& b = page.blocks[k];
    put(out, "<section id=\"" + id + "\" class=\"block\">\n<h2>" + xml_escape(b.page.title) + "</h2>\n");
    put_sweep(out, b.page, id + "-", "h3");
    put(out, "</section>\n");
  }
  put(out, "<section id=\"across-blocks\">\n<h2>Across blocks</h2>\n<p class=\"note\">" +
               xml_escape(page.across_note) + "</p>\n");
  for (const auto& [title, table] : page.across) put(out, "<h3>" + xml_escape(title) + "</h3>\n" + table_html(table));
  put(out, "</section>\n");
  put_foot(out, page.generator);
}

}  // namespace pipesim
