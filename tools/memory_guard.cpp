#include "tools/memory_guard.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>

#include "core/units.hpp"
#include "core/error.hpp"
#include "core/saturate.hpp"

namespace pipesim {
namespace {

constexpr std::uint64_t kMaxOps = std::numeric_limits<std::uint32_t>::max();  // op ids are 32 bits (kMaxOpIds, schedules/op_numbering.hpp)

// "1.3e8" for large counts, the exact number for small ones.
std::string approx_count(std::uint64_t n) {
  if (n < 100'000) return std::to_string(n);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", static_cast<double>(n));
  std::string s(buf);
  const std::size_t e = s.find("e+");
  if (e != std::string::npos) {
    std::size_t digits = e + 2;
    while (digits + 1 < s.size() && s[digits] == '0') ++digits;
    s = s.substr(0, e + 1) + s.substr(digits);
  }
  return s;
}

}  // namespace

std::string describe_generation(std::string_view generator, const ScheduleParams& p) {
  std::string out = std::string(generator) + " with p=" + std::to_string(p.p) + ", m=" + std::to_string(p.m);
  const GeneratorInfo& g = find_generator(generator);
  const ScheduleParams defaults;
  for (const ScheduleSetting& s : schedule_settings())  // -v always, the others where not the default
    if (g.reads(s.name()) && (s.shape() || s.value(p) != s.value(defaults)))
      out += ", " + std::string(s.letter()) + "=" + s.value(p);
  if (p.iterations != 1) out += ", iterations=" + std::to_string(p.iterations);
  return out;
}

namespace {

// A number from a file such as /proc/meminfo, or nullopt.
std::optional<std::uint64_t> read_number(const char* path, std::string_view key = {}) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string word;
  if (key.empty()) {
    std::uint64_t v = 0;
    if (in >> v) return v;
    return std::nullopt;  // e.g. "max": no limit
  }
  while (in >> word) {
    if (word != key) continue;
    std::uint64_t kib = 0;
    if (in >> kib) return kib * 1024;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::uint64_t export_bytes_per_op(std::string_view format) {
  if (format == "text") return kTextBytesPerOp;
  if (format == "json") return kJsonExportBytesPerOp;
  if (format == "pytorch-comms") return kCommsExportBytesPerOp;
  return kExportBytesPerOp;
}

MemoryUse simulate_memory_use(bool trace, bool report, std::uint64_t max_trace_ops, bool breakdown) {
  MemoryUse use{(report ? kReportBytesPerOp : kSimulateBytesPerOp) + (breakdown ? kBreakdownBytesPerOp : 0), 0, 0};
  if (trace) {
    use.recorded_ops = max_trace_ops == 0 ? std::numeric_limits<std::uint64_t>::max() : max_trace_ops;
    use.bytes_per_recorded_op = kTraceBytesPerOp;
  }
  return use;
}

std::uint64_t estimate_bytes(std::uint64_t ops, const MemoryUse& use) {
  const double bytes = static_cast<double>(ops) * static_cast<double>(use.bytes_per_op) +
                       static_cast<double>(std::min(ops, use.recorded_ops)) * static_cast<double>(use.bytes_per_recorded_op);
  return saturate_u64(bytes);
}

std::optional<std::uint64_t> available_memory() {
  std::optional<std::uint64_t> avail = read_number("/proc/meminfo", "MemAvailable:");
  // A container's limit can be far below what the host has free.
  for (const auto& [limit_path, usage_path] :
       {std::pair{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
        std::pair{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}}) {
    const auto limit = read_number(limit_path);
    const auto usage = read_number(usage_path);
    if (!limit || !usage || *limit >= (std::uint64_t{1} << 62)) continue;  // "max" or the v1 "unlimited"
    const std::uint64_t left = *limit > *usage ? *limit - *usage : 0;
    avail = avail ? std::min(*avail, left) : left;
  }
  return avail;
}

std::uint64_t resident_memory() { return read_number("/proc/self/status", "VmRSS:").value_or(0); }

std::optional<MemoryLimit> memory_limit(const std::string& max_memory) {
  if (max_memory.empty()) {
    const auto available = available_memory();
    if (!available) return std::nullopt;
    return MemoryLimit{*available, false, 0};
  }
  const auto flag = static_cast<std::uint64_t>(parse_bytes(max_memory, "--max-memory"));
  const std::uint64_t held = resident_memory();
  return MemoryLimit{flag > held ? flag - held : 0, true, held, flag};
}

std::string limit_text(const MemoryLimit& limit) {
  if (!limit.from_flag) return "available: " + format_bytes(static_cast<double>(limit.bytes));
  return "--max-memory: " + format_bytes(static_cast<double>(limit.flag)) + ", of which this process already holds " +
         format_bytes(static_cast<double>(limit.held));
}

std::optional<std::string> memory_refusal(const std::string& what_runs, std::uint64_t ops, const MemoryUse& use,
                                          const std::optional<MemoryLimit>& limit, const std::string& smaller) {
  const std::string what = what_runs + " has ~" + approx_count(ops) + " ops";
  if (ops > kMaxOps)
    return what + "; pipesim numbers ops with 32 bits (at most " + approx_count(kMaxOps) +
           " ops per schedule); " + smaller;
  if (!limit) return std::nullopt;
  const std::uint64_t bytes = estimate_bytes(ops, use);
  if (bytes <= limit->bytes) return std::nullopt;
  return what + " and needs ~" + format_bytes(static_cast<double>(bytes)) + " (" + limit_text(*limit) + "); " +
         smaller + (limit->from_flag ? ", or raise --max-memory" : ", or pass --max-memory to override");
}

void check_memory(std::string_view generator, const ScheduleParams& params, const MemoryUse& use,
                  const std::string& max_memory) {
  if (auto refusal = memory_refusal(describe_generation(generator, params), estimate_ops(generator, params), use,
                                    memory_limit(max_memory),
                                    find_generator(generator).reads("chunks") ? "reduce p, m or v" : "reduce p or m"))
    throw InputError(*refusal);
}

void check_memory_for_ops(const std::string& source, std::uint64_t ops, const MemoryUse& use,
                          const std::string& max_memory) {
  if (auto refusal = memory_refusal("the schedule of " + quote(source, 256), ops, use, memory_limit(max_memory),
                                    "use a smaller schedule"))
    throw InputError(*refusal);
}

}  // namespace pipesim
