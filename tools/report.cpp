#include "tools/report.hpp"

#include <algorithm>

#include "tools/table.hpp"

namespace pipesim {
namespace {

double seconds(Tick t) { return ticks_to_seconds(t); }

const DeviceMetrics& peak_device(const Metrics& m) {
  return *std::max_element(m.per_device.begin(), m.per_device.end(), [](const auto& a, const auto& b) {
    return a.peak_activations < b.peak_activations;
  });
}

}  // namespace

nlohmann::ordered_json metrics_json(const Metrics& m) {
  nlohmann::ordered_json j;
  j["schedule"] = m.schedule;
  j["devices"] = m.devices;
  j["stages"] = m.stages;
  j["microbatches"] = m.microbatches;
  j["iterations"] = m.iterations;
  j["ops"] = m.ops;
  j["makespan_s"] = seconds(m.makespan);
  j["makespan_ns"] = m.makespan;
  j["busy_s"] = seconds(m.busy);
  j["idle_s"] = seconds(m.idle);
  j["bubble_ratio"] = m.bubble_ratio;
  j["bubble_ratio_megatron"] = m.bubble_ratio_megatron;
  j["bubble_ratio_definitions"] = {{"bubble_ratio", "idle / (devices * makespan)"},
                                   {"bubble_ratio_megatron", "idle / busy (idle / ideal)"}};
  auto& devices = j["per_device"] = nlohmann::ordered_json::array();
  for (const auto& d : m.per_device)
    devices.push_back({{"device", d.device},
                       {"busy_s", seconds(d.busy)},
                       {"idle_s", seconds(d.idle)},
                       {"peak_activations", d.peak_activations},
                       {"peak_activation_bytes", d.peak_activation_bytes}});
  j["critical_path_ops"] = m.critical_path.size();
  j["critical_path"] = m.critical_path;
  return j;
}

std::string summary_text(const Metrics& m) {
  std::string out;
  out += "schedule      " + m.schedule + "\n";
  out += "shape         " + std::to_string(m.devices) + " devices, " + std::to_string(m.stages) + " stages, " +
         std::to_string(m.microbatches) + " micro-batches x " + std::to_string(m.iterations) + " iteration(s), " +
         std::to_string(m.ops) + " ops\n";
  out += "makespan      " + format_duration(m.makespan) + "\n";
  out += "bubble        " + format_percent(m.bubble_ratio) + " of device time (idle / devices x makespan)\n";
  out += "              " + format_percent(m.bubble_ratio_megatron) + " of useful time (idle / ideal, Megatron)\n";
  out += "critical path " + std::to_string(m.critical_path.size()) + " ops";
  if (!m.critical_path.empty()) out += ": " + m.critical_path.front() + " ... " + m.critical_path.back();
  return out + "\n";
}

std::string device_table(const Metrics& m) {
  Table t;
  t.add_column("device");
  t.add_column("busy");
  t.add_column("idle");
  t.add_column("idle share");
  t.add_column("peak act");
  t.add_column("peak act memory");
  for (const auto& d : m.per_device)
    t.add_row({std::to_string(d.device), format_duration(d.busy), format_duration(d.idle),
               format_percent(m.makespan ? static_cast<double>(d.idle) / static_cast<double>(m.makespan) : 0.0),
               std::to_string(d.peak_activations), format_bytes(static_cast<double>(d.peak_activation_bytes))});
  return t.render();
}

std::string compare_table(const std::vector<Metrics>& all) {
  Table t;
  t.add_column("schedule", Table::Align::Left);
  t.add_column("devices");
  t.add_column("ops");
  t.add_column("makespan");
  t.add_column("bubble (idle/total)");
  t.add_column("bubble (idle/ideal)");
  t.add_column("peak act (device)");
  t.add_column("peak act memory");
  for (const auto& m : all) {
    const DeviceMetrics& peak = peak_device(m);
    std::int64_t peak_bytes = 0;
    for (const auto& d : m.per_device) peak_bytes = std::max(peak_bytes, d.peak_activation_bytes);
    t.add_row({m.schedule, std::to_string(m.devices), std::to_string(m.ops), format_duration(m.makespan),
               format_percent(m.bubble_ratio), format_percent(m.bubble_ratio_megatron),
               std::to_string(peak.peak_activations) + " (dev " + std::to_string(peak.device) + ")",
               format_bytes(static_cast<double>(peak_bytes))});
  }
  return t.render();
}

}  // namespace pipesim
