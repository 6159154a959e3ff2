#include "tools/convergence.hpp"

#include <algorithm>
#include <ostream>

#include "core/error.hpp"
#include "core/units.hpp"
#include "tools/table.hpp"
#include "traces/html_lines.hpp"
#include "traces/svg.hpp"

namespace pipesim {
namespace {

std::string loss_text(double loss) { return format_fixed(loss, 4); }

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

std::string time_source(const ConvergenceSettings& s) {
  return s.model.empty() ? "measured on the proxy run (this machine's cores)"
                         : "simulated for " + one_line(s.model) + " on " + one_line(s.hardware) +
                               " (analytical cost model)";
}

std::string assumption(const ConvergenceSettings& s) {
  return "time to target = iterations to target, measured on " + one_line(s.proxy) + ", x time per iteration " +
         (s.model.empty() ? "measured there" : "simulated for " + one_line(s.model)) +
         "; it assumes the proxy's iterations to target (at least their ratio between schedules) carry over";
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

}  // namespace

double common_target(const std::vector<ScheduleConvergence>& results) {
  double target = 0;
  for (const ScheduleConvergence& r : results)
    for (const SeedCurve& c : r.seeds)
      if (!c.validation.empty())
        target = std::max(target, std::min_element(c.validation.begin(), c.validation.end(), [](const auto& a, const auto& b) {
                                    return a.loss < b.loss;
                                  })->loss);
  return target;
}

std::optional<std::int32_t> iterations_to(const SeedCurve& curve, double target) {
  for (const ValidationPoint& p : curve.validation)
    if (p.loss <= target) return p.iteration;
  return std::nullopt;
}

std::string convergence_text(const ConvergenceSettings& s, const std::vector<ScheduleConvergence>& results) {
  std::string out = "pipesim converge: proxy " + one_line(s.proxy) + " trained on " + quote(s.data) +
                    " (byte-level tokens), " + s.optimizer + " lr " + format_fixed(s.lr, 4) + ", p " +
                    std::to_string(s.p) + ", m " + std::to_string(s.m) + ", " + std::to_string(s.iterations) +
                    " iterations, seeds " + seeds_text(results) + "\n\n";
  out += "target        validation loss " + loss_text(s.target) +
         (s.target_chosen ? " (the highest of the runs' lowest: every run reaches it)" : "") + "\n";
  out += "time          per iteration " + time_source(s) + "\n";
  out += "assumption    " + assumption(s) + "\n\n";
  Table t;
  for (const char* h : {"schedule", "reached", "iterations to target", "final val loss", "max mismatch", "mean mismatch",
                        "max delay", "mean delay", "time/iteration", "time to target"})
    t.add_column(h, std::string_view(h) == "schedule" ? Table::Align::Left : Table::Align::Right);
  for (const ScheduleConvergence& r : results) {
    const std::vector<std::int32_t> its = reached(r, s.target);
    std::string iterations = "-", to_target = "-";
    if (!its.empty()) {
      iterations = std::to_string(lower_median(its));
      if (its.size() > 1) iterations += " [" + std::to_string(its.front()) + ", " + std::to_string(its.back()) + "]";
      to_target = format_duration(iteration_time(r) * lower_median(its));
    }
    const auto [lo, hi] = final_range(r);
    t.add_row({r.schedule, std::to_string(its.size()) + "/" + std::to_string(r.seeds.size()), iterations,
               lo == hi ? loss_text(lo) : loss_text(lo) + ".." + loss_text(hi), std::to_string(max_of(r, &Staleness::max_mismatch)),
               format_fixed(mean_of(r, mean_mismatch), 2), std::to_string(max_of(r, &Staleness::max_delay)),
               format_fixed(mean_of(r, mean_delay), 2), format_duration(iteration_time(r)), to_target});
  }
  return out + t.render() +
         "\n(iterations to target: the median over seeds, lower of the middle two for an even count, [min, max])\n";
}

nlohmann::ordered_json convergence_json(const ConvergenceSettings& s, const std::vector<ScheduleConvergence>& results) {
  nlohmann::ordered_json j = {{"proxy_model", s.proxy}, {"data", s.data},   {"optimizer", s.optimizer},
                              {"lr", s.lr},             {"p", s.p},         {"m", s.m},
                              {"iterations", s.iterations}, {"target", s.target}, {"target_chosen", s.target_chosen},
                              {"time_per_iteration", time_source(s)}, {"assumption", assumption(s)}};
  if (!s.model.empty()) {
    j["model"] = s.model;
    j["hardware"] = s.hardware;
  }
  auto& list = j["schedules"] = nlohmann::ordered_json::array();
  for (const ScheduleConvergence& r : results) {
    nlohmann::ordered_json e = {{"schedule", r.schedule}, {"time_per_iteration_s", static_cast<double>(iteration_time(r)) * 1e-9}};
    const std::vector<std::int32_t> its = reached(r, s.target);
    e["iterations_to_target"] = its.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(lower_median(its));
    e["time_to_target_s"] = its.empty() ? nlohmann::ordered_json(nullptr)
                                        : nlohmann::ordered_json(static_cast<double>(iteration_time(r) * lower_median(its)) * 1e-9);
    auto& seeds = e["seeds"] = nlohmann::ordered_json::array();
    for (const SeedCurve& c : r.seeds) {
      nlohmann::ordered_json sj = {{"seed", c.seed}};
      const auto it = iterations_to(c, s.target);
      sj["iterations_to_target"] = it ? nlohmann::ordered_json(*it) : nlohmann::ordered_json(nullptr);
      sj["staleness"] = {{"max_mismatch", c.staleness.max_mismatch}, {"mean_mismatch", c.staleness.mean_mismatch},
                         {"mismatched_fraction", c.staleness.mismatched_fraction}, {"max_delay", c.staleness.max_delay},
                         {"mean_delay", c.staleness.mean_delay}};
      if (s.model.empty()) sj["measured_time_per_iteration_s"] = static_cast<double>(c.measured_iteration) * 1e-9;
      auto& v = sj["validation"] = nlohmann::ordered_json::array();
      for (const ValidationPoint& p : c.validation) v.push_back({{"iteration", p.iteration}, {"loss", p.loss}});
      sj["training_loss"] = c.training;
      seeds.push_back(std::move(sj));
    }
    list.push_back(std::move(e));
  }
  return j;
}

void write_convergence_report(std::ostream& out, const ConvergenceSettings& s,
                              const std::vector<ScheduleConvergence>& results) {
  std::vector<LineSeries> by_iteration, by_time;
  for (const ScheduleConvergence& r : results) {
    const auto curve = mean_curve(r);
    by_iteration.push_back({r.schedule, curve});
    LineSeries timed{r.schedule, {}};
    const double seconds = static_cast<double>(iteration_time(r)) * 1e-9;
    for (const auto& [it, loss] : curve) timed.points.emplace_back(it * seconds, loss);
    by_time.push_back(std::move(timed));
  }
  out << line_chart_page(
      "Time to a validation loss",
      "<p>" + xml_escape(assumption(s)) + ". Time per iteration " + xml_escape(time_source(s)) +
          ". Curves: validation loss, mean over the seeds.</p>\n<h2>Against iterations</h2>\n" +
          line_chart_svg("validation loss against iterations", "iterations", "loss", by_iteration) +
          "\n<h2>Against time</h2>\n" +
          line_chart_svg("validation loss against time", s.model.empty() ? "seconds (measured)" : "seconds (simulated)",
                         "loss", by_time) +
          "\n<h2>Table</h2>\n<pre>" + xml_escape(convergence_text(s, results)) + "</pre>\n");
}

}  // namespace pipesim
