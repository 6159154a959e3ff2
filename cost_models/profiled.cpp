#include "cost_models/profiled.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "cost_models/transformer.hpp"  // kMaxMicroBatchSize
#include "core/error.hpp"

namespace pipesim {
namespace {

constexpr std::int64_t kElementBytes = 4;  // fp32, the only dtype profiled

const char* piece_name(Piece p) {
  switch (p) {
    case Piece::Block: return "block";
    case Piece::Embedding: return "embedding";
    case Piece::Head: return "head";
  }
  return "?";
}

const char* measure_name(Measure m) {
  switch (m) {
    case Measure::Forward: return "forward";
    case Measure::InputGrad: return "input_grad";
    case Measure::WeightGrad: return "weight_grad";
    case Measure::ActivationBytes: return "activation_bytes";
    case Measure::HeldBytes: return "held_after_input_grad_bytes";
  }
  return "?";
}

const PassProfile& pass_of(const MicroBatchProfile& mb, Piece p) {
  return p == Piece::Block ? mb.block : p == Piece::Embedding ? mb.embedding : mb.head;
}

double value_of(const PassProfile& p, Measure m) {
  switch (m) {
    case Measure::Forward: return p.forward.expected();
    case Measure::InputGrad: return p.input_grad.expected();
    case Measure::WeightGrad: return p.weight_grad.expected();
    case Measure::ActivationBytes: return static_cast<double>(p.activation_bytes);
    case Measure::HeldBytes: return static_cast<double>(p.held_after_input_grad_bytes);
  }
  return 0;
}

Tick to_ticks(double seconds, const std::string& who) {
  if (!(seconds * 1e9 < 9.2e18)) throw InputError(who + ": an op or transfer takes longer than 292 years");
  return static_cast<Tick>(std::llround(seconds * 1e9));
}

std::int64_t to_bytes(double bytes, const std::string& who) {
  if (!(bytes >= 0 && bytes < 9.2e18)) throw InputError(who + ": a byte count does not fit in 64 bits");
  return static_cast<std::int64_t>(std::llround(bytes));
}

std::string shape_text(const ModelSpec& m) {
  return "hidden " + std::to_string(m.hidden) + ", heads " + std::to_string(m.heads) + ", ffn " +
         std::to_string(m.ffn_hidden) + ", seq_len " + std::to_string(m.seq_len) + ", vocab " + std::to_string(m.vocab) +
         (m.tied_embeddings ? ", tied" : ", untied");
}

}  // namespace

ProfiledCostModel::ProfiledCostModel(ProfiledCostConfig config) : config_(std::move(config)) {
  const std::string& src = config_.source;
  const Profile& p = config_.profile;
  if (p.micro_batches.empty()) throw InputError(src + ": the profile has no micro-batch sizes");
  if (config_.model.name.empty()) config_.model = p.model;
  const ModelSpec& m = config_.model;
  if (m.family != "gpt")
    throw InputError(src + ": model " + quote(m.name) + " is of family '" + m.family +
                     "', but profiles hold GPT blocks (LayerNorm, GELU, multi-head attention)");
  const ModelSpec& pm = p.model;
  const bool same = m.hidden == pm.hidden && m.heads == pm.heads && m.ffn_hidden == pm.ffn_hidden &&
                    m.seq_len == pm.seq_len && m.vocab == pm.vocab && m.tied_embeddings == pm.tied_embeddings &&
                    (m.kv_heads == 0 || m.kv_heads == m.heads) && m.mlp == MlpKind::Gelu && m.linear_bias &&
                    !m.rms_norm && m.learned_positions;
  if (!same)
    throw InputError(src + ": model " + quote(m.name) + " (" + shape_text(m) + ") does not have the profiled block shape of '" +
                     pm.name + "' (" + shape_text(pm) + "); profile it with pipesim profile --model " + m.name);
  if (m.layers < 1) throw InputError(src + ": model " + quote(m.name) + " has no layers");
  if (config_.micro_batch_size < 1 || config_.micro_batch_size > kMaxMicroBatchSize)
    throw InputError(src + ": micro-batch size must be in 1.." + std::to_string(kMaxMicroBatchSize) + ", got " +
                     std::to_string(config_.micro_batch_size));
  if (config_.optimizer == "adam") {
    step_ = &OptimizerTimes::adam;
  } else if (config_.optimizer == "sgd") {
    step_ = &OptimizerTimes::sgd;
  } else {
    throw InputError(src + ": optimizer must be adam or sgd, got " + quote(config_.optimizer));
  }
  optimizer_block_ = optimizer_step(p.block_optimizer).expected();
  optimizer_embedding_ = optimizer_step(p.embedding_optimizer).expected();
  optimizer_head_norm_ = optimizer_step(p.head_norm_optimizer).expected();
  optimizer_head_weight_ = optimizer_step(p.head_weight_optimizer).expected();

  std::vector<double> sizes;
  for (const MicroBatchProfile& mb : p.micro_batches) sizes.push_back(mb.size);
  for (Piece piece : {Piece::Block, Piece::Embedding, Piece::Head}) {
    for (Measure measure : {Measure::Forward, Measure::InputGrad, Measure::WeightGrad, Measure::ActivationBytes,
                            Measure::HeldBytes}) {
      if (piece == Piece::Embedding && measure == Measure::InputGrad) continue;
      std::vector<double> values;
      for (const MicroBatchProfile& mb : p.micro_batches) values.push_back(value_of(pass_of(mb, piece), measure));
      // Byte counts are exact (linear in b for fixed s): always the least-squares line.
      const bool bytes = measure == Measure::ActivationBytes || measure == Measure::HeldBytes;
      fits_[static_cast<int>(piece)][static_cast<int>(measure)] =
          SizeFit(sizes, values, bytes ? FitPolicy::Line : config_.fit,
                  src + ": " + piece_name(piece) + " " + measure_name(measure));
    }
  }
  std::vector<double> messages;
  for (const MicroBatchProfile& mb : p.micro_batches) messages.push_back(static_cast<double>(mb.message_bytes));
  message_ = SizeFit(sizes, messages, FitPolicy::Line, src + ": message_bytes");
  if (!(p.link.bandwidth > 0) || !(p.link.latency >= 0)) throw InputError(src + ": the link fit is not usable");
  if (p.interference.measured()) {
    const PassInterference& block = p.interference.block;
    slowdowns_[static_cast<std::size_t>(OpKind::F)] = block.forward.slowdown;
    slowdowns_[static_cast<std::size_t>(OpKind::I)] = block.input_grad.slowdown;
    slowdowns_[static_cast<std::size_t>(OpKind::W)] = block.weight_grad.slowdown;
    std::vector<double>& b = slowdowns_[static_cast<std::size_t>(OpKind::B)];
    const auto backward = [&](std::size_t k) { return block.input_grad.times[k].median + block.weight_grad.times[k].median; };
    for (std::size_t k = 0; k < block.input_grad.times.size(); ++k) b.push_back(k == 0 ? 1.0 : backward(k) / backward(0));
  }
  turns_.fill(1);
  if (const ProfileSharedCore& t = p.shared_core; t.measured()) {
    // times[1] over times[0]: the ratio of their means (what a run's ops add up to), and how
    // many standard errors above 1 it, or the ratio of their medians, lies.
    const auto set = [&](OpKind kind, const std::vector<const InterferenceCurve*>& parts) {
      double alone = 0, turns = 0, alone_median = 0, turns_median = 0, median_error = 0, mean_error = 0;
      for (const InterferenceCurve* c : parts) {
        alone += c->times[0].expected();
        turns += c->times[1].expected();
        alone_median += c->times[0].median;
        turns_median += c->times[1].median;
        median_error = std::max(median_error, std::hypot(relative_median_error(c->times[0]),
                                                         relative_median_error(c->times[1])));
        mean_error = std::max(mean_error, std::hypot(relative_mean_error(c->times[0]), relative_mean_error(c->times[1])));
      }
      const auto evidence = [](double above, double error) {
        return error > 0 ? above / error : above > 0 ? std::numeric_limits<double>::infinity() : 0;
      };
      turns_[static_cast<std::size_t>(kind)] = turns / alone;
      turn_evidence_[static_cast<std::size_t>(kind)] =
          std::max(evidence(turns_median / alone_median - 1, median_error), evidence(turns / alone - 1, mean_error));
    };
    set(OpKind::F, {&t.forward});
    set(OpKind::I, {&t.input_grad});
    set(OpKind::W, {&t.weight_grad});
    set(OpKind::B, {&t.input_grad, &t.weight_grad});
    set(OpKind::OptStep, {&t.optimizer});
  }
  // Evaluate everything once at the configured size, so a size out of reach fails here.
  (void)stage_seconds(OpKind::F, 0, 1, config_.micro_batch_size);
  (void)stage_seconds(OpKind::B, 0, 1, config_.micro_batch_size);
  (void)activation(Op{}, OpScale{});
  (void)message_bytes(Op{}, OpScale{});
}

const SizeFit& ProfiledCostModel::fit(Piece piece, Measure m) const {
  PIPESIM_ASSERT(!(piece == Piece::Embedding && m == Measure::InputGrad));
  return fits_[static_cast<int>(piece)][static_cast<int>(m)];
}

double ProfiledCostModel::microbatch(int split) const {
  PIPESIM_ASSERT(split > 0);
  return static_cast<double>(config_.micro_batch_size) / split;
}

StageLayout ProfiledCostModel::layout_of(int stage, int num_stages) const {
  try {
    return stage_layout(config_.model.layers, stage, num_stages);
  } catch (const InputError& e) {
    throw InputError(config_.source + ": model " + quote(config_.model.name) + ": " + e.what());
  }
}

double ProfiledCostModel::stage_seconds(OpKind kind, int stage, int num_stages, double b) const {
  const StageLayout l = layout_of(stage, num_stages);
  auto piece = [&](Piece p, Measure m) {
    if (p == Piece::Embedding && m == Measure::InputGrad) return 0.0;
    return fit(p, m).at(b);
  };
  auto total = [&](Measure m) {
    double s = l.blocks * piece(Piece::Block, m);
    if (l.embedding) s += piece(Piece::Embedding, m);
    if (l.head) s += piece(Piece::Head, m);
    return s;
  };
  switch (kind) {
    case OpKind::F: return total(Measure::Forward);
    case OpKind::I: return total(Measure::InputGrad);
    case OpKind::W: return total(Measure::WeightGrad);
    case OpKind::B: return total(Measure::InputGrad) + total(Measure::WeightGrad);
    default: PIPESIM_ASSERT(!"not a micro-batch op");
  }
  return 0;
}

std::int64_t ProfiledCostModel::stage_parameters(int stage, int num_stages) const {
  const StageLayout l = layout_of(stage, num_stages);
  const ProfileParameters& pp = config_.profile.parameters;
  std::int64_t n = l.blocks * pp.block;
  if (l.embedding) n += pp.embedding;
  if (l.head) {
    n += pp.head_norm;
    if (head_holds_weight(num_stages)) n += pp.head_weight;  // own matrix or tied copy
  }
  return n;
}

double ProfiledCostModel::optimizer_seconds(int stage, int num_stages) const {
  const StageLayout l = layout_of(stage, num_stages);
  double s = l.blocks * optimizer_block_;
  if (l.embedding) s += optimizer_embedding_;
  if (l.head) {
    s += optimizer_head_norm_;
    if (head_holds_weight(num_stages)) s += optimizer_head_weight_;
  }
  if (config_.tied_embedding_sync && config_.model.tied_embeddings && num_stages > 1 && (l.embedding || l.head))
    s += ticks_to_seconds(allreduce_time(2, config_.profile.parameters.head_weight * kElementBytes));
  return s;
}

Tick ProfiledCostModel::compute_time(const Op& op, OpScale scale) const {
  PIPESIM_ASSERT(scale.num_stages > 0 && scale.microbatch_split > 0);
  if (op.kind == OpKind::OptStep) return to_ticks(optimizer_seconds(op.stage, scale.num_stages), config_.source);
  return to_ticks(stage_seconds(op.kind, op.stage, scale.num_stages, microbatch(scale.microbatch_split)),
                  config_.source);
}

ActivationCost ProfiledCostModel::activation(const Op& op, OpScale scale) const {
  const StageLayout l = layout_of(op.stage, scale.num_stages);
  const double b = microbatch(scale.microbatch_split);
  double bytes = l.blocks * fit(Piece::Block, Measure::ActivationBytes).at(b);
  double held = l.blocks * fit(Piece::Block, Measure::HeldBytes).at(b);
  for (Piece p : {Piece::Embedding, Piece::Head}) {
    if ((p == Piece::Embedding && !l.embedding) || (p == Piece::Head && !l.head)) continue;
    bytes += fit(p, Measure::ActivationBytes).at(b);
    held += fit(p, Measure::HeldBytes).at(b);
  }
  const std::int64_t total = to_bytes(bytes, config_.source);
  return {total, total - std::min(total, to_bytes(held, config_.source))};
}

std::int64_t ProfiledCostModel::message_bytes(const Op&, OpScale scale) const {
  return to_bytes(message_.at(microbatch(scale.microbatch_split)), config_.source);
}

TransferCost ProfiledCostModel::transfer(int, int, std::int64_t bytes) const {
  const LinkProfile& link = config_.profile.link;
  TransferCost cost{to_ticks(static_cast<double>(bytes) / link.bandwidth, config_.source),
                    to_ticks(link.latency, config_.source)};
  if (link.sender_measured()) {  // a hand-off between threads: the sender's parts, the latency a wake-up's
    cost.sender = to_ticks(link.sender_copy(static_cast<double>(bytes)), config_.source);
    cost.wake = to_ticks(link.wake.expected(), config_.source);
    cost.latency_is_wake = true;
  }
  return cost;
}

std::int64_t ProfiledCostModel::grad_bytes(const Op& grad_sync, OpScale scale) const {
  return stage_parameters(grad_sync.stage, scale.num_stages) * kElementBytes;
}

double ProfiledCostModel::copies_seconds(double profiled, std::int64_t parameters) const {
  const double per_parameter = profiled / static_cast<double>(config_.profile.gradient_copies.parameters);
  return per_parameter * static_cast<double>(parameters);
}

Tick ProfiledCostModel::grad_sync_work(const Op& grad_sync, OpScale scale) const {
  const ProfileGradientCopies& g = config_.profile.gradient_copies;
  if (!g.measured()) return 0;
  return to_ticks(copies_seconds(g.copy_out.expected() + g.copy_in.expected(),
                                 stage_parameters(grad_sync.stage, scale.num_stages)),
                  config_.source);
}

CostModel::CollectiveStyle ProfiledCostModel::collective_style() const {
  return config_.profile.gradient_copies.sum_measured() ? CollectiveStyle::MemberThreads : CollectiveStyle::Streams;
}

Tick ProfiledCostModel::grad_sync_work_after(const Op& grad_sync, OpScale scale) const {
  const ProfileGradientCopies& g = config_.profile.gradient_copies;
  if (!g.sum_measured()) return 0;
  return std::min(grad_sync_work(grad_sync, scale),
                  to_ticks(copies_seconds(g.copy_in.expected(), stage_parameters(grad_sync.stage, scale.num_stages)),
                           config_.source));
}

Tick ProfiledCostModel::between_ops() const {
  const ProfileExecutor& e = config_.profile.executor;
  return e.measured() ? to_ticks(e.op_gap.expected(), config_.source) : 0;
}

Tick ProfiledCostModel::allreduce_time(int participants, std::int64_t bytes) const {
  if (participants <= 1 || bytes <= 0) return 0;
  if (const ProfileGradientCopies& g = config_.profile.gradient_copies; g.sum_measured()) {
    // The last member adds every other member's copy into its own (CollectiveStyle::MemberThreads).
    return to_ticks((participants - 1) * copies_seconds(g.sum.expected(), bytes / kElementBytes), config_.source);
  }
  const LinkProfile& link = config_.profile.link;
  const double n = participants;
  return to_ticks(2 * (n - 1) / n * static_cast<double>(bytes) / link.bandwidth + 2 * (n - 1) * link.latency,
                  config_.source);
}

std::string ProfiledCostModel::label() const {
  const Profile& p = config_.profile;
  std::ostringstream s;
  s << "profiled: " << config_.model.name << " on " << p.backend << " ("
    << (p.backend == "cpu" ? p.machine.cpu : p.machine.device) << "), measured " << p.date.substr(0, 10)
    << ", micro-batch size " << config_.micro_batch_size << ", " << config_.optimizer << ", from " << config_.source;
  return s.str();
}

}  // namespace pipesim
