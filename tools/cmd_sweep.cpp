// `pipesim sweep`: every combination of schedules, parallelism and batch settings on a model
// and cluster, in parallel; the best configurations and the Pareto fronts. docs/sweep.md.
#include <algorithm>
#include <chrono>
#include <functional>
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
#include "tools/setting_grids.hpp"
#include "tools/sharing_flags.hpp"
#include "tools/sweep.hpp"
#include "tools/sweep_blocks.hpp"
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
  std::string gpus;  // comma-separated: one block each
  std::string grid_file;  // --grid
  std::string schedules = "all";
  std::string tp = "1";
  std::string pp = "2,4,8,16";
  std::string microbatches = "8..128";
  std::string global_batch;  // empty: -m is the batch dimension
  std::string micro_batch_size = "1";
  std::string recompute = "none";
  SettingGridFlags generator_settings;  // -v, --concat, --max-active-keys, ...
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
  cmd.add_option("--model", h.model,
                 "Models from the catalog (`pipesim catalog models`) or catalog files, comma-separated: one block "
                 "each (required)");
  cmd.add_option("--hardware", h.hardware, "GPU types, comma-separated: a grid dimension")->capture_default_str();
  cmd.add_option("--gpus", f.gpus, "GPUs in the cluster (tp x pp x dp), comma-separated: one block each (required)");
  cmd.add_option("--grid", f.grid_file,
                 "Sweep the blocks of this JSON file, {\"blocks\": [{settings}, ...]}: each block's settings "
                 "override the flags (docs/sweep.md#blocks)");
  cmd.add_option("--gpus-per-node", h.gpus_per_node, "GPUs per node")->capture_default_str();
  cmd.add_option("--schedules", f.schedules, "Generator names, comma-separated, or 'all'")->capture_default_str();
  const char* numbers = ": a list or range, e.g. 1,2,4 or 8..128 (powers of two)";
  cmd.add_option("--tp", f.tp, std::string("Tensor-parallel sizes") + numbers)->capture_default_str();
  cmd.add_option("--pp", f.pp, std::string("Pipeline sizes") + numbers)->capture_default_str();
  auto* m = cmd.add_option("-m,--microbatches", f.microbatches, std::string("Micro-batches per iteration") + numbers)
                ->capture_default_str();
  cmd.add_option("--global-batch-size", f.global_batch,
                 std::string("Sequences per optimizer step (Megatron's global batch) instead of -m: each combination "
                             "runs m = B / (dp x micro-batch size), and configurations are ranked at equal batch (AMP and PipeDream "
                             "step after every micro-batch: a note says so)") +
                     numbers)
      ->excludes(m);
  cmd.add_option("--micro-batch-size", f.micro_batch_size, std::string("Sequences per micro-batch") + numbers)
      ->capture_default_str();
  cmd.add_option("--recompute", f.recompute, "Activation recomputation, comma-separated: none, selective, full")
      ->capture_default_str();
  cmd.add_option("--iterations", f.settings.iterations,
                 "Iterations simulated: time per iteration is the steady state from 2 on")
      ->capture_default_str();
  f.generator_settings.add(cmd, numbers, ", comma-separated");
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
  add_sharing_flags(cmd, f.settings.sharing);
}

