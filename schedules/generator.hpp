#pragma once
// The schedule generators: pure functions ScheduleParams -> Schedule, found by name.
// Each generator checks its parameters and throws InputError naming the flag and the
// constraint ("interleaved: m (6) must be a multiple of p (4)").
#include <string>
#include <string_view>
#include <vector>

#include "schedules/schedule.hpp"

namespace pipesim {

struct ScheduleParams {
  int p = 4;           // pipeline stages = devices per pipeline (the spec's D)
  int m = 8;           // micro-batches each device executes per iteration (the spec's N)
  int v = 2;           // chunks per device (interleaved only)
  int iterations = 1;  // optimizer steps to generate (T)

  // Chimera (spec §7)
  int pipelines = 2;               // 2f pipelines; f must divide p/2
  std::string concat = "direct";   // m > p: "direct", "doubling" or "halving"
  int width = 1;                   // data-parallel width W: replicas of the whole device group

  // AMP / AMPNet (spec §9)
  int max_active_keys = 0;         // instances in flight; 0 = p
  int min_update_frequency = 1;    // local update after this many backwards at a stage

  // PipeDream-2BW (spec §10.2): "double-buffer" (batch t uses W^(t-1), WeightPolicy::TwoBW)
  // or "naive" (local accumulation on the current weights, WeightPolicy::Current).
  std::string twobw_policy = "double-buffer";

  // AMDP (spec §8): where U (the optimizer step) sits in the next iteration's first group.
  std::string amdp_update = "code";  // "code" (the official positions) or "early" / "late"
};

using GeneratorFn = Schedule (*)(const ScheduleParams&);

struct GeneratorInfo {
  std::string_view name;     // CLI name, e.g. "1f1b"
  std::string_view summary;  // one line for `pipesim schedule --list`
  GeneratorFn fn;
  // The ScheduleParams it reads besides p, m and iterations, by flag name ("chunks",
  // "pipelines", "concat", "width", "max-active-keys", "min-update-frequency",
  // "twobw-policy", "amdp-update"): a sweep varies only these, the CLI warns about others.
  std::vector<std::string_view> settings = {};
};

// All generators, in the order `--schedules all` runs them.
const std::vector<GeneratorInfo>& generators();

// Looks a generator up by name; InputError listing the known names if absent.
const GeneratorInfo& find_generator(std::string_view name);

inline Schedule generate(std::string_view name, const ScheduleParams& params) {
  return find_generator(name).fn(params);
}

// The devices `name`'s schedule for `params` uses, without generating it: p, times Chimera's
// data-parallel width (tests/generators_test.cpp checks it against every generator's output).
int pipeline_devices(std::string_view name, const ScheduleParams& params);

// The frame of a single-pipeline schedule (p devices, p*chunks stages placed round robin,
// empty op lists): checks p, m and iterations are positive, names errors after `name`.
Schedule plain_pipeline(std::string_view name, const ScheduleParams& params, int chunks = 1);
// The same for a V: 2p stages on p devices, down and back (device r holds stages r and
// 2p-1-r; ZB-V, V-Half, V-Min, DualPipeV).
Schedule v_pipeline(std::string_view name, const ScheduleParams& params);

// Micro-batches of a whole flush-free run, m x iterations, checked to fit an op's id.
int run_microbatches(std::string_view name, const ScheduleParams& params);

// Shared parameter checks, so every generator words its errors the same way.
void require_positive(std::string_view schedule, std::string_view flag, long long value);
void require(bool ok, std::string_view schedule, const std::string& what);

}  // namespace pipesim
