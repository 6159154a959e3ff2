#include "tools/assessment_output.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/memory_fit.hpp"
#include "core/units.hpp"
#include "tools/table.hpp"

namespace pipesim {
namespace {

std::string fits_text(const Assessment& a) {
  if (!a.fits) return "over by " + format_bytes(static_cast<double>(a.overshoot));
  return fits_label(a.peak_memory, a.capacity);
}

// The rows that fit with little room, or "".
std::string tight_note(const std::vector<std::pair<Assessment, Metrics>>& rows) {
  const bool gpus = std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return r.first.hardware != rows[0].first.hardware; });
  std::string names;
  std::size_t count = 0;
  for (const auto& [a, m] : rows)
    if (tight_fit(a.peak_memory, a.capacity)) {
      names += (names.empty() ? "" : ", ") + (gpus ? a.hardware + " " : "") + m.schedule;
      ++count;
    }
  return names.empty() ? "" : wrap_note(tight_fit_note(names, count));
}

// "1 sequence", "2 sequences", or "2.7 sequences on average" where the steps differ in size.
std::string sequences_text(double sequences) {
  if (sequences != std::floor(sequences)) return format_fixed(sequences, 1) + " sequences on average";
  return format_fixed(sequences, 0) + (sequences == 1 ? " sequence" : " sequences");
}

// What the rows that step the optimizer more than once an iteration train at, or "".
std::string optimizer_steps_note(const std::vector<std::pair<Assessment, Metrics>>& rows) {
  std::vector<std::string> names;
  const Assessment* first = nullptr;
  double others = 0;  // sequences per step of a schedule that steps once an iteration
  for (const auto& [a, m] : rows) {
    if (a.optimizer_steps == 1) {
      others = others > 0 ? others : a.global_batch;
      continue;
    }
    first = first ? first : &a;
    if (std::find(names.begin(), names.end(), m.schedule) == names.end()) names.push_back(m.schedule);
  }
  if (!first) return "";
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return wrap_note("note: " + list + (names.size() > 1 ? " step" : " steps") + " the optimizer " +
                   std::to_string(first->optimizer_steps) + " times an iteration at each stage: a batch of " +
                   sequences_text(first->global_batch / first->optimizer_steps) + " per step" +
                   (others > 0 ? ", where the others step once an iteration, at " + sequences_text(others) : "") +
                   (names.size() > 1 ? ". Their tokens/s compare; their" : ". Its tokens/s compares; its") +
                   " optimizer steps do not (a smaller batch, more steps: another training recipe).");
}

}  // namespace

nlohmann::ordered_json assessment_json(const Assessment& a, nlohmann::ordered_json run) {
  nlohmann::ordered_json j = std::move(run);
  const auto usd = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  j["model"] = a.model;
  j["hardware"] = a.hardware;
  j["nodes"] = a.nodes;
  j["gpus_per_node"] = a.gpus_per_node;
  j["gpus"] = a.gpus;
  j["tp"] = a.tp;
  j["pp"] = a.pp;
  j["dp"] = a.dp;
  j["global_batch"] = a.global_batch;
  j["optimizer_steps_per_iteration"] = a.optimizer_steps;
  j["tokens_per_iteration"] = a.tokens_per_iteration;
  j["tokens_per_s"] = a.tokens_per_s;
  j["mfu"] = a.mfu;
  j["price_usd_per_gpu_hour"] = usd(a.price_per_hour);
  j["price_source"] = a.price_source;
  j["price_assumed"] = a.price_assumed;
  j["cost_per_million_tokens_usd"] = usd(a.cost_per_million_tokens);
  j["peak_memory_bytes"] = a.peak_memory;
  j["peak_memory_device"] = a.peak_device;
  j["capacity_bytes"] = a.capacity;
  j["fits"] = a.fits;
  j["overshoot_bytes"] = a.overshoot;
  auto& mem = j["memory_per_device"] = nlohmann::ordered_json::array();
  for (const DeviceMemory& d : a.memory)
    mem.push_back({{"device", d.device},         {"weights_bytes", d.weights},       {"gradients_bytes", d.gradients},
                   {"optimizer_bytes", d.optimizer}, {"activations_bytes", d.activations}, {"workspace_bytes", d.workspace},
                   {"comm_buffers_bytes", d.comm_buffers}, {"total_bytes", d.total},    {"weight_copies", d.weight_copies}});
  return j;
}

