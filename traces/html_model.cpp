#include "traces/html_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "core/memory_fit.hpp"
#include "traces/html_tables.hpp"
#include "traces/svg.hpp"

namespace pipesim {

std::int64_t ReportAssessment::peak_memory() const {
  std::int64_t peak = 0;
  for (const ReportDeviceMemory& d : memory) peak = std::max(peak, d.total());
  return peak;
}

int ReportAssessment::peak_device() const {
  const auto it = std::max_element(memory.begin(), memory.end(),
                                   [](const auto& a, const auto& b) { return a.total() < b.total(); });
  return it == memory.end() ? 0 : static_cast<int>(it - memory.begin());
}

namespace {

std::string bytes(std::int64_t b) { return format_bytes(static_cast<double>(b)); }

// `part` of `whole` as a percentage; "-" without a whole.
std::string share(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? report_percent(static_cast<double>(part) / static_cast<double>(whole)) : "-";
}

std::string usd(double v, int decimals) { return "$" + format_fixed_number(v, decimals); }

// "$12.29 per GPU-hour (AWS EC2 ...)", "$13.52 per GPU-hour (assumed: ...)", "no price".
std::string price_text(const ReportAssessment& a) {
  if (!a.price_per_hour) return "no price (give one with --price-per-hour)";
  std::string out = usd(*a.price_per_hour, 2) + " per GPU-hour";
  if (a.price_assumed) return out + " (assumed: " + a.price_source + ")";
  return a.price_source.empty() ? out : out + " (" + a.price_source + ")";
}

std::string cost_text(const ReportAssessment& a) {
  if (!a.cost_per_million_tokens) return "-";
  return usd(*a.cost_per_million_tokens, 3) + (a.price_assumed ? " (assumed price)" : "");
}

// The distinct values of `key` over the rows, in order of appearance, joined by " / ".
std::string distinct(const std::vector<ModelRow>& rows, const std::function<std::string(const ReportAssessment&)>& key) {
  std::vector<std::string> seen;
  for (const ModelRow& r : rows)
    if (const std::string v = key(*r.assessment); std::find(seen.begin(), seen.end(), v) == seen.end())
      seen.push_back(v);
  std::string out;
  for (const std::string& v : seen) out += (out.empty() ? "" : " / ") + v;
  return out;
}

bool several_gpus(const std::vector<ModelRow>& rows) {
  return std::any_of(rows.begin(), rows.end(),
                     [&](const ModelRow& r) { return r.assessment->hardware != rows.front().assessment->hardware; });
}

std::string name_of(const ModelRow& r, bool with_gpu) {
  return r.metrics->schedule + (with_gpu ? " on " + r.assessment->hardware : "");
}

std::string linked(const ModelRow& r, const std::string& text) {
  return r.anchor.empty() ? xml_escape(text) : "<a href=\"#" + xml_escape(r.anchor) + "\">" + xml_escape(text) + "</a>";
}

// The fitting row with the highest (or lowest) value of `key`, if any fits.
std::optional<std::size_t> best_fitting(const std::vector<ModelRow>& rows, const std::function<double(const ModelRow&)>& key,
                                        bool lowest) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].assessment->fits()) continue;
    if (!best || (lowest ? key(rows[i]) < key(rows[*best]) : key(rows[i]) > key(rows[*best]))) best = i;
  }
  return best;
}

}  // namespace

std::string fit_text(const ReportAssessment& a) {
  const std::int64_t peak = a.peak_memory();
  if (peak > a.capacity) return "over by " + bytes(peak - a.capacity);
  return "fits (" + bytes(a.capacity - peak) + " free" + (tight_fit(peak, a.capacity) ? ": tight)" : ")");
}

std::string grouped_number(double value) {
  std::string digits = format_fixed_number(std::round(value), 0);
  const std::size_t sign = !digits.empty() && digits[0] == '-' ? 1 : 0;
  for (std::size_t i = digits.size(); i > sign + 3; i -= 3) digits.insert(i - 3, ",");
  return digits;
}

