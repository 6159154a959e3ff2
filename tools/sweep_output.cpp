#include "tools/sweep_output.hpp"

#include <map>
#include <ostream>

#include "core/error.hpp"
#include "core/memory_fit.hpp"
#include "tools/table.hpp"

namespace pipesim {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

nlohmann::ordered_json sweep_row_json(const SweepGrid& g, const SweepRow& r) {
  Json j;
  const SweepVariant& v = g.variants[r.point.variant];
  j["index"] = r.index;
  j["hardware"] = g.hardware[r.point.hardware];
  j["schedule"] = v.schedule;
  j["variant"] = v.label;
  j["tp"] = r.tp;
  j["pp"] = r.pp;
  j["dp"] = r.dp;
  j["microbatches"] = r.microbatches;
  j["micro_batch_size"] = r.micro_batch_size;
  j["global_batch"] = r.global_batch;
  j["optimizer_steps_per_iteration"] = r.optimizer_steps;
  j["recompute"] = g.recompute[r.point.recompute];
  j["gpus"] = r.gpus;
  j["time_per_iteration_s"] = ticks_to_seconds(r.time_per_iteration);
  j["tokens_per_iteration"] = r.tokens_per_iteration;
  j["tokens_per_s"] = r.tokens_per_s;
  j["mfu"] = r.mfu;
  j["bubble_ratio"] = r.bubble_ratio;
  for (TimeCategory c : kTimeCategories)
    j["time_" + std::string(time_category_key(c)) + "_s"] = r.time_parts[static_cast<std::size_t>(c)];
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
  j["same_as"] = r.same_as;
  j["passes_filters"] = r.passes_filters;
  return j;
}

namespace {

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

std::string variants_text(const std::vector<SweepVariant>& variants) {
  std::string out;
  for (const SweepVariant& v : variants) out += (out.empty() ? "" : ",") + v.label;
  return out;
}

std::vector<std::pair<std::string, std::string>> settings_pairs(const SweepSettings& s, const SweepGrid& g) {
  const HardwareOptions& h = s.hardware;
  std::vector<std::pair<std::string, std::string>> out = {
      {"model", h.model},
      {"gpus", std::to_string(h.nodes * h.gpus_per_node) + " (" + std::to_string(h.nodes) + " x " +
                   std::to_string(h.gpus_per_node) + ")"},
      {"hardware", names_text(g.hardware)},
      {"schedules", variants_text(g.variants)},
      {"tp", grid_text(g.tp)},
      {"pp", grid_text(g.pp)},
      {g.by_global_batch() ? "global batch" : "m", grid_text(g.batches())},
      {"micro-batch size", grid_text(g.micro_batch_size)},
      {"recompute", names_text(g.recompute)},
      {"iterations", std::to_string(s.iterations)},
      {"dtype", h.dtype}};
  if (s.max_mismatch >= 0) out.emplace_back("max mismatch", std::to_string(s.max_mismatch));
  if (s.max_delay >= 0) out.emplace_back("max delay", std::to_string(s.max_delay));
  if (h.sequence_parallel) out.emplace_back("sequence parallel", "true");
  if (h.flash_attention) out.emplace_back("flash attention", "true");
  if (h.zero1) out.emplace_back("zero1", "true");
  if (!h.intra_link.empty()) out.emplace_back("intra link", h.intra_link);
  if (!h.inter_link.empty()) out.emplace_back("inter link", h.inter_link);
  if (const std::string shared = sharing_summary(s.sharing); !shared.empty()) out.emplace_back("shared", shared);
  return out;
}

// The columns every table of configurations shows; `rank` adds a leading "#". A dimension
// with one value (hardware, recompute) is in the settings line instead. `same` lists, per
// first-of-its-equivalents row index, the later configurations with the same results; the
// column is left out when no configuration has equivalents.
SweepTable rows_table(const SweepGrid& g, const SweepResult& result, const std::vector<std::size_t>& which, bool rank,
                      const std::map<std::size_t, std::string>& same) {
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
  for (const char* name : {"tp", "pp", "dp", "m", "b", "batch"}) column(name, false);
  if (recompute) column("recompute", true);
  for (const char* name : {"tokens/iter", "time/iter", "tokens/s", "MFU", "bubble", "peak memory", "of capacity",
                           "mismatch max", "mismatched", "delay max", "$/M tokens"})
    column(name, false);
  const bool has_same = !same.empty();
  if (has_same) column("same results as", true);
  for (std::size_t k = 0; k < which.size(); ++k) {
    const SweepRow& r = result.rows[which[k]];
    std::vector<std::string> cells;
    if (rank) cells.push_back(std::to_string(k + 1));
    cells.push_back(std::to_string(r.index));
    if (hardware) cells.push_back(g.hardware[r.point.hardware]);
    cells.insert(cells.end(), {g.variants[r.point.variant].label, std::to_string(r.tp), std::to_string(r.pp),
                               std::to_string(r.dp), std::to_string(r.microbatches), std::to_string(r.micro_batch_size),
                               std::to_string(r.global_batch)});
    if (recompute) cells.push_back(g.recompute[r.point.recompute]);
    const auto also = same.find(r.index);
    cells.insert(cells.end(), {format_fixed(r.tokens_per_iteration, 0), format_duration(r.time_per_iteration),
                               format_fixed(r.tokens_per_s, 0), format_percent(r.mfu), format_percent(r.bubble_ratio),
                               format_bytes(static_cast<double>(r.peak_memory)),
                               r.capacity > 0 ? format_percent(static_cast<double>(r.peak_memory) /
                                                               static_cast<double>(r.capacity))
                                              : "-",
                               std::to_string(r.max_mismatch), format_percent(r.mismatched_fraction),
                               std::to_string(r.max_delay),
                               r.cost_per_million_tokens ? "$" + format_fixed(*r.cost_per_million_tokens, 3) : "-"});
    if (has_same) cells.push_back(also == same.end() ? "" : also->second);
    t.rows.push_back(std::move(cells));
  }
  return t;
}

// Of the rows at `which`, those that fit tightly (core/memory_fit.hpp) in one line, or "".
static std::string tight_line(const SweepResult& result, const std::vector<std::size_t>& which) {
  std::string configs;
  std::size_t count = 0;
  for (std::size_t i : which)
    if (const SweepRow& r = result.rows[i]; tight_fit(r.peak_memory, r.capacity)) {
      configs += (configs.empty() ? "" : ", ") + ("#" + std::to_string(r.index));
      ++count;
    }
  return configs.empty() ? "" : tight_fit_note(configs, count);
}

// For each row that has equivalents: "#12 #13" (their indices).
std::map<std::size_t, std::string> equivalents(const SweepResult& result) {
  std::map<std::size_t, std::string> out;
  for (const SweepRow& r : result.rows)
    if (r.same_as != r.index) out[r.same_as] += (out[r.same_as].empty() ? "#" : " #") + std::to_string(r.index);
  return out;
}

std::vector<std::string> summary_lines(const SweepGrid& grid, const SweepResult& result) {
  std::vector<std::string> lines = {std::to_string(result.combinations) + " combinations: " +
                                    std::to_string(result.rows.size()) + " evaluated (" +
                                    std::to_string(fitting(result)) + " fit in memory), " +
                                    std::to_string(result.skipped_total()) + " skipped"};
  std::size_t same = 0, filtered = 0;
  for (const SweepRow& r : result.rows) {
    same += r.same_as != r.index ? 1 : 0;
    filtered += r.passes_filters ? 0 : 1;
  }
  if (same > 0)
    lines.push_back(std::to_string(same) + " give the same results as an earlier configuration (the settings in " +
                    "which they differ had no effect): listed once, under \"same results as\"");
  if (filtered > 0)
    lines.push_back(std::to_string(filtered) + " left out of the tables by the staleness filters (--max-mismatch, " +
                    "--max-delay, --synchronous-only)");
  if (!grid.by_global_batch())
    lines.push_back("note: the rows differ in global batch (m x b x dp sequences per step), so the fastest are "
                    "the largest batches; pass --global-batch-size to rank configurations of equal batch");
  std::string often;  // the schedules that step the optimizer more than once an iteration
  for (const SweepRow& r : result.rows)
    if (const std::string& name = grid.variants[r.point.variant].schedule;
        r.optimizer_steps > 1 && (", " + often + ", ").find(", " + name + ", ") == std::string::npos)
      often += (often.empty() ? "" : ", ") + name;
  if (!often.empty())
    lines.push_back("note: " + often + " step the optimizer more than once an iteration at each stage (by default after "
                    "every micro-batch), at a smaller batch than the rows' global batch: their tokens/s compare, "
                    "their steps do not");
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

std::string render_text(const SweepTable& t) {
  Table out;
  for (std::size_t c = 0; c < t.headers.size(); ++c)
    out.add_column(t.headers[c], t.left[c] ? Table::Align::Left : Table::Align::Right);
  for (const auto& row : t.rows) out.add_row(row);
  return out.render();
}

SweepSelection select_rows(const SweepSettings& settings, const SweepGrid& grid, const SweepResult& result,
                           std::size_t top) {
  SweepSelection out;
  std::vector<long long> batches{0};
  if (grid.by_global_batch()) batches.assign(grid.global_batch.begin(), grid.global_batch.end());
  for (long long b : batches) {
    const std::vector<std::size_t> among = candidates(result.rows, b);
    BatchSelection s{b, best_rows(result.rows, among, top), memory_front(result.rows, among),
                     staleness_front(result.rows, among), {}, {}};
    if (s.best.empty()) s.closest = closest_rows(result.rows, b, 3);
    for (std::size_t i : s.closest) s.advice.push_back(sweep_fit_changes(settings, grid, result.rows[i]));
    out.batches.push_back(std::move(s));
  }
  return out;
}

void write_sweep_csv(std::ostream& out, const SweepGrid& grid, const SweepResult& result, std::string_view block,
                     bool header) {
  std::string line = block.empty() ? "" : "block";
  const Json columns = sweep_row_json(grid, SweepRow{});
  for (const auto& [key, value] : columns.items()) line += (line.empty() ? "" : ",") + key;
  if (header) out << line << "\n";
  for (const SweepRow& r : result.rows) {
    line = block.empty() ? "" : csv_field(Json(std::string(block)));
    bool first = block.empty();
    const Json row = sweep_row_json(grid, r);  // named: items() refers into it
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
  s["max_mismatch"] = settings.max_mismatch >= 0 ? Json(settings.max_mismatch) : Json(nullptr);
  s["max_delay"] = settings.max_delay >= 0 ? Json(settings.max_delay) : Json(nullptr);
  s["dtype"] = h.dtype;
  s["sequence_parallel"] = h.sequence_parallel;
  s["flash_attention"] = h.flash_attention;
  s["zero1"] = h.zero1;
  s["intra_link"] = h.intra_link;
  s["inter_link"] = h.inter_link;
  if (const std::string shared = sharing_summary(settings.sharing); !shared.empty()) s["shared_hardware"] = shared;
  Json& gj = s["grid"];
  gj["hardware"] = grid.hardware;
  gj["schedules"] = Json::array();
  for (const SweepVariant& v : grid.variants) gj["schedules"].push_back(v.label);
  gj["tp"] = grid.tp;
  gj["pp"] = grid.pp;
  if (grid.by_global_batch())
    gj["global_batch"] = grid.global_batch;
  else
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
  for (const SweepRow& r : result.rows) rows.push_back(sweep_row_json(grid, r));
  auto indices = [&](const std::vector<std::size_t>& which) {
    Json a = Json::array();
    for (std::size_t i : which) a.push_back(result.rows[i].index);
    return a;
  };
  Json& selections = j["selections"] = Json::array();
  for (const BatchSelection& b : selection.batches) {
    Json closest = Json::array();
    for (std::size_t k = 0; k < b.closest.size(); ++k)
      closest.push_back({{"index", result.rows[b.closest[k]].index}, {"fit_advice", fit_advice_json(b.advice[k])}});
    selections.push_back({{"global_batch", b.global_batch > 0 ? Json(b.global_batch) : Json(nullptr)},
                          {"best", indices(b.best)},
                          {"pareto_memory", indices(b.memory_front)},
                          {"pareto_staleness", indices(b.staleness_front)},
                          {"closest", std::move(closest)}});
  }
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
  for (const std::string& line : summary_lines(grid, result)) out += line + "\n";
  const auto same = equivalents(result);
  for (const BatchSelection& b : selection.batches) {
    const std::string at = b.global_batch > 0 ? " at global batch " + std::to_string(b.global_batch) : "";
    out += "\n" + best_title(b.best.size()) + at + "\n";
    out += b.best.empty() ? "(none fits)\n" : render_text(rows_table(grid, result, b.best, true, same));
    if (const std::string tight = tight_line(result, b.best); !tight.empty()) out += wrap_note(tight);
    if (!b.closest.empty()) {
      out += "\nThe closest to fitting" + at + ":\n" + render_text(rows_table(grid, result, b.closest, false, same));
      for (std::size_t k = 0; k < b.closest.size(); ++k) {
        const SweepRow& r = result.rows[b.closest[k]];
        out += "\n" + fit_advice_text("config " + std::to_string(r.index) + " (" + grid.variants[r.point.variant].label +
                                          ")", FitStatus{r.peak_memory, r.capacity, r.tokens_per_s}, b.advice[k]);
      }
    }
    if (b.best.empty()) continue;  // no fronts among no configurations
    out += "\nPareto front" + at + ": tokens/s against peak memory, among the configurations that fit\n";
    out += render_text(rows_table(grid, result, b.memory_front, false, same));
    out += "\nPareto front" + at + ": tokens/s against staleness (max mismatch and max delay), among the "
           "configurations that fit\n";
    out += render_text(rows_table(grid, result, b.staleness_front, false, same));
  }
  out +=
      "\nconfig = the combination's index (the CSV's index column); b = micro-batch size; batch = sequences per\n"
      "optimizer step (m x b x dp); peak memory = the fullest GPU; mismatch = optimizer steps between a micro-batch's\n"
      "forward and backward at a stage; delay = steps between the weights a gradient was computed on and the step\n"
      "applying it (docs/sweep.md).\n";
  return out;
}

SweepPage sweep_page(const SweepSettings& settings, const SweepGrid& grid, const SweepResult& result,
                     const SweepSelection& selection) {
  SweepPage page;
  page.title = "pipesim sweep: " + settings.hardware.model;
  page.settings = settings_pairs(settings, grid);
  page.summary = summary_lines(grid, result);
  page.summary.push_back(
      "b = micro-batch size; config = the combination's index (the CSV's index column); peak memory = the fullest GPU; "
      "mismatch and delay in optimizer steps (docs/sweep.md).");
  std::map<std::int64_t, std::string> capacities;
  std::vector<bool> seen(grid.hardware.size(), false);
  // The plots draw one global batch, the first, with its fronts: a staircase is the front of
  // the points around it only when they are of its batch (#1540 at batch 512 stood above the
  // front of batch 256). position[i]: row i's point, or npos where another batch's.
  const long long plotted = selection.batches.size() > 1 ? selection.batches.front().global_batch : 0;
  constexpr std::size_t npos = static_cast<std::size_t>(-1);
  std::vector<std::size_t> position(result.rows.size(), npos);
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    const SweepRow& r = result.rows[i];
    if (plotted > 0 && r.global_batch != plotted) continue;
    position[i] = page.points.size();
    page.points.push_back({"#" + std::to_string(r.index) + " " + grid.variants[r.point.variant].label +
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
  // The page shows every global batch's selection in one table each (its batch column tells
  // them apart) and marks the union of the fronts on the plots.
  const auto same = equivalents(result);
  std::vector<std::size_t> best, memory, staleness;
  for (const BatchSelection& b : selection.batches) {
    best.insert(best.end(), b.best.begin(), b.best.end());
    memory.insert(memory.end(), b.memory_front.begin(), b.memory_front.end());
    staleness.insert(staleness.end(), b.staleness_front.begin(), b.staleness_front.end());
  }
  // A front's staircase joins its points: the plots draw the first global batch's only.
  for (const auto& [front, into] : {std::pair{&selection.batches.front().memory_front, &page.memory_front},
                                    std::pair{&selection.batches.front().staleness_front, &page.staleness_front}})
    for (std::size_t i : *front) {
      PIPESIM_ASSERT(position[i] != npos);  // a front of the plotted batch holds rows of that batch
      into->push_back(position[i]);
    }
  if (plotted > 0)
    page.summary.push_back("The plots show the configurations and the fronts at global batch " +
                           std::to_string(plotted) + " (" + std::to_string(page.points.size()) + " of " +
                           std::to_string(result.rows.size()) +
                           " configurations); the tables list the fronts of every global batch.");
  page.best_title = best_title(selection.batches.size() == 1 ? best.size() : 0) +
                    (selection.batches.size() > 1 ? ", for each global batch" : "");
  page.best = rows_table(grid, result, best, true, same);
  if (const std::string tight = tight_line(result, best); !tight.empty()) page.summary.push_back(tight);
  page.memory_table = rows_table(grid, result, memory, false, same);
  page.staleness_table = rows_table(grid, result, staleness, false, same);
  page.generator = "pipesim " PIPESIM_VERSION;
  return page;
}

}  // namespace pipesim
