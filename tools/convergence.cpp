#include "tools/convergence.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <tuple>

#include "core/error.hpp"
#include "core/units.hpp"
#include "tools/run_losses.hpp"
#include "tools/table.hpp"
#include "traces/html_lines.hpp"
#include "traces/svg.hpp"

namespace pipesim {
namespace {

constexpr double kNoLoss = std::numeric_limits<double>::infinity();

// The seeds' iterations to the target, sorted; runs that never reached it left out.
std::vector<std::int32_t> reached(const ScheduleConvergence& r, double target) {
  std::vector<std::int32_t> out;
  for (const SeedCurve& c : r.seeds)
    if (const auto it = iterations_to(c, target)) out.push_back(*it);
  std::sort(out.begin(), out.end());
  return out;
}

// The lower median (an iteration that was measured), for an answer in whole iterations.
std::int32_t lower_median(const std::vector<std::int32_t>& sorted) { return sorted[(sorted.size() - 1) / 2]; }

// The time per iteration the answer uses: simulated, or the median of the proxy runs'.
Tick iteration_time(const ScheduleConvergence& r) {
  if (r.simulated_iteration > 0) return r.simulated_iteration;
  std::vector<Tick> t;
  for (const SeedCurve& c : r.seeds) t.push_back(c.measured_iteration);
  std::sort(t.begin(), t.end());
  return t.empty() ? 0 : t[(t.size() - 1) / 2];
}

std::pair<double, double> final_range(const ScheduleConvergence& r) {
  double lo = 1e300, hi = -1e300;
  for (const SeedCurve& c : r.seeds)
    if (!c.validation.empty()) {
      lo = std::min(lo, c.validation.back().loss);
      hi = std::max(hi, c.validation.back().loss);
    }
  return {lo, hi};
}

double mean_of(const ScheduleConvergence& r, double (*f)(const SeedCurve&)) {
  double sum = 0;
  for (const SeedCurve& c : r.seeds) sum += f(c);
  return r.seeds.empty() ? 0 : sum / static_cast<double>(r.seeds.size());
}

double mean_delay(const SeedCurve& c) { return c.staleness.mean_delay; }
double mean_mismatch(const SeedCurve& c) { return c.staleness.mean_mismatch; }

std::int32_t max_of(const ScheduleConvergence& r, std::int32_t Staleness::*field) {
  std::int32_t m = 0;
  for (const SeedCurve& c : r.seeds) m = std::max(m, c.staleness.*field);
  return m;
}

std::string seeds_text(const std::vector<ScheduleConvergence>& results) {
  std::string out;
  if (!results.empty())
    for (const SeedCurve& c : results.front().seeds) out += (out.empty() ? "" : ",") + std::to_string(c.seed);
  return out;
}

std::string lr_text(double lr) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", lr);
  return text;
}

std::string rates_text(const std::vector<double>& rates) {
  std::string out;
  for (double r : rates) out += (out.empty() ? "" : ", ") + lr_text(r);
  return out;
}

bool tuning(const ConvergenceSettings& s) { return s.rates.size() > 1; }

// A tuned rate at the lowest or highest of the grid: the best may lie beyond it.
bool at_grid_end(const ConvergenceSettings& s, double lr) {
  return tuning(s) && (lr == *std::min_element(s.rates.begin(), s.rates.end()) ||
                       lr == *std::max_element(s.rates.begin(), s.rates.end()));
}

bool simulated(const ConvergenceSettings& s) { return !s.cost_model.empty(); }

// "simulated for gpt3-1.3b on h100-sxm (analytical cost model)", "simulated (cost model:
// uniform)", or measured.
std::string time_source(const ConvergenceSettings& s) {
  if (!simulated(s)) return "measured on the proxy run (this machine's cores)";
  if (s.model.empty()) return "simulated (cost model: " + one_line(s.cost_model) + ")";
  return "simulated for " + one_line(s.model) + " on " + one_line(s.hardware) + " (" + one_line(s.cost_model) +
         " cost model)";
}

std::string assumption(const ConvergenceSettings& s) {
  return "time to target = iterations to target, measured on " + one_line(s.proxy) + ", x time per iteration " +
         (!simulated(s) ? "measured there" : s.model.empty() ? "simulated" : "simulated for " + one_line(s.model)) +
         "; it assumes the proxy's iterations to target (at least their ratio between schedules) carry over";
}

std::string tuning_text(const ConvergenceSettings& s) {
  return "tuned per schedule over " + rates_text(s.rates) + ": " + kRateChoice;
}

// The mean over seeds of the validation loss at each iteration all seeds validated.
std::vector<std::pair<double, double>> mean_curve(const ScheduleConvergence& r) {
  std::vector<std::pair<double, double>> out;
  if (r.seeds.empty()) return out;
  for (std::size_t k = 0; k < r.seeds.front().validation.size(); ++k) {
    double sum = 0;
    for (const SeedCurve& c : r.seeds) sum += k < c.validation.size() ? c.validation[k].loss : c.validation.back().loss;
    out.emplace_back(r.seeds.front().validation[k].iteration, sum / static_cast<double>(r.seeds.size()));
  }
  return out;
}

// A run's lowest validation loss; +infinity when it has no finite one.
double lowest_loss(const SeedCurve& c) {
  double lowest = kNoLoss;
  for (const ValidationPoint& p : c.validation)
    if (std::isfinite(p.loss)) lowest = std::min(lowest, p.loss);
  return lowest;
}

// The mean over seeds of the last validation loss; +infinity when one is missing or not finite.
double mean_final_loss(const ScheduleConvergence& r) {
  double sum = 0;
  for (const SeedCurve& c : r.seeds) {
    if (c.validation.empty() || !std::isfinite(c.validation.back().loss)) return kNoLoss;
    sum += c.validation.back().loss;
  }
  return r.seeds.empty() ? kNoLoss : sum / static_cast<double>(r.seeds.size());
}

// The schedules' names in the order of first appearance, each with its runs' indices.
std::vector<std::pair<std::string, std::vector<std::size_t>>> by_schedule(const std::vector<ScheduleConvergence>& results) {
  std::vector<std::pair<std::string, std::vector<std::size_t>>> out;
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& g) { return g.first == results[i].schedule; });
    if (it == out.end()) {
      out.emplace_back(results[i].schedule, std::vector<std::size_t>{});
      it = out.end() - 1;
    }
    it->second.push_back(i);
  }
  return out;
}

