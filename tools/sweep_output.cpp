#include "tools/sweep_output.hpp"

#include <map>
#include <ostream>

#include "tools/table.hpp"

namespace pipesim {
namespace {

using Json = nlohmann::ordered_json;

// One configuration in the CSV's column order; the CSV is written from these objects, so
// the two files cannot disagree.
Json row_json(const SweepGrid& g, const SweepRow& r) {
  Json j;
  j["index"] = r.index;
  j["hardware"] = g.hardware[r.point.hardware];
  j["schedule"] = g.schedules[r.point.schedule];
  j["tp"] = r.tp;
  j["pp"] = r.pp;
  j["dp"] = r.dp;
  j["microbatches"] = r.microbatches;
  j["micro_batch_size"] = r.micro_batch_size;
  j["recompute"] = g.recompute[r.point.recompute];
  j["gpus"] = r.gpus;
  j["time_per_iteration_s"] = ticks_to_seconds(r.time_per_iteration);
  j["tokens_per_iteration"] = r.tokens_per_iteration;
  j["tokens_per_s"] = r.tokens_per_s;
  j["mfu"] = r.mfu;
  j["bubble_ratio"] = r.bubble_ratio;
  j["peak_memory_bytes"] = r.peak_memory;
  j["peak_memory_device"] = r.peak_device.device;
  j["capacity_bytes"] = r.capacity;
  j["fits"] = r.fits;
  j["overshoot_bytes"] = r.overshoot;
  j["weights_bytes"] = r.peak_device.weights;
  j["gradients_bytes"] = r.peak_device.gradients;
  j["optimizer_bytes"] = r.peak_device.optimizer;
  j["activations_bytes"] = r.peak_device.activations;
  j["workspace_bytes"] = r.peak_device.workspace;
  j["comm_buffers_bytes"] = r.peak_device.comm_buffers;
  j["weight_copies"] = r.peak_device.weight_copies;
  j["max_mismatch"] = r.max_mismatch;
  j["mean_mismatch"] = r.mean_mismatch;
  j["mismatched_fraction"] = r.mismatched_fraction;
  j["max_delay"] = r.max_delay;
  j["mean_delay"] = r.mean_delay;
  j["cost_per_million_tokens_usd"] = r.cost_per_million_tokens ? Json(*r.cost_per_million_tokens) : Json(nullptr);
  return j;
}

std::string csv_field(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (!v.is_string()) return v.dump();  // numbers: shortest text that reads back exactly
  const std::string s = v.get<std::string>();
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::size_t fitting(const SweepResult& result) {
  std::size_t n = 0;
  for (const SweepRow& r : result.rows) n += r.fits ? 1 : 0;
  return n;
}

std::string names_text(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

std::vector<std::pair<std::string, std::string>> settings_pairs(const SweepSettings& s, const SweepGrid& g) {
  const HardwareOptions& h = s.hardware;
  std::vector<std::pair<std::string, std::string>> out = {
      {"model", h.model},
      {"gpus", std::to_string(h.nodes * h.gpus_per_node) + " (" + std::to_string(h.nodes) + " x " +
                   std::to_string(h.gpus_per_node) + ")"},
      {"hardware", names_text(g.hardware)},
      {"schedules", names_text(g.schedules)},
      {"tp", grid_text(g.tp)},
      {"pp", grid_text(g.pp)},
      {"m", grid_text(g.microbatches)},
      {"micro-batch size", grid_text(g.micro_batch_size)},
      {"recompute", names_text(g.recompute)},
      {"iterations", std::to_string(s.iterations)},
      {"dtype", h.dtype}};
  if (s.chunks != 2) out.emplace_back("chunks", std::to_string(s.chunks));
  if (h.sequence_parallel) out.emplace_back("sequence parallel", "true");
  if (h.flash_attention) out.emplace_back("flash attention", "true");
  if (h.zero1) out.emplace_back("zero1", "true");
  if (!h.intra_link.empty()) out.emplace_back("intra link", h.intra_link);
  if (!h.inter_link.empty()) out.emplace_back("inter link", h.inter_link);
  return out;
}

// The columns every table of configurations shows; `rank` adds a leading "#". A dimension
// with one value (hardware, recompute) is in the settings line instead.
SweepTable rows_table(const SweepGrid& g, const SweepResult& result, const std::vector<std::size_t>& which, bool rank) {
  SweepTable t;
  auto column = [&t](std::string name, bool left) {
    t.headers.push_back(std::move(name));
    t.left.push_back(left);
  };
  if (rank) column("#", false);
  const bool hardware = g.hardware.size() > 1, recompute = g.recompute.size() > 1;
  column("config", false);
  if (hardware) column("hardware", true);
  column("schedule", true);
  for (const char* name : {"tp", "pp", "dp", "m", "b"}) column(name, false);
  if (recompute) column("recompute", true);
  for (const char* name : {"time/iter", "tokens/s", "MFU", "bubble", "peak memory", "of capacity", "mismatch max",
                           "mismatched", "delay max", "$/M tokens"})
    column(name, false);
  for (std::size_t k = 0; k < which.size(); ++k) {
    const SweepRow& r = result.rows[which[k]];
    std::vector<std::string> cells;
    if (rank) cells.push_back(std::to_string(k + 1));
    cells.push_back(std::to_string(r.index));
    if (hardware) cells.push_back(g.hardware[r.point.hardware]);
    cells.insert(cells.end(), {g.schedules[r.point.schedule], std::to_string(r.tp), std::to_string(r.pp),
                               std::to_string(r.dp), std::to_string(r.microbatches), std::to_string(r.micro_batch_size)});
    if (recompute) cells.push_back(g.recompute[r.point.recompute]);
    cells.insert(cells.end(), {format_duration(r.time_per_iteration),
                               format_fixed(r.tokens_per_s, 0), format_percent(r.mfu), format_percent(r.bubble_ratio),
                               format_bytes(static_cast<double>(r.peak_memory)),
                               r.capacity > 0 ? format_percent(static_cast<double>(r.peak_memory) /
                                                               static_cast<double>(r.capacity))
                                              : "-",
                               std::to_string(r.max_mismatch), format_percent(r.mismatched_fraction),
                               std::to_string(r.max_delay),
                               r.cost_per_million_tokens ? "$" + format_fixed(*r.cost_per_million_tokens, 3) : "-"});
    t.rows.push_back(std::move(cells));
  }
  return t;
}

std::string render_text(const SweepTable& t) {
  Table out;
  for (std::size_t c = 0; c < t.headers.size(); ++c)
    out.add_column(t.headers[c], t.left[c] ? Table::Align::Left : Table::Align::Right);
  for (const auto& row : t.rows) out.add_row(row);
  return out.render();
}

std::vector<std::string> summary_lines(const SweepResult& result) {
  std::vector<std::string> lines = {std::to_string(result.combinations) + " combinations: " +
                                    std::to_string(result.rows.size()) + " evaluated (" +
                                    std::to_string(fitting(result)) + " fit in memory), " +
                                    std::to_string(result.skipped_total()) + " skipped"};
  for (int r = 0; r < kNumSkipReasons; ++r) {
    const SkipCount& s = result.skipped[static_cast<std::size_t>(r)];
    if (s.count > 0)
      lines.push_back("skipped " + std::to_string(s.count) + ": " +
                      std::string(skip_reason_text(static_cast<SkipReason>(r))) + " (e.g. " + s.example + ")");
  }
  return lines;
}

std::string best_title(std::size_t shown) {
  return shown == 0 ? std::string("Best by tokens/s that fit in memory")
                    : "Best " + std::to_string(shown) + " by tokens/s that fit in memory";
}

}  // namespace

SweepSelection select_rows(const SweepResult& result, std::size_t top) {
  return {best_rows(result.rows, top), memory_front(result.rows), staleness_front(result.rows)};
}

void write_sweep_csv(std::ostream& out, const SweepGrid& grid, const SweepResult& result) {
  std::string line;
  const Json header = row_json(grid, SweepRow{});
  for (const auto& [key, value] : header.items()) line += (line.empty() ? "" : ",") + key;
  out << line << "\n";
  for (const SweepRow& r : result.rows) {
    line.clear();
    bool first = true;
    const Json row = row_json(grid, r);  // named: items() refers into it
    for (const auto& [key, value] : row.items()) {
      if (!first) line += ',';
      first = false;
      line += csv_field(value);
    }
    out << line << "\n";
  }
}

Json sweep_json(const SweepSettings& settings, const SweepGrid& grid, const SweepResult& result,
                const SweepSelection& selection) {
  Json j;
  const HardwareOptions& h = settings.hardware;
  Json& s = j["settings"];
  s["model"] = h.model;
  s["gpus"] = h.nodes * h.gpus_per_node;
  s["nodes"] = h.nodes;
  s["gpus_per_node"] = h.gpus_per_node;
  s["iterations"] = settings.iterations;
  s["chunks"] = settings.chunks;
  s["dtype"] = h.dtype;
  s["sequence_parallel"] = h.sequence_parallel;
  s["flash_attention"] = h.flash_attention;
  s["zero1"] = h.zero1;
  s["intra_link"] = h.intra_link;
  s["inter_link"] = h.inter_link;
  Json& gj = s["grid"];
  gj["hardware"] = grid.hardware;
  gj["schedules"] = grid.schedules;
  gj["tp"] = grid.tp;
  gj["pp"] = grid.pp;
  gj["microbatches"] = grid.microbatches;
  gj["micro_batch_size"] = grid.micro_batch_size;
  gj["recompute"] = grid.recompute;
  j["combinations"] = result.combinations;
  j["evaluated"] = result.rows.size();
  j["fits"] = fitting(result);
  Json& sk = j["skipped"];
  sk["total"] = result.skipped_total();
  sk["by_reason"] = Json::array();
  for (int r = 0; r < kNumSkipReasons; ++r) {
    const SkipCount& c = result.skipped[static_cast<std::size_t>(r)];
    if (c.count > 0)
      sk["by_reason"].push_back(
          {{"reason", skip_reason_text(static_cast<SkipReason>(r))}, {"count", c.count}, {"example", c.example}});
  }
  Json& rows = j["configurations"] = Json::array();
  for (const SweepRow& r : result.rows) rows.push_back(row_json(grid, r));
  auto indices = [&](const std::vector<std::size_t>& which) {
    Json a = Json::array();
    for (std::size_t i : which) a.push_back(result.rows[i].index);
    return a;
  };
  j["best"] = indices(selection.best);
  j["pareto_memory"] = indices(selection.memory_front);
  j["pareto_staleness"] = indices(selection.staleness_front);
  return j;
}

std::string sweep_settings_line(const SweepSettings& settings, const SweepGrid& grid) {
  std::string line;
  for (const auto& [key, value] : settings_pairs(settings, grid))
    line += (line.empty() ? "" : "  ") + key + "=" + value;
  return line + "\n";
}

std::string sweep_text(const SweepSettings& settings, const SweepGrid& grid, const SweepResult& result,
                       const SweepSelection& selection) {
  std::string out = sweep_settings_line(settings, grid);
  for (const std::string& line : summary_lines(result)) out += line + "\n";
  out += "\n" + best_title(selection.best.size()) + "\n";
  out += selection.best.empty() ? "(none fits)\n" : render_text(rows_table(grid, result, selection.best, true));
  out += "\nPareto front: tokens/s against peak memory, among the configurations that fit\n";
  out += render_text(rows_table(grid, result, selection.memory_front, false));
  out += "\nPareto front: tokens/s against staleness (max mismatch), among the configurations that fit\n";
  out += render_text(rows_table(grid, result, selection.staleness_front, false));
  out +=
      "\nconfig = the combination's index (the CSV's index column); b = micro-batch size; peak memory = the fullest\n"
      "GPU; mismatch = optimizer steps between a micro-batch's forward and backward at a stage; delay = steps between\n"
      "the weights a gradient was computed on and the step applying it (docs/sweep.md).\n";
  return out;
}

SweepPage sweep_page(const SweepSettings& settings, const SweepGrid& grid, const SweepResult& result,
                     const SweepSelection& selection) {
  SweepPage page;
  page.title = "pipesim sweep: " + settings.hardware.model;
  page.settings = settings_pairs(settings, grid);
  page.summary = summary_lines(result);
  page.summary.push_back(
      "b = micro-batch size; config = the combination's index (the CSV's index column); peak memory = the fullest GPU; "
      "mismatch and delay in optimizer steps (docs/sweep.md).");
  std::map<std::int64_t, std::string> capacities;
  std::vector<bool> seen(grid.hardware.size(), false);
  for (const SweepRow& r : result.rows) {
    page.points.push_back({"#" + std::to_string(r.index) + " " + grid.schedules[r.point.schedule] +
                               " tp=" + std::to_string(r.tp) + " pp=" + std::to_string(r.pp) +
                               " m=" + std::to_string(r.microbatches) + " b=" + std::to_string(r.micro_batch_size) +
                               " recompute=" + grid.recompute[r.point.recompute] + " on " +
                               grid.hardware[r.point.hardware] + ": " + format_fixed(r.tokens_per_s, 0) +
                               " tokens/s, " + format_bytes(static_cast<double>(r.peak_memory)) + ", max mismatch " +
                               std::to_string(r.max_mismatch),
                           r.tokens_per_s, r.peak_memory, r.max_mismatch, r.fits});
    if (!seen[r.point.hardware]) {
      seen[r.point.hardware] = true;
      std::string& label = capacities[r.capacity];
      label += (label.empty() ? "" : ", ") + grid.hardware[r.point.hardware];
    }
  }
  for (const auto& [bytes, label] : capacities) page.capacities.push_back({label, bytes});
  page.memory_front = selection.memory_front;
  page.staleness_front = selection.staleness_front;
  page.best_title = best_title(selection.best.size());
  page.best = rows_table(grid, result, selection.best, true);
  page.memory_table = rows_table(grid, result, selection.memory_front, false);
  page.staleness_table = rows_table(grid, result, selection.staleness_front, false);
  page.generator = "pipesim " PIPESIM_VERSION;
  return page;
}

}  // namespace pipesim
