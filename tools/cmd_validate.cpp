// `pipesim validate`: predicted against measured. For each schedule: profile the model's
// ops on this machine (on the CPU once per footprint, the blocks a device of the schedule
// holds: tools/validate_footprint.hpp; or read --cost profile.json), simulate the schedule with that
// profiled cost model, run it for real on the executor, and compare op by op
// (traces/validation.hpp): time per iteration, per-kind op durations, bubble, peak memory,
// and the weight version of every forward and backward, which must match exactly.
//
//   profile (kernels/profiler) --> ProfiledCostModel --> simulate --> predicted timeline --+
//                                                                                         +--> compare_runs
//   schedule ------------------------------------------> run_schedule --> measured ------+
//
// With the prediction, an interval: --samples N simulations (default 200) on draws of the
// profile's measured distributions (assess/prediction_interval.hpp), on the CPU with the
// machine's speed drawn between the core-speed probes before and after the run, and whether
// the measured time per iteration lies inside its [p5, p95]; over several schedules, the
// coverage. --calibration PATH (past validate --json outputs) widens each interval by how far
// this machine's past measurements fell outside theirs (tools/validate_calibration.hpp,
// split conformal prediction), for a [p5, p95] that holds 90 % of runs. Before
// the verdict, the machine's load before and after and the spread of the profile's repeats,
// with a warning on stderr when either makes the comparison meaningless
// (tools/validate_verdict.hpp).
//
// --runs N runs each schedule N times in a row, each against its own prediction (the cores
// probed before and after each run): every run must pass, and a line per schedule gives how
// far the runs spread from one another, the machine's own noise beside the tolerance.
//
// Exit code 1 (a Disagreement) when some weight version differs (the staleness would be wrong)
// or some schedule's time per iteration is off by more than --tolerance (default 5 %): the
// verdict FAIL; 2 for bad input; 0 otherwise.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include <CLI/CLI.hpp>

#include "cost_models/catalog.hpp"
#include "cost_models/profiled.hpp"
#include "cost_models/sampled.hpp"
#include "executor/backend_factory.hpp"
#include "executor/executor.hpp"
#include "executor/op_gap_probe.hpp"
#include "executor/shared_layout.hpp"
#include "kernels/profiler.hpp"
#include "core/cpu_affinity.hpp"
#include "core/error.hpp"
#include "core/output_file.hpp"
#include "core/units.hpp"
#include "schedules/op_text.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "tools/cli_options.hpp"
#include "tools/command_files.hpp"
#include "tools/config_file.hpp"
#include "tools/cost_model_registry.hpp"
#include "tools/exit_codes.hpp"
#include "tools/profiled_flags.hpp"
#include "tools/commands.hpp"
#include "tools/report.hpp"
#include "tools/run_flags.hpp"
#include "tools/sample_flags.hpp"
#include "tools/table.hpp"
#include "tools/validate_calibration.hpp"
#include "tools/validate_core_speeds.hpp"
#include "tools/validate_footprint.hpp"
#include "tools/validate_verdict.hpp"
#include "tools/validation_output.hpp"
#include "traces/validation.hpp"

