#include "cost_models/analytical.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace pipesim {
namespace {

const std::string kWho = "analytical";

[[noreturn]] void fail(const std::string& what) { throw InputError(kWho + ": " + what); }

Tick to_ticks(double seconds) {
  // A double past int64 nanoseconds does not convert (undefined; in practice a negative time).
  if (!(seconds * 1e9 < 9.2e18)) fail("an op or transfer takes longer than 292 years: the model or batch is too large");
  return static_cast<Tick>(std::llround(seconds * 1e9));
}

// HBM bytes the optimizer step moves per parameter (Megatron's mixed-precision Adam, fused
// multi-tensor kernels, fp32 state): the gradient norm reads the fp32 main gradient (4); Adam
// reads gradient, master weight, m and v (16) and writes master, m and v (12); the master is
// copied into the low-precision working weights (read 4, write 2); the gradient buffer is
// zeroed for the next iteration (4): 42. fp16 first unscales the gradients and checks them for
// infinities (read 4 + write 4): 50. fp32 training has no master copy: 36.
double optimizer_bytes_per_param(const std::string& dtype) {
  if (dtype == "fp16") return 50;
  if (dtype == "fp32" || dtype == "tf32") return 36;
  return 42;  // bf16, fp8 (bf16 weights outside the GEMMs)
}

void check_link(const LinkSpec& link, const char* which) {
  if (!(link.bandwidth > 0) || !std::isfinite(link.bandwidth))
    fail(std::string(which) + " link " + quote(link.name) + ": bandwidth must be a positive number of bytes/s");
  if (link.latency < 0) fail(std::string(which) + " link " + quote(link.name) + ": latency must not be negative");
}

}  // namespace

