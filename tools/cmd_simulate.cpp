// `pipesim simulate` (one schedule) and `pipesim compare` (several on the same settings).
#include <algorithm>
#include <array>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "core/output_file.hpp"
#include "sim/breakdown.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "sim/timeline.hpp"
#include "tools/activity.hpp"
#include "tools/breakdown_report.hpp"
#include "tools/cli_options.hpp"
#include "tools/command_files.hpp"
#include "tools/commands.hpp"
#include "tools/config_file.hpp"
#include "tools/assessment_output.hpp"
#include "tools/cost_model_registry.hpp"
#include "tools/fit_advice.hpp"
#include "tools/hardware_flags.hpp"
#include "tools/sharing_flags.hpp"
#include "tools/profiled_flags.hpp"
#include "tools/report.hpp"
#include "tools/simulate_report.hpp"
#include "tools/sample_flags.hpp"
#include "tools/trace_limit.hpp"
#include "tools/unused_flags.hpp"
#include "tools/progress.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/html_report.hpp"

namespace pipesim {
namespace {

// What a run keeps besides its metrics.
struct Keep {
  bool timeline = false;   // the whole timeline, for an HTML report
  bool breakdown = false;  // where the time goes (sim/breakdown.hpp): --breakdown, --json, --report
};

// What --trace-budget, --max-trace-ops and --progress say (prepare() reads them), and the
// what-if contention of tools/sharing_flags.hpp.
struct TraceAndProgress {
  TraceLimit trace;
  ProgressOptions progress;
  SharingOptions sharing;
};

// Simulates one schedule; writes its trace if `trace` is set (tools/trace_limit.hpp), and
// records where the time goes with `keep.breakdown`.
RunOutput run_one(Schedule schedule, const CostModel& model, const std::string& model_label, OutputFile* trace,
                  const TraceAndProgress& flags, Keep keep = {}, const StaticMemoryFn& static_memory = {},
                  const SharedHardware* hardware = nullptr) {
  RunOutput out{std::move(schedule), {}, {}, {}, {}};
  std::optional<BreakdownRecorder> parts;
  if (keep.breakdown) parts.emplace(out.schedule);
  SimObserver* breakdown = parts ? &*parts : nullptr;
  const Activity activity("simulating " + out.schedule.name + " (" + std::to_string(out.schedule.total_ops()) +
                          " ops" + (trace ? ", with a trace" : "") + ")");
  const std::string what = "simulating " + out.schedule.name;
  if (trace) {
    TraceOptions options;
    options.metadata = {{"generator", "pipesim " PIPESIM_VERSION}, {"cost model", model_label}};
    out.result = simulate_with_trace(out.schedule, model, options, *trace, flags.trace, flags.progress,
                                     keep.timeline ? &out.timeline : nullptr, static_memory, breakdown, hardware);
  } else if (!keep.timeline) {
    out.result = simulate_with_progress(out.schedule, model, breakdown, flags.progress, what, hardware);
  } else {
    TimelineRecorder recorder;
    ObserverList observers;
    observers.add(&recorder);
    observers.add(breakdown);
    out.result = simulate_with_progress(out.schedule, model, observers.get(), flags.progress, what, hardware);
    out.timeline = std::move(recorder.timeline);
  }
  out.metrics = summarize(out.schedule, out.result);
  if (parts) out.breakdown = time_breakdown(out.schedule, out.result, model, *parts);
  return out;
}

// --report FILE and --report-capacity SIZE, shared by simulate and compare.
// Flags both subcommands take besides schedule and costs.
struct OutputFlags {
  std::string config;       // --config: settings from a JSON file (flags override)
  std::string save_config;  // --save-config: write the effective settings
  bool json = false;
  bool breakdown = false;  // --breakdown
  ReportFlags report;
  std::size_t max_trace_ops = 0;
  std::string trace_budget = "100MB";
  std::string progress_value;
  CLI::Option* progress_flag = nullptr;
  TraceAndProgress show;  // from the four above, by prepare()

