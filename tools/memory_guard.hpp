#pragma once
// Memory estimate of a generated schedule, checked before anything is generated, so that
// `-p 1024 -m 65536` on a small machine ends at once with a clear message instead of
// swapping or being killed minutes later. Bytes per op were measured (docs/reliability.md):
// the op lists themselves, plus what the command builds per op (engine state, validator
// graph, records for a trace or an HTML report).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "schedules/generator.hpp"

namespace pipesim {

// What a command does with the schedule.
struct MemoryUse {
  std::uint64_t bytes_per_op = 0;        // op lists + everything kept per op
  std::uint64_t recorded_ops = 0;        // ops whose records a trace keeps (see --max-trace-ops)
  std::uint64_t bytes_per_recorded_op = 0;
};

// Measured peaks (RSS of `pipesim` at 0.5-2 M ops of 1F1B over that of `--version`, with
// jemalloc on huge pages, tools/allocator.cpp; rounded up; docs/performance.md, part 6).
inline constexpr std::uint64_t kExportBytesPerOp = 40;        // schedule --format csv|pytorch (27-33)
inline constexpr std::uint64_t kJsonExportBytesPerOp = 96;    // schedule --format json (59-83)
inline constexpr std::uint64_t kCommsExportBytesPerOp = 384;  // schedule --format pytorch-comms: the lowered ops (312-319)
inline constexpr std::uint64_t kSimulateBytesPerOp = 80;      // op lists 16 + engine (43-47 in all)
inline constexpr std::uint64_t kReportBytesPerOp = 400;       // simulate + the whole timeline (283-383)
inline constexpr std::uint64_t kValidateBytesPerOp = 256;     // check: the Boost.Graph DAG (117-125)
inline constexpr std::uint64_t kTextBytesPerOp = 320;         // schedule --format text: timeline + chart (104-112)
inline constexpr std::uint64_t kTraceBytesPerOp = 600;      // records + trace events, per traced op
// The time breakdown's records (sim/breakdown.hpp): 24 bytes per compute op in vectors that
// grow by doubling; measured 36 (RSS of `simulate --json` over `simulate`, 1F1B p=16 at 1.05
// and 4.2 M ops), rounded up to the 48 of a vector that just doubled.
inline constexpr std::uint64_t kBreakdownBytesPerOp = 48;
// A sweep's Simulator keeps its last walk for the next configuration (Simulator's
// reuse_walks): a copy of the schedule's ops (16 bytes per op) and of the filled slots (32).
inline constexpr std::uint64_t kReusedWalkBytesPerOp = 48;

// schedule: the bytes per op of writing one of its formats.
std::uint64_t export_bytes_per_op(std::string_view format);

// simulate / compare: the engine, plus the whole timeline for an HTML report, the records
// of up to `max_trace_ops` ops (0: all) for a Chrome trace and the time breakdown's.
MemoryUse simulate_memory_use(bool trace, bool report, std::uint64_t max_trace_ops, bool breakdown = false);

// estimate_ops (schedules/generator.hpp): the ops a generator will produce, from its
// metadata's closed form.
std::uint64_t estimate_bytes(std::uint64_t ops, const MemoryUse& use);

// Memory this process can still get: MemAvailable from /proc/meminfo, lowered to a cgroup
// limit if one is set. nullopt where neither can be read (the check is then skipped).
std::optional<std::uint64_t> available_memory();
// What this process holds now (VmRSS): the binary, its libraries, the catalogs.
std::uint64_t resident_memory();

// The memory a run may use: --max-memory (`max_memory`, a size such as "64GiB") if given,
// minus what the process already holds; else available_memory().
struct MemoryLimit {
  std::uint64_t bytes = 0;  // for the run's data
  bool from_flag = false;
  std::uint64_t held = 0;   // from_flag: the part of --max-memory the process already holds
  std::uint64_t flag = 0;   // from_flag: --max-memory itself
};
std::optional<MemoryLimit> memory_limit(const std::string& max_memory);
// "available: 7.1 GiB", or "--max-memory: 1.0 GiB, of which this process already holds 150.0 MiB".
std::string limit_text(const MemoryLimit& limit);

// "1f1b with p=1024, m=65536": what a generator run is, for messages.
std::string describe_generation(std::string_view generator, const ScheduleParams& params);

// The refusal message for a run of `ops` ops described by `what`, or nullopt if it fits in
// `limit`. Runs over 2^32 - 1 ops are always refused: the engine numbers ops with 32 bits.
// `smaller` says how to make the run smaller.
std::optional<std::string> memory_refusal(const std::string& what, std::uint64_t ops, const MemoryUse& use,
                                          const std::optional<MemoryLimit>& limit,
                                          const std::string& smaller = "reduce p or m");

// Throws InputError with memory_refusal's message for generating `generator` with `params`
// (estimate_ops), before anything is generated.
void check_memory(std::string_view generator, const ScheduleParams& params, const MemoryUse& use,
                  const std::string& max_memory);
// The same for a schedule read from `source` (a file) with `ops` ops, before it is run.
void check_memory_for_ops(const std::string& source, std::uint64_t ops, const MemoryUse& use,
                          const std::string& max_memory);

}  // namespace pipesim
