// `pipesim profile`: time a model's ops on this machine and write a profile file
// (docs/profile-format.md) that simulate and compare read with --cost.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cost_models/catalog.hpp"
#include "cost_models/profiled.hpp"
#include "cost_models/time_fit.hpp"
#include "executor/backend_factory.hpp"
#include "executor/op_gap_probe.hpp"
#include "kernels/profiler.hpp"
#include "kernels/shared_core_probe.hpp"
#include "core/cpu_affinity.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "tools/command_files.hpp"
#include "tools/commands.hpp"
#include "tools/memory_guard.hpp"
#include "tools/table.hpp"

namespace pipesim {
namespace {

struct ProfileFlags {
  std::string backend = "cpu";
  std::string model;
  std::string sizes = "1,2,4";
  std::string link_sizes;  // empty: model_link_sizes()
  int repeats = 10;
  int warmup = 2;
  std::string min_time = "25ms";
  int stage_blocks = 0;  // 0: default_stage_blocks
  std::string out;
  std::string clock;  // empty: the backend's default
  int virtual_devices = 1;
  std::optional<int> neighbours;  // unset: the backend's default
  std::string shared_core = "on";
  int shared_core_threads = 0;
  bool quiet = false;
  std::string max_memory;
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

std::vector<int> parse_sizes(const std::string& text) {
  std::vector<int> out;
  for (const std::string& item : split(text)) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v < 1)
      throw InputError("--micro-batch-sizes: expected a comma-separated list of positive integers like 1,2,4; got '" +
                       text + "'");
    out.push_back(v);
  }
  if (out.empty()) throw InputError("--micro-batch-sizes: expected at least one size");
  return out;
}

std::vector<std::int64_t> parse_link_sizes(const std::string& text) {
  std::vector<std::int64_t> out;
  for (const std::string& item : split(text)) out.push_back(parse_bytes(item, "--link-sizes"));
  return out;
}

std::string fit_text(const SizeFit& f) {
  const LineFit& l = f.line();
  std::ostringstream s;
  s << fit_kind_name(f.kind());
  if (f.kind() == FitKind::Proportional) return s.str();
  s << " (line " << (l.c0 < 0 ? "-" : "") << format_duration_seconds(std::abs(l.c0)) << " + "
    << format_duration_seconds(l.c1) << " x b: residual rms " << format_percent(l.rms_relative_residual) << ", max "
    << format_percent(l.max_relative_residual) << ")";
  return s.str();
}

// The curves as a table: one row per pass, one column per number of busy neighbours.
std::string interference_text(const ProfileInterference& in) {
  if (!in.measured())
    return "interference: none in the profile (--neighbours 0, no neighbour fits on this host, or a slowdown outside "
           "0.5..100 that the progress lines on stderr report)\n";
  std::ostringstream out;
  out << "\ninterference (slowdown with k neighbours busy running block passes, micro-batch size "
      << in.micro_batch_size << "):\n";
  Table t;
  t.add_column("pass");
  for (int k = 0; k <= in.neighbours(); ++k) t.add_column("k=" + std::to_string(k));
  const auto row = [&](const char* name, const InterferenceCurve& c) {
    std::vector<std::string> cells{name};
    for (double s : c.slowdown) cells.push_back(format_fixed(s, 3) + " x");
    t.add_row(cells);
  };
  row("block F", in.block.forward);
  row("block I", in.block.input_grad);
  row("block W", in.block.weight_grad);
  row("emb F", in.embedding.forward);
  row("emb W", in.embedding.weight_grad);
  row("head F", in.head.forward);
  row("head I", in.head.input_grad);
  row("head W", in.head.weight_grad);
  out << t.render();
  return out.str();
}

std::string shared_core_text(const ProfileSharedCore& s) {
  if (!s.measured())
    return "in turns on shared cores: not in the profile (--shared-core off, not the CPU, or a measurement the "
           "progress lines on stderr report)\n";
  const auto ratio = [](const InterferenceCurve& c) { return format_fixed(expected_ratio(c), 3) + " x"; };
  return std::to_string(s.threads) + " device threads taking turns on " + std::to_string(s.cores) +
         " cores (micro-batch size " + std::to_string(s.micro_batch_size) + ", means): block F " + ratio(s.forward) +
         ", I " + ratio(s.input_grad) + ", W " + ratio(s.weight_grad) + "; optimizer step " + ratio(s.optimizer) + "\n";
}

std::string gradient_copies_text(const ProfileGradientCopies& g) {
  if (!g.measured()) return "gradient copies (a GradSync member's): not in the profile (not the CPU)\n";
  return "gradient copies (a GradSync member's, a stage of " + std::to_string(g.parameters) + " parameters): out " +
         format_duration_seconds(g.copy_out.median) + ", in " + format_duration_seconds(g.copy_in.median) +
         (g.sum_measured() ? ", one added into another (the last member's sum) " + format_duration_seconds(g.sum.median)
                           : "") +
         "\n";
}

// "10" or "10-1000": the fewest and the most timed runs of the profile's measurements
// (--min-time gives short ops more).
std::string repeats_text(const Profile& p) {
  int lo = p.settings.repeats, hi = p.settings.repeats;
  const auto see = [&](const TimingStats& t) {
    if (t.repeats == 0) return;  // not measured (the embedding's input gradient)
    lo = std::min(lo, t.repeats);
    hi = std::max(hi, t.repeats);
  };
  for (const MicroBatchProfile& mb : p.micro_batches)
    for (const PassProfile* pp : {&mb.block, &mb.embedding, &mb.head})
      for (const TimingStats* t : {&pp->forward, &pp->input_grad, &pp->weight_grad}) see(*t);
  for (const OptimizerTimes* o : {&p.block_optimizer, &p.embedding_optimizer, &p.head_norm_optimizer, &p.head_weight_optimizer}) {
    see(o->sgd);
    see(o->adam);
  }
  for (const LinkSample& l : p.link.samples) see(l.time);
  if (p.gradient_copies.measured()) {
    see(p.gradient_copies.copy_out);
    see(p.gradient_copies.copy_in);
  }
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

// What a person reads after a run: the medians per size, the optimizer, the link and the fits.
std::string summary(const Profile& p, const std::string& path) {
  std::ostringstream out;
  out << "profile of " << p.model.name << " on " << p.backend << " (" << p.machine.cpu << ", " << p.machine.cores
      << " cores, " << p.settings.threads << " thread), " << p.settings.clock << " clock, " << p.dtype << ", medians of "
      << repeats_text(p) << " timed runs after " << p.settings.warmup
      << " warm-up (predictions use their means, docs/cost-model.md)\n\n";
  Table t;
  for (const char* h : {"b", "block F", "block I", "block W", "emb F", "emb W", "head F", "head I", "head W",
                        "act/block", "held/block", "message"})
    t.add_column(h);
  for (const MicroBatchProfile& mb : p.micro_batches)
    t.add_row(
        {std::to_string(mb.size), format_duration_seconds(mb.block.forward.median),
         format_duration_seconds(mb.block.input_grad.median), format_duration_seconds(mb.block.weight_grad.median),
         format_duration_seconds(mb.embedding.forward.median), format_duration_seconds(mb.embedding.weight_grad.median),
         format_duration_seconds(mb.head.forward.median), format_duration_seconds(mb.head.input_grad.median),
         format_duration_seconds(mb.head.weight_grad.median),
         format_bytes(static_cast<double>(mb.block.activation_bytes)),
         format_bytes(static_cast<double>(mb.block.held_after_input_grad_bytes)),
         format_bytes(static_cast<double>(mb.message_bytes))});
  out << t.render() << "\n";
  out << "optimizer step (SGD / Adam): block " << format_duration_seconds(p.block_optimizer.sgd.median) << " / "
      << format_duration_seconds(p.block_optimizer.adam.median) << ", embedding "
      << format_duration_seconds(p.embedding_optimizer.sgd.median) << " / "
      << format_duration_seconds(p.embedding_optimizer.adam.median) << ", head weight "
      << format_duration_seconds(p.head_weight_optimizer.sgd.median) << " / "
      << format_duration_seconds(p.head_weight_optimizer.adam.median) << "\n";
  out << gradient_copies_text(p.gradient_copies);
  out << "link (" << p.link.kind << "): latency " << format_duration_seconds(p.link.latency) << ", bandwidth "
      << format_fixed(p.link.bandwidth / 1e9, 2) << " GB/s; residual rms "
      << format_percent(p.link.rms_relative_residual) << ", max " << format_percent(p.link.max_relative_residual)
      << "\n";
  if (p.executor.measured())
    out << "executor between two ops of a device (its own work): " << format_duration_seconds(p.executor.op_gap.median)
        << " median, " << format_duration_seconds(p.executor.op_gap.expected()) << " mean\n";
  if (p.link.sender_measured()) {
    const double message = static_cast<double>(p.micro_batches.front().message_bytes);
    out << "link's sender (its thread, before its next op): copy "
        << format_duration_seconds(p.link.sender_copy(message)) << " (" << format_bytes(message)
        << ", micro-batch size " << p.micro_batches.front().size << "), waking a receiver that sleeps "
        << format_duration_seconds(p.link.wake.expected()) << " (mean)\n";
  }
  // The fits ProfiledCostModel will use (default policy).
  const ProfiledCostModel model(ProfiledCostConfig{p, path, {}, p.micro_batches.front().size});
  out << "fits over b (auto): block F " << fit_text(model.fit(Piece::Block, Measure::Forward)) << "\n"
      << "                    block I " << fit_text(model.fit(Piece::Block, Measure::InputGrad)) << "\n"
      << "                    block W " << fit_text(model.fit(Piece::Block, Measure::WeightGrad)) << "\n"
      << "                    head F  " << fit_text(model.fit(Piece::Head, Measure::Forward)) << "\n";
  out << interference_text(p.interference);
  out << shared_core_text(p.shared_core);
  out << "\nprofile written to " << path << " (use it with: pipesim simulate --cost " << path << ")\n";
  return out.str();
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("profile", "Time a model's ops and links on this machine; write a profile for --cost");
  auto f = std::make_shared<ProfileFlags>();
  cmd->add_option("--backend", f->backend, "cpu (Eigen, one thread) or cuda")->capture_default_str();
  cmd->add_option("--model", f->model, "GPT model from the catalog (e.g. gpt-tiny, gpt-small) or a catalog file")
      ->required();
  cmd->add_option("--micro-batch-sizes", f->sizes, "Comma-separated micro-batch sizes (sequences) to time")
      ->capture_default_str();
  cmd->add_option("--repeats", f->repeats, "Timed runs per measurement, at least (the median is kept)")->capture_default_str();
  cmd->add_option("--min-time", f->min_time,
                  "... and more until this long has passed since the first (at most 1000 runs): short ops' medians then "
                  "hold still between profiles; 0s: exactly --repeats")
      ->capture_default_str();
  cmd->add_option("--warmup", f->warmup, "Untimed runs before them")->capture_default_str();
  cmd->add_option("--stage-blocks", f->stage_blocks,
                  "Time the block within stages of N blocks (F through them, then I and W back), as a pipeline "
                  "stage runs it with its caches [default: half the layers, within 64 MiB of weights and gradients]");
  cmd->add_option("--link-sizes", f->link_sizes, "Comma-separated message sizes for the link fit [default: powers of 2 around the model's messages]");
  cmd->add_option("--clock", f->clock,
                  "wall (default on cpu), thread-cpu (cpu: the thread's CPU time, steadier on a busy machine), events "
                  "(default on cuda: GPU time without launch overhead) or wall on cuda (launches, kernels and a "
                  "synchronize: what the executor measures)");
  cmd->add_option("--virtual-devices", f->virtual_devices,
                  "cuda: profile on 1/N of the GPU's SMs, as one of N devices of `run --sm-partition` on one GPU")
      ->capture_default_str();
  cmd->add_option("--neighbours", f->neighbours,
                  "Interference curve: time the passes again with 1..K other devices busy (cpu: threads on other "
                  "cores, at most cores - 1; cuda: the other SM groups of --virtual-devices); 0: no curve "
                  "[default: the most there are, up to 3]");
  cmd->add_option("--shared-core", f->shared_core,
                  "cpu: time the stage's passes and optimizer step again with more device threads than cores, "
                  "taking turns on them (what such a run does); off: not")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_option("--shared-core-threads", f->shared_core_threads,
                  "cpu: the device threads of those turns, more than the cores [default: twice the usable cores]");
  cmd->add_option("--out", f->out, "The profile file to write (JSON)")->required();
  cmd->add_flag("--quiet", f->quiet, "No progress lines on stderr");
  cmd->add_option("--max-memory", f->max_memory,
                  "Memory the measurements may use, e.g. 8GiB [default: half of what the machine has available]");
  cmd->callback([f, cmd] {
    // Before minutes of measuring: the file must be writable where it goes.
    CommandFiles files;
    files.catalog_input("--model", f->model);
    OutputFile* out = files.output("--out", f->out);
    ProfileOptions o;
    if (const auto limit = memory_limit(f->max_memory))
      o.max_workload_bytes = limit->from_flag ? static_cast<std::int64_t>(std::min(limit->bytes, std::uint64_t{1} << 62))
                                              : std::min(o.max_workload_bytes, static_cast<std::int64_t>(limit->bytes / 2));
    o.micro_batch_sizes = parse_sizes(f->sizes);
    o.repeats = f->repeats;
    o.min_time_s = ticks_to_seconds(parse_duration(f->min_time, "--min-time"));
    o.warmup = f->warmup;
    o.stage_blocks = f->stage_blocks;
    if (cmd->count("--stage-blocks") && f->stage_blocks < 1)
      throw InputError("--stage-blocks: expected 1 or more, got " + std::to_string(f->stage_blocks));
    o.neighbours = f->neighbours;
    o.shared_core = f->shared_core == "on";
    if (cmd->count("--shared-core-threads")) {
      if (f->shared_core_threads <= usable_cores() || f->shared_core_threads > kMaxSharedCoreThreads)
        throw InputError("--shared-core-threads: expected more device threads than the " +
                         std::to_string(usable_cores()) + " cores this process may use, at most " +
                         std::to_string(kMaxSharedCoreThreads) + "; got " + std::to_string(f->shared_core_threads));
      o.shared_core_threads = f->shared_core_threads;
    }
    if (!f->link_sizes.empty()) o.link_sizes = parse_link_sizes(f->link_sizes);
    o.progress = f->quiet ? nullptr : &std::cerr;
    std::unique_ptr<ProfileBackend> backend = make_profile_backend(f->backend, f->clock, f->virtual_devices);
    const ModelSpec model = find_model(f->model);
    const Profile p = with_executor_gaps(profile_model(model, o, *backend));
    out->stream() << profile_json_text(p);
    std::cout << summary(p, f->out);
    files.commit();
  });
}

}  // namespace pipesim