AnalyticalCostModel::AnalyticalCostModel(AnalyticalConfig config) : config_(std::move(config)) {
  const AnalyticalConfig& c = config_;
  check_model(c.model, c.tp, kWho);
  if (c.pipeline_devices <= 0) fail("pipeline_devices (p) must be positive, got " + std::to_string(c.pipeline_devices));
  if (c.dp <= 0) fail("dp must be positive, got " + std::to_string(c.dp));
  if (c.micro_batch_size <= 0) fail("micro_batch_size must be positive, got " + std::to_string(c.micro_batch_size));
  if (c.micro_batch_size > kMaxMicroBatchSize)  // check_model's bounds assume it (64-bit counts)
    fail("micro_batch_size must be at most " + std::to_string(kMaxMicroBatchSize) + ", got " +
         std::to_string(c.micro_batch_size));
  if (c.grad_reduce_bytes <= 0) fail("grad_reduce_bytes must be positive, got " + std::to_string(c.grad_reduce_bytes));
  try {
    element_bytes_ = dtype_bytes(c.dtype);
  } catch (const InputError& e) {
    fail(e.what());
  }
  const GpuSpec& gpu = c.cluster.gpu;
  const auto peak = gpu.peak_flops.find(c.dtype);
  if (peak == gpu.peak_flops.end() || !(peak->second > 0)) {
    std::string listed;
    for (const auto& [dtype, flops] : gpu.peak_flops) listed += (listed.empty() ? "" : ", ") + dtype;
    fail("GPU " + quote(gpu.name) + " lists no peak FLOP/s for dtype " + c.dtype + " (it lists: " +
         (listed.empty() ? "none" : listed) + ")");
  }
  peak_ = peak->second;
  if (!(gpu.hbm_bandwidth > 0)) fail("GPU " + quote(gpu.name) + ": hbm_bandwidth must be positive");
  check_efficiency(c.efficiency, kWho);
  if (gpu.sms < 0) fail("GPU " + quote(gpu.name) + ": sms must not be negative, got " + std::to_string(gpu.sms));
  if (c.vocab_multiple < 1) fail("vocab_multiple must be positive, got " + std::to_string(c.vocab_multiple));
  gemm_element_bytes_ = c.dtype == "fp8" ? 1 : element_bytes_;

  const ClusterSpec& cl = c.cluster;
  if (cl.nodes <= 0 || cl.gpus_per_node <= 0)
    fail("cluster: nodes and gpus_per_node must be positive, got " + std::to_string(cl.nodes) + " x " +
         std::to_string(cl.gpus_per_node));
  check_link(cl.intra, "intra-node");
  if (cl.nodes > 1) check_link(cl.inter, "inter-node");
  const int gpn = cl.gpus_per_node;
  if (c.tp <= gpn ? gpn % c.tp != 0 : c.tp % gpn != 0)
    fail("tp (" + std::to_string(c.tp) + ") and gpus_per_node (" + std::to_string(gpn) +
         ") must divide one another, so that no tensor-parallel group straddles nodes unevenly");
  const long long need = static_cast<long long>(c.tp) * c.pipeline_devices * c.dp;
  if (need > cl.total_gpus())
    fail("tp x p x dp = " + std::to_string(c.tp) + " x " + std::to_string(c.pipeline_devices) + " x " +
         std::to_string(c.dp) + " = " + std::to_string(need) + " GPUs, but the cluster has " +
         std::to_string(cl.total_gpus()) + " (" + std::to_string(cl.nodes) + " nodes x " + std::to_string(gpn) + ")");

  // Megatron pads the vocabulary so that each rank's share is a multiple of vocab_multiple.
  const long long unit = static_cast<long long>(c.vocab_multiple) * c.tp;
  const long long padded = (c.model.vocab + unit - 1) / unit * unit;
  if (padded > 1LL << 30) fail("the vocabulary padded to a multiple of " + std::to_string(unit) + " is too large");
  config_.model.vocab = static_cast<int>(padded);
  try {  // the partition's own consistency; its length is checked against each schedule
    if (!c.partition.layers.empty())
      (void)stage_blocks(c.model.layers, static_cast<int>(c.partition.layers.size()), c.pipeline_devices, c.partition);
    else if (!c.partition.empty())
      (void)stage_blocks(c.model.layers, c.pipeline_devices, c.pipeline_devices, c.partition);
  } catch (const InputError& e) {
    fail(e.what());
  }
  const bool causal = c.model.family != "bert";
  mb_ = Microbatch{c.micro_batch_size, c.tp,       c.sequence_parallel, element_bytes_, c.flash_attention,
                   causal,             c.gradient_accumulation_fusion, c.grad_reduce_bytes};
  layer_ = pass_times(layer_work);
  embedding_ = pass_times(embedding_work);
  head_ = pass_times(head_work);
  if (c.recompute == Recompute::Full) {
    layer_recompute_ = layer_.forward + layer_.tp_forward;
  } else if (c.recompute == Recompute::Selective) {
    PassWork core;  // the attention core Korthikanti et al. recompute
    for (const Kernel& k : layer_work(c.model, mb_, Pass::Forward).kernels)
      if (k.name == "attention scores" || k.name == "softmax" || k.name == "attention dropout" || k.name == "attention values")
        core.kernels.push_back(k);
    layer_recompute_ = roofline(core);
  }
  layer_act_ = layer_activation_bytes(c.model, mb_, c.recompute);
  layer_w_held_ = layer_weight_grad_bytes(c.model, mb_);
  emb_act_ = embedding_activation_bytes(c.model, mb_);
  head_act_ = head_activation_bytes(c.model, mb_);
  head_w_held_ = head_weight_grad_bytes(c.model, mb_);
}

double AnalyticalCostModel::kernel_seconds(const Kernel& k) const {
  const Efficiency& e = config_.efficiency;
  double compute = 0;
  switch (k.kind) {
    case KernelKind::Gemm:
      compute = k.flops / (peak_ * gemm_efficiency(k.gemm, e, config_.cluster.gpu.sms, gemm_element_bytes_));
      break;
    case KernelKind::FusedAttention: compute = k.flops / (peak_ * e.attention); break;
    case KernelKind::Memory: break;
  }
  return std::max(compute, k.bytes / (config_.cluster.gpu.hbm_bandwidth * e.memory));
}

