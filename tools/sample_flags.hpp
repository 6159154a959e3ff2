#pragma once
// --samples N --seed S (simulate, compare, validate): prediction intervals from N
// simulations on draws of a profile's measured distributions (assess/prediction_interval.hpp,
// cost_models/sampled.hpp), and how they are shown: a table, --json's
// "prediction_interval" object (docs/json.md) and the HTML report's section.
//
// Only a measured profile (--cost FILE) has distributions to draw from: with the uniform or
// the analytical cost model --samples is an InputError (a spread made up for them would look
// like a measurement and be none).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "assess/prediction_interval.hpp"
#include "tools/cli_app.hpp"
#include "traces/html_intervals.hpp"

namespace CLI {
class Option;
}  // namespace CLI

namespace pipesim {

struct SampleFlags {
  int samples = 0;  // validate's default is kValidateSamples; simulate and compare have none
  std::uint64_t seed = 0;
  CLI::Option* option = nullptr;  // --samples, to tell a given value from the default
  bool always = false;            // validate: intervals without --samples too
};
inline constexpr int kValidateSamples = 200;

// `default_samples` 0: intervals only when --samples is given. Without `seed_flag` the
// command's own --seed (validate's, which also seeds the weights) seeds the draws: the caller
// copies it into SampleFlags::seed.
void add_sample_flags(CLI::App& cmd, SampleFlags& flags, int default_samples = 0, bool seed_flag = true);
// The sampling asked for, if any: InputError unless 1 <= N <= kMaxSamples.
std::optional<Sampling> sampling_of(const SampleFlags& flags);
// InputError for --samples with a cost model that has no distributions (`model`: its name).
[[noreturn]] void refuse_samples(const std::string& model);

// One row per schedule: p10, p50 and p90 of the time per iteration and of the bubble.
using NamedInterval = std::pair<std::string, PredictionInterval>;
std::string interval_table(const std::vector<NamedInterval>& rows);
// "1.234 s .. 1.301 s": the time per iteration's p5 .. p95.
std::string time_range(const PredictionInterval& interval);
// {"samples", "seed", "time_per_iteration_s": {p5, p10, p50, p90, p95}, "bubble_ratio": {...}}
nlohmann::ordered_json interval_json(const PredictionInterval& interval);
// `calibrated`: empty, or a calibrated range's text per row ("" for none).
std::string interval_report_html(const std::vector<NamedInterval>& rows, const std::vector<std::string>& calibrated = {});

}  // namespace pipesim
