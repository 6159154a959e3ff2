#include "tools/breakdown_report.hpp"

#include <algorithm>
#include <functional>

#include "tools/table.hpp"
#include "traces/svg.hpp"

namespace pipesim {
namespace {

// A row of a table: seconds per iteration and share of the iteration, per category.
struct Row {
  std::string label;
  std::array<double, kNumTimeCategories> seconds{};
  std::array<double, kNumTimeCategories> share{};
  std::vector<std::string> extra;  // cells after the categories
};

Row device_row(const TimeBreakdown& b, int d) {
  Row r{std::to_string(d) + (d == b.critical_device ? " *" : ""), {}, {}, {}};
  for (TimeCategory c : kTimeCategories) {
    r.seconds[static_cast<std::size_t>(c)] = b.per_iteration_s(d, c);
    r.share[static_cast<std::size_t>(c)] = b.share(d, c);
  }
  return r;
}

Row mean_row(const TimeBreakdown& b, std::string label) {
  Row r{std::move(label), {}, {}, {}};
  for (TimeCategory c : kTimeCategories) {
    r.seconds[static_cast<std::size_t>(c)] = b.mean_per_iteration_s(c);
    r.share[static_cast<std::size_t>(c)] = b.mean_share(c);
  }
  return r;
}

// "12.345 ms 33.3%" in the table's unit.
std::string cell(double seconds, double share, TimeUnit unit) {
  return format_fixed(seconds * 1e9 / static_cast<double>(unit.ns), 3) + " " + std::string(unit.name) + " " +
         format_fixed(share * 100.0, 1) + "%";
}

std::string render(const std::string& first, const std::vector<std::string>& extra_headers, const std::vector<Row>& rows,
                   Tick per_iteration) {
  // Milliseconds, the unit of pipeline iterations, from 1 ms up (1123.456 ms, not 1.123 s).
  const TimeUnit unit = per_iteration >= kNsPerMs ? TimeUnit{"ms", kNsPerMs} : time_unit_for(per_iteration);
  std::vector<TimeCategory> shown, zero;
  for (TimeCategory c : kTimeCategories) {
    const bool any = std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return r.seconds[static_cast<std::size_t>(c)] > 0; });
    (any ? shown : zero).push_back(c);
  }
  Table t;
  t.add_column(first, Table::Align::Left);
  for (TimeCategory c : shown) t.add_column(std::string(time_category_label(c)));
  t.add_column("total");
  for (const std::string& h : extra_headers) t.add_column(h);
  for (const Row& r : rows) {
    std::vector<std::string> cells{r.label};
    double seconds = 0, share = 0;
    for (TimeCategory c : shown) {
      cells.push_back(cell(r.seconds[static_cast<std::size_t>(c)], r.share[static_cast<std::size_t>(c)], unit));
      seconds += r.seconds[static_cast<std::size_t>(c)];
      share += r.share[static_cast<std::size_t>(c)];
    }
    cells.push_back(cell(seconds, share, unit));
    cells.insert(cells.end(), r.extra.begin(), r.extra.end());
    t.add_row(std::move(cells));
  }
  std::string out = t.render();
  if (!zero.empty()) {
    std::string names;
    for (TimeCategory c : zero) names += (names.empty() ? "" : ", ") + std::string(time_category_label(c));
    out += "zero everywhere: " + names + "\n";
  }
  return out;
}

const char* kLegend =
    "F, B, I, W = forward, full backward, input-gradient and weight-gradient work; recompute = forward rerun in "
    "the backward;\nTP comm = exposed tensor-parallel collectives; pipeline = waiting for another stage (the "
    "bubble, p2p transfers);\nDP sync = exposed gradient reductions (data-parallel, tied embeddings, GradSync); host = "
    "the device thread's own work between ops (a profiled CPU cost model's);\nidle = before the first op and after the "
    "last (fill, drain).\n";

std::string window_line(const TimeBreakdown& b) {
  if (b.window.counted == 1 && b.window.start == 0)
    return "time per iteration by category (the whole run, one iteration)\n";
  return "time per iteration by category (steady state: " + std::to_string(b.window.counted) + " iterations from " +
         format_duration(b.window.start) + " to " + format_duration(b.window.end) + ")\n";
}

nlohmann::ordered_json by_category(const std::function<double(TimeCategory)>& value) {
  nlohmann::ordered_json j;
  for (TimeCategory c : kTimeCategories) j[std::string(time_category_key(c))] = value(c);
  return j;
}

}  // namespace

nlohmann::ordered_json breakdown_json(const TimeBreakdown& b) {
  nlohmann::ordered_json j;
  j["window_start_ns"] = b.window.start;
  j["window_end_ns"] = b.window.end;
  j["iterations_counted"] = b.window.counted;
  j["time_per_iteration_s"] = ticks_to_seconds(b.window.per_iteration);
  j["critical_device"] = b.critical_device;
  j["critical_device_busy_share"] = b.busy_share(b.critical_device);
  j["pipeline_s"] = by_category([&](TimeCategory c) { return b.mean_per_iteration_s(c); });
  j["pipeline_share"] = by_category([&](TimeCategory c) { return b.mean_share(c); });
  auto& devices = j["per_device"] = nlohmann::ordered_json::array();
  for (int d = 0; d < static_cast<int>(b.per_device.size()); ++d) {
    nlohmann::ordered_json dj;
    dj["device"] = d;
    dj["per_iteration_s"] = by_category([&](TimeCategory c) { return b.per_iteration_s(d, c); });
    dj["share"] = by_category([&](TimeCategory c) { return b.share(d, c); });
    nlohmann::ordered_json ns;
    for (TimeCategory c : kTimeCategories) ns[std::string(time_category_key(c))] = b.per_device[static_cast<std::size_t>(d)][c];
    dj["window_ns"] = std::move(ns);
    devices.push_back(std::move(dj));
  }
  return j;
}

std::string breakdown_table(const TimeBreakdown& b) {
  std::vector<Row> rows;
  for (int d = 0; d < static_cast<int>(b.per_device.size()); ++d) rows.push_back(device_row(b, d));
  rows.push_back(mean_row(b, "mean"));
  return window_line(b) + render("device", {}, rows, b.window.per_iteration) +
         "* the critical device: the one that computes longest. mean = over the devices.\n" + kLegend;
}

std::string breakdown_compare_table(const std::vector<std::pair<std::string, const TimeBreakdown*>>& rows) {
  std::vector<Row> list;
  Tick longest = 0;
  for (const auto& [name, b] : rows) {
    Row r = mean_row(*b, name);
    const int d = b->critical_device;
    r.extra = {std::to_string(d) + " (computes " + format_fixed(100.0 * b->busy_share(d), 1) + "%)"};
    list.push_back(std::move(r));
    longest = std::max(longest, b->window.per_iteration);
  }
  return "time per iteration by category, mean over each schedule's devices\n" +
         render("schedule", {"critical device"}, list, longest) + kLegend;
}

}  // namespace pipesim