double AnalyticalCostModel::roofline(const PassWork& work) const {
  double seconds = 0;
  for (const Kernel& k : work.kernels) seconds += kernel_seconds(k);
  return seconds;
}

double AnalyticalCostModel::ring_allreduce_seconds(int ranks, double bytes, const LinkSpec& link, double bandwidth) const {
  if (ranks <= 1 || bytes <= 0) return 0;
  const double n = ranks;
  return 2 * (n - 1) / n * bytes / (bandwidth * config_.efficiency.network) + 2 * (n - 1) * ticks_to_seconds(link.latency);
}

double AnalyticalCostModel::collective_seconds(const Collective& c) const {
  const int t = config_.tp;
  if (t <= 1) return 0;
  const LinkSpec& link = t <= config_.cluster.gpus_per_node ? config_.cluster.intra : config_.cluster.inter;
  const double ring = ring_allreduce_seconds(t, c.bytes, link, link.bandwidth);
  // An all-gather or a reduce-scatter is one half of a ring allreduce.
  return c.kind == CollectiveKind::AllReduce ? ring : ring / 2;
}

LayerTimes AnalyticalCostModel::pass_times(PassWork (*work)(const ModelSpec&, const Microbatch&, Pass)) const {
  const ModelSpec& m = config_.model;
  const PassWork passes[3] = {work(m, mb_, Pass::Forward), work(m, mb_, Pass::InputGrad), work(m, mb_, Pass::WeightGrad)};
  std::vector<double> kernels[3];
  for (int p = 0; p < 3; ++p)
    for (const Kernel& k : passes[p].kernels) kernels[p].push_back(kernel_seconds(k));
  auto total = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return sum;
  };
  LayerTimes t{total(kernels[0]), total(kernels[1]), total(kernels[2]), 0, 0, 0};
  const TpOverlap overlap = config_.tp_overlap;
  for (int p = 0; p < 2; ++p) {  // W has no collectives
    double& exposed = p == 0 ? t.tp_forward : t.tp_input_grad;
    for (const Collective& c : passes[p].collectives) {
      const double seconds = collective_seconds(c);
      const bool hidden = c.partner >= 0 && (overlap == TpOverlap::All || (overlap == TpOverlap::Backward && c.megatron_async));
      const int partner_pass = static_cast<int>(c.partner_pass);
      if (!hidden) {
        exposed += seconds;
      } else if (partner_pass == p) {  // runs under a GEMM of its own pass: only what outlasts it shows
        exposed += std::max(0.0, seconds - kernels[p][static_cast<std::size_t>(c.partner)]);
      } else {  // under a weight-gradient GEMM: hidden only where I and W run as one B
        PIPESIM_ASSERT(partner_pass == 2 && p == 1);
        exposed += seconds;
        t.tp_hidden_in_backward += std::min(seconds, kernels[2][static_cast<std::size_t>(c.partner)]);
      }
    }
  }
  return t;
}

int AnalyticalCostModel::layers_of(int stage, int num_stages) const {
  PIPESIM_ASSERT(num_stages > 0 && stage >= 0 && stage < num_stages);
  try {
    return stage_blocks_of(config_.model.layers, stage, num_stages, config_.pipeline_devices, config_.partition);
  } catch (const InputError& e) {
    fail(e.what());
  }
}

std::int64_t AnalyticalCostModel::stage_parameters(int stage, int num_stages) const {
  const ModelSpec& m = config_.model;
  const int t = config_.tp;
  std::int64_t params = layers_of(stage, num_stages) * layer_parameters_per_rank(m, t);
  if (stage == 0) params += embedding_parameters_per_rank(m, t);
  if (stage == num_stages - 1) {
    params += head_parameters_per_rank(m, t);
    // A tied LM head on another stage keeps its own copy of the word embeddings.
    if (m.tied_embeddings && num_stages > 1) params += static_cast<std::int64_t>((m.vocab + t - 1) / t) * m.hidden;
  }
  return params;
}

