#pragma once
// What would make a configuration that does not fit in GPU memory fit: each of the usual
// switches (recomputation, sequence parallelism, flash attention, ZeRO-1, twice the tp or
// the pp) applied to the same run, which is then generated, simulated and assessed again.
// Never guessed: a change is listed with the peak memory and throughput it really gives.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "schedules/generator.hpp"
#include "schedules/schedule.hpp"
#include "assess/assessment.hpp"
#include "tools/hardware_flags.hpp"

namespace pipesim {

// One model run that does not fit.
struct FitQuery {
  HardwareOptions hardware;  // its settings; `hardware.hardware` is the one GPU it ran on
  std::string generator;     // the generator it came from; empty: a schedule file (`file`)
  ScheduleParams params;     // the generator's parameters (p, m, iterations, ...)
  const Schedule* file = nullptr;  // with a schedule file: only the model's switches apply
  std::string max_memory;    // --max-memory: a change whose schedule would exceed it is not tried
};

struct FitChange {
  std::string change;                // the flags that differ, e.g. "--flash-attention true"
  std::optional<Assessment> result;  // empty: the change cannot be applied (`why`)
  std::string why;
};

// Every change that applies, in a fixed order: each switch alone, then all of the memory
// switches together, then those with twice the tp, then with twice the pp. Switches already
// on are left out; tp and pp changes keep the GPU count (dp shrinks), and with
// --global-batch-size the global batch (m follows).
std::vector<FitChange> fit_changes(const FitQuery& query);

// Where a configuration stands now: what the advice compares each change with.
struct FitStatus {
  std::int64_t peak_memory = 0, capacity = 0;
  double tokens_per_s = 0;
};
inline FitStatus fit_status(const Assessment& a) { return {a.peak_memory, a.capacity, a.tokens_per_s}; }

// "<label> does not fit: ... Re-evaluated with each change:" and an aligned table of the
// changes (peak memory, of capacity, fits, tokens/s, against now), then those that do not apply.
std::string fit_advice_text(const std::string& label, const FitStatus& now, const std::vector<FitChange>& changes);
// The same as `fit_advice` in --json: [{"change", "peak_memory_bytes", "capacity_bytes",
// "fits", "tokens_per_s"} or {"change", "not_applicable": why}, ...] (docs/json.md).
nlohmann::ordered_json fit_advice_json(const std::vector<FitChange>& changes);

}  // namespace pipesim
