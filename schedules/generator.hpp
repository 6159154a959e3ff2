#pragma once
// The schedule generators: pure functions ScheduleParams -> Schedule, found by name, each
// with the metadata every other place derives from (docs/architecture.md, "Adding a
// schedule"): the settings it reads (declared here, with their flags and defaults), its op
// count, its constraints. The CLI's flags and their help, sweep's and converge's grids
// (schedule_settings()), the memory guard (GeneratorInfo::ops_per_iteration),
// `pipesim schedule --list`, and the tests of the fuzz dictionaries and the docs all read
// these; nothing outside schedules/generators/ names a generator.
//
// Each file in schedules/generators/ ends with `std::vector<GeneratorInfo>
// <file>_generators()`; the build collects them (schedules/CMakeLists.txt), so adding a
// schedule is one file plus its test.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/schedule.hpp"
#include "schedules/schedule_params.hpp"
#include "schedules/schedule_setting.hpp"

namespace pipesim {

using GeneratorFn = Schedule (*)(const ScheduleParams&);

// A parameter rule of a generator, checked by generate() before the generator runs; the
// message is "<schedule>: <rule> (got p=6, m=8)", the rule says what is required.
struct Constraint {
  std::string_view rule;  // "m must be even (the two replicas take turns)"
  bool (*holds)(const ScheduleParams&);
};

struct GeneratorInfo {
  std::string_view name;     // CLI name, e.g. "1f1b"
  std::string_view summary;  // one line for `pipesim schedule --list`
  GeneratorFn fn;
  // Where it stands in generators(), i.e. in --list and `--schedules all`.
  int order = 0;
  // Ops per iteration for `params` as a closed form (doubles, so absurd inputs cannot
  // overflow): never below the real count, exact up to small per-device terms
  // (tests/generators_test.cpp checks it on every generator). The memory guard uses it.
  double (*ops_per_iteration)(const ScheduleParams&) = nullptr;
  // The settings it reads besides p, m and iterations: chunks_setting() or its family's own,
  // declared here (a setting two generators read is declared the same by both). They make
  // schedule_settings(); a sweep varies only these, the CLI refuses the others for it.
  std::vector<ScheduleSetting> settings = {};
  std::vector<Constraint> constraints = {};
  // Devices its schedule uses for `params` (nullptr: p).
  int (*devices)(const ScheduleParams&) = nullptr;
  // Its iterations overlap (no flush between them): one iteration alone shows its makespan,
  // fill and drain included, not the steady state, and none of the staleness or weight
  // copies that cross an optimizer step. Set with overlapping(); tests/properties_test.cpp
  // checks it against the simulation of one and two iterations of every generator.
  bool overlaps_iterations = false;

  bool reads(std::string_view setting) const;
};

// `g` with overlaps_iterations set.
GeneratorInfo overlapping(GeneratorInfo g);

// All generators, in the order `--schedules all` runs them.
const std::vector<GeneratorInfo>& generators();

// Looks a generator up by name; InputError listing the known names if absent.
const GeneratorInfo& find_generator(std::string_view name);
// The same, nullptr if absent (a schedule file's free-text name).
const GeneratorInfo* generator_named(std::string_view name);

// Checks that each text setting `name` reads is one of its choices ("chimera: concat must be
// direct, doubling or halving, got 'x'") and `name`'s constraints (InputError with the
// first broken rule), then generates.
Schedule generate(std::string_view name, const ScheduleParams& params);
// The first broken constraint of `g` as its message, or "".
std::string broken_constraint(const GeneratorInfo& g, const ScheduleParams& params);

// Ops `name` generates for `params`: ops_per_iteration x iterations, every integer setting
// taken as 0 where negative; saturates instead of overflowing.
std::uint64_t estimate_ops(std::string_view name, const ScheduleParams& params);

// The devices `name`'s schedule for `params` uses, without generating it
// (tests/generators_test.cpp checks it against every generator's output).
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
