#include "tools/validate_core_use.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "tools/table.hpp"

namespace pipesim {

double core_use(const Timeline& timeline, Tick begin, Tick end, int cores) {
  PIPESIM_ASSERT(cores > 0);
  if (end <= begin) return 0;
  std::vector<std::pair<Tick, int>> steps;  // (time, +1 start / -1 end), clipped to the span
  for (const OpRecord& r : timeline.ops) {
    if (!is_compute(r.op.kind)) continue;
    const Tick s = std::max(r.start, begin);
    const Tick e = std::min(r.end, end);
    if (e <= s) continue;
    steps.emplace_back(s, 1);
    steps.emplace_back(e, -1);
  }
  std::sort(steps.begin(), steps.end());  // at one time, ends (-1) before starts
  double filled = 0;
  int running = 0;
  Tick last = begin;
  for (const auto& [t, step] : steps) {
    filled += static_cast<double>(t - last) * std::min(running, cores);
    last = t;
    running += step;
  }
  PIPESIM_ASSERT(running == 0);
  return filled / (static_cast<double>(end - begin) * cores);
}

namespace {

std::string turns_text(const KindFactors& turns) {
  const auto x = [&](OpKind k) { return "x" + format_fixed(turns[static_cast<std::size_t>(k)], 3); };
  return "F " + x(OpKind::F) + ", B " + x(OpKind::B) + ", OPT " + x(OpKind::OptStep);
}

// "  the ops' CPU time over the run: predicted 12.690 s (99.90 % of the cores' time), measured
// 13.936 s (97.50 %; the device threads' clocks, +9.82 %); the device threads had 98.30 % of the
// cores' time", the shares where the spans are known.
std::string ops_cpu_text(const CoreUse& use) {
  const auto of_cores = [&](double cpu_s, double span_s) {
    return span_s > 0 ? format_percent(cpu_s / (use.cores * span_s)) : std::string();
  };
  const std::string predicted_share = of_cores(use.ops_cpu_predicted_s, use.span_predicted_s);
  const std::string measured_share = of_cores(use.ops_cpu_measured_s, use.span_measured_s);
  const std::string threads_share =
      use.threads_cpu_measured_s >= 0 ? of_cores(use.threads_cpu_measured_s, use.span_measured_s) : std::string();
  return "  the ops' CPU time over the run: predicted " + format_duration_seconds(use.ops_cpu_predicted_s) +
         (predicted_share.empty() ? "" : " (" + predicted_share + " of the cores' time)") + ", measured " +
         format_duration_seconds(use.ops_cpu_measured_s) + " (" +
         (measured_share.empty() ? "" : measured_share + "; ") + "the device threads' clocks, " +
         format_signed_percent(use.ops_cpu_measured_s / use.ops_cpu_predicted_s - 1) + ")" +
         (threads_share.empty() ? "" : "; the device threads had " + threads_share + " of the cores' time");
}

}  // namespace

ThreadShares thread_shares(const std::vector<ThreadCpu>& threads) {
  double total = 0, copies = 0, outside = 0, ops = 0;
  for (const ThreadCpu& t : threads) {
    total += t.total_s;
    copies += t.copies_s;
    ops += t.ops_s;
    outside += std::max(0.0, t.total_s - t.ops_s - t.copies_s);
  }
  if (!(total > 0)) return {};
  return {copies / total, outside / total, ops, total};
}

std::string core_use_line(const std::string& schedule, int devices, const CoreUse& use) {
  return schedule + ": core use (" + std::to_string(devices) + " device threads on " + std::to_string(use.cores) +
         " cores): predicted " + format_percent(use.predicted) + ", measured " + format_percent(use.measured) +
         " of the cores' time in the counted iterations;\n  an op taking turns on the cores: " +
         turns_text(use.profile_turns) + " in the profile, " + turns_text(use.turns) +
         " predicted (beyond its noise, less the interference curve's part)" +
         (use.outside_ops >= 0
              ? ";\n  the device threads spent " + format_percent(use.copies) +
                    " of their CPU time in GradSync's copies (on their core in the simulation) and " +
                    format_percent(use.outside_ops) + " outside their ops and those (on no core in the simulation)"
              : "") +
         (use.ops_cpu_predicted_s > 0 && use.ops_cpu_measured_s >= 0 ? ";\n" + ops_cpu_text(use) : "");
}

std::string core_use_warning(const std::string& schedule, const CoreUse& use, double tolerance) {
  if (!(use.predicted - use.measured > tolerance)) return "";
  return schedule + "'s cores computed " + format_percent(use.measured) + " of the time, predicted " +
         format_percent(use.predicted) +
         ": for the rest they were idle, in GradSync's copies (as predicted there) or busy outside the devices' ops "
         "(message hand-offs, wake-ups, GradSync's sum, other programs), which the simulator charges to no core" +
         (use.outside_ops >= 0 ? " (the device threads' own share: " + format_percent(use.outside_ops) + " of their CPU time)"
                               : std::string()) +
         " (docs/shared-hardware.md)";
}

}  // namespace pipesim