std::string experiment_facts_html(const std::vector<ModelRow>& rows) {
  PIPESIM_ASSERT(!rows.empty());
  std::string out = "<table class=\"kv facts\">\n";
  out += html_row("model", distinct(rows, [](const ReportAssessment& a) { return a.model; }));
  out += html_row(several_gpus(rows) ? "GPUs" : "GPU", distinct(rows, [](const ReportAssessment& a) {
                    return a.hardware + ": " + bytes(a.capacity) + ", " + price_text(a);
                  }));
  out += html_row("cluster", distinct(rows, [](const ReportAssessment& a) {
                    return std::to_string(a.nodes) + (a.nodes == 1 ? " node" : " nodes") + " x " +
                           std::to_string(a.gpus_per_node) + " GPUs = " + std::to_string(a.gpus()) + " GPUs";
                  }));
  out += html_row("parallelism", distinct(rows, [](const ReportAssessment& a) {
                    return "tp=" + std::to_string(a.tp) + " pp=" + std::to_string(a.pp) + " dp=" + std::to_string(a.dp);
                  }));
  out += html_row("batch per iteration", distinct(rows, [](const ReportAssessment& a) {
                    const double seq = a.global_batch > 0 ? a.tokens_per_iteration / a.global_batch : 0;
                    return grouped_number(a.global_batch) + " sequences x " + grouped_number(seq) +
                           " tokens = " + grouped_number(a.tokens_per_iteration) + " tokens per iteration";
                  }));
  // Where some schedules step the optimizer after every micro-batch, the batch they train at.
  std::vector<std::string> names;
  const ReportAssessment* first = nullptr;  // the first of them, whose numbers the row gives
  for (const ModelRow& r : rows)
    if (r.assessment->optimizer_steps > 1) {
      first = first ? first : r.assessment;
      if (std::find(names.begin(), names.end(), r.metrics->schedule) == names.end())
        names.push_back(r.metrics->schedule);
    }
  if (first) {
    const ReportAssessment& a = *first;
    std::string often;
    for (const std::string& n : names) often += (often.empty() ? "" : ", ") + n;
    out += html_row("optimizer steps",
                    often + ": " + std::to_string(a.optimizer_steps) + " an iteration at each stage, " +
                        grouped_number(a.global_batch / a.optimizer_steps) +
                        (a.global_batch == a.optimizer_steps ? " sequence" : " sequences") +
                        " per step (a smaller batch than the others', which step once an iteration: "
                        "their tokens/s compare, their steps do not)");
  }
  return out + "</table>\n";
}