AnalyticalCostModel::StageSeconds AnalyticalCostModel::stage_parts(OpKind kind, int stage, int num_stages) const {
  const double layers = layers_of(stage, num_stages);
  const bool first = stage == 0, last = stage == num_stages - 1;
  auto part = [&](double LayerTimes::*compute, double LayerTimes::*comm, double extra) {
    double s = layers * (layer_.*compute + (comm ? layer_.*comm : 0) + extra);
    if (first) s += embedding_.*compute + (comm ? embedding_.*comm : 0);
    if (last) s += head_.*compute + (comm ? head_.*comm : 0);
    return s;
  };
  double f = part(&LayerTimes::forward, &LayerTimes::tp_forward, 0);
  double i = part(&LayerTimes::input_grad, &LayerTimes::tp_input_grad, layer_recompute_);
  const double w = part(&LayerTimes::weight_grad, nullptr, 0);
  // A fused backward runs I's collectives under W's GEMMs (TpOverlap).
  const double hidden = part(&LayerTimes::tp_hidden_in_backward, nullptr, 0);
  double p2p_f = 0, p2p_i = 0;
  if (config_.blocking_p2p && config_.pipeline_devices > 1) {
    // The op waits for its own send: F to the next stage, I (or B) to the previous one.
    // Stage s is taken to be on device s mod p (plain and interleaved placements).
    const int p = config_.pipeline_devices;
    const int device = stage % p;
    if (!last) p2p_f = p2p_seconds(node_of_device(device) == node_of_device((stage + 1) % p));
    if (!first) p2p_i = p2p_seconds(node_of_device(device) == node_of_device((stage - 1) % p));
    f += p2p_f;
    i += p2p_i;
  }
  const double recompute = layers * layer_recompute_;
  const double tp_f = part(&LayerTimes::tp_forward, nullptr, 0), tp_i = part(&LayerTimes::tp_input_grad, nullptr, 0);
  switch (kind) {
    case OpKind::F: return {f, 0, tp_f, p2p_f};
    case OpKind::I: return {i, recompute, tp_i, p2p_i};
    case OpKind::W: return {w, 0, 0, 0};
    case OpKind::B: return {i + w - hidden, recompute, std::max(0.0, tp_i - hidden), p2p_i};
    default: PIPESIM_ASSERT(!"not a micro-batch op");
  }
  return {};
}

double AnalyticalCostModel::stage_seconds(OpKind kind, int stage, int num_stages) const {
  return stage_parts(kind, stage, num_stages).total;
}

double AnalyticalCostModel::p2p_gather_seconds(double bytes) const {
  const AnalyticalConfig& c = config_;
  if (!c.scatter_gather || c.sequence_parallel || c.tp <= 1) return 0;
  // The receiving ranks all-gather their 1/t pieces on the intra-node link.
  const LinkSpec& intra = c.cluster.intra;
  return (c.tp - 1) * bytes / (intra.bandwidth * c.efficiency.network) + (c.tp - 1) * ticks_to_seconds(intra.latency);
}

double AnalyticalCostModel::p2p_seconds(bool same_node) const {
  const AnalyticalConfig& c = config_;
  const LinkSpec& link = same_node && c.tp <= c.cluster.gpus_per_node ? c.cluster.intra : c.cluster.inter;
  const double bytes = static_cast<double>(message_bytes(Op{}, OpScale{}));
  return bytes / (link.bandwidth * c.efficiency.network) + ticks_to_seconds(link.latency) + p2p_gather_seconds(bytes);
}

const LinkSpec& AnalyticalCostModel::pipeline_link() const {
  const ClusterSpec& cl = config_.cluster;
  return config_.pipeline_devices * config_.tp > cl.gpus_per_node ? cl.inter : cl.intra;
}