std::vector<std::size_t> all_runs(const std::vector<ScheduleConvergence>& results) {
  std::vector<std::size_t> out(results.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = i;
  return out;
}

// The rows of `results` at `rows`, with a learning-rate column when `with_lr` (a tuned rate at
// an end of the grid marked '*').
std::string table_text(const ConvergenceSettings& s, const std::vector<ScheduleConvergence>& results,
                       const std::vector<std::size_t>& rows, bool with_lr, bool mark_ends) {
  Table t;
  for (const char* h : {"schedule", "lr", "reached", "iterations to target", "final val loss", "max mismatch",
                        "mean mismatch", "max delay", "mean delay", "time/iteration", "time to target"}) {
    if (!with_lr && std::string_view(h) == "lr") continue;
    t.add_column(h, std::string_view(h) == "schedule" ? Table::Align::Left : Table::Align::Right);
  }
  for (const std::size_t i : rows) {
    const ScheduleConvergence& r = results[i];
    const std::vector<std::int32_t> its = reached(r, s.target);
    std::string iterations = "-", to_target = "-";
    if (!its.empty()) {
      iterations = std::to_string(lower_median(its));
      if (its.size() > 1) iterations += " [" + std::to_string(its.front()) + ", " + std::to_string(its.back()) + "]";
      to_target = format_duration(iteration_time(r) * lower_median(its));
    }
    const auto [lo, hi] = final_range(r);
    std::vector<std::string> cells = {r.schedule};
    if (with_lr) cells.push_back(lr_text(r.lr) + (mark_ends && at_grid_end(s, r.lr) ? " *" : ""));
    for (std::string cell :
         {std::to_string(its.size()) + "/" + std::to_string(r.seeds.size()), iterations,
          lo == hi ? loss_text(lo) : loss_text(lo) + ".." + loss_text(hi), std::to_string(max_of(r, &Staleness::max_mismatch)),
          format_fixed(mean_of(r, mean_mismatch), 2), std::to_string(max_of(r, &Staleness::max_delay)),
          format_fixed(mean_of(r, mean_delay), 2), format_duration(iteration_time(r)), to_target})
      cells.push_back(std::move(cell));
    t.add_row(cells);
  }
  return t.render();
}

nlohmann::ordered_json run_json(const ConvergenceSettings& s, const ScheduleConvergence& r) {
  nlohmann::ordered_json e = {{"schedule", r.schedule},
                              {"settings", r.settings},
                              {"lr", r.lr},
                              {"time_per_iteration_s", static_cast<double>(iteration_time(r)) * 1e-9}};
  const std::vector<std::int32_t> its = reached(r, s.target);
  e["iterations_to_target"] = its.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(lower_median(its));
  e["time_to_target_s"] = its.empty() ? nlohmann::ordered_json(nullptr)
                                      : nlohmann::ordered_json(static_cast<double>(iteration_time(r) * lower_median(its)) * 1e-9);
  const double final_loss = mean_final_loss(r);
  e["mean_final_validation_loss"] = std::isfinite(final_loss) ? nlohmann::ordered_json(final_loss) : nlohmann::ordered_json(nullptr);
  auto& seeds = e["seeds"] = nlohmann::ordered_json::array();
  for (const SeedCurve& c : r.seeds) {
    nlohmann::ordered_json sj = {{"seed", c.seed}};
    const auto it = iterations_to(c, s.target);
    sj["iterations_to_target"] = it ? nlohmann::ordered_json(*it) : nlohmann::ordered_json(nullptr);
    sj["staleness"] = {{"max_mismatch", c.staleness.max_mismatch}, {"mean_mismatch", c.staleness.mean_mismatch},
                       {"mismatched_fraction", c.staleness.mismatched_fraction}, {"max_delay", c.staleness.max_delay},
                       {"mean_delay", c.staleness.mean_delay}};
    if (!simulated(s)) sj["measured_time_per_iteration_s"] = static_cast<double>(c.measured_iteration) * 1e-9;
    auto& v = sj["validation"] = nlohmann::ordered_json::array();
    for (const ValidationPoint& p : c.validation) v.push_back({{"iteration", p.iteration}, {"loss", p.loss}});
    sj["training_loss"] = c.training;
    seeds.push_back(std::move(sj));
  }
  return e;
}

// Validation loss against iterations, one line per run at `rows` (named with its rate when
// `with_lr`), and the same against time.
std::pair<std::vector<LineSeries>, std::vector<LineSeries>> curves(const std::vector<ScheduleConvergence>& results,
                                                                   const std::vector<std::size_t>& rows, bool with_lr) {
  std::vector<LineSeries> by_iteration, by_time;
  for (const std::size_t i : rows) {
    const ScheduleConvergence& r = results[i];
    const std::string name = r.schedule + (with_lr ? " (lr " + lr_text(r.lr) + ")" : "");
    const auto curve = mean_curve(r);
    by_iteration.push_back({name, curve});
    LineSeries timed{name, {}};
    const double seconds = static_cast<double>(iteration_time(r)) * 1e-9;
    for (const auto& [it, loss] : curve) timed.points.emplace_back(it * seconds, loss);
    by_time.push_back(std::move(timed));
  }
  return {std::move(by_iteration), std::move(by_time)};
}

}  // namespace

