#include "tools/experiment.hpp"

#include <algorithm>
#include <cmath>

#include <CLI/CLI.hpp>

#include "cost_models/catalog.hpp"
#include "cost_models/efficiency_fit.hpp"
#include "cost_models/gemm_model.hpp"
#include "cost_models/transformer.hpp"
#include "core/error.hpp"
#include "tools/config_file.hpp"
#include "tools/cli_options.hpp"
#include "tools/report.hpp"
#include "tools/table.hpp"

namespace pipesim {
namespace {

Recompute parse_recompute(const std::string& text) {
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
    if (text == recompute_name(r)) return r;
  throw InputError("--recompute: expected none, selective or full, got " + quote(text));
}

// FLOPs of one sequence through the whole model, forward and backward, no recomputation.
double model_flops_per_sequence(const ModelSpec& m) {
  double flops = 0;
  for (Pass pass : {Pass::Forward, Pass::InputGrad, Pass::WeightGrad})
    flops += m.layers * layer_flops(m, 1, pass) + head_flops(m, 1, pass);
  return flops;
}

std::string fits_text(const Assessment& a) {
  return a.fits ? "fits" : "over by " + format_bytes(static_cast<double>(a.overshoot));
}

}  // namespace

void add_activation_flags(CLI::App& app, HardwareOptions& o) {
  app.add_option("--sequence-parallel", o.sequence_parallel, "Sequence parallelism with TP (true/false)")
      ->capture_default_str();
  app.add_option("--flash-attention", o.flash_attention,
                 "Fused attention (FlashAttention): no s x s scores in memory; on by default, as Megatron-LM and NeMo "
                 "train today (true/false)")
      ->capture_default_str();
}

void add_state_and_link_flags(CLI::App& app, HardwareOptions& o) {
  app.add_option("--dtype", o.dtype, "Compute dtype: bf16, fp16, fp8, tf32, fp32")->capture_default_str();
  app.add_option("--zero1", o.zero1, "Shard optimizer state over data-parallel ranks (true/false)")
      ->capture_default_str();
  app.add_option("--intra-link", o.intra_link, "Link class inside a node [default: the GPU's]");
  app.add_option("--inter-link", o.inter_link, "Link class between nodes [default: the GPU's]");
}

void add_hardware_flags(CLI::App& app, HardwareOptions& o) {
  app.add_option("--model", o.model, "Model from the catalog (`pipesim catalog models`) or a catalog file");
  app.add_option("--hardware", o.hardware, "GPU type(s), comma-separated, from the catalog or a file")
      ->capture_default_str();
  app.add_option("--nodes", o.nodes, "Nodes in the cluster")->capture_default_str();
  app.add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node")->capture_default_str();
  app.add_option("--tp", o.tp, "Tensor-parallel GPUs per pipeline device")->capture_default_str();
  add_activation_flags(app, o);
  app.add_option("--micro-batch-size", o.micro_batch_size, "Sequences per micro-batch")->capture_default_str();
  app.add_option("--global-batch-size", o.global_batch_size,
                 "Sequences per optimizer step (Megatron's global batch); sets -m = B / (dp x micro-batch size) "
                 "for each schedule, so that every schedule runs the same batch");
  app.add_option("--recompute", o.recompute, "Activation recomputation: none, selective or full")
      ->capture_default_str();
  add_state_and_link_flags(app, o);
  add_analytical_flags(app, o);
}

void add_analytical_flags(CLI::App& app, HardwareOptions& o) {
  app.add_option("--blocking-p2p", o.blocking_p2p, "Each op waits for its own p2p send, as Megatron did in 2021 (true/false)")
      ->capture_default_str();
  app.add_option("--overlap-grad-reduce", o.overlap_grad_reduce,
                 "Data-parallel reduction overlaps the last backward (true/false)")
      ->capture_default_str();
  app.add_option("--scatter-gather", o.scatter_gather, "Each TP rank sends 1/tp of a p2p message (true/false)")
      ->capture_default_str();
  app.add_option("--grad-reduce-bytes", o.grad_reduce_bytes, "Bytes per gradient in data-parallel reductions (2 or 4)")
      ->capture_default_str();
  app.add_option("--tp-overlap", o.tp_overlap,
                 "TP collectives under GEMMs: none, backward (Megatron's default) or all (--tp-comm-overlap)")
      ->capture_default_str();
  app.add_option("--gradient-accumulation-fusion", o.gradient_accumulation_fusion,
                 "Weight-gradient GEMMs add into the main gradients, as Megatron does since 2022 (true/false)")
      ->capture_default_str();
  app.add_option("--vocab-multiple", o.vocab_multiple, "Pad the vocabulary to a multiple of this x tp (Megatron: 128)")
      ->capture_default_str();
  app.add_option("--partition", o.partition, "Layers of each stage, comma-separated, e.g. 2,3,3,2 [default: the rule]");
  app.add_option("--decoder-first-pipeline-num-layers", o.first_stage_layers,
                 "Layers of the first pipeline device (the rest shared by the rule)");
  app.add_option("--decoder-last-pipeline-num-layers", o.last_stage_layers,
                 "Layers of the last pipeline device (the rest shared by the rule)");
  app.add_option("--efficiency", o.efficiency,
                 "Override the GPU's efficiencies, e.g. gemm=0.7,memory=0.85 (keys: docs/cost-model.md)");
}

void add_price_flag(CLI::App& app, HardwareOptions& o) {
  app.add_option("--price-per-hour", o.price_per_hour,
                 "US dollars per GPU-hour for $/M tokens, e.g. 2.49 [default: the GPU's catalog price]");
}

void apply_efficiency_overrides(Efficiency& e, const std::string& text, const std::string& what) {
  for (const std::string& item : split_list(text)) {
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string at = what + " '" + item + "'";
    if (eq == std::string::npos || eq + 1 == item.size()) throw InputError(at + ": expected KEY=VALUE, e.g. gemm=0.7");
    const std::string value = item.substr(eq + 1);
    double v = 0;
    std::size_t used = 0;
    try {
      v = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || !std::isfinite(v)) throw InputError(at + ": '" + value + "' is not a number");
    if (key == "tile_m" || key == "tile_n") {
      if (v != std::floor(v) || v < 1 || v > 4096) throw InputError(at + ": a tile side is an integer in 1..4096");
      (key == "tile_m" ? e.tile_m : e.tile_n) = static_cast<int>(v);
    } else {
      set_efficiency_value(e, parse_efficiency_param(key, at), v);
    }
  }
  check_efficiency(e, what);
}

int data_parallel_width(const HardwareOptions& o, int pipeline_devices) {
  if (o.nodes <= 0 || o.gpus_per_node <= 0)
    throw InputError("--nodes and --gpus-per-node must be positive, got " + std::to_string(o.nodes) + " and " +
                     std::to_string(o.gpus_per_node));
  if (o.tp <= 0) throw InputError("--tp must be positive, got " + std::to_string(o.tp));
  const long long group = static_cast<long long>(o.tp) * pipeline_devices;
  const long long gpus = static_cast<long long>(o.nodes) * o.gpus_per_node;
  if (group <= 0 || gpus % group != 0)
    throw InputError("--tp " + std::to_string(o.tp) + " x " + std::to_string(pipeline_devices) +
                     " pipeline devices = " + std::to_string(group) + " GPUs per pipeline, which does not divide the " +
                     std::to_string(gpus) + " GPUs of " + std::to_string(o.nodes) + " x " +
                     std::to_string(o.gpus_per_node));
  return static_cast<int>(gpus / group);
}

int microbatches_for_global_batch(const HardwareOptions& o, std::string_view schedule, const ScheduleParams& params,
                                  bool profiled) {
  const long long b = o.global_batch_size;  // an int: a batch of 2^31 sequences is not a batch
  if (b <= 0) throw InputError("--global-batch-size must be positive, got " + std::to_string(b));
  if (o.micro_batch_size <= 0)
    throw InputError("--micro-batch-size must be positive, got " + std::to_string(o.micro_batch_size));
  const int devices = pipeline_devices(schedule, params);
  const long long dp = profiled ? 1 : data_parallel_width(o, devices);
  const long long per_step = dp * o.micro_batch_size;
  if (b % per_step != 0)
    throw InputError("--global-batch-size " + std::to_string(b) + " is not a multiple of dp x micro-batch size = " +
                     std::to_string(dp) + " x " + std::to_string(o.micro_batch_size) + " = " +
                     std::to_string(per_step) + " (" + std::string(schedule) + " on " + std::to_string(devices) +
                     " pipeline devices" + (profiled ? ")" : " of tp " + std::to_string(o.tp) + ")"));
  return static_cast<int>(b / per_step);
}

long long sequences_per_iteration(const Schedule& schedule, int micro_batch_size, int dp) {
  return static_cast<long long>(schedule.microbatches) / schedule.microbatch_split * micro_batch_size * dp;
}

void check_global_batch(const HardwareOptions& o, const Schedule& schedule, int dp) {
  if (o.global_batch_size <= 0) return;
  const long long runs = sequences_per_iteration(schedule, o.micro_batch_size, dp);
  if (runs != o.global_batch_size)
    throw InputError("--global-batch-size " + std::to_string(o.global_batch_size) + ": " + schedule.name + " runs " +
                     std::to_string(runs) + " sequences per iteration (" + std::to_string(schedule.microbatches) +
                     " micro-batches x micro-batch size " + std::to_string(o.micro_batch_size) + " x dp " +
                     std::to_string(dp) + ")");
}

AnalyticalConfig make_analytical_config(const HardwareOptions& o, const std::string& gpu, int pipeline_devices) {
  AnalyticalConfig c;
  c.model = find_model(o.model);
  if (o.nodes <= 0 || o.gpus_per_node <= 0)
    throw InputError("--nodes and --gpus-per-node must be positive, got " + std::to_string(o.nodes) + " and " +
                     std::to_string(o.gpus_per_node));
  c.cluster = make_cluster(gpu, o.nodes, o.gpus_per_node, o.intra_link, o.inter_link);
  c.pipeline_devices = pipeline_devices;
  c.tp = o.tp;
  c.dp = data_parallel_width(o, pipeline_devices);
  c.sequence_parallel = o.sequence_parallel;
  c.flash_attention = o.flash_attention;
  c.micro_batch_size = o.micro_batch_size;
  c.dtype = o.dtype;
  c.recompute = parse_recompute(o.recompute);
  c.zero1 = o.zero1;
  c.blocking_p2p = o.blocking_p2p;
  c.overlap_grad_reduce = o.overlap_grad_reduce;
  c.scatter_gather = o.scatter_gather;
  if (o.grad_reduce_bytes <= 0) throw InputError("--grad-reduce-bytes must be positive, got " + std::to_string(o.grad_reduce_bytes));
  c.grad_reduce_bytes = o.grad_reduce_bytes;
  c.tp_overlap = parse_tp_overlap(o.tp_overlap, "--tp-overlap");
  c.gradient_accumulation_fusion = o.gradient_accumulation_fusion;
  if (o.vocab_multiple <= 0) throw InputError("--vocab-multiple must be positive, got " + std::to_string(o.vocab_multiple));
  c.vocab_multiple = o.vocab_multiple;
  for (const std::string& item : split_list(o.partition)) {
    std::size_t used = 0;
    int layers = -1;
    try {
      layers = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || layers < 0)
      throw InputError("--partition: expected non-negative layer counts like 2,3,3,2, got '" + item + "'");
    c.partition.layers.push_back(layers);
  }
  if (!c.partition.layers.empty() && (o.first_stage_layers >= 0 || o.last_stage_layers >= 0))
    throw InputError("--partition: not with --decoder-first/last-pipeline-num-layers (it gives every stage)");
  for (const auto& [flag, value] : {std::pair{"--decoder-first-pipeline-num-layers", o.first_stage_layers},
                                    std::pair{"--decoder-last-pipeline-num-layers", o.last_stage_layers}})
    if (value < -1) throw InputError(std::string(flag) + " must be a non-negative number of layers, got " + std::to_string(value));
  c.partition.first = o.first_stage_layers;
  c.partition.last = o.last_stage_layers;
  c.efficiency = c.cluster.gpu.efficiency;
  apply_efficiency_overrides(c.efficiency, o.efficiency, "--efficiency");
  if (!o.price_per_hour.empty()) {
    GpuSpec& g = c.cluster.gpu;
    g.price_per_hour = parse_price(o.price_per_hour, "--price-per-hour", false);
    g.price_source = "--price-per-hour";
    g.price_assumed = false;
  }
  return c;
}

std::string stage_count_problem(const ModelSpec& model, const Schedule& schedule) {
  if (schedule.num_stages <= model.layers) return {};
  return schedule.name + " has " + std::to_string(schedule.num_stages) + " stages per pipeline, but " + model.name +
         " has " + std::to_string(model.layers) + " layers: a stage holds at least one layer";
}

std::vector<UnusedFlags> unused_flags(bool model, bool cost, bool schedule_file,
                                      const std::vector<std::string>& generators) {
  const auto list = [](const auto& flags) { return std::vector<std::string>(flags.begin(), flags.end()); };
  std::vector<UnusedFlags> out;
  if (model || cost)
    out.push_back({list(kUniformCostFlags),
                   cost ? "not used with --cost (the profile gives every duration and size)"
                        : "not used with --model (the analytical model gives every duration and size)",
                   true});
  if (cost) out.push_back({list(kGpuFlags), "not used with --cost (the profile measured its own machine)", true});
  if (!model && !cost) {
    out.push_back({list(kGpuFlags), "used only with --model (the GPU settings of the analytical model)", true});
    out.push_back({{"--micro-batch-size", "--global-batch-size"}, "used only with --model or --cost", true});
  }
  if (!cost) out.push_back({list(kProfiledOnlyFlags), "used only with --cost", true});
  if (schedule_file) {  // checked against the file where the schedule is made (check_schedule_file_flags)
    UnusedFlags generator{shape_flags(), "", false};
    for (const std::string& f : generator_only_flags()) generator.flags.push_back(f);
    generator.flags.emplace_back("--schedule");
    out.push_back(generator);
  } else {  // settings that none of the generators reads (check_generator_flags refuses them)
    UnusedFlags settings{{}, "", false};
    for (const std::string& flag : generator_setting_flags()) {
      bool read = false;
      for (const std::string& name : generators) read = read || find_generator(name).reads(std::string_view(flag).substr(2));
      if (!read) settings.flags.push_back(flag);
    }
    out.push_back(settings);
  }
  return out;
}

void add_profiled_flags(CLI::App& app, ProfiledOptions& o) {
  app.add_option("--cost", o.cost, "Measured costs: a profile file from `pipesim profile` (with --model, --micro-batch-size)");
  app.add_option("--cost-optimizer", o.optimizer, "With --cost: the optimizer step OptStep takes, adam or sgd")
      ->capture_default_str();
  app.add_option("--cost-fit", o.fit, "With --cost: durations between profiled sizes: auto, line or piecewise")
      ->capture_default_str();
}

ProfiledCostConfig make_profiled_config(const ProfiledOptions& o, const HardwareOptions& hw) {
  if (o.optimizer != "adam" && o.optimizer != "sgd")
    throw InputError("--cost-optimizer: expected adam or sgd, got " + quote(o.optimizer));
  ProfiledCostConfig c;
  c.profile = read_profile_file(o.cost);
  c.source = o.cost;
  if (!hw.model.empty()) c.model = find_model(hw.model);
  c.micro_batch_size = hw.micro_batch_size;
  c.optimizer = o.optimizer;
  c.fit = parse_fit_policy(o.fit, "--cost-fit");
  return c;
}

Assessment assess(const AnalyticalCostModel& model, const Schedule& schedule, const SimResult& result,
                  const Metrics& metrics) {
  const AnalyticalConfig& c = model.config();
  Assessment a;
  a.model = c.model.name;
  a.hardware = c.cluster.gpu.name;
  a.nodes = c.cluster.nodes;
  a.gpus_per_node = c.cluster.gpus_per_node;
  a.gpus = c.cluster.total_gpus();
  a.tp = c.tp;
  a.pp = schedule.num_devices;
  a.dp = c.dp;
  a.global_batch = static_cast<double>(sequences_per_iteration(schedule, c.micro_batch_size, c.dp));
  a.tokens_per_iteration = a.global_batch * c.model.seq_len;
  a.price_per_hour = c.cluster.gpu.price_per_hour;
  a.price_source = c.cluster.gpu.price_source;
  a.price_assumed = c.cluster.gpu.price_assumed;
  const double seconds = ticks_to_seconds(metrics.time_per_iteration);
  if (seconds > 0) {
    a.tokens_per_s = a.tokens_per_iteration / seconds;
    const double peak = c.cluster.gpu.peak_flops.at(c.dtype);
    a.mfu = a.global_batch * model_flops_per_sequence(c.model) / (seconds * a.gpus * peak);
    if (a.price_per_hour) a.cost_per_million_tokens = *a.price_per_hour * a.gpus / 3600.0 / a.tokens_per_s * 1e6;
  }
  for (int d = 0; d < schedule.num_devices; ++d) {
    const DeviceStats& s = result.devices[static_cast<std::size_t>(d)];
    a.memory.push_back(device_memory(model, schedule, d, s.peak_activation_bytes, s.peak_weight_versions));
    if (a.memory.back().total > a.peak_memory) {
      a.peak_memory = a.memory.back().total;
      a.peak_device = d;
    }
  }
  a.capacity = c.cluster.gpu.memory_bytes;
  a.fits = a.peak_memory <= a.capacity;
  a.overshoot = a.fits ? 0 : a.peak_memory - a.capacity;
  return a;
}

nlohmann::ordered_json assessment_json(const Assessment& a, nlohmann::ordered_json run) {
  nlohmann::ordered_json j = std::move(run);
  const auto usd = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  j["model"] = a.model;
  j["hardware"] = a.hardware;
  j["nodes"] = a.nodes;
  j["gpus_per_node"] = a.gpus_per_node;
  j["gpus"] = a.gpus;
  j["tp"] = a.tp;
  j["pp"] = a.pp;
  j["dp"] = a.dp;
  j["global_batch"] = a.global_batch;
  j["tokens_per_iteration"] = a.tokens_per_iteration;
  j["tokens_per_s"] = a.tokens_per_s;
  j["mfu"] = a.mfu;
  j["price_usd_per_gpu_hour"] = usd(a.price_per_hour);
  j["price_source"] = a.price_source;
  j["price_assumed"] = a.price_assumed;
  j["cost_per_million_tokens_usd"] = usd(a.cost_per_million_tokens);
  j["peak_memory_bytes"] = a.peak_memory;
  j["peak_memory_device"] = a.peak_device;
  j["capacity_bytes"] = a.capacity;
  j["fits"] = a.fits;
  j["overshoot_bytes"] = a.overshoot;
  auto& mem = j["memory_per_device"] = nlohmann::ordered_json::array();
  for (const DeviceMemory& d : a.memory)
    mem.push_back({{"device", d.device},         {"weights_bytes", d.weights},       {"gradients_bytes", d.gradients},
                   {"optimizer_bytes", d.optimizer}, {"activations_bytes", d.activations}, {"workspace_bytes", d.workspace},
                   {"comm_buffers_bytes", d.comm_buffers}, {"total_bytes", d.total},    {"weight_copies", d.weight_copies}});
  return j;
}

ReportAssessment report_assessment(const Assessment& a) {
  ReportAssessment r;
  r.model = a.model;
  r.hardware = a.hardware;
  r.nodes = a.nodes;
  r.gpus_per_node = a.gpus_per_node;
  r.tp = a.tp;
  r.pp = a.pp;
  r.dp = a.dp;
  r.global_batch = a.global_batch;
  r.tokens_per_iteration = a.tokens_per_iteration;
  r.tokens_per_s = a.tokens_per_s;
  r.mfu = a.mfu;
  r.price_per_hour = a.price_per_hour;
  r.price_source = a.price_source;
  r.price_assumed = a.price_assumed;
  r.cost_per_million_tokens = a.cost_per_million_tokens;
  r.capacity = a.capacity;
  for (const DeviceMemory& d : a.memory)
    r.memory.push_back({d.weights, d.gradients, d.optimizer, d.workspace + d.comm_buffers, d.activations, d.weight_copies});
  PIPESIM_ASSERT(r.peak_memory() == a.peak_memory && r.fits() == a.fits);
  return r;
}

std::string assessment_table(const std::vector<std::pair<Assessment, Metrics>>& rows) {
  Table t;
  t.add_column("hardware", Table::Align::Left);
  t.add_column("schedule", Table::Align::Left);
  t.add_column("tokens/iter");
  t.add_column("time/iter");
  t.add_column("tokens/s");
  t.add_column("MFU");
  t.add_column("bubble");
  t.add_column("peak memory");
  t.add_column("capacity");
  t.add_column("fits?", Table::Align::Left);
  t.add_column("mismatch max");
  t.add_column("delay max");
  t.add_column("$/M tokens");
  bool assumed = false;
  for (const auto& [a, m] : rows) {
    assumed = assumed || (a.cost_per_million_tokens && a.price_assumed);
    t.add_row({a.hardware, m.schedule, format_fixed(a.tokens_per_iteration, 0), format_duration(m.time_per_iteration),
               format_fixed(a.tokens_per_s, 0),
               format_percent(a.mfu), format_percent(m.bubble_ratio), format_bytes(static_cast<double>(a.peak_memory)),
               format_bytes(static_cast<double>(a.capacity)), fits_text(a), std::to_string(m.staleness.max_mismatch),
               std::to_string(m.staleness.max_delay),
               a.cost_per_million_tokens
                   ? "$" + format_fixed(*a.cost_per_million_tokens, 3) + (a.price_assumed ? " (assumed)" : "")
                   : "-"});
  }
  return t.render() +
         "\ntokens/iter = tokens per optimizer step (global batch x sequence length); MFU = model FLOPs (forward +\n"
         "backward, no recomputation) / (time x GPUs x dense peak); peak memory = the fullest GPU: weights (x copies\n"
         "held), gradients, optimizer state, activations, buffers; mismatch / delay in optimizer steps (see\n"
         "docs/schedules.md)." +
         (assumed ? " $/M tokens (assumed): the GPU's catalog price is an assumption\n"
                    "(pipesim catalog gpus; --price-per-hour gives yours).\n"
                  : "\n");
}

}  // namespace pipesim