namespace pipesim {
namespace {

constexpr int kMaxWarmupIterations = 1000;
constexpr int kMaxRuns = 100;

struct ValidateFlags : ExecutorFlags {
  std::string schedules;  // --schedules a,b (instead of --schedule)
  std::string cost;       // --cost profile.json; empty: profile now
  std::vector<std::string> calibration;  // --calibration: past validate --json outputs
  int repeats = 5;
  std::string min_time = "25ms";
  int warmup = 2;
  // Run first, not counted in the time per iteration. Two by default: an iteration ends with
  // its last F or B (iteration_window), so the last warm-up iteration's GradSync and OPT run
  // inside the window, and the first GradSync pays for its buffers' fresh pages (gpt-small
  // Chimera: 68 ms against 16 ms after; with one warm-up iteration the simulator's part of the
  // error was -2.1 / -2.6 %, with two -0.5 / -0.2 %, docs/validation/cpu-history.md).
  int warmup_iterations = 2;
  int runs = 1;           // --runs N: each schedule run N times in a row, each compared with its prediction
  std::string trace;      // one schedule: predicted and measured in one Chrome trace
  std::string trace_dir;  // several: DIR/<schedule>.validate.trace.json
  std::string report;
  bool json = false;
  SampleFlags samples;
  double tolerance_percent = kDefaultTolerance * 100;
  double tolerance() const { return tolerance_percent / 100; }
  std::string core_sharing = "auto";  // cpu: how the prediction shares cores (executor/shared_layout.hpp)
  std::string core_speeds = "measure";  // cpu: each core's speed now, device threads pinned (kernels/core_speeds.hpp)
};

// Micro-batch sizes the simulation asks the profile about: b, and b / split for schedules
// that split micro-batches (Chimera's backward halving).
std::vector<int> profile_sizes(const std::vector<Schedule>& schedules, int b) {
  std::set<int> sizes{b};
  for (const Schedule& s : schedules)
    if (s.microbatch_split > 1 && b % s.microbatch_split == 0) sizes.insert(b / s.microbatch_split);
  return {sizes.begin(), sizes.end()};
}

// What profiling now measures (checked before the run starts: check_profile_options).
ProfileOptions profile_options(const ValidateFlags& f, const ModelSpec& model, const std::vector<Schedule>& schedules) {
  ProfileOptions po;
  po.micro_batch_sizes = profile_sizes(schedules, f.micro_batch_size);
  po.repeats = f.repeats;
  po.min_time_s = ticks_to_seconds(parse_duration(f.min_time, "--min-time"));
  po.warmup = f.warmup;
  // The block timed within a stage of the blocks a device holds (tools/validate_footprint.hpp:
  // on the CPU the schedules given share that number; elsewhere the fewest of theirs).
  po.stage_blocks = default_stage_blocks(model, 1);
  for (const Schedule& s : schedules) po.stage_blocks = std::min(po.stage_blocks, device_blocks(model, s));
  // The shared-core turns only where a schedule has more device threads than cores: the one
  // prediction that uses them (executor/shared_layout.hpp), with as many threads as the
  // largest of those runs.
  po.shared_core = false;
  if (f.backend == "cpu")
    for (const Schedule& s : schedules)
      if (s.num_devices > usable_cores()) {
        po.shared_core = true;
        po.shared_core_threads = std::max(po.shared_core_threads, s.num_devices);
      }
  return po;
}

// "1f1b, amp": the schedules' names.
std::string schedule_names(const std::vector<Schedule>& schedules) {
  std::string out;
  for (const Schedule& s : schedules) out += (out.empty() ? "" : ", ") + one_line(s.name);
  return out;
}

// The prediction's profile: --cost's, or measured now (profile_options), and where it came
// from.
std::pair<Profile, std::string> read_or_profile(const ValidateFlags& f, const ModelSpec& model,
                                                const std::vector<Schedule>& schedules) {
  if (!f.cost.empty()) return {read_profile_file(f.cost), f.cost};
  const ProfileOptions po = profile_options(f, model, schedules);
  // On a GPU split between virtual devices, time the ops on one device's share of the SMs.
  int split = 1;
  if (f.sm_partition != "off")
    for (const Schedule& s : schedules) split = std::max(split, devices_per_gpu(f.backend, s.num_devices));
  std::unique_ptr<ProfileBackend> backend;
  try {
    backend = make_profile_backend(f.backend, "wall", split);
  } catch (const InputError& e) {
    if (split == 1 || f.sm_partition == "on") throw;
    std::cerr << "pipesim: profiling on the whole GPU: " << e.what() << "\n";
    backend = make_profile_backend(f.backend, "wall", 1);
  }
  const std::string within = "the block within " + std::to_string(po.stage_blocks) + " blocks";
  const bool held_by_all = std::all_of(schedules.begin(), schedules.end(),
                                       [&](const Schedule& s) { return device_blocks(model, s) == po.stage_blocks; });
  if (!f.json)
    std::cerr << "pipesim: profiling " << model.name << " on " << f.backend
              << (split > 1 ? " (1/" + std::to_string(split) + " of the SMs)" : std::string()) << " (at least " << f.repeats
              << " repeats, more up to " << f.min_time << " per op; " << within
              << (held_by_all ? ", as a device of " : ", the fewest a device of ") << schedule_names(schedules)
              << " holds)\n";
  return {with_executor_gaps(profile_model(model, po, *backend)), "profiled now, " + within};
}

// The profiled cost model of the prediction, as the registry makes it of a profile
// (tools/cost_model_registry.hpp): --model, --micro-batch-size and the executor's --optimizer.
std::unique_ptr<CostModelSetup> profiled_costs(const ValidateFlags& f, const ModelSpec& model,
                                               const std::vector<Schedule>& schedules) {
  auto [profile, source] = read_or_profile(f, model, schedules);
  HardwareOptions hardware;
  hardware.model = f.model;
  hardware.micro_batch_size = f.micro_batch_size;
  ProfiledOptions profiled;
  profiled.optimizer = f.optimizer;
  // The executor gives the last stage its own head matrix (docs/executor.md): no
  // gradient exchange between the first and last stage.
  profiled.tied_embedding_sync = false;
  const CostOptions uniform;  // read by no profiled model
  return profiled_setup(profiled_config(std::move(profile), std::move(source), profiled, hardware),
                        {uniform, hardware, profiled});
}

// The warm-up of one schedule: --warmup-iterations, which a schedule file's iterations must
// exceed (one at least is measured); by default a file's iterations but its last, at most 2.
int warmup_of(const Schedule& s, const ValidateFlags& f, bool given, bool from_file) {
  if (!from_file || f.warmup_iterations < s.iterations) return f.warmup_iterations;
  if (!given) return s.iterations - 1;  // the default, as many as the file leaves one to measure
  throw InputError("--warmup-iterations: " + std::to_string(f.warmup_iterations) + " warm-up iterations leave none of the "
                   "schedule file's " + std::to_string(s.iterations) + " to measure; expected at most " +
                   std::to_string(s.iterations - 1));
}

// Runs `schedule` for real: its device threads pinned to the probed cores where every device
// has one (`speeds`, the probe just before). The prediction comes after the next probe
// (predict_and_compare), so that it can take the machine as it was during the run.
Validation run_one(Schedule schedule, int warmup, const ProfiledCostModel& costs, RunOptions options,
                   const ModelSpec& model, const ValidateFlags& f, const CoreSpeeds& speeds) {
  Validation v;
  v.schedule = std::move(schedule);
  v.warmup = warmup;
  // The contention the run will have: its device threads on this machine's cores, or its
  // virtual devices on one GPU (executor/shared_layout.hpp), with the profile's interference
  // curve and shared-core turns where they stand out of the profile's noise.
  const Tick forward = costs.compute_time(make_op(OpKind::F, 0, 0), scale_of(v.schedule));
  v.layout = executor_layout(f.backend, v.schedule.num_devices, f.sm_partition, forward);
  if (f.core_sharing != "auto") v.layout.time_sliced = f.core_sharing == "slice";
  const ProfileSlowdowns slowdowns = profile_slowdowns(costs);
  v.hardware = shared_hardware(v.layout, slowdowns.curves, slowdowns.turns);
  v.speeds_before = speeds;
  if (!speeds.slowdown.empty() && v.schedule.num_devices <= static_cast<int>(speeds.cores.size()))
    options.pin_cores = speeds.cores;
  v.measured_run = run_schedule(v.schedule, model, options);
  v.measured = summarize(v.schedule, v.measured_run.result, warmup);
  return v;
}

// The prediction, once the cores have been probed again after the run (`after`, empty: not
// probed), and the comparison. The plain prediction takes each core at the mean of its two
// probes, where the machine was halfway through the run; the interval's draws put the
// machine anywhere between them, each core's speed as well as its visits know it
// (machine_draws); then whether the measured time lies inside it.
void predict_and_compare(Validation& v, const ProfiledCostModel& costs, const ValidateFlags& f, Sampling sampling,
                         const CoreSpeeds& after) {
  v.speeds_after = after;
  if (!v.speeds_before.slowdown.empty())
    v.hardware.device_slowdown = device_slowdowns(v.schedule.num_devices, speeds_during_run(v.speeds_before, after));
  Simulator simulator;
  TimelineRecorder recorder;
  const SimResult predicted = simulator.run(v.schedule, costs, &recorder, nullptr, &v.hardware);
  v.predicted_timeline = std::move(recorder.timeline);
  v.predicted = summarize(v.schedule, predicted, v.warmup);
  v.counted = iteration_window(predicted, v.warmup).counted;
  v.report = compare_runs(v.schedule, v.predicted_timeline, v.predicted, v.measured_run.timeline, v.measured);
  if (f.backend == "cpu" && v.schedule.num_devices > v.layout.cores) {
    const IterationWindow p = iteration_window(predicted, v.warmup);
    const IterationWindow m = iteration_window(v.measured_run.result, v.warmup);
    v.core_use = CoreUse{v.layout.cores, core_use(v.predicted_timeline, p.start, p.end, v.layout.cores),
                         core_use(v.measured_run.timeline, m.start, m.end, v.layout.cores)};
    v.core_use->profile_turns = costs.turn_slowdowns();
    const ThreadShares shares = thread_shares(v.measured_run.thread_cpu);
    v.core_use->copies = shares.copies;
    v.core_use->outside_ops = shares.outside_ops;
    if (shares.outside_ops >= 0) {
      const Tick span = predicted.makespan;
      v.core_use->ops_cpu_predicted_s =
          core_use(v.predicted_timeline, 0, span, v.layout.cores) * v.layout.cores * ticks_to_seconds(span);
      v.core_use->ops_cpu_measured_s = shares.ops_s;
      v.core_use->threads_cpu_measured_s = shares.total_s;
      v.core_use->span_predicted_s = ticks_to_seconds(span);
      v.core_use->span_measured_s = ticks_to_seconds(v.measured_run.result.makespan);
    }
    v.core_use->turns = v.hardware.pools.front().turn_slowdown;
  }
  v.replay = replay_on_measured(v.schedule, costs, v.measured_run.timeline, v.hardware, v.warmup,
                                v.predicted.time_per_iteration, v.measured.time_per_iteration,
                                v.measured_run.sync_work);
  v.pass = passes(v.report.time_per_iteration_error, f.tolerance());
  sampling.warmup_iterations = v.warmup;
  if (!v.hardware.device_slowdown.empty())
    sampling.device_slowdown_draws =
        machine_draws(v.schedule.num_devices, v.speeds_before, after, sampling.samples, sampling.seed);
  v.interval = predict_interval(simulator, v.schedule, costs, sampling, &v.hardware);
  v.inside = v.interval.contains(v.measured.time_per_iteration);
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "validate", "Predict a schedule with a measured cost model, run it for real, and compare op by op");
  auto so = std::make_shared<ScheduleOptions>();
  auto f = std::make_shared<ValidateFlags>();
  add_executor_flags(*cmd, *f);
  add_schedule_flags(*cmd, *so, true);
  cmd->add_option("--schedules", f->schedules, "Validate several schedules (comma-separated, or 'all') instead of --schedule");
  cmd->add_option("--cost", f->cost, "Profile file (pipesim profile) for the prediction; default: profile now (on the CPU once per "
                  "footprint, the blocks a device of the schedules holds)");
  cmd->add_option("--repeats", f->repeats, "Profiling now: timed runs per op, at least (the median is kept)")->capture_default_str();
  cmd->add_option("--min-time", f->min_time,
                  "Profiling now: ... and more until this long has passed since the first (at most 1000 runs); 0s: exactly --repeats")
      ->capture_default_str();
  cmd->add_option("--warmup", f->warmup, "Profiling now: untimed runs first")->capture_default_str();
  cmd->add_option("--warmup-iterations", f->warmup_iterations,
                  "Iterations run before the --iterations measured ones and not counted in the time per iteration, "
                  "predicted or measured (first-use allocations, cold caches, CUDA graph capture); with "
                  "--schedule-file, the file's first N iterations [default: 2; a schedule file: at most its iterations - 1]");
  cmd->add_option("--runs", f->runs,
                  "Run each schedule N times in a row, each run against its prediction (the core speeds probed before "
                  "and after each): every run must pass, and the runs' spread says how much this machine moves from "
                  "run to run")
      ->capture_default_str();
  auto* trace = cmd->add_option("--trace", f->trace, "Write predicted and measured timelines as one Chrome trace");
  cmd->add_option("--trace-dir", f->trace_dir,
                  "With --schedules or --runs: one predicted+measured trace per schedule and run here")
      ->excludes(trace);
  cmd->add_option("--report", f->report, "Write a self-contained HTML page: error tables and both timelines");
  cmd->add_flag("--json", f->json,
                "Print JSON (one object; with --schedules or --runs {\"schedules\": [...]}) instead of tables");
  add_sample_flags(*cmd, f->samples, kValidateSamples, false);  // the draws use --seed, as the weights do
  cmd->add_option("--calibration", f->calibration,
                  "Past `validate --json` outputs of this machine (files, or folders searched for *.json; repeatable): "
                  "each interval is widened by how far the measurements of past runs of its backend and model (with "
                  "or without devices sharing cores) fell outside their [p5, p95], so that 90 % of runs fall inside "
                  "(split conformal prediction; at least 9 past runs per group)");
  cmd->add_option("--core-sharing", f->core_sharing,
                  "cpu, more devices than cores: how the prediction shares them: auto (ops longer than four kernel "
                  "time slices are time-sliced, shorter ones queue for a core), slice or queue (docs/shared-hardware.md)")
      ->check(CLI::IsMember({"auto", "slice", "queue"}))
      ->capture_default_str();
  cmd->add_option("--core-speeds", f->core_speeds,
                  "cpu: measure each core's speed at the model's block pass just before the runs, pin device d's "
                  "thread to core d and predict each device at its core's speed over the profile's (measure); off: "
                  "threads where the system puts them, every device at the profile's speed")
      ->check(CLI::IsMember({"measure", "off"}))
      ->capture_default_str();
  cmd->add_option("--tolerance", f->tolerance_percent,
                  "Verdict: a schedule passes when its predicted time per iteration is within PCT % of the measured one. "
                  "Exit codes: 0 every schedule passes, 1 one is off by more or its weight versions differ, 2 bad input")
      ->capture_default_str();
  cmd->callback([=] {
    if (!(f->tolerance_percent > 0))
      throw InputError("--tolerance: expected a percentage above 0, got " + format_fixed(f->tolerance_percent, 2));
    f->samples.seed = f->seed;
    const Sampling sampling = *sampling_of(f->samples);
    const RunOptions options = make_run_options(*f, so->max_memory);  // checks --backend first
    const bool several = !f->schedules.empty();
    if (f->runs < 1 || f->runs > kMaxRuns)
      throw InputError("--runs: expected 1 to " + std::to_string(kMaxRuns) + " runs per schedule, got " + std::to_string(f->runs));
    const bool repeated = f->runs > 1;
    if (several && !f->trace.empty()) throw InputError("--trace: with --schedules, use --trace-dir");
    if (repeated && !f->trace.empty()) throw InputError("--trace: with --runs, use --trace-dir (a trace per run)");
    if (!several && !repeated && !f->trace_dir.empty())
      throw InputError("--trace-dir: needs --schedules or --runs (one schedule, one run: --trace)");
    if (several && !so->file.empty()) throw InputError("--schedules: not with --schedule-file");
    const std::vector<std::string> names = several ? parse_schedule_list(f->schedules) : std::vector<std::string>{so->name};
    if (so->file.empty()) check_generator_flags(*cmd, names);
    if (!f->cost.empty())
      reject_given_flags(*cmd, {"--repeats", "--min-time", "--warmup"}, "used only when profiling now (without --cost)");
    CommandFiles files;
    for (const std::string& path : f->calibration)
      if (!std::filesystem::is_directory(path)) files.input("--calibration", path);
    const CalibrationRuns calibration = read_calibration(f->calibration);  // before minutes of profiling
    files.input("--schedule-file", so->file);
    files.input("--cost", f->cost);
    files.catalog_input("--model", f->model);
    const ModelSpec model = find_model(f->model);
    // Generated schedules run --warmup-iterations more iterations first; a schedule file's
    // first ones are its warm-up.
    const bool warmup_given = cmd->count("--warmup-iterations") > 0;
    if (f->warmup_iterations < 0 || f->warmup_iterations > kMaxWarmupIterations)
      throw InputError("--warmup-iterations: expected 0 to " + std::to_string(kMaxWarmupIterations) + ", got " +
                       std::to_string(f->warmup_iterations));
    ScheduleOptions run_options = *so;
    if (so->file.empty()) {
      // The measured iterations, at least one, before the warm-up is added (their sum is what
      // the generator checks, and must not overflow).
      const int most = std::numeric_limits<int>::max() - f->warmup_iterations;
      if (so->params.iterations < 1 || so->params.iterations > most)
        throw InputError("--iterations: expected 1 to " + std::to_string(most) + " measured iterations (after the " +
                         std::to_string(f->warmup_iterations) + " of --warmup-iterations), got " +
                         std::to_string(so->params.iterations));
      run_options.params.iterations += f->warmup_iterations;
    }
    std::vector<Schedule> schedules;
    std::vector<int> warmups;
    for (const std::string& name : names) {
      schedules.push_back(make_schedule(*cmd, run_options, name));
      warmups.push_back(warmup_of(schedules.back(), *f, warmup_given, !so->file.empty()));
      if (schedules.back().num_stages > model.layers)  // before profiling, which takes a while
        throw InputError(name + ": " + std::to_string(schedules.back().num_stages) + " stages need a model of at least as "
                         "many layers; " + model.name + " has " + std::to_string(model.layers));
      check_run(schedules.back(), model, options);
    }
    // Every output before minutes of profiling and running: a bad path fails at once.
    std::vector<OutputFile*> traces;
    if (!f->trace_dir.empty()) {
      create_output_folder("--trace-dir", f->trace_dir);
      for (const Schedule& s : schedules)
        for (int run = 1; run <= f->runs; ++run)
          traces.push_back(files.output(
              "--trace-dir", (std::filesystem::path(f->trace_dir) /
                              (file_stem(s.name) + (repeated ? ".run" + std::to_string(run) : std::string()) +
                               ".validate.trace.json")).string()));
    } else if (!f->trace.empty()) {
      traces.push_back(files.output("--trace", f->trace));
    }
    OutputFile* report = files.output("--report", f->report);
    // A profile per group of schedules: on the CPU, profiling now, one per footprint (the
    // blocks a device holds, tools/validate_footprint.hpp); otherwise one for all.
    std::vector<std::vector<Schedule>> groups;
    std::vector<std::vector<std::size_t>> group_indices;
    if (f->cost.empty() && f->backend == "cpu") {
      group_indices = footprint_groups(model, schedules);
    } else {
      group_indices.emplace_back();
      for (std::size_t i = 0; i < schedules.size(); ++i) group_indices.back().push_back(i);
    }
    for (const std::vector<std::size_t>& indices : group_indices) {
      groups.emplace_back();
      for (std::size_t i : indices) groups.back().push_back(schedules[i]);
      if (f->cost.empty()) check_profile_options(model, profile_options(*f, model, groups.back()));
    }
    MachineLoad load{static_cast<int>(std::thread::hardware_concurrency()), load_average(), std::nullopt, 0, 0, std::nullopt};
    const std::optional<CpuTimes> cpu_before = cpu_times();
    const auto first_reading = std::chrono::steady_clock::now();
    for (const Schedule& s : schedules) load.own_threads = std::max(load.own_threads, std::min(s.num_devices, load.cores));
    // Group by group, each profiled just before its runs: every validation at its schedule's
    // place, the runs of schedule i at i * runs .. (i + 1) * runs - 1 (as the traces are).
    std::vector<Validation> all(schedules.size() * static_cast<std::size_t>(f->runs));
    std::vector<std::string> cost_labels;  // each once, in the order first used
    double spread = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const std::unique_ptr<CostModelSetup> setup = profiled_costs(*f, model, groups[g]);
      const ProfiledCostModel& costs = *setup->measured();
      const Profile& profile = costs.config().profile;
      if (std::find(cost_labels.begin(), cost_labels.end(), costs.label()) == cost_labels.end())
        cost_labels.push_back(costs.label());
      spread = std::max(spread, repeat_spread(profile));
      // The cores' speed over this profile's: probed before the group's first run, and after
      // each run (that run's prediction takes each core halfway between its two probes).
      CoreSpeeds speeds = f->backend == "cpu" && f->core_speeds == "measure"
                              ? measure_core_speeds(model, f->micro_batch_size, profile, f->json)
                              : CoreSpeeds{};
      for (std::size_t i : group_indices[g]) {
        const Schedule& s = schedules[i];
        warn_if_oversubscribed(s);
        for (int run = 1; run <= f->runs; ++run) {
          if (!f->json)
            std::cerr << "pipesim: validating " << one_line(s.name)
                      << (repeated ? ", run " + std::to_string(run) + " of " + std::to_string(f->runs) : std::string())
                      << " (" << s.total_ops() << " ops)\n";
          const std::size_t at = i * static_cast<std::size_t>(f->runs) + static_cast<std::size_t>(run - 1);
          Validation& v = all[at] = run_one(s, warmups[i], costs, options, model, *f, speeds);
          v.run = repeated ? run : 0;
          v.cost_label = costs.label();
          v.device_blocks = device_blocks(model, s);
          v.profiled_blocks = profile.settings.stage_blocks;
          // Again after the run: how far the machine moved while it ran, where it was halfway
          // (this run's prediction), and where the next run starts.
          const CoreSpeeds after = speeds.cores.empty()
                                       ? CoreSpeeds{}
                                       : measure_core_speeds(model, f->micro_batch_size, profile, f->json);
          predict_and_compare(v, costs, *f, sampling, after);
          if (!after.cores.empty()) speeds = after;
          if (!traces.empty()) write_trace(*traces[at], v);
        }
      }
    }
    if (!f->calibration.empty())
      for (const std::string& w : calibrate_all(all, calibration, f->backend, f->model))
        std::cerr << "pipesim: warning: " << w << "\n";
    load.after = load_average();
    load.steal = steal_share(cpu_before, cpu_times());
    load.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_reading).count();
    for (const std::string& w : validity_warnings(load, spread, f->tolerance()))
      std::cerr << "pipesim: warning: " << w << "\n";
    for (const std::string& w : validation_warnings(all, model, f->backend, f->tolerance()))
      std::cerr << "pipesim: warning: " << w << "\n";
    std::string cost_label;
    for (const std::string& label : cost_labels) cost_label += (cost_label.empty() ? "" : "; ") + label;
    const ValidationSettings settings{f->model, f->backend, f->optimizer, f->micro_batch_size, f->tolerance(), cost_label};
    if (report) write_report(*report, all, settings);
    bool versions_match = true;
    for (const Validation& v : all) versions_match = versions_match && v.report.versions_match();
    const Tally verdict = tally(all);
    if (f->json) {
      nlohmann::ordered_json j;
      if (several || repeated) {
        j["schedules"] = nlohmann::ordered_json::array();
        for (const Validation& v : all) j["schedules"].push_back(validation_json(v, settings));
        if (repeated) j["runs"] = runs_json(all, f->tolerance());
      } else {
        j = validation_json(all.front(), settings);
      }
      j["machine_load"] = machine_load_json(load);
      j["profile_repeat_spread"] = spread;
      j["core_speeds"] = speeds_json(all.front().speeds_before);
      j["coverage"] = static_cast<double>(verdict.inside) / static_cast<double>(verdict.total);
      j["calibration"] = f->calibration.empty() ? nullptr : calibration_json(calibration);
      j["calibrated_coverage"] = verdict.calibrated == 0 ? nullptr
                                                         : nlohmann::ordered_json(static_cast<double>(verdict.calibrated_inside) /
                                                                                  static_cast<double>(verdict.calibrated));
      j["overall_verdict"] = verdict.failed == 0 && versions_match ? "PASS" : "FAIL";
      std::cout << json_text(j) << "\n";
    } else {
      std::cout << "pipesim validate: " << f->model << " on " << f->backend << ", micro-batch size "
                << f->micro_batch_size << ", " << f->optimizer << "\n" << cost_models_text(cost_labels)
                << conditions_line(load, spread) << "\n" << speeds_line(all.front().speeds_before) << "intervals: " << sampling.samples
                << " simulations on draws of the profile's measured distributions, seed " << sampling.seed << "\n"
                << (f->calibration.empty() ? std::string() : calibration_text(calibration))
                << window_line(all.front()) << "\n\n"
                << summary_table(all) << bubble_note(all) << "\nop durations (error = (predicted - measured) / measured):\n"
                << kind_table(all)
                << "\nerror split (the simulator replayed on each run's own op times and hand-offs; "
                   "docs/validation/README.md):\n"
                << replay_table(all) << replay_advice(all, f->tolerance()) << "\n";
      if (repeated) {
        std::cout << "runs:\n";
        for (const std::string& line : runs_lines(all, f->tolerance())) std::cout << line << "\n";
        std::cout << "\n";
      }
      for (const Validation& v : all)
        if (v.core_use) std::cout << core_use_line(one_line(validation_label(v)), v.schedule.num_devices, *v.core_use) << "\n\n";
      std::cout << verdict_text(verdict, f->tolerance(), versions_match);
      if (!f->trace.empty())
        std::cout << "\ntrace written to " << one_line(f->trace) << " (predicted and measured process groups)\n";
      if (!f->trace_dir.empty()) std::cout << "\ntraces written to " << one_line(f->trace_dir) << "/\n";
      if (report) std::cout << "report written to " << one_line(f->report) << "\n";
    }
    files.commit();  // the outputs show the disagreement too
    if (!versions_match)
      throw Disagreement("weight versions differ between the simulation and the run (see the table)");
    if (verdict.failed > 0)
      throw Disagreement("time per iteration off by more than --tolerance " + format_percent(f->tolerance()) + ": " +
                         verdict.failures);
  });
}

}  // namespace pipesim