std::string verdict_html(const std::vector<ModelRow>& rows) {
  PIPESIM_ASSERT(!rows.empty());
  const bool gpus = several_gpus(rows);
  if (rows.size() == 1) {
    const ReportAssessment& a = *rows.front().assessment;
    return std::string("<p class=\"verdict") + (a.fits() ? "" : " none") + "\">" +
           xml_escape(name_of(rows.front(), false)) + (a.fits() ? " fits: " : " does not fit: ") +
           xml_escape(bytes(a.peak_memory())) + " on device " + std::to_string(a.peak_device()) + " of the " +
           xml_escape(a.hardware) + "'s " + xml_escape(bytes(a.capacity)) + " (" + xml_escape(fit_text(a)) + "); " +
           xml_escape(grouped_number(a.tokens_per_s)) + " tokens/s" +
           (a.cost_per_million_tokens ? ", " + xml_escape(cost_text(a)) + " per million tokens" : std::string()) +
           ".</p>\n";
  }
  const auto tput = [](const ModelRow& r) { return r.assessment->tokens_per_s; };
  const std::optional<std::size_t> fastest = best_fitting(rows, tput, false);
  if (!fastest) {
    const auto closest = std::min_element(rows.begin(), rows.end(), [](const ModelRow& a, const ModelRow& b) {
      return a.assessment->peak_memory() - a.assessment->capacity < b.assessment->peak_memory() - b.assessment->capacity;
    });
    const ReportAssessment& a = *closest->assessment;
    return "<p class=\"verdict none\">Nothing fits in the GPU's memory. Closest: " + linked(*closest, name_of(*closest, gpus)) +
           ", " + xml_escape(bytes(a.peak_memory())) + " on device " + std::to_string(a.peak_device()) + ", over " +
           xml_escape(bytes(a.capacity)) + " by " + xml_escape(bytes(a.peak_memory() - a.capacity)) + ".</p>\n";
  }
  const ModelRow& f = rows[*fastest];
  std::string out = "<p class=\"verdict\">Fastest that fits: <b>" + linked(f, name_of(f, gpus)) + "</b>, " +
                    xml_escape(grouped_number(f.assessment->tokens_per_s)) + " tokens/s, " +
                    xml_escape(format_duration(f.metrics->time_per_iteration)) + " per iteration";
  if (f.assessment->cost_per_million_tokens) out += ", " + xml_escape(cost_text(*f.assessment)) + " per million tokens";
  out += ".";
  if (tight_fit(f.assessment->peak_memory(), f.assessment->capacity))
    out += " It fits with " + xml_escape(kTightFitNote) + ".";
  const auto cost = [](const ModelRow& r) {
    return r.assessment->cost_per_million_tokens.value_or(std::numeric_limits<double>::infinity());
  };
  if (const auto cheapest = best_fitting(rows, cost, true);
      cheapest && cost(rows[*cheapest]) < cost(f) && rows[*cheapest].assessment->cost_per_million_tokens)
    out += " Cheapest that fits: " + linked(rows[*cheapest], name_of(rows[*cheapest], gpus)) + ", " +
           xml_escape(cost_text(*rows[*cheapest].assessment)) + " per million tokens.";
  std::string faster;
  for (const ModelRow& r : rows)
    if (!r.assessment->fits() && r.assessment->tokens_per_s > f.assessment->tokens_per_s)
      faster += std::string(faster.empty() ? "" : "; ") + linked(r, name_of(r, gpus)) + " (" +
                xml_escape(grouped_number(r.assessment->tokens_per_s)) + " tokens/s) is " +
                xml_escape(fit_text(*r.assessment)) + " on device " + std::to_string(r.assessment->peak_device());
  if (!faster.empty()) out += " Faster, but does not fit: " + faster + ".";
  return out + "</p>\n";
}

