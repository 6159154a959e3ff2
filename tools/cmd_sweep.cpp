// `pipesim sweep`: every combination of schedules, parallelism and batch settings on a model
// and cluster, in parallel; the best configurations and the Pareto fronts. docs/sweep.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "tools/command_files.hpp"
#include "tools/commands.hpp"
#include "tools/config_file.hpp"
#include "tools/progress.hpp"
#include "tools/report.hpp"
#include "tools/mpi_job.hpp"
#include "tools/sweep.hpp"
#include "tools/sweep_work.hpp"
#if PIPESIM_HAVE_MPI
#include "tools/sweep_ranks.hpp"
#endif
#include "tools/sweep_output.hpp"
#include "tools/table.hpp"

namespace pipesim {
namespace {

// More threads than this is a typo, not a machine (and each one is a stack).
constexpr int kMaxJobs = 1024;
// A sweep measures the steady state: more iterations only multiply the work.
constexpr int kMaxIterations = 1000;

struct SweepFlags {
  SweepSettings settings;
  int gpus = 0;
  std::string schedules = "all";
  std::string tp = "1";
  std::string pp = "2,4,8,16";
  std::string microbatches = "8..128";
  std::string global_batch;  // empty: -m is the batch dimension
  std::string micro_batch_size = "1";
  std::string recompute = "none";
  std::string chunks = "2";
  std::string concat = "direct";
  std::string max_active_keys;  // empty: p (AMP's default)
  std::string min_update_frequency = "1";
  bool synchronous_only = false;
  std::string config, save_config;
  int jobs = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::string csv, json, report;
  CLI::Option* json_option = nullptr;
  int top = 10;
  std::string progress;
  CLI::Option* progress_flag = nullptr;
};

void add_sweep_flags(CLI::App& cmd, SweepFlags& f) {
  HardwareOptions& h = f.settings.hardware;
  cmd.add_option("--model", h.model, "Model from the catalog (`pipesim catalog models`) or a catalog file (required)");
  cmd.add_option("--hardware", h.hardware, "GPU types, comma-separated: a grid dimension")->capture_default_str();
  cmd.add_option("--gpus", f.gpus, "GPUs in the cluster: tp x pp x dp (required)");
  cmd.add_option("--gpus-per-node", h.gpus_per_node, "GPUs per node")->capture_default_str();
  cmd.add_option("--schedules", f.schedules, "Generator names, comma-separated, or 'all'")->capture_default_str();
  const char* numbers = ": a list or range, e.g. 1,2,4 or 8..128 (powers of two)";
  cmd.add_option("--tp", f.tp, std::string("Tensor-parallel sizes") + numbers)->capture_default_str();
  cmd.add_option("--pp", f.pp, std::string("Pipeline sizes") + numbers)->capture_default_str();
  auto* m = cmd.add_option("-m,--microbatches", f.microbatches, std::string("Micro-batches per iteration") + numbers)
                ->capture_default_str();
  cmd.add_option("--global-batch-size", f.global_batch,
                 std::string("Sequences per optimizer step (Megatron's global batch) instead of -m: each combination "
                             "runs m = B / (dp x micro-batch size), and configurations are ranked at equal batch") +
                     numbers)
      ->excludes(m);
  cmd.add_option("--micro-batch-size", f.micro_batch_size, std::string("Sequences per micro-batch") + numbers)
      ->capture_default_str();
  cmd.add_option("--recompute", f.recompute, "Activation recomputation, comma-separated: none, selective, full")
      ->capture_default_str();
  cmd.add_option("--iterations", f.settings.iterations,
                 "Iterations simulated: time per iteration is the steady state from 2 on")
      ->capture_default_str();
  cmd.add_option("-v,--chunks", f.chunks, std::string("Chunks per device of the interleaved schedules") + numbers)
      ->capture_default_str();
  cmd.add_option("--concat", f.concat, "Chimera with m > p, comma-separated: direct, doubling, halving")
      ->capture_default_str();
  cmd.add_option("--max-active-keys", f.max_active_keys,
                 std::string("AMP: micro-batches in flight") + numbers + " [default: p]");
  cmd.add_option("--min-update-frequency", f.min_update_frequency,
                 std::string("AMP: a local update after this many backwards at a stage") + numbers)
      ->capture_default_str();
  cmd.add_flag("--synchronous-only", f.synchronous_only,
               "Rank only configurations without stale weights (max mismatch and max delay 0)");
  cmd.add_option("--max-mismatch", f.settings.max_mismatch,
                 "Rank only configurations whose max mismatch is at most this (optimizer steps)");
  cmd.add_option("--max-delay", f.settings.max_delay,
                 "Rank only configurations whose max gradient delay is at most this (optimizer steps)");
  add_activation_flags(cmd, h);
  add_state_and_link_flags(cmd, h);
  add_analytical_flags(cmd, h);
  add_price_flag(cmd, h);
  cmd.add_option("--jobs", f.jobs, "Threads [default: all cores]");
  cmd.add_option("--csv", f.csv, "Write one CSV row per evaluated configuration to this file");
  f.json_option = cmd.add_option("--json", f.json, "Write the JSON document to this file; without a file, print it")
                      ->expected(0, 1);
  cmd.add_option("--report", f.report, "Write a self-contained HTML page (best table, Pareto plots) to this file");
  cmd.add_option("--top", f.top, "How many of the best configurations to list")->capture_default_str();
  cmd.add_option("--max-memory", f.settings.max_memory,
                 "Memory the sweep may use, e.g. 16GiB [default: what the machine has available]");
  cmd.add_option("--config", f.config, "Take settings from this JSON file (docs/experiment-config.md); flags win");
  cmd.add_option("--save-config", f.save_config, "Write the effective settings to this JSON file");
  f.progress_flag = add_progress_flag(cmd, f.progress);
}

SweepGrid make_grid(const SweepFlags& f) {
  SweepGrid g;
  g.hardware = parse_name_grid(f.settings.hardware.hardware, "--hardware");
  VariantLists lists;
  lists.schedules = parse_schedule_grid(f.schedules);
  lists.chunks = parse_int_grid(f.chunks, "--chunks");
  lists.concat = parse_name_grid(f.concat, "--concat");
  const ScheduleSetting& concat = find_setting("concat");
  for (const std::string& c : lists.concat)
    if (std::find(concat.choices.begin(), concat.choices.end(), c) == concat.choices.end())
      throw InputError("--concat: expected " + concat.choices_text() + ", got " + quote(c));
  if (!f.max_active_keys.empty()) lists.max_active_keys = parse_int_grid(f.max_active_keys, "--max-active-keys");
  lists.min_update_frequency = parse_int_grid(f.min_update_frequency, "--min-update-frequency");
  g.variants = expand_variants(lists);
  g.tp = parse_int_grid(f.tp, "--tp");
  g.pp = parse_int_grid(f.pp, "--pp");
  if (f.global_batch.empty())
    g.microbatches = parse_int_grid(f.microbatches, "--microbatches");
  else
    g.global_batch = parse_int_grid(f.global_batch, "--global-batch-size");
  g.micro_batch_size = parse_int_grid(f.micro_batch_size, "--micro-batch-size");
  g.recompute = parse_name_grid(f.recompute, "--recompute");
  return g;
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "Simulate every combination of a grid; best configurations, Pareto fronts");
  auto f = std::make_shared<SweepFlags>();
  add_sweep_flags(*cmd, *f);
  cmd->callback([f, cmd] {
    const MpiJob job;  // one of several ranks under mpirun or srun (tools/sweep_ranks.hpp)
    CommandFiles files;
    SweepSettings& s = f->settings;
    SweepGrid grid;
    std::unique_ptr<SweepWork> work;
    OutputFile *csv = nullptr, *json = nullptr, *report = nullptr;
    bool json_to_stdout = false;
    job.agree([&] {  // the same on every rank but the outputs, which only rank 0 writes
      files.input("--config", f->config);
      if (!f->config.empty()) apply_config_file(*cmd, f->config);
      for (const char* flag : {"--model", "--gpus"})  // on the command line or in --config
        if (!given(*cmd, flag)) throw InputError(std::string(flag) + " is required (see pipesim sweep --help)");
      if (f->synchronous_only) {
        if (s.max_mismatch > 0 || s.max_delay > 0)
          throw InputError("--synchronous-only: not with --max-mismatch or --max-delay above 0");
        s.max_mismatch = s.max_delay = 0;
      }
      if (s.max_mismatch < -1 || s.max_delay < -1)
        throw InputError("--max-mismatch and --max-delay: expected a number of optimizer steps (0 or more)");
      grid = make_grid(*f);
      if (f->jobs < 1) throw InputError("--jobs must be at least 1, got " + std::to_string(f->jobs));
      if (f->jobs > kMaxJobs)
        throw InputError("--jobs: at most " + std::to_string(kMaxJobs) + " threads, got " + std::to_string(f->jobs));
      if (f->top < 1) throw InputError("--top must be at least 1, got " + std::to_string(f->top));
      if (s.iterations < 1) throw InputError("--iterations must be at least 1, got " + std::to_string(s.iterations));
      if (s.iterations > kMaxIterations)
        throw InputError("--iterations: at most " + std::to_string(kMaxIterations) + " (the time per iteration is the "
                         "steady state, reached from iteration 2 on), got " + std::to_string(s.iterations));
      std::tie(s.hardware.nodes, s.hardware.gpus_per_node) = sweep_cluster_shape(f->gpus, s.hardware.gpus_per_node);
      json_to_stdout = f->json_option->count() > 0 && f->json.empty();
      files.catalog_input("--model", s.hardware.model);
      for (const std::string& gpu : grid.hardware) files.catalog_input("--hardware", gpu);
      files.catalog_input("--intra-link", s.hardware.intra_link);
      files.catalog_input("--inter-link", s.hardware.inter_link);
      if (job.rank() == 0) {
        csv = files.output("--csv", f->csv);
        json = files.output("--json", f->json);
        report = files.output("--report", f->report);
        if (OutputFile* saved = files.output("--save-config", f->save_config)) saved->stream() << config_text(*cmd);
      }
      work = std::make_unique<SweepWork>(s, grid, f->jobs);
    });

    const auto start = std::chrono::steady_clock::now();
    Progress bar(job.rank() == 0 ? progress_options(f->progress_flag, f->progress) : ProgressOptions{}, "sweep",
                 grid.size(), "combinations");
    std::optional<SweepResult> result;
    if (job.size() == 1) {
      result = run_sweep(*work, bar.shown() ? SweepProgress([&bar](std::size_t done, std::size_t) { bar.update(done); })
                                            : SweepProgress());
    } else {
#if PIPESIM_HAVE_MPI
      result = run_sweep_on_ranks(job, *work, [&bar, &job](std::size_t done, std::size_t, int working) {
        bar.set_what("sweep, " + std::to_string(working) + " of " + std::to_string(job.size()) + " ranks working");
        bar.update(done);
      });
#else
      PIPESIM_ASSERT(!"several ranks in a build without MPI (MpiJob refuses them)");
#endif
    }
    bar.set_what(job.size() == 1 ? "sweep" : "sweep on " + std::to_string(job.size()) + " ranks");
    bar.finish();
    if (!result) return;  // not rank 0: rank 0 writes and prints
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (result->rows.empty()) {
      std::string reasons;
      for (int r = 0; r < kNumSkipReasons; ++r) {
        const SkipCount& c = result->skipped[static_cast<std::size_t>(r)];
        if (c.count > 0)
          reasons += (reasons.empty() ? "" : "; ") + std::to_string(c.count) + " " +
                     std::string(skip_reason_text(static_cast<SkipReason>(r))) + " (e.g. " + c.example + ")";
      }
      throw InputError("no valid configuration: all " + std::to_string(result->combinations) +
                       " combinations were skipped: " + reasons);
    }
    const std::string on = job.size() == 1 ? std::to_string(result->threads) + " threads"
                                           : std::to_string(job.size()) + " ranks x " + std::to_string(result->threads) +
                                                 (result->threads == 1 ? " thread" : " threads");
    std::fprintf(stderr, "sweep: %zu combinations (%zu evaluated, %zu skipped) in %.2f s on %s\n", result->combinations,
                 result->rows.size(), result->skipped_total(), seconds, on.c_str());

    const SweepSelection selection = select_rows(s, grid, *result, static_cast<std::size_t>(f->top));
    if (csv) write_sweep_csv(csv->stream(), grid, *result);
    if (json || json_to_stdout)
      (json ? json->stream() : std::cout) << json_text(sweep_json(s, grid, *result, selection)) << "\n";
    if (report) write_html_sweep(report->stream(), sweep_page(s, grid, *result, selection));
    if (!json_to_stdout) {
      std::cout << sweep_text(s, grid, *result, selection);
      if (csv) std::cout << "\ncsv: " << one_line(f->csv) << "\n";
      if (json) std::cout << (csv ? "" : "\n") << "json: " << one_line(f->json) << "\n";
      if (report) std::cout << (csv || json ? "" : "\n") << "report: " << one_line(f->report) << " (open in a browser)\n";
    }
    files.commit();
  });
}

}  // namespace pipesim