SweepGrid make_grid(const SweepFlags& f) {
  SweepGrid g;
  g.hardware = parse_name_grid(f.settings.hardware.hardware, "--hardware");
  VariantLists lists;
  lists.schedules = parse_schedule_grid(f.schedules);
  f.generator_settings.parse(lists);
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

// Settings a block of a grid file cannot set: outputs, and what the whole run shares.
const std::vector<std::string> kNotBlockSettings = {"help",     "csv",  "json", "report", "config", "save-config",
                                                     "progress", "jobs", "top",  "grid",   "max-memory"};

// Every option's results, to put the command line back after a grid-file block changed it.
using OptionResults = std::vector<std::pair<CLI::Option*, std::vector<std::string>>>;
OptionResults option_results(CLI::App& cmd) {
  OptionResults out;
  for (CLI::Option* opt : cmd.get_options()) out.emplace_back(opt, opt->results());
  return out;
}
void restore_results(const OptionResults& saved) {
  for (const auto& [opt, results] : saved) {
    opt->clear();
    if (!results.empty()) opt->add_result(results);
  }
}

// The checks of the settings of one block (the flags as they stand), and its blocks: one
// per model and cluster size of --model and --gpus, in that order.
void expand_block(const CLI::App& cmd, SweepFlags& f, std::vector<SweepBlock>& blocks) {
  for (const char* flag : {"--model", "--gpus"})  // on the command line, in --config or in the block
    if (!given(cmd, flag)) throw InputError(std::string(flag) + " is required (see pipesim sweep --help)");
  SweepSettings s = f.settings;
  if (f.synchronous_only) {
    if (s.max_mismatch > 0 || s.max_delay > 0)
      throw InputError("--synchronous-only: not with --max-mismatch or --max-delay above 0");
    s.max_mismatch = s.max_delay = 0;
  }
  if (s.max_mismatch < -1 || s.max_delay < -1)
    throw InputError("--max-mismatch and --max-delay: expected a number of optimizer steps (0 or more)");
  if (s.iterations < 1) throw InputError("--iterations must be at least 1, got " + std::to_string(s.iterations));
  if (s.iterations == 1 && (s.max_mismatch >= 0 || s.max_delay >= 0))
    throw InputError(std::string(f.synchronous_only ? "--synchronous-only" : "--max-mismatch and --max-delay") +
                     ": need --iterations 2 or more (one iteration shows none of the staleness that crosses an "
                     "optimizer step: PipeDream-2BW and AMDP would pass as synchronous)");
  if (s.iterations > kMaxIterations)
    throw InputError("--iterations: at most " + std::to_string(kMaxIterations) + " (the time per iteration is the "
                     "steady state, reached from iteration 2 on), got " + std::to_string(s.iterations));
  (void)shared_hardware_from_flags(s.sharing, 1, {0});  // the flags' own checks, before any combination
  const SweepGrid grid = make_grid(f);
  const std::vector<std::string> models = parse_name_grid(s.hardware.model, "--model");
  const std::vector<int> gpus = parse_gpus_list(f.gpus);
  for (const std::string& model : models)
    for (int n : gpus) {
      SweepBlock b{"", s, grid, ""};
      b.settings.hardware.model = model;
      std::tie(b.settings.hardware.nodes, b.settings.hardware.gpus_per_node) =
          sweep_cluster_shape(n, s.hardware.gpus_per_node);
      blocks.push_back(std::move(b));
    }
}

// The blocks of the run: the flags' alone, or each of --grid's with its settings over them.
std::vector<SweepBlock> sweep_blocks(CLI::App& cmd, SweepFlags& f) {
  std::vector<SweepBlock> blocks;
  std::vector<std::string> names;
  if (f.grid_file.empty()) {
    expand_block(cmd, f, blocks);
  } else {
    const std::string path = f.grid_file;
    const SweepFlags flags = f;
    const OptionResults saved = option_results(cmd);
    const std::vector<nlohmann::json> entries = read_grid_file(path);
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const std::string pointer = "/blocks/" + std::to_string(k);
      nlohmann::json settings = entries[k];
      const std::string name = settings.value("name", "");
      settings.erase("name");
      const std::size_t before = blocks.size();
      try {
        apply_config_object(cmd, settings, path, pointer, ConfigPrecedence::ObjectWins, kNotBlockSettings);
        expand_block(cmd, f, blocks);
      } catch (const InputError& e) {
        const std::string what = e.what();
        throw InputError(what.rfind(path + ": ", 0) == 0 ? what : path + ": " + pointer + ": " + what);
      }
      names.insert(names.end(), blocks.size() - before, name);
      for (std::size_t b = before; b < blocks.size(); ++b) blocks[b].origin = path + ": " + pointer;
      f = flags;
      restore_results(saved);
    }
  }
  if (blocks.size() > 1) {
    names.resize(blocks.size());
    name_blocks(blocks, names);
  }
  return blocks;
}