  // What each run keeps: a report draws the timeline and the breakdown, JSON has the latter.
  Keep keep() const { return {!report.path.empty(), breakdown || json || !report.path.empty()}; }
};

void add_output_flags(CLI::App& cmd, OutputFlags& o, const char* json_help) {
  add_report_flags(cmd, o.report);
  cmd.add_flag("--json", o.json, json_help);
  cmd.add_flag("--breakdown", o.breakdown,
               "Also print where the time goes per iteration, per device: forward, backward (B, I, W), "
               "recomputation, exposed TP communication, pipeline waits, gradient sync, optimizer, idle "
               "(docs/breakdown.md)");
  cmd.add_option("--config", o.config, "Take settings from this JSON file (docs/experiment-config.md); flags win");
  cmd.add_option("--save-config", o.save_config, "Write the effective settings to this JSON file");
  cmd.add_option("--trace-budget", o.trace_budget,
                 "Chrome traces keep whole iterations (the first, the last, more if they fit) within this many "
                 "bytes of JSON, e.g. 100MB, 1GB; 0 = no limit. A name ending in .gz is written gzip-compressed")
      ->capture_default_str();
  cmd.add_option("--max-trace-ops", o.max_trace_ops,
                 "Chrome traces show the first N ops to finish instead, whatever the budget; 0 = all. Traces of "
                 "more than 1000000 ops are streamed to the file as the simulation runs");
  o.progress_flag = add_progress_flag(cmd, o.progress_value);
  add_sharing_flags(cmd, o.show.sharing);
}

// What prepare() found: the generators the run will use and its cost model.
struct Prepared {
  std::vector<std::string> generators;
  const CostModelInfo& cost_model;
};

// Before any simulation: reads --config, checks that no flag would be ignored, declares the
// run's inputs and --save-config (the caller adds its traces and report), and checks
// --report-capacity. The effective settings go to --save-config's temporary file, which the
// run's end moves into place with the other outputs.
// The generators are compare's --schedules (`schedules`), else --schedule; the cost model
// --cost-model's (`cost_model`), else the one the flags choose.
Prepared prepare(CLI::App& cmd, OutputFlags& o, const ScheduleOptions& so, const HardwareOptions& ho,
                 const ProfiledOptions& po, const std::string& cost_model, CommandFiles& files,
                 const std::string* schedules = nullptr) {
  files.input("--config", o.config);
  if (!o.config.empty()) apply_config_file(cmd, o.config);
  if (!given(cmd, "--trace") && !given(cmd, "--trace-dir"))
    reject_given_flags(cmd, {"--trace-budget", "--max-trace-ops"},
                       "used only with a Chrome trace (" +
                           std::string(cmd.get_option_no_throw("--trace") ? "--trace" : "--trace-dir") + ")");
  o.show.trace.budget = parse_trace_budget(o.trace_budget);
  if (given(cmd, "--max-trace-ops")) o.show.trace.max_ops = o.max_trace_ops;
  o.show.progress = progress_options(o.progress_flag, o.progress_value);
  const std::vector<std::string> generators = schedules ? parse_schedule_list(*schedules) : std::vector{so.name};
  if (so.file.empty()) check_generator_flags(cmd, generators);
  const CostModelInfo& chosen = chosen_cost_model(cost_model, ho, po);
  std::vector<std::string> unused;
  for (const UnusedFlags& group : unused_flags(&chosen, !so.file.empty(), generators)) {
    if (group.reject) reject_given_flags(cmd, group.flags, group.why);
    unused.insert(unused.end(), group.flags.begin(), group.flags.end());
  }
  files.input("--schedule-file", so.file);
  files.input("--cost", po.cost);
  files.catalog_input("--cost-hardware", po.hardware);
  files.catalog_input("--model", ho.model);
  for (const std::string& gpu : split_list(ho.hardware)) files.catalog_input("--hardware", gpu);
  files.catalog_input("--intra-link", ho.intra_link);
  files.catalog_input("--inter-link", ho.inter_link);
  if (OutputFile* saved = files.output("--save-config", o.save_config)) saved->stream() << config_text(cmd, unused);
  if (!o.report.capacity.empty()) {
    if (!ho.model.empty())
      throw InputError("--report-capacity: not with --model (the report draws each run against its GPU's own memory)");
    (void)parse_bytes(o.report.capacity, "--report-capacity");
  }
  return {generators, chosen};
}

// One schedule on one machine of the run's cost model, with its assessment where the model
// knows its machine (tokens/s, MFU, memory, $).
struct ModelRunOutput {
  RunOutput run;
  std::optional<Assessment> assessment;
  std::optional<SharedHardware> hardware;  // what the run's devices shared (--share-cores, ...)
  const SharedHardware* shared() const { return hardware ? &*hardware : nullptr; }
};

// Generates generator `name` (with --global-batch-size, at the m that makes the batch) or
// reads the schedule file, makes its cost model on `machine`, simulates and assesses it.
ModelRunOutput run_with_costs(const CLI::App& cmd, const ScheduleOptions& so, const std::string& name,
                              const CostModelSetup& setup, const std::string& machine, OutputFile* trace,
                              const TraceAndProgress& flags, Keep keep) {
  ScheduleOptions options = so;
  if (so.file.empty()) options.params = setup.params_for(name, so.params);
  Schedule schedule = make_schedule(cmd, options, name,
                                    simulate_memory_use(trace != nullptr, keep.timeline, recorded_trace_ops(flags.trace),
                                                        keep.breakdown));
  const ScheduleCosts costs = setup.make(schedule, machine);
  StaticMemoryFn held;  // what a trace's memory counters add to the activations
  if (costs.machine)
    held = [&costs](const Schedule& s, const SimResult& r) { return static_memory(*costs.machine, s, r); };
  std::optional<SharedHardware> hardware =
      shared_hardware_from_flags(flags.sharing, schedule.num_devices, costs.node_of_device);
  if (hardware) apply_profile_interference(*hardware, flags.sharing, setup.measured());
  ModelRunOutput out{run_one(std::move(schedule), *costs.model, costs.label, trace, flags, keep, held,
                             hardware ? &*hardware : nullptr),
                     std::nullopt, hardware};
  if (costs.machine) out.assessment = assess(*costs.machine, out.run.schedule, out.run.result, out.run.metrics);
  return out;
}

// The query of fit_changes for schedule `name` (or the schedule file's `file`) on `gpu`.
FitQuery fit_query(const ScheduleOptions& so, const std::string& name, const HardwareOptions& ho,
                   const std::string& gpu, const Schedule* file) {
  FitQuery q;
  q.hardware = ho;
  q.hardware.hardware = gpu;
  if (file == nullptr) q.generator = name;
  q.params = so.params;
  q.file = file;
  q.max_memory = so.max_memory;
  return q;
}

// The header of a model run's tables, with the shape of the schedules run (a schedule
// file's own with --schedule-file, not the unused -p and -m) and the machine of its
// assessment `a` (the analytical model's cluster, or the GPUs a profile is priced on).
std::string model_settings_line(int pp, int m, int iterations, const HardwareOptions& ho, const Assessment& a) {
  const std::string batch = ho.global_batch_size > 0
                                ? " global batch=" + std::to_string(ho.global_batch_size) + " (m = B / (dp x micro-batch size))"
                                : " m=" + std::to_string(m);
  return one_line(ho.model.empty() ? a.model : ho.model) + " on " + std::to_string(a.nodes) + " x " +
         std::to_string(a.gpus_per_node) + " GPUs: tp=" + std::to_string(a.tp) + " pp=" + std::to_string(pp) + batch +
         " micro-batch size=" + std::to_string(ho.micro_batch_size) + " recompute=" + ho.recompute +
         " iterations=" + std::to_string(iterations) + "\n\n";
}

// One schedule object of --json (docs/json.md): the metrics, where the time goes, then a
// model run's assessment.
nlohmann::ordered_json schedule_json(const Metrics& m, const TimeBreakdown& breakdown, const Assessment* a) {
  nlohmann::ordered_json j = metrics_json(m);
  j["time_breakdown"] = breakdown_json(breakdown);
  return a ? assessment_json(*a, std::move(j)) : j;
}

// --samples: the cost model's distributions, checked before any simulation (InputError for a
// model without).
const ProfiledCostModel* sampled_model(const std::optional<Sampling>& sampling, const CostModelSetup& setup,
                                       const CostModelInfo& info) {
  if (!sampling) return nullptr;
  if (setup.measured() == nullptr) refuse_samples(std::string(info.name));
  return setup.measured();
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("simulate", "Simulate one schedule and report time, bubbles and memory");
  auto so = std::make_shared<ScheduleOptions>();
  auto co = std::make_shared<CostOptions>();
  auto ho = std::make_shared<HardwareOptions>();
  auto trace = std::make_shared<std::string>();
  auto out = std::make_shared<OutputFlags>();
  add_schedule_flags(*cmd, *so, true);
  add_cost_flags(*cmd, *co);
  add_hardware_flags(*cmd, *ho);
  cmd->get_option("--global-batch-size")->excludes("--microbatches");
  add_price_flag(*cmd, *ho);
  auto po = std::make_shared<ProfiledOptions>();
  add_profiled_flags(*cmd, *po);
  cmd->add_option("--trace", *trace,
                  "Write a Chrome trace (Perfetto / chrome://tracing) to this file; FILE.json.gz: gzip-compressed "
                  "(docs/traces.md)");
  auto cost_model = std::make_shared<std::string>();
  cmd->add_option("--cost-model", *cost_model, cost_model_help());
  add_output_flags(*cmd, *out, "Print one JSON object instead of tables");
  auto samples = std::make_shared<SampleFlags>();
  add_sample_flags(*cmd, *samples);
  cmd->callback([=] {
    CommandFiles files;
    const Prepared prepared = prepare(*cmd, *out, *so, *ho, *po, *cost_model, files);
    const std::optional<Sampling> sampling = sampling_of(*samples);
    const Keep keep = out->keep();
    OutputFile* trace_file = files.output("--trace", *trace);
    OutputFile* report_file = files.output("--report", out->report.path);
    const std::unique_ptr<CostModelSetup> setup = prepared.cost_model.setup({*co, *ho, *po});
    const std::string cost_label = po->cost.empty() ? "" : setup->label();  // --cost: the profiled cost model used
    const ProfiledCostModel* measured = sampled_model(sampling, *setup, prepared.cost_model);
    const std::vector<std::string> machines = setup->machines();
    if (machines.size() != 1)
      throw InputError("--hardware: simulate takes one GPU type (use compare for several), got " + quote(ho->hardware));
    ModelRunOutput r = run_with_costs(*cmd, *so, so->name, *setup, machines.front(), trace_file, out->show, keep);
    const std::optional<Assessment> assessment = r.assessment;
    const std::optional<SharedHardware> hardware = r.hardware;
    std::vector<RunOutput> runs;
    runs.push_back(std::move(r.run));
    const RunOutput& run = runs.front();
    std::vector<NamedInterval> intervals;
    if (measured) {
      Simulator simulator;
      intervals.emplace_back(run.metrics.schedule,
                             predict_interval(simulator, run.schedule, *measured, *sampling, hardware ? &*hardware : nullptr));
    }
    std::vector<FitChange> advice;  // what would make it fit, if it does not
    if (assessment && !assessment->fits)
      advice = fit_changes(fit_query(*so, so->name, *ho, ho->hardware, so->file.empty() ? nullptr : &run.schedule));
    if (report_file) {
      const std::vector<Assessment> assessed = assessment ? std::vector<Assessment>{*assessment} : std::vector<Assessment>{};
      write_report(out->report, *report_file, report_title(run.metrics.schedule, assessed),
                   report_settings(*so, *co, *ho, cost_label, runs), runs, assessed, intervals);
    }
    if (out->json) {
      nlohmann::ordered_json j = schedule_json(run.metrics, *run.breakdown, assessment ? &*assessment : nullptr);
      if (!advice.empty()) j["fit_advice"] = fit_advice_json(advice);
      if (!intervals.empty()) j["prediction_interval"] = interval_json(intervals.front().second);
      j["cost_model"] = setup->label();
      if (const std::string shared = sharing_summary(out->show.sharing, setup->measured()); !shared.empty()) j["shared_hardware"] = shared;
      std::cout << json_text(j) << "\n";
    } else {
      if (!cost_label.empty()) std::cout << "cost model    " << one_line(cost_label) << "\n";
      if (assessment)
        std::cout << model_settings_line(run.schedule.num_devices, run.schedule.microbatches, run.schedule.iterations,
                                         *ho, *assessment);
      std::cout << summary_text(run.metrics);
      if (const std::string shared = sharing_summary(out->show.sharing, setup->measured()); !shared.empty())
        std::cout << "shared        " << shared << "\n";
      std::cout << "\n" << device_table(run.metrics);
      if (!intervals.empty()) std::cout << "\n" << interval_table(intervals);
      if (assessment) std::cout << "\n" << assessment_table({{*assessment, run.metrics}});
      if (const std::string note = one_iteration_note({run.metrics}); !note.empty()) std::cout << "\n" << note;
      if (!advice.empty()) std::cout << "\n" << fit_advice_text(run.metrics.schedule, fit_status(*assessment), advice);
      if (out->breakdown) std::cout << "\n" << breakdown_table(*run.breakdown);
      if (trace_file) std::cout << "\ntrace written to " << one_line(*trace) << " (open in ui.perfetto.dev)\n";
      if (keep.timeline) std::cout << "report written to " << one_line(out->report.path) << " (open in a browser)\n";
    }
    files.commit();
  });
}

void add_compare_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare", "Simulate several schedules on the same settings, one table");
  auto so = std::make_shared<ScheduleOptions>();
  auto co = std::make_shared<CostOptions>();
  auto ho = std::make_shared<HardwareOptions>();
  auto names = std::make_shared<std::string>("gpipe,1f1b,interleaved,zb-h1");
  auto trace_dir = std::make_shared<std::string>();
  auto out = std::make_shared<OutputFlags>();
  cmd->add_option("--schedules", *names, "Comma-separated generator names, or 'all'")->capture_default_str();
  add_schedule_flags(*cmd, *so, false);
  add_cost_flags(*cmd, *co);
  add_hardware_flags(*cmd, *ho);
  cmd->get_option("--global-batch-size")->excludes("--microbatches");
  add_price_flag(*cmd, *ho);
  auto po = std::make_shared<ProfiledOptions>();
  add_profiled_flags(*cmd, *po);
  cmd->add_option("--trace-dir", *trace_dir, "Write one Chrome trace per schedule into this folder");
  auto cost_model = std::make_shared<std::string>();
  cmd->add_option("--cost-model", *cost_model, cost_model_help());
  add_output_flags(*cmd, *out, "Print a JSON object {\"schedules\": [...]} instead of the table");
  auto samples = std::make_shared<SampleFlags>();
  add_sample_flags(*cmd, *samples);
  cmd->callback([=] {
    CommandFiles files;
    const Prepared prepared = prepare(*cmd, *out, *so, *ho, *po, *cost_model, files, names.get());
    const std::optional<Sampling> sampling = sampling_of(*samples);
    const std::vector<std::string>& list = prepared.generators;
    const std::unique_ptr<CostModelSetup> setup = prepared.cost_model.setup({*co, *ho, *po});
    const ProfiledCostModel* measured = sampled_model(sampling, *setup, prepared.cost_model);
    const std::string cost_label = po->cost.empty() ? "" : setup->label();  // --cost: the profiled cost model used
    const std::vector<std::string> gpus = setup->machines();
    if (gpus.empty()) throw InputError("--hardware: expected a comma-separated list of GPU types");
    for (auto it = gpus.begin(); it != gpus.end(); ++it)
      if (std::find(gpus.begin(), it, *it) != it) throw InputError("--hardware: " + quote(*it) + " is listed twice");
    // Every trace's path first, so that two outputs naming one file fail before any work.
    std::vector<std::vector<OutputFile*>> trace_files(gpus.size());
    std::vector<std::string> traces;
    if (!trace_dir->empty()) {
      create_output_folder("--trace-dir", *trace_dir);
      for (std::size_t g = 0; g < gpus.size(); ++g)
        for (const auto& name : list) {
          const std::string stem = gpus[g].empty() ? name : file_stem(gpus[g]) + "-" + name;
          traces.push_back((std::filesystem::path(*trace_dir) / (stem + ".trace.json")).string());
          trace_files[g].push_back(files.output("--trace-dir", traces.back()));
        }
    }
    OutputFile* report_file = files.output("--report", out->report.path);
    const Keep keep = out->keep();
    std::vector<Metrics> all;
    std::vector<TimeBreakdown> breakdowns;  // one per run, as `all`, with keep.breakdown
    std::vector<std::pair<Assessment, Metrics>> assessed;
    std::vector<RunOutput> kept;  // whole runs, for the report
    std::vector<NamedInterval> intervals;  // one per run, as `all`, with --samples
    Simulator sampler;
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      for (std::size_t i = 0; i < list.size(); ++i) {
        OutputFile* trace = trace_files[g].empty() ? nullptr : trace_files[g][i];
        ModelRunOutput r = run_with_costs(*cmd, *so, list[i], *setup, gpus[g], trace, out->show, keep);
        if (r.assessment) assessed.emplace_back(*r.assessment, r.run.metrics);
        RunOutput run = std::move(r.run);
        if (measured)
          intervals.emplace_back(run.metrics.schedule,
                                 predict_interval(sampler, run.schedule, *measured, *sampling, r.shared()));
        all.push_back(run.metrics);
        if (run.breakdown) breakdowns.push_back(*run.breakdown);
        if (keep.timeline) kept.push_back(std::move(run));
      }
    }
    std::vector<Assessment> assessments;
    for (const auto& [a, m] : assessed) assessments.push_back(a);
    // When nothing fits: what would make the closest three fit.
    std::map<std::size_t, std::vector<FitChange>> advice;
    for (std::size_t i : closest_to_fitting(assessments, 3))
      advice[i] = fit_changes(fit_query(*so, list[i % list.size()], *ho, gpus[i / list.size()], nullptr));
    if (report_file) {
      write_report(out->report, *report_file, report_title("compare", assessments),
                   report_settings(*so, *co, *ho, cost_label, kept), kept, assessments, intervals);
    }
    if (out->json) {
      nlohmann::ordered_json j;
      j["schedules"] = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < all.size(); ++i) {
        j["schedules"].push_back(schedule_json(all[i], breakdowns[i], assessed.empty() ? nullptr : &assessed[i].first));
        if (advice.count(i)) j["schedules"].back()["fit_advice"] = fit_advice_json(advice[i]);
        if (!intervals.empty()) j["schedules"].back()["prediction_interval"] = interval_json(intervals[i].second);
      }
      j["cost_model"] = setup->label();
      if (const std::string shared = sharing_summary(out->show.sharing, setup->measured()); !shared.empty()) j["shared_hardware"] = shared;
      std::cout << json_text(j) << "\n";
    } else {
      if (const std::string shared = sharing_summary(out->show.sharing, setup->measured()); !shared.empty())
        std::cout << "shared: " << shared << "\n";
      if (!cost_label.empty()) {
        std::cout << "p=" << so->params.p << " m=" << so->params.m << " v=" << so->params.v << " iterations="
                  << so->params.iterations << "  cost model: " << one_line(cost_label) << "\n\n"
                  << compare_table(all);
        if (!intervals.empty()) std::cout << "\n" << interval_table(intervals);
      } else if (assessed.empty()) {
        std::cout << "p=" << so->params.p << " m=" << so->params.m << " v=" << so->params.v << " iterations="
                  << so->params.iterations << "  fwd=" << co->fwd << " bwd=" << co->bwd
                  << " wgrad=" << (co->wgrad.empty() ? "bwd/2" : co->wgrad) << "\n\n";
        std::cout << compare_table(all);
      } else {
        std::cout << model_settings_line(so->params.p, so->params.m, so->params.iterations, *ho, assessed.front().first)
                  << assessment_table(assessed);
        if (!advice.empty()) std::cout << "\nNo schedule fits in memory; the closest:\n";
        for (const auto& [i, changes] : advice)
          std::cout << "\n" << fit_advice_text(assessed[i].first.hardware + " " + list[i % list.size()],
                                                fit_status(assessed[i].first), changes);
      }
      if (const std::string note = one_iteration_note(all); !note.empty()) std::cout << "\n" << note;
      if (out->breakdown) {
        std::vector<std::pair<std::string, const TimeBreakdown*>> rows;
        for (std::size_t i = 0; i < all.size(); ++i) {
          const std::string on = assessed.empty() || gpus.size() < 2 ? "" : " on " + assessed[i].first.hardware;
          rows.emplace_back(all[i].schedule + on, &breakdowns[i]);
        }
        std::cout << "\n" << breakdown_compare_table(rows);
      }
      for (const auto& path : traces)
        std::cout << (&path == &traces.front() ? "\ntraces: " : "        ") << one_line(path) << "\n";
      if (keep.timeline) std::cout << "\nreport: " << one_line(out->report.path) << " (open in a browser)\n";
    }
    files.commit();
  });
}

}  // namespace pipesim
