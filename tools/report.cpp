#include "tools/report.hpp"

#include <algorithm>

#include "schedules/generator.hpp"
#include "tools/table.hpp"

namespace pipesim {
namespace {

double seconds(Tick t) { return ticks_to_seconds(t); }

// One iteration of a schedule whose iterations overlap (GeneratorInfo::overlaps_iterations).
bool one_overlapping_iteration(const Metrics& m) {
  const GeneratorInfo* g = generator_named(m.schedule);
  return m.iterations == 1 && g != nullptr && g->overlaps_iterations;
}

const DeviceMetrics& peak_device(const Metrics& m) {
  return *std::max_element(m.per_device.begin(), m.per_device.end(), [](const auto& a, const auto& b) {
    return a.peak_activations < b.peak_activations;
  });
}

}  // namespace

nlohmann::ordered_json staleness_json(const Staleness& s) {
  nlohmann::ordered_json j;
  j["max_mismatch"] = s.max_mismatch;
  j["mean_mismatch"] = s.mean_mismatch;
  j["mismatched_fraction"] = s.mismatched_fraction;
  j["max_delay"] = s.max_delay;
  j["mean_delay"] = s.mean_delay;
  auto& stages = j["per_stage"] = nlohmann::ordered_json::array();
  for (const auto& st : s.per_stage)
    stages.push_back({{"stage", st.stage},
                      {"backwards", st.backwards},
                      {"mismatched", st.mismatched},
                      {"max_mismatch", st.max_mismatch},
                      {"mean_mismatch", st.backwards ? static_cast<double>(st.mismatch_sum) / static_cast<double>(st.backwards) : 0.0},
                      {"max_delay", st.max_delay},
                      {"mean_delay", st.gradients ? static_cast<double>(st.delay_sum) / static_cast<double>(st.gradients) : 0.0}});
  return j;
}


std::string json_text(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

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
  j["time_per_iteration_s"] = seconds(m.time_per_iteration);
  if (one_overlapping_iteration(m))
    j["note"] = "one iteration of a schedule whose iterations overlap: time_per_iteration_s is its makespan, not the "
                "steady state, and the staleness and weight copies that cross an optimizer step do not show "
                "(--iterations 2 or more)";
  j["throughput_mb_per_s"] = m.throughput_mb_per_s;
  j["staleness"] = staleness_json(m.staleness);
  auto& devices = j["per_device"] = nlohmann::ordered_json::array();
  for (const auto& d : m.per_device)
    devices.push_back({{"device", d.device},
                       {"busy_s", seconds(d.busy)},
                       {"idle_s", seconds(d.idle)},
                       {"peak_activations", d.peak_activations},
                       {"peak_activation_bytes", d.peak_activation_bytes},
                       {"peak_weight_versions", d.peak_weight_versions}});
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
  out += "per iteration " + format_duration(m.time_per_iteration) + (m.iterations > 1 ? " (steady state)" : "") + ", " +
         format_fixed(m.throughput_mb_per_s, 1) + " micro-batches/s\n";
  out += "bubble        " + format_percent(m.bubble_ratio) + " of device time (idle / devices x makespan)\n";
  out += "              " + format_percent(m.bubble_ratio_megatron) + " of useful time (idle / ideal, Megatron)\n";
  out += "staleness     max mismatch " + std::to_string(m.staleness.max_mismatch) + ", " +
         format_percent(m.staleness.mismatched_fraction) + " of backwards mismatched, max gradient delay " +
         std::to_string(m.staleness.max_delay) + "\n";
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
  t.add_column("weight copies");
  for (const auto& d : m.per_device)
    t.add_row({std::to_string(d.device), format_duration(d.busy), format_duration(d.idle),
               format_percent(m.makespan ? static_cast<double>(d.idle) / static_cast<double>(m.makespan) : 0.0),
               std::to_string(d.peak_activations), format_bytes(static_cast<double>(d.peak_activation_bytes)),
               std::to_string(d.peak_weight_versions)});
  return t.render();
}

std::string one_iteration_note(const std::vector<Metrics>& runs) {
  std::string names;
  for (const Metrics& m : runs)
    if (one_overlapping_iteration(m) && (", " + names + ", ").find(", " + m.schedule + ", ") == std::string::npos)
      names += (names.empty() ? "" : ", ") + m.schedule;
  if (names.empty()) return "";
  return wrap_note("note: " + names + ": one iteration of a schedule whose iterations overlap shows its makespan, " +
                   "fill and drain included, as the time per iteration, and none of the staleness or weight copies " +
                   "that cross an optimizer step. --iterations 2 or more gives the steady state.");
}

std::string compare_table(const std::vector<Metrics>& all) {
  Table t;
  t.add_column("schedule", Table::Align::Left);
  t.add_column("devices");
  t.add_column("time/iter");
  t.add_column("micro-batches/s");
  t.add_column("bubble");
  t.add_column("peak act (device)");
  t.add_column("act memory");
  t.add_column("weights");
  t.add_column("mismatch max");
  t.add_column("mismatched");
  t.add_column("delay max");
  for (const auto& m : all) {
    const DeviceMetrics& peak = peak_device(m);
    std::int64_t peak_bytes = 0;
    for (const auto& d : m.per_device) peak_bytes = std::max(peak_bytes, d.peak_activation_bytes);
    t.add_row({m.schedule, std::to_string(m.devices), format_duration(m.time_per_iteration),
               format_fixed(m.throughput_mb_per_s, 1), format_percent(m.bubble_ratio),
               std::to_string(peak.peak_activations) + " (dev " + std::to_string(peak.device) + ")",
               format_bytes(static_cast<double>(peak_bytes)), weight_share_text(m),
               std::to_string(m.staleness.max_mismatch), format_percent(m.staleness.mismatched_fraction),
               std::to_string(m.staleness.max_delay)});
  }
  return t.render() +
         "\nbubble = idle / (devices x makespan), over the whole run; weights = the most weights one device holds, in\n"
         "shares of a plain pipeline device's (1/p of the model: Chimera's two stages 2x, v chunks of 1/v 1x, each\n"
         "stashed version one more); mismatch = updates between a micro-batch's forward and backward at a stage;\n"
         "delay = updates between the weights a gradient was computed on and the update that applies it.\n";
}

}  // namespace pipesim
