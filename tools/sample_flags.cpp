#include "tools/sample_flags.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "tools/table.hpp"
#include "traces/html_intervals.hpp"

namespace pipesim {
namespace {

Tick ticks(double ns) { return static_cast<Tick>(std::llround(ns)); }

nlohmann::ordered_json percentiles_json(const Percentiles& p, double scale) {
  return {{"p5", p.p5 * scale}, {"p10", p.p10 * scale}, {"p50", p.p50 * scale}, {"p90", p.p90 * scale},
          {"p95", p.p95 * scale}};
}

}  // namespace

void add_sample_flags(CLI::App& cmd, SampleFlags& f, int default_samples, bool seed_flag) {
  f.samples = default_samples;
  f.always = default_samples > 0;
  const std::string needs = seed_flag ? " Needs a profile (--cost FILE)" : " The draws use --seed";
  const std::string what = default_samples > 0 ? " [default: " + std::to_string(default_samples) + "]" : "";
  auto* samples = f.option = cmd.add_option("--samples", f.samples,
                                 "Prediction intervals: N simulations (1.." + std::to_string(kMaxSamples) +
                                     "), each op's duration drawn from the profile's measured distribution; "
                                     "p10/p50/p90 of time per iteration and bubble." + needs + what);
  if (!seed_flag) return;
  // No default string: --save-config writes --seed only when given (with --samples).
  auto* seed = cmd.add_option("--seed", f.seed, "The draws' seed (default 0): the same seed, the same intervals");
  if (default_samples == 0) seed->needs(samples);
}

std::optional<Sampling> sampling_of(const SampleFlags& f) {
  if (!f.always && f.option->count() == 0) return std::nullopt;
  if (f.samples < 1 || f.samples > kMaxSamples)
    throw InputError("--samples: expected a number of simulations in 1.." + std::to_string(kMaxSamples) + ", got " +
                     std::to_string(f.samples));
  return Sampling{f.samples, f.seed, 0, {}};
}

void refuse_samples(const std::string& model) {
  throw InputError("--samples: needs measured distributions, a profile from `pipesim profile` (--cost FILE); the " +
                   model + " cost model has none");
}

std::string interval_table(const std::vector<NamedInterval>& rows) {
  Table t;
  t.add_column("schedule", Table::Align::Left);
  for (const char* c : {"time/iter p10", "p50", "p90", "bubble p10", "p50", "p90"}) t.add_column(c);
  for (const auto& [name, r] : rows)
    t.add_row({name, format_duration(ticks(r.time_per_iteration.p10)), format_duration(ticks(r.time_per_iteration.p50)),
               format_duration(ticks(r.time_per_iteration.p90)), format_percent(r.bubble_ratio.p10),
               format_percent(r.bubble_ratio.p50), format_percent(r.bubble_ratio.p90)});
  const Sampling& s = rows.front().second.sampling;
  return "prediction intervals: " + std::to_string(s.samples) + " simulations on draws of the profile's measured " +
         "distributions, seed " + std::to_string(s.seed) + "\n" + t.render() + "\n" +
         wrap_note(kIntervalsAboveThePlainPrediction);
}

std::string time_range(const PredictionInterval& r) {
  return format_duration(ticks(r.time_per_iteration.p5)) + " .. " + format_duration(ticks(r.time_per_iteration.p95));
}

nlohmann::ordered_json interval_json(const PredictionInterval& r) {
  nlohmann::ordered_json j;
  j["samples"] = r.sampling.samples;
  j["seed"] = r.sampling.seed;
  j["time_per_iteration_s"] = percentiles_json(r.time_per_iteration, 1e-9);
  j["bubble_ratio"] = percentiles_json(r.bubble_ratio, 1);
  return j;
}

std::string interval_report_html(const std::vector<NamedInterval>& rows, const std::vector<std::string>& calibrated) {
  if (rows.empty()) return {};
  PIPESIM_ASSERT(calibrated.empty() || calibrated.size() == rows.size());
  std::vector<ReportInterval> report;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const PredictionInterval& r = rows[i].second;
    report.push_back({rows[i].first, ticks(r.time_per_iteration.p10), ticks(r.time_per_iteration.p50),
                      ticks(r.time_per_iteration.p90), r.bubble_ratio.p10, r.bubble_ratio.p50, r.bubble_ratio.p90,
                      calibrated.empty() ? std::string() : calibrated[i]});
  }
  const Sampling& s = rows.front().second.sampling;
  return intervals_html(report, s.samples, s.seed);
}

}  // namespace pipesim
