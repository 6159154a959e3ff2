#include "tools/validate_core_speeds.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>

#include "tools/table.hpp"
#include "core/error.hpp"
#include "core/cpu_affinity.hpp"
#include "core/percentile.hpp"
#include "cost_models/sampled.hpp"
#include "executor/shared_layout.hpp"
#include "kernels/core_speeds.hpp"

namespace pipesim {

CoreSpeeds measure_core_speeds(const ModelSpec& model, int b, const Profile& profile, bool quiet) {
  CoreSpeeds out;
  const auto at = std::find_if(profile.micro_batches.begin(), profile.micro_batches.end(),
                               [&](const MicroBatchProfile& m) { return m.size == b; });
  if (at == profile.micro_batches.end()) return out;
  const double reference = at->block.forward.median + at->block.input_grad.median + at->block.weight_grad.median;
  out.cores = usable_core_ids();
  if (out.cores.empty() || !(reference > 0)) return CoreSpeeds{};
  if (!quiet) std::cerr << "pipesim: timing a block pass on each of " << out.cores.size() << " cores\n";
  try {
    const CorePassSeconds seconds = block_pass_seconds_on_cores(model, b, out.cores, kCoreSpeedRounds,
                                                                kCoreSpeedDwell, profile.settings.stage_blocks);
    for (std::size_t c = 0; c < out.cores.size(); ++c) {
      out.slowdown.push_back(seconds.median[c] / reference);
      out.visits.emplace_back();
      for (double v : seconds.visits[c]) out.visits.back().push_back(v / reference);
    }
  } catch (const InputError& e) {  // a core this process may not run on after all
    std::cerr << "pipesim: warning: " << e.what() << "; every device at the profile's speed, threads not pinned\n";
    return CoreSpeeds{};
  }
  for (double f : out.slowdown)
    if (!(f >= 1 / kMaxCoreFactor && f <= kMaxCoreFactor)) {  // the profile is not of this machine as it is now
      std::cerr << "pipesim: warning: a block pass takes x" << format_fixed(f, 3)
                << " the profile's time now, beyond x" << format_fixed(1 / kMaxCoreFactor, 2) << " .. x"
                << format_fixed(kMaxCoreFactor, 0)
                << ": the profile does not describe this machine now (taken under other load?); core speeds not "
                   "applied, threads not pinned\n";
      return CoreSpeeds{};
    }
  return out;
}

namespace {

// f(b, a) for each core `before` and `after` both probed: b its index in `before`, a in `after`
// (matched by CPU id, whatever order each probe lists them in).
template <class F>
void for_each_probed_twice(const CoreSpeeds& before, const CoreSpeeds& after, F f) {
  for (std::size_t b = 0; b < before.cores.size(); ++b)
    for (std::size_t a = 0; a < after.cores.size(); ++a)
      if (after.cores[a] == before.cores[b]) f(b, a);
}

}  // namespace

double speed_drift(const CoreSpeeds& before, const CoreSpeeds& after) {
  double drift = 0;
  for_each_probed_twice(before, after, [&](std::size_t b, std::size_t a) {
    drift = std::max(drift, std::abs(after.slowdown[a] / before.slowdown[b] - 1));
  });
  return drift;
}

std::string drift_warning(const std::string& schedule, const CoreSpeeds& before, const CoreSpeeds& after,
                          double tolerance) {
  const double drift = speed_drift(before, after);
  if (!(drift > tolerance)) return "";
  return "the machine's speed moved " + format_percent(drift) + " during " + schedule +
         "'s run (a block pass on each core before and after it), more than the tolerance " +
         format_percent(tolerance) + ": its error cannot be told from the machine's drift";
}

std::vector<double> speeds_during_run(const CoreSpeeds& before, const CoreSpeeds& after) {
  std::vector<double> out = before.slowdown;
  for_each_probed_twice(before, after,
                        [&](std::size_t b, std::size_t a) { out[b] = (before.slowdown[b] + after.slowdown[a]) / 2; });
  return out;
}

namespace {

// Hash domains of the machine draws, apart from the cost model's (cost_models/sampled.cpp).
constexpr std::uint64_t kMachineDomain = 0x6d616368696e65ull;  // "machine"
constexpr std::uint64_t kVisitDomain = 0x7669736974ull;        // "visit"

// Core c's visits in `s`; none when the probe did not keep them.
const std::vector<double>& visits_of(const CoreSpeeds& s, std::size_t c) {
  static const std::vector<double> none;
  return c < s.visits.size() ? s.visits[c] : none;
}

// The median of values.size() values drawn with replacement from `values` by `key`; the
// median itself (no draw) when there is one value or none drawn from.
double bootstrap_median(const std::vector<double>& values, double fallback, std::uint64_t key) {
  if (values.size() < 2) return values.empty() ? fallback : values.front();
  std::vector<double> drawn;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double u = unit_interval(mix64(key ^ mix64(i + 1)));
    drawn.push_back(values[std::min(values.size() - 1, static_cast<std::size_t>(u * static_cast<double>(values.size())))]);
  }
  std::sort(drawn.begin(), drawn.end());
  return percentile(drawn, 0.5);
}

}  // namespace

std::vector<std::vector<double>> machine_draws(int devices, const CoreSpeeds& before, const CoreSpeeds& after,
                                               int samples, std::uint64_t seed) {
  if (before.slowdown.empty()) return {};
  const bool moved = !after.slowdown.empty() && after.slowdown.size() == before.slowdown.size();
  std::vector<std::vector<double>> rows;
  std::vector<double> cores(before.slowdown.size());
  for (int k = 0; k < samples; ++k) {
    const std::uint64_t draw = mix64(seed ^ mix64(static_cast<std::uint64_t>(k) ^ kMachineDomain));
    const double u = unit_interval(draw);
    for (std::size_t c = 0; c < cores.size(); ++c) {
      const std::uint64_t key = mix64(draw ^ kVisitDomain ^ mix64(2 * c + 1));
      const double b = bootstrap_median(visits_of(before, c), before.slowdown[c], key);
      const double a = moved ? bootstrap_median(visits_of(after, c), after.slowdown[c], mix64(key ^ 1)) : b;
      cores[c] = b + u * (a - b);
    }
    rows.push_back(device_slowdowns(devices, cores));
  }
  return rows;
}

nlohmann::ordered_json speeds_json(const CoreSpeeds& s) {
  auto out = nlohmann::ordered_json::array();
  for (std::size_t c = 0; c < s.cores.size(); ++c)
    out.push_back({{"core", s.cores[c]},
                   {"slowdown", s.slowdown[c]},
                   {"visits", visits_of(s, c)}});
  return out;
}

std::string speeds_line(const CoreSpeeds& s) {
  if (s.cores.empty()) return "";
  std::string out = "core speeds: a block pass takes";
  for (std::size_t c = 0; c < s.cores.size(); ++c)
    out += std::string(c ? "," : "") + " x" + format_fixed(s.slowdown[c], 3) + " (core " + std::to_string(s.cores[c]) + ")";
  return out + " the profile's time before the first run, probed again after each run; each run is predicted "
               "at each core's mean of its probes either side; device d's thread runs on core d where devices <= cores\n";
}

}  // namespace pipesim
