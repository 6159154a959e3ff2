#pragma once
// Fuzz targets: one function per input path, shared by the libFuzzer harnesses
// (fuzz/*_fuzz.cpp, clang only) and by tests/fuzz_regressions_test.cpp, which replays the
// seed corpora and every input the fuzzers found through them in the normal test build.
//
// The contract each target checks: the parser either succeeds or throws pipesim::InputError
// with a one-line message. A successful result must hold no NaN, no infinity and no
// negative duration or size, and survive what the CLI does next (schedules: validate, and
// if valid and small, simulate with a uniform cost model, metrics, a Chrome trace and an
// HTML report). Anything else (another exception, a sanitizer report, a PIPESIM_ASSERT
// abort, a hang, unbounded allocation) is a bug in the parser or behind it.
#include <stdexcept>
#include <string>
#include <string_view>

namespace pipesim::fuzz {

// A broken contract, with what broke it. The harnesses abort on it so libFuzzer keeps the
// input; the regression test reports it as a failure.
class ContractViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Schedules with more ops than this are parsed and validated, but not simulated: a fuzzer
// wants many small runs, and the engine's scale is tested separately (docs/reliability.md).
inline constexpr std::size_t kMaxSimulatedOps = 10'000;

void op_text(std::string_view bytes);        // parse_op, and to_string round trip
void schedule_csv(std::string_view bytes);   // parse_schedule_csv + validate + simulate
void schedule_json(std::string_view bytes);  // parse_schedule_json + validate + simulate
void catalog(std::string_view bytes);        // parse_catalog + transformer formulas per model
void units(std::string_view bytes);          // first byte picks duration/bytes/bandwidth/FLOP/s
void cli_flags(std::string_view bytes);      // '\n'-separated argv of the schedule and cost flags
void experiment_config(std::string_view bytes);  // a --config JSON file (apply_config_file)
void profile(std::string_view bytes);        // parse_profile + every ProfiledCostModel question
void runs_csv(std::string_view bytes);       // pipesim fit's runs CSV + the prediction of every run
void cli(std::string_view bytes);            // the whole CLI (run_cli) in a sandbox folder: exit codes, no file lost

// The fuzz targets by name, for the harness sources and the corpus replay.
using Target = void (*)(std::string_view);
struct NamedTarget {
  const char* name;  // also the folder under fuzz/corpus/
  Target fn;
};
inline constexpr NamedTarget kTargets[] = {
    {"op_text", &op_text}, {"schedule_csv", &schedule_csv}, {"schedule_json", &schedule_json},
    {"catalog", &catalog}, {"units", &units},               {"cli_flags", &cli_flags},
    {"experiment_config", &experiment_config}, {"profile", &profile},
    {"runs_csv", &runs_csv}, {"cli", &cli},
};

}  // namespace pipesim::fuzz