ReportAssessment report_assessment(const Assessment& a) {
  ReportAssessment r;
  r.model = a.model;
  r.hardware = a.hardware;
  r.nodes = a.nodes;
  r.gpus_per_node = a.gpus_per_node;
  r.tp = a.tp;
  r.pp = a.pp;
  r.dp = a.dp;
  r.global_batch = a.global_batch;
  r.optimizer_steps = a.optimizer_steps;
  r.tokens_per_iteration = a.tokens_per_iteration;
  r.tokens_per_s = a.tokens_per_s;
  r.mfu = a.mfu;
  r.price_per_hour = a.price_per_hour;
  r.price_source = a.price_source;
  r.price_assumed = a.price_assumed;
  r.cost_per_million_tokens = a.cost_per_million_tokens;
  r.capacity = a.capacity;
  for (const DeviceMemory& d : a.memory)
    r.memory.push_back({d.weights, d.gradients, d.optimizer, d.workspace + d.comm_buffers, d.activations, d.weight_copies});
  PIPESIM_ASSERT(r.peak_memory() == a.peak_memory && r.fits() == a.fits);
  return r;
}

std::string assessment_table(const std::vector<std::pair<Assessment, Metrics>>& rows) {
  Table t;
  t.add_column("hardware", Table::Align::Left);
  t.add_column("schedule", Table::Align::Left);
  t.add_column("tokens/iter");
  t.add_column("time/iter");
  t.add_column("tokens/s");
  t.add_column("MFU");
  t.add_column("bubble");
  t.add_column("peak memory");
  t.add_column("capacity");
  t.add_column("fits?", Table::Align::Left);
  t.add_column("mismatch max");
  t.add_column("delay max");
  t.add_column("$/M tokens");
  bool assumed = false;
  for (const auto& [a, m] : rows) {
    assumed = assumed || (a.cost_per_million_tokens && a.price_assumed);
    t.add_row({a.hardware, m.schedule, format_fixed(a.tokens_per_iteration, 0), format_duration(m.time_per_iteration),
               format_fixed(a.tokens_per_s, 0),
               format_percent(a.mfu), format_percent(m.bubble_ratio), format_bytes(static_cast<double>(a.peak_memory)),
               format_bytes(static_cast<double>(a.capacity)), fits_text(a), std::to_string(m.staleness.max_mismatch),
               std::to_string(m.staleness.max_delay),
               a.cost_per_million_tokens
                   ? "$" + format_fixed(*a.cost_per_million_tokens, 3) + (a.price_assumed ? " (assumed)" : "")
                   : "-"});
  }
  return t.render() +
         "\ntokens/iter = tokens per iteration (m x micro-batch size x dp sequences x sequence length; the global batch\n"
         "of a schedule that steps the optimizer once an iteration); MFU = model FLOPs (forward + backward, no\n"
         "recomputation) / (time x GPUs x dense peak); peak memory = the fullest GPU: weights (x copies held),\n"
         "gradients, optimizer state, activations, buffers; mismatch / delay in optimizer steps (see docs/schedules.md)." +
         (assumed ? " $/M tokens (assumed): the GPU's catalog price is an assumption\n"
                    "(pipesim catalog gpus; --price-per-hour gives yours).\n"
                  : "\n") +
         optimizer_steps_note(rows) + tight_note(rows);
}

}  // namespace pipesim