// Runs `step` for block `b`: an InputError names the grid file's block it came from, or the
// block of a sweep of several.
void in_block(const SweepBlock& b, const std::function<void()>& step) {
  try {
    step();
  } catch (const InputError& e) {
    if (!b.origin.empty()) throw InputError(b.origin + ": " + e.what());
    if (!b.name.empty()) throw InputError("block " + b.name + ": " + e.what());
    throw;
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "Simulate every combination of a grid; best configurations, Pareto fronts");
  auto f = std::make_shared<SweepFlags>();
  add_sweep_flags(*cmd, *f);
  cmd->callback([f, cmd] {
    const MpiJob job;  // one of several ranks under mpirun or srun (tools/sweep_ranks.hpp)
    CommandFiles files;
    std::vector<SweepBlock> blocks;
    std::vector<std::unique_ptr<SweepWork>> works;
    OutputFile *csv = nullptr, *json = nullptr, *report = nullptr;
    bool json_to_stdout = false;
    job.agree([&] {  // the same on every rank but the outputs, which only rank 0 writes
      files.input("--config", f->config);
      if (!f->config.empty()) apply_config_file(*cmd, f->config);
      files.input("--grid", f->grid_file);
      if (f->jobs < 1) throw InputError("--jobs must be at least 1, got " + std::to_string(f->jobs));
      if (f->jobs > kMaxJobs)
        throw InputError("--jobs: at most " + std::to_string(kMaxJobs) + " threads, got " + std::to_string(f->jobs));
      if (f->top < 1) throw InputError("--top must be at least 1, got " + std::to_string(f->top));
      blocks = sweep_blocks(*cmd, *f);
      json_to_stdout = f->json_option->count() > 0 && f->json.empty();
      for (const SweepBlock& b : blocks)
        in_block(b, [&] {
          files.catalog_input("--model", b.settings.hardware.model);
          for (const std::string& gpu : b.grid.hardware) files.catalog_input("--hardware", gpu);
          files.catalog_input("--intra-link", b.settings.hardware.intra_link);
          files.catalog_input("--inter-link", b.settings.hardware.inter_link);
        });
      if (job.rank() == 0) {
        csv = files.output("--csv", f->csv);
        json = files.output("--json", f->json);
        report = files.output("--report", f->report);
        if (OutputFile* saved = files.output("--save-config", f->save_config)) saved->stream() << config_text(*cmd);
      }
      for (const SweepBlock& b : blocks)
        in_block(b, [&] { works.push_back(std::make_unique<SweepWork>(b.settings, b.grid, f->jobs)); });
    });

    const auto start = std::chrono::steady_clock::now();
    std::size_t total = 0;
    for (const SweepBlock& b : blocks) total += b.grid.size();
    Progress bar(job.rank() == 0 ? progress_options(f->progress_flag, f->progress) : ProgressOptions{}, "sweep", total,
                 "combinations");
    std::vector<BlockResult> results;
    std::size_t before = 0;  // combinations of the blocks done
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      std::optional<SweepResult> result;
      if (job.size() == 1) {
        result = run_sweep(*works[k], bar.shown() ? SweepProgress([&bar, before](std::size_t done, std::size_t) {
          bar.update(before + done);
        })
                                                  : SweepProgress());
      } else {
#if PIPESIM_HAVE_MPI
        result = run_sweep_on_ranks(job, *works[k], [&bar, &job, before](std::size_t done, std::size_t, int working) {
          bar.set_what("sweep, " + std::to_string(working) + " of " + std::to_string(job.size()) + " ranks working");
          bar.update(before + done);
        });
#else
        PIPESIM_ASSERT(!"several ranks in a build without MPI (MpiJob refuses them)");
#endif
      }
      before += blocks[k].grid.size();
      works[k].reset();  // its plan's memory, before the next block's
      if (result) results.push_back({std::move(*result), {}});
    }
    bar.set_what(job.size() == 1 ? "sweep" : "sweep on " + std::to_string(job.size()) + " ranks");
    bar.finish();
    if (results.empty()) return;  // not rank 0: rank 0 writes and prints
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::size_t combinations = 0, evaluated = 0, skipped = 0;
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      const SweepResult& r = results[k].result;
      combinations += r.combinations;
      evaluated += r.rows.size();
      skipped += r.skipped_total();
      if (!r.rows.empty()) continue;
      std::string reasons;
      for (int i = 0; i < kNumSkipReasons; ++i) {
        const SkipCount& c = r.skipped[static_cast<std::size_t>(i)];
        if (c.count > 0)
          reasons += (reasons.empty() ? "" : "; ") + std::to_string(c.count) + " " +
                     std::string(skip_reason_text(static_cast<SkipReason>(i))) + " (e.g. " + c.example + ")";
      }
      throw InputError((blocks[k].name.empty() ? "" : "block " + blocks[k].name + ": ") +
                       "no valid configuration: all " + std::to_string(r.combinations) +
                       " combinations were skipped: " + reasons);
    }
    const std::size_t threads = results.front().result.threads;
    const std::string on = job.size() == 1 ? std::to_string(threads) + " threads"
                                           : std::to_string(job.size()) + " ranks x " + std::to_string(threads) +
                                                 (threads == 1 ? " thread" : " threads");
    const std::string in_blocks = blocks.size() == 1 ? "" : " in " + std::to_string(blocks.size()) + " blocks";

    for (std::size_t k = 0; k < blocks.size(); ++k)
      results[k].selection =
          select_rows(blocks[k].settings, blocks[k].grid, results[k].result, static_cast<std::size_t>(f->top));
    const SweepBlock& one = blocks.front();
    if (csv) {
      if (blocks.size() == 1)
        write_sweep_csv(csv->stream(), one.grid, results.front().result);
      else
        write_blocks_csv(csv->stream(), blocks, results);
    }
    std::string text;  // standard output, printed once the files are in place: the tables, or --json's document
    if (json || json_to_stdout) {
      const nlohmann::ordered_json j =
          blocks.size() == 1 ? sweep_json(one.settings, one.grid, results.front().result, results.front().selection)
                             : blocks_json(blocks, results);
      if (json)
        json->stream() << json_text(j) << "\n";
      else
        text = json_text(j) + "\n";
    }
    if (report) {
      if (blocks.size() == 1)
        write_html_sweep(report->stream(),
                         sweep_page(one.settings, one.grid, results.front().result, results.front().selection));
      else
        write_html_sweep_blocks(report->stream(), blocks_page(blocks, results));
    }
    // The tables after the files are in place: a failed write is the run's only output.
    if (!json_to_stdout) {
      text = blocks.size() == 1 ? sweep_text(one.settings, one.grid, results.front().result, results.front().selection)
                                : blocks_text(blocks, results);
      if (csv) text += "\ncsv: " + one_line(f->csv) + "\n";
      if (json) text += std::string(csv ? "" : "\n") + "json: " + one_line(f->json) + "\n";
      if (report) text += std::string(csv || json ? "" : "\n") + "report: " + one_line(f->report) + " (open in a browser)\n";
    }
    files.commit();
    std::cout << text;
    // Last, once every output is in place: a failed write ends with its own line alone.
    std::fprintf(stderr, "sweep: %zu combinations%s (%zu evaluated, %zu skipped) in %.3f s on %s\n", combinations,
                 in_blocks.c_str(), evaluated, skipped, seconds, on.c_str());
  });
}

}  // namespace pipesim