const char* const kRateChoice =
    "the rate with the most seeds reaching the target, then the fewest iterations to it (median over seeds), then "
    "the lowest mean final validation loss, then the lower rate";

double common_target(const std::vector<ScheduleConvergence>& results) {
  double target = 0;
  for (const auto& [name, runs] : by_schedule(results)) {
    double best = kNoLoss;  // over rates: the loss every seed of that rate reaches
    for (const std::size_t i : runs) {
      double worst = 0;
      for (const SeedCurve& c : results[i].seeds) worst = std::max(worst, lowest_loss(c));
      best = std::min(best, worst);
    }
    if (std::isfinite(best)) target = std::max(target, best);
  }
  return target;
}

std::optional<std::int32_t> iterations_to(const SeedCurve& curve, double target) {
  for (const ValidationPoint& p : curve.validation)
    if (p.loss <= target) return p.iteration;
  return std::nullopt;
}

std::vector<std::size_t> tuned_runs(const std::vector<ScheduleConvergence>& results, double target) {
  // Smaller is better, compared in order.
  const auto score = [&](std::size_t i) {
    const std::vector<std::int32_t> its = reached(results[i], target);
    return std::make_tuple(-static_cast<std::ptrdiff_t>(its.size()),
                           its.empty() ? std::numeric_limits<std::int32_t>::max() : lower_median(its),
                           mean_final_loss(results[i]), results[i].lr);
  };
  std::vector<std::size_t> out;
  for (const auto& [name, runs] : by_schedule(results))
    out.push_back(*std::min_element(runs.begin(), runs.end(), [&](std::size_t a, std::size_t b) { return score(a) < score(b); }));
  return out;
}

