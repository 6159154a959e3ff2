#include "tools/memory_guard.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>

#include "core/units.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

constexpr std::uint64_t kMaxOps = std::numeric_limits<std::uint32_t>::max();  // OpId is 32 bits

double non_negative(long long v) { return v > 0 ? static_cast<double>(v) : 0.0; }

std::uint64_t saturate(double v) {
  // 2^64 as a double; anything at or above it (or NaN, which cannot happen here) saturates.
  if (!(v < 18446744073709551616.0)) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(v);
}

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
  if (generator == "interleaved") out += ", v=" + std::to_string(p.v);
  if (generator == "chimera" && p.width != 1) out += ", width=" + std::to_string(p.width);
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

std::uint64_t estimate_ops(std::string_view g, const ScheduleParams& params) {
  // Op counts per iteration of the built-in generators (measured over p, m, v, width and
  // pipelines; docs/reliability.md), as doubles so that absurd inputs cannot overflow.
  const double p = non_negative(params.p), m = non_negative(params.m), v = non_negative(params.v);
  const double w = non_negative(params.width), f = non_negative(params.pipelines);
  double per_iteration = 0;
  if (g == "gpipe" || g == "1f1b" || g == "pipedream-2bw") {
    per_iteration = p * (2 * m + 1);
  } else if (g == "interleaved" || g == "looped-bfs") {
    per_iteration = p * v * (2 * m + 1);
  } else if (g == "interleaved-zb") {
    per_iteration = p * v * (3 * m + 1);
  } else if (g == "zb-v" || g == "v-half" || g == "v-min") {
    per_iteration = p * (6 * m + 2);
  } else if (g == "zb-h1" || g == "zb-h2") {
    per_iteration = p * (3 * m + 1);
  } else if (g == "chimera") {
    const double split = params.concat == "halving" ? 2 : 1;  // half-size micro-batches, twice as many ops
    per_iteration = p * w * (2 * m * split + 2 * f);
  } else if (g == "pipedream" || g == "async-1f1b" || g == "amp") {
    per_iteration = 3 * p * m;
  } else if (g == "amdp") {
    per_iteration = p * (2 * m + p);
  } else if (g == "dualpipe") {
    per_iteration = 2 * p * m + p * p + 4 * p;
  } else if (g == "dualpipev") {
    per_iteration = 4 * p * m + 2 * p * p + 2 * p;
  } else {
    // A generator this table does not know yet: a generous bound (4 ops per micro-batch
    // and chunk, plus per-stage ops).
    per_iteration = p * std::max(1.0, v) * std::max(1.0, w) * (4 * m + 2 * p + 2 * f + 2);
  }
  return saturate(per_iteration * non_negative(params.iterations));
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
  return saturate(bytes);
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
                                    memory_limit(max_memory)))
    throw InputError(*refusal);
}

void check_memory_for_ops(const std::string& source, std::uint64_t ops, const MemoryUse& use,
                          const std::string& max_memory) {
  if (auto refusal = memory_refusal("the schedule of " + quote(source, 256), ops, use, memory_limit(max_memory),
                                    "use a smaller schedule"))
    throw InputError(*refusal);
}

}  // namespace pipesim
