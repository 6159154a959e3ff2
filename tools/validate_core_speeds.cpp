#include "tools/validate_core_speeds.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>

#include "tools/table.hpp"
#include "core/error.hpp"
#include "core/cpu_affinity.hpp"
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
    for (double seconds : block_pass_seconds_on_cores(model, b, out.cores, kCoreSpeedRounds, kCoreSpeedDwell,
                                                        profile.settings.stage_blocks))
      out.slowdown.push_back(seconds / reference);
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

double speed_drift(const CoreSpeeds& before, const CoreSpeeds& after) {
  double drift = 0;
  for (std::size_t c = 0; c < before.cores.size(); ++c)
    for (std::size_t a = 0; a < after.cores.size(); ++a)
      if (after.cores[a] == before.cores[c]) drift = std::max(drift, std::abs(after.slowdown[a] / before.slowdown[c] - 1));
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

nlohmann::ordered_json speeds_json(const CoreSpeeds& s) {
  auto out = nlohmann::ordered_json::array();
  for (std::size_t c = 0; c < s.cores.size(); ++c) out.push_back({{"core", s.cores[c]}, {"slowdown", s.slowdown[c]}});
  return out;
}

std::string speeds_line(const CoreSpeeds& s) {
  if (s.cores.empty()) return "";
  std::string out = "core speeds: a block pass takes";
  for (std::size_t c = 0; c < s.cores.size(); ++c)
    out += std::string(c ? "," : "") + " x" + format_fixed(s.slowdown[c], 3) + " (core " + std::to_string(s.cores[c]) + ")";
  return out + " the profile's time now; device d's thread runs on core d where devices <= cores\n";
}

}  // namespace pipesim