std::string convergence_text(const ConvergenceSettings& s, const std::vector<ScheduleConvergence>& results) {
  std::string out = "pipesim converge: proxy " + one_line(s.proxy) + " trained on " + quote(s.data) +
                    " (byte-level tokens), " + s.optimizer + " lr " + rates_text(s.rates) + ", p " +
                    std::to_string(s.p) + ", m " + std::to_string(s.m) + ", " + std::to_string(s.iterations) +
                    " iterations, seeds " + seeds_text(results) + "\n\n";
  out += "target        validation loss " + loss_text(s.target) +
         (s.target_chosen ? tuning(s) ? " (every schedule reaches it on every seed at one of its rates at least)"
                                      : " (the highest of the runs' lowest: every run reaches it)"
                          : "") +
         "\n";
  out += "time          per iteration " + time_source(s) + "\n";
  out += "assumption    " + assumption(s) + "\n";
  if (tuning(s)) out += "learning rate " + tuning_text(s) + "\n";
  const char* median_note = "(iterations to target: the median over seeds, lower of the middle two for an even count, [min, max])\n";
  if (!tuning(s)) return out + "\n" + table_text(s, results, all_runs(results), false, false) + "\n" + median_note;
  const std::vector<std::size_t> tuned = tuned_runs(results, s.target);
  const bool at_end = std::any_of(tuned.begin(), tuned.end(), [&](std::size_t i) { return at_grid_end(s, results[i].lr); });
  return out + "\neach schedule at its best rate:\n" + table_text(s, results, tuned, true, true) +
         (at_end ? "(* at an end of the --lr grid: the best rate may lie beyond it)\n" : "") +
         "\nevery rate (the same target):\n" +
         table_text(s, results, all_runs(results), true, false) + "\n" + median_note;
}

nlohmann::ordered_json convergence_json(const ConvergenceSettings& s, const std::vector<ScheduleConvergence>& results) {
  nlohmann::ordered_json j = {{"proxy_model", s.proxy}, {"data", s.data}, {"optimizer", s.optimizer}, {"lr", s.rates}};
  if (tuning(s)) j["lr_choice"] = kRateChoice;
  j["p"] = s.p;
  j["m"] = s.m;
  j["iterations"] = s.iterations;
  j["target"] = s.target;
  j["target_chosen"] = s.target_chosen;
  j["time_per_iteration"] = time_source(s);
  j["assumption"] = assumption(s);
  if (simulated(s)) j["cost_model"] = s.cost_model;
  if (!s.model.empty()) {
    j["model"] = s.model;
    j["hardware"] = s.hardware;
  }
  auto& list = j["schedules"] = nlohmann::ordered_json::array();
  for (const std::size_t i : tuned_runs(results, s.target)) {
    nlohmann::ordered_json e = run_json(s, results[i]);
    if (tuning(s)) e["lr_at_grid_end"] = at_grid_end(s, results[i].lr);
    list.push_back(std::move(e));
  }
  if (tuning(s)) {
    auto& every = j["every_rate"] = nlohmann::ordered_json::array();
    for (const ScheduleConvergence& r : results) every.push_back(run_json(s, r));
  }
  return j;
}

void write_convergence_report(std::ostream& out, const ConvergenceSettings& s,
                              const std::vector<ScheduleConvergence>& results) {
  const auto [by_iteration, by_time] = curves(results, tuned_runs(results, s.target), tuning(s));
  const std::string best = tuning(s) ? " (each schedule at its best rate)" : "";
  std::string body = "<p>" + xml_escape(assumption(s)) + ". Time per iteration " + xml_escape(time_source(s)) +
                     ". Curves: validation loss, mean over the seeds." +
                     (tuning(s) ? " Learning rate " + xml_escape(tuning_text(s)) + "." : "") + "</p>\n";
  body += "<h2>Against iterations" + best + "</h2>\n" +
          line_chart_svg("validation loss against iterations", "iterations", "loss", by_iteration) +
          "\n<h2>Against time" + best + "</h2>\n" +
          line_chart_svg("validation loss against time", simulated(s) ? "seconds (simulated)" : "seconds (measured)",
                         "loss", by_time) +
          "\n";
  for (const double lr : tuning(s) ? s.rates : std::vector<double>{}) {
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < results.size(); ++i)
      if (results[i].lr == lr) at.push_back(i);
    body += "<h2>Against iterations at lr " + lr_text(lr) + " (the same rate for every schedule)</h2>\n" +
            line_chart_svg("validation loss against iterations at lr " + lr_text(lr), "iterations", "loss",
                           curves(results, at, false).first) +
            "\n";
  }
  out << line_chart_page("Time to a validation loss",
                         body + "<h2>Table</h2>\n<pre>" + xml_escape(convergence_text(s, results)) + "</pre>\n");
}

}  // namespace pipesim