std::string model_compare_summary_html(const std::vector<ModelRow>& rows) {
  const bool gpus = several_gpus(rows);
  std::string out = "<div class=\"wide\"><table class=\"summary\">\n<tr><th>schedule</th>";
  if (gpus) out += "<th>GPU</th>";
  out +=
      "<th>time/iter</th><th>tokens/s</th><th>MFU</th><th>$/M tokens</th><th>bubble</th><th>peak memory "
      "(device)</th><th>of capacity</th><th>fits?</th><th>weights</th><th>mismatch max</th><th>delay max</th></tr>\n";
  // Bold: the best of a column among the rows that fit, ties included, unless all are equal.
  auto best_of = [&](const std::function<double(const ModelRow&)>& key, bool lowest) {
    std::vector<bool> best(rows.size(), false);
    const std::optional<std::size_t> b = best_fitting(rows, key, lowest);
    if (!b) return best;
    bool all_equal = true;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!rows[i].assessment->fits()) continue;
      best[i] = key(rows[i]) == key(rows[*b]);
      all_equal = all_equal && best[i];
    }
    if (all_equal) best.assign(rows.size(), false);
    return best;
  };
  const auto b_time = best_of([](const ModelRow& r) { return static_cast<double>(r.metrics->time_per_iteration); }, true);
  const auto b_tput = best_of([](const ModelRow& r) { return r.assessment->tokens_per_s; }, false);
  const auto b_mfu = best_of([](const ModelRow& r) { return r.assessment->mfu; }, false);
  const auto b_cost = best_of(
      [](const ModelRow& r) {
        return r.assessment->cost_per_million_tokens.value_or(std::numeric_limits<double>::infinity());
      },
      true);
  const auto b_mem = best_of([](const ModelRow& r) { return static_cast<double>(r.assessment->peak_memory()); }, true);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ModelRow& r = rows[i];
    const ReportAssessment& a = *r.assessment;
    const Metrics& m = *r.metrics;
    out += a.fits() ? "<tr>" : "<tr class=\"nofit\">";
    out += "<td>" + linked(r, m.schedule) + "</td>";
    if (gpus) out += html_cell(a.hardware);
    out += html_cell(format_duration(m.time_per_iteration), best_class(b_time[i])) +
           html_cell(grouped_number(a.tokens_per_s), best_class(b_tput[i])) +
           html_cell(report_percent(a.mfu), best_class(b_mfu[i])) +
           html_cell(a.cost_per_million_tokens ? usd(*a.cost_per_million_tokens, 3) : "-", best_class(b_cost[i])) +
           html_cell(report_percent(m.bubble_ratio)) +
           html_cell(bytes(a.peak_memory()) + " (dev " + std::to_string(a.peak_device()) + ")", best_class(b_mem[i])) +
           html_cell(share(a.peak_memory(), a.capacity)) +
           html_cell(a.fits() ? fits_label(a.peak_memory(), a.capacity) : fit_text(a), "fit") +
           html_cell(weight_share_text(m)) + html_cell(std::to_string(m.staleness.max_mismatch)) +
           html_cell(std::to_string(m.staleness.max_delay)) + "</tr>\n";
  }
  return out + "</table></div>\n";
}

std::string model_summary_html(const ReportAssessment& a) {
  std::string out = "<table class=\"kv\">\n";
  out += html_row("tokens/s", grouped_number(a.tokens_per_s) + " (" + grouped_number(a.tokens_per_iteration) +
                                  " tokens per iteration)");
  out += html_row("MFU", report_percent(a.mfu) + " (model FLOPs / GPU peak)");
  out +=
      html_row("cost", a.cost_per_million_tokens ? cost_text(a) + " per million tokens" : "- (no price per GPU-hour)");
  out += html_row("peak memory", bytes(a.peak_memory()) + " on device " + std::to_string(a.peak_device()) + " of " +
                                     bytes(a.capacity) + " (" + share(a.peak_memory(), a.capacity) + ")");
  out += html_row("fits?", a.fits() ? "yes, " + fit_text(a) : "no, " + fit_text(a));
  return out + "</table>\n";
}

std::string device_memory_table_html(const ReportAssessment& a) {
  std::string out =
      "<table>\n<tr><th>device</th><th>weights</th><th>gradients</th><th>optimizer state</th><th>buffers</th>"
      "<th>activations (peak)</th><th>total</th><th>of capacity</th></tr>\n";
  for (std::size_t d = 0; d < a.memory.size(); ++d) {
    const ReportDeviceMemory& m = a.memory[d];
    out +=
        std::string(m.total() > a.capacity ? "<tr class=\"nofit\">" : "<tr>") + html_cell(std::to_string(d)) +
        html_cell(bytes(m.weights) + (m.weight_copies > 1 ? " (" + std::to_string(m.weight_copies) + " copies)" : "")) +
        html_cell(bytes(m.gradients)) + html_cell(bytes(m.optimizer)) + html_cell(bytes(m.buffers)) +
        html_cell(bytes(m.activations)) + html_cell(bytes(m.total())) + html_cell(share(m.total(), a.capacity)) +
        "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace pipesim
