#include "tools/validate_verdict.hpp"

#include <cmath>
#include <fstream>
#include <string>

#include "tools/table.hpp"

namespace pipesim {
namespace {

std::string load_text(const std::optional<double>& load) { return load ? format_fixed(*load, 2) : "unknown"; }

}  // namespace

std::optional<double> load_average() {
  std::ifstream in("/proc/loadavg");
  double one_minute = 0;
  if (!(in >> one_minute)) return std::nullopt;
  return one_minute;
}

std::optional<CpuTimes> cpu_times() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  if (!(in >> cpu) || cpu != "cpu") return std::nullopt;
  CpuTimes t;
  for (int field = 0; field < 8; ++field) {  // user nice system idle iowait irq softirq steal
    std::uint64_t ticks = 0;
    if (!(in >> ticks)) return std::nullopt;
    t.total += ticks;
    if (field == 7) t.steal = ticks;
  }
  return t;
}

std::optional<double> steal_share(const std::optional<CpuTimes>& before, const std::optional<CpuTimes>& after) {
  if (!before || !after || after->total <= before->total || after->steal < before->steal) return std::nullopt;
  return static_cast<double>(after->steal - before->steal) / static_cast<double>(after->total - before->total);
}

std::optional<double> others_during(const MachineLoad& load) {
  if (!load.after) return std::nullopt;
  const double d = std::exp(-load.seconds / 60);
  if (load.seconds < 15 || !load.before) return *load.after - load.own_threads * (1 - d);
  return (*load.after - *load.before * d) / (1 - d) - load.own_threads;
}

std::vector<std::string> validity_warnings(const MachineLoad& load, double spread, double tolerance) {
  std::vector<std::string> out;
  const double limit = load.cores - 0.5;
  const std::string why = "other work shared the cores, so the measured times say little about the schedule";
  if (load.cores > 0 && load.before && *load.before > limit) {
    out.push_back("machine load " + format_fixed(*load.before, 2) + " before the runs on " + std::to_string(load.cores) +
                  " cores (above " + format_fixed(limit, 1) + "): " + why);
  } else if (const std::optional<double> others = others_during(load); load.cores > 0 && others && *others > limit) {
    out.push_back("machine load " + format_fixed(*load.after, 2) + " after the runs on " + std::to_string(load.cores) +
                  " cores: " + format_fixed(*others, 2) + " threads on average beside their own " +
                  std::to_string(load.own_threads) + " (above " + format_fixed(limit, 1) + "): " + why);
  }
  if (load.steal && *load.steal > kStealWarning)
    out.push_back("the hypervisor took " + format_percent(*load.steal) + " of the CPU time while this ran (steal, /proc/stat): "
                  "the virtual machine's host ran others on these cores, and op times vary with what it does");
  if (spread > tolerance)
    out.push_back("the profile's repeats spread " + format_percent(spread) + " (p10 to p90 of the block's passes), more than "
                  "the tolerance " + format_percent(tolerance) + ": an error within the tolerance cannot be told from noise");
  return out;
}

std::string conditions_line(const MachineLoad& load, double spread) {
  return "machine load " + load_text(load.before) + " before, " + load_text(load.after) + " after (1-minute average, " +
         std::to_string(load.cores) + " cores)" + (load.steal ? ", " + format_percent(*load.steal) + " of CPU time stolen" : std::string()) +
         "; profile repeats spread " + format_percent(spread) +
         " ((p90 - p10) / median, median over the block's passes)";
}

nlohmann::ordered_json machine_load_json(const MachineLoad& load) {
  const auto value = [](const std::optional<double>& x) { return x ? nlohmann::ordered_json(*x) : nullptr; };
  return {{"cores", load.cores}, {"before", value(load.before)}, {"after", value(load.after)},
          {"others_during", value(others_during(load))}, {"steal", value(load.steal)}};
}

}  // namespace pipesim