double AnalyticalCostModel::dp_reduce_seconds(int stage, int num_stages) const {
  const AnalyticalConfig& c = config_;
  if (c.dp <= 1) return 0;
  const ClusterSpec& cl = c.cluster;
  // The DP group of a GPU is that GPU in each pipeline replica, replicas placed one after
  // another: gpus_per_node / (p·tp) members share a node, each with its own NIC (DGX).
  const int group = c.pipeline_devices * c.tp;
  const int per_node = group < cl.gpus_per_node ? cl.gpus_per_node / group : 1;
  const bool one_node = c.dp <= per_node;
  const LinkSpec& link = one_node ? cl.intra : cl.inter;
  const double bandwidth = one_node ? cl.intra.bandwidth : std::min(cl.intra.bandwidth, per_node * cl.inter.bandwidth);
  const double params = static_cast<double>(stage_parameters(stage, num_stages));
  const double grads = ring_allreduce_seconds(c.dp, params * c.grad_reduce_bytes, link, bandwidth);
  if (!c.zero1) return grads;
  // ZeRO-1: reduce-scatter the gradients, all-gather the updated low-precision weights;
  // each is half an allreduce.
  return 0.5 * grads + 0.5 * ring_allreduce_seconds(c.dp, params * element_bytes_, link, bandwidth);
}

AnalyticalCostModel::OptimizerSeconds AnalyticalCostModel::optimizer_parts(int stage, int num_stages) const {
  const AnalyticalConfig& c = config_;
  const double params = static_cast<double>(stage_parameters(stage, num_stages));
  const double updated = c.zero1 ? params / c.dp : params;
  const double adam = updated * optimizer_bytes_per_param(c.dtype) / (c.cluster.gpu.hbm_bandwidth * c.efficiency.memory);
  double reduce = dp_reduce_seconds(stage, num_stages);
  // With overlap, buckets reduce while the last micro-batch's backward runs (PyTorch DDP,
  // Megatron's overlap_grad_reduce): only what outlasts that backward is left.
  if (c.overlap_grad_reduce) reduce = std::max(0.0, reduce - stage_seconds(OpKind::B, stage, num_stages));
  // Tied embeddings on two stages: the first and the last stage sum the gradients of their
  // copies of the word embeddings (Megatron's embedding-gradient allreduce).
  double tied = 0;
  if (c.model.tied_embeddings && num_stages > 1 && (stage == 0 || stage == num_stages - 1)) {
    const double rows = static_cast<double>((c.model.vocab + c.tp - 1) / c.tp);
    tied = ring_allreduce_seconds(2, rows * c.model.hidden * c.grad_reduce_bytes, pipeline_link(), pipeline_link().bandwidth);
  }
  return {adam, reduce, tied};
}

double AnalyticalCostModel::optimizer_seconds(int stage, int num_stages) const {
  return optimizer_parts(stage, num_stages).total();
}

Tick AnalyticalCostModel::compute_time(const Op& op, OpScale scale) const {
  PIPESIM_ASSERT(scale.num_stages > 0 && scale.microbatch_split > 0);
  if (op.kind == OpKind::OptStep) return to_ticks(optimizer_seconds(op.stage, scale.num_stages));
  return to_ticks(stage_seconds(op.kind, op.stage, scale.num_stages) / scale.microbatch_split);
}

