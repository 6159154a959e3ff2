#include "traces/html_tables.hpp"

#include <algorithm>
#include <functional>

#include "traces/svg.hpp"

namespace pipesim {
namespace {

const DeviceMetrics* peak_activation_device(const Metrics& m) {
  const auto it = std::max_element(m.per_device.begin(), m.per_device.end(), [](const auto& a, const auto& b) {
    return a.peak_activations < b.peak_activations;
  });
  return it == m.per_device.end() ? nullptr : &*it;
}

const DeviceMetrics* peak_memory_device(const Metrics& m) {
  const auto it = std::max_element(m.per_device.begin(), m.per_device.end(), [](const auto& a, const auto& b) {
    return a.peak_activation_bytes < b.peak_activation_bytes;
  });
  return it == m.per_device.end() ? nullptr : &*it;
}


}  // namespace

const char* best_class(bool best) { return best ? "best" : nullptr; }

std::string html_row(const std::string& key, const std::string& value) {
  return "<tr><td>" + xml_escape(key) + "</td><td>" + xml_escape(value) + "</td></tr>\n";
}

std::string html_cell(const std::string& text, const char* css) {
  return std::string(css ? "<td class=\"" + std::string(css) + "\">" : "<td>") + xml_escape(text) + "</td>";
}

std::string report_percent(double fraction) { return format_fixed_number(fraction * 100, 2) + " %"; }

std::string metrics_summary_html(const Metrics& m, const std::string& more) {
  // Two short tables side by side (time | memory and staleness) rather than one long one.
  std::string out = "<div class=\"cols\">" + more + "<table class=\"kv\">\n";
  out += html_row("makespan", format_duration(m.makespan));
  out += html_row("time per iteration",
                  format_duration(m.time_per_iteration) + (m.iterations > 1 ? " (steady state)" : ""));
  out += html_row("throughput", format_fixed_number(m.throughput_mb_per_s, 1) + " micro-batches/s");
  out += html_row("busy / idle (all devices)", format_duration(m.busy) + " / " + format_duration(m.idle));
  out += html_row("bubble", report_percent(m.bubble_ratio) + " of device time (idle / devices x makespan)");
  out += html_row("bubble (Megatron)", report_percent(m.bubble_ratio_megatron) + " of useful time (idle / ideal)");
  std::string path = std::to_string(m.critical_path.size()) + " ops";
  if (!m.critical_path.empty()) path += ": " + m.critical_path.front() + " ... " + m.critical_path.back();
  out += html_row("critical path", path);
  out += "</table>\n<table class=\"kv\">\n";
  if (const DeviceMetrics* d = peak_activation_device(m))
    out += html_row("peak activations",
                    std::to_string(d->peak_activations) + " (device " + std::to_string(d->device) + ")");
  if (const DeviceMetrics* d = peak_memory_device(m))
    out += html_row("peak activation memory", format_bytes(static_cast<double>(d->peak_activation_bytes)) +
                                                  " (device " + std::to_string(d->device) + ")");
  out += html_row("weights", weight_share_text(m) + " (most one device holds, in units of a plain pipeline device's share)");
  const Staleness& s = m.staleness;
  out += html_row("weight mismatch", "max " + std::to_string(s.max_mismatch) + ", mean " +
                                         format_fixed_number(s.mean_mismatch, 3) + ", " +
                                         report_percent(s.mismatched_fraction) + " of backwards");
  out += html_row("gradient delay",
                  "max " + std::to_string(s.max_delay) + ", mean " + format_fixed_number(s.mean_delay, 3));
  return out + "</table></div>\n";
}

std::string compare_summary_html(const std::vector<const Metrics*>& runs, const std::vector<std::string>& anchors,
                                 bool rank) {
  std::string out =
      "<div "
      "class=\"wide\"><table>\n<tr><th>schedule</th><th>devices</th><th>micro-batches</th><th>time/iter</"
      "th><th>throughput "
      "(micro-batches/s)</th><th>bubble</th><th>bubble (Megatron)</th><th>peak act (device)</th><th>act memory</th>"
      "<th>weights</th><th>mismatch max</th><th>mismatched</th><th>delay max</th></tr>\n";
  const bool several = rank && runs.size() > 1;
  // Bold marks the best of a column, ties included, where the rows differ at all.
  auto best_of = [&](auto key, bool lowest) {
    std::vector<bool> best(runs.size(), false);
    if (!several) return best;
    auto value = key(*runs.front());
    for (const Metrics* m : runs) value = lowest ? std::min(value, key(*m)) : std::max(value, key(*m));
    bool all_equal = true;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      best[i] = key(*runs[i]) == value;
      all_equal = all_equal && best[i];
    }
    if (all_equal) best.assign(runs.size(), false);  // nothing stands out
    return best;
  };
  const auto best_time = best_of([](const Metrics& m) { return m.time_per_iteration; }, true);
  const auto best_tput = best_of([](const Metrics& m) { return m.throughput_mb_per_s; }, false);
  const auto peak_bytes = [](const Metrics& m) {
    const DeviceMetrics* d = peak_memory_device(m);
    return d ? d->peak_activation_bytes : std::int64_t{0};
  };
  const auto best_mem = best_of(peak_bytes, true);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Metrics& m = *runs[i];
    const std::string name = xml_escape(m.schedule);
    out += "<tr><td>";
    out += i < anchors.size() && !anchors[i].empty() ? "<a href=\"#" + xml_escape(anchors[i]) + "\">" + name + "</a>"
                                                     : name;
    out += "</td>" + html_cell(std::to_string(m.devices)) + html_cell(std::to_string(m.microbatches));
    out += html_cell(format_duration(m.time_per_iteration), best_class(best_time[i]));
    out += html_cell(format_fixed_number(m.throughput_mb_per_s, 1), best_class(best_tput[i]));
    out += html_cell(report_percent(m.bubble_ratio)) +
           html_cell(report_percent(m.bubble_ratio_megatron));
    const DeviceMetrics* pa = peak_activation_device(m);
    out += html_cell(pa ? std::to_string(pa->peak_activations) + " (dev " + std::to_string(pa->device) + ")" : "-");
    out += html_cell(format_bytes(static_cast<double>(peak_bytes(m))), best_class(best_mem[i]));
    out += html_cell(weight_share_text(m)) + html_cell(std::to_string(m.staleness.max_mismatch));
    out +=
        html_cell(report_percent(m.staleness.mismatched_fraction)) + html_cell(std::to_string(m.staleness.max_delay));
    out += "</tr>\n";
  }
  return out + "</table></div>\n";
}

std::string device_table_html(const Metrics& m) {
  std::string out =
      "<table>\n<tr><th>device</th><th>busy</th><th>idle</th><th>idle share</th><th>peak act</th>"
      "<th>peak act memory</th><th>weight copies</th></tr>\n";
  for (const DeviceMetrics& d : m.per_device) {
    const double share = m.makespan > 0 ? static_cast<double>(d.idle) / static_cast<double>(m.makespan) : 0.0;
    out += "<tr>" + html_cell(std::to_string(d.device)) + html_cell(format_duration(d.busy)) +
           html_cell(format_duration(d.idle)) + html_cell(report_percent(share)) +
           html_cell(std::to_string(d.peak_activations)) +
           html_cell(format_bytes(static_cast<double>(d.peak_activation_bytes))) +
           html_cell(std::to_string(d.peak_weight_versions)) + "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace pipesim