ComputeParts AnalyticalCostModel::compute_parts(const Op& op, OpScale scale) const {
  const Tick total = compute_time(op, scale);
  ComputeParts parts;
  if (op.kind == OpKind::OptStep) {
    const OptimizerSeconds o = optimizer_parts(op.stage, scale.num_stages);
    parts.grad_sync = to_ticks(o.reduce + o.tied);
  } else {
    const StageSeconds s = stage_parts(op.kind, op.stage, scale.num_stages);
    const double split = scale.microbatch_split;
    parts = {to_ticks(s.recompute / split), to_ticks(s.tp_comm / split), to_ticks(s.p2p / split), 0};
  }
  // Each part is rounded to the nanosecond on its own: take back what the rounding added
  // over the op's duration, from the largest part.
  while (parts.total() > total) {
    Tick* largest = &parts.recompute;
    for (Tick* t : {&parts.tp_comm, &parts.p2p, &parts.grad_sync})
      if (*t > *largest) largest = t;
    --*largest;
  }
  return parts;
}

ActivationCost AnalyticalCostModel::activation(const Op& op, OpScale scale) const {
  const int stage = op.stage, n = scale.num_stages;
  const std::int64_t layers = layers_of(stage, n);
  std::int64_t bytes = layers * layer_act_, held = layers * layer_w_held_;
  if (stage == 0) bytes += emb_act_;
  if (stage == n - 1) {
    bytes += head_act_;
    held += head_w_held_;
  }
  // I frees what W does not need; under full recomputation W's inputs are rebuilt by I's
  // recompute, so nothing of the stored input can go before W.
  held = std::min(held, bytes);
  const std::int64_t split = scale.microbatch_split;
  return {bytes / split, (bytes - held) / split};
}

std::int64_t AnalyticalCostModel::message_bytes(const Op&, OpScale scale) const {
  const AnalyticalConfig& c = config_;
  std::int64_t bytes = static_cast<std::int64_t>(c.micro_batch_size) * c.model.seq_len * c.model.hidden * element_bytes_;
  // Each TP rank sends to its peer on its own link. Without sequence parallelism every
  // rank holds the whole b·s·h output; Megatron's scatter/gather sends 1/t from each and
  // all-gathers on the receiving node. With SP the output is already sharded by sequence.
  if (c.sequence_parallel || c.scatter_gather) bytes /= c.tp;
  return bytes / scale.microbatch_split;
}

int AnalyticalCostModel::node_of_device(int device) const {
  return static_cast<int>(static_cast<long long>(device) * config_.tp / config_.cluster.gpus_per_node);
}

TransferCost AnalyticalCostModel::transfer(int src_device, int dst_device, std::int64_t bytes) const {
  const AnalyticalConfig& c = config_;
  const bool same_node = c.tp <= c.cluster.gpus_per_node && node_of_device(src_device) == node_of_device(dst_device);
  if (c.blocking_p2p) return {};  // the sending op already waited for the whole exchange
  const LinkSpec& link = same_node ? c.cluster.intra : c.cluster.inter;
  const double b = static_cast<double>(bytes);
  TransferCost cost;
  cost.occupancy = to_ticks(b / (link.bandwidth * c.efficiency.network));
  cost.latency = link.latency + to_ticks(p2p_gather_seconds(b));
  return cost;
}

std::int64_t AnalyticalCostModel::grad_bytes(const Op& grad_sync, OpScale scale) const {
  return stage_parameters(grad_sync.stage, scale.num_stages) * config_.grad_reduce_bytes;
}

Tick AnalyticalCostModel::allreduce_time(int participants, std::int64_t bytes) const {
  const LinkSpec& link = pipeline_link();
  return to_ticks(ring_allreduce_seconds(participants, static_cast<double>(bytes), link, link.bandwidth));
}

std::string_view tp_overlap_name(TpOverlap o) {
  switch (o) {
    case TpOverlap::None: return "none";
    case TpOverlap::Backward: return "backward";
    case TpOverlap::All: return "all";
  }
  return "?";
}

TpOverlap parse_tp_overlap(std::string_view text, std::string_view what) {
  for (TpOverlap o : {TpOverlap::None, TpOverlap::Backward, TpOverlap::All})
    if (text == tp_overlap_name(o)) return o;
  throw InputError(std::string(what) + ": expected none, backward or all, got '" + std::string(text) + "'");
}

}  // namespace pipesim

