#include "executor/cpu_backend.hpp"

#include <string>
#include <type_traits>
#include <utility>

#include "executor/replica_lookup.hpp"
#include "executor/training_data.hpp"
#include "kernels/cpu_block.hpp"
#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

enum Parts : unsigned { kBlocks = 1, kEnds = 2, kAll = 3 };

// The tensors of a Weights object as (data, size), in model order: embedding tokens and
// positions, blocks, head gain, bias and weight (so the stages' flat vectors, concatenated,
// are the whole model's, however it is cut). Flat views for the optimizer of the ends,
// GradSync and tests.
template <class W, class F>
void for_each_tensor(W& w, unsigned parts, F&& f) {
  if ((parts & kEnds) && w.embedding) {
    f(w.embedding->tokens.data(), w.embedding->tokens.size());
    f(w.embedding->positions.data(), w.embedding->positions.size());
  }
  if (parts & kBlocks)
    for (auto& b : w.blocks) f(b.data.data(), b.data.size());
  if ((parts & kEnds) && w.head) {
    f(w.head->gain.data(), w.head->gain.size());
    f(w.head->bias.data(), w.head->bias.size());
    f(w.head->weight.data(), w.head->weight.size());
  }
}

template <class W>
KVec<float> pack(W& w, unsigned parts) {
  Eigen::Index n = 0;
  for_each_tensor(w, parts, [&](const float*, Eigen::Index size) { n += size; });
  KVec<float> out(n);
  Eigen::Index at = 0;
  for_each_tensor(w, parts, [&](const float* p, Eigen::Index size) {
    out.segment(at, size) = Eigen::Map<const KVec<float>>(p, size);
    at += size;
  });
  return out;
}

template <class W>
void unpack(W& w, unsigned parts, const float* from) {
  for_each_tensor(w, parts, [&](float* p, Eigen::Index size) {
    Eigen::Map<KVec<float>>(p, size) = Eigen::Map<const KVec<float>>(from, size);
    from += size;
  });
}

std::int64_t head_cache_bytes(const LmHeadCache<float>& c) {
  const auto n = c.x.size() + c.mean.size() + c.rstd.size() + c.xn.size() + c.probs.size() + c.d_gain.size() +
                 c.d_bias.size() + static_cast<Eigen::Index>(c.targets.size());
  return static_cast<std::int64_t>(n) * 4;
}

// n zeros whose pages are all written. KVec::Zero is not enough: GCC turns an allocation
// followed by a fill with zeros into calloc, and the allocator hands out fresh pages it knows
// are zero without touching them, so the first write faults every page in.
KVec<float> touched_zeros(Eigen::Index n) {
  KVec<float> v(n);
  volatile float* p = v.data();
  for (Eigen::Index i = 0; i < n; ++i) p[i] = 0.0f;
  return v;
}

const KMat<float>& matrix_of(const Payload* p, const Op& op, const char* what) {
  const auto* cpu = dynamic_cast<const CpuPayload*>(p);
  if (cpu == nullptr) throw InputError(to_string(op) + ": the " + std::string(what) + " is missing or not a CPU tensor");
  return cpu->matrix;
}

}  // namespace

void check_executor_model(const ModelSpec& m, int micro_batch_size, int microbatch_split) {
  const std::string name = "model " + quote(m.name) + ": ";
  if (m.mlp != MlpKind::Gelu || !m.linear_bias || m.rms_norm || !m.learned_positions)
    throw InputError(name + "the CPU executor computes GPT-style blocks only (GELU MLP, biases, LayerNorm, learned "
                            "positions); use a gpt-* model such as gpt-tiny");
  if ((m.kv_heads != 0 && m.kv_heads != m.heads) || (m.head_dim != 0 && m.head_dim * m.heads != m.hidden))
    throw InputError(name + "the CPU executor needs multi-head attention with hidden = heads x head_dim");
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.hidden % m.heads != 0 || m.ffn_hidden < 1 || m.seq_len < 1 ||
      m.vocab < 1)
    throw InputError(name + "layers, hidden, heads (dividing hidden), ffn_hidden, seq_len and vocab must be positive");
  if (micro_batch_size < 1)
    throw InputError("--micro-batch-size: expected at least 1 sequence, got " + std::to_string(micro_batch_size));
  if (microbatch_split < 1 || micro_batch_size % microbatch_split != 0)
    throw InputError("--micro-batch-size: the schedule splits each micro-batch into " + std::to_string(microbatch_split) +
                     " parts (microbatch_split), which must divide the micro-batch size " +
                     std::to_string(micro_batch_size));
}

BlockConfig executor_block_config(const ModelSetup& s) {
  BlockConfig c;
  c.batch = s.micro_batch_size / s.microbatch_split;
  c.seq = s.model.seq_len;
  c.hidden = s.model.hidden;
  c.heads = s.model.heads;
  c.ffn = s.model.ffn_hidden;
  return c;
}

std::int64_t replica_state_bytes(const ModelSetup& s, const StageLayout& l) {
  const BlockConfig c = executor_block_config(s);
  std::int64_t numbers = block_parameter_count(c) * l.blocks;
  const std::int64_t vh = static_cast<std::int64_t>(s.model.vocab) * c.hidden;
  if (l.embedding) numbers += vh + static_cast<std::int64_t>(c.seq) * c.hidden;
  if (l.head) numbers += vh + 2 * c.hidden;
  return numbers * 4 * 4;  // weights, gradient, two Adam moments
}

std::int64_t CpuBackend::Cache::bytes() const {
  std::int64_t b = head_cache_bytes(head) + static_cast<std::int64_t>(ids.size()) * 4 +
                   static_cast<std::int64_t>(embed_dx.size()) * 4;
  for (const auto& c : blocks) b += c.bytes();
  return b;
}

CpuBackend::CpuBackend(const ModelSetup& setup) : setup_(setup), config_(executor_block_config(setup)) {
  check_executor_model(setup.model, setup.micro_batch_size, setup.microbatch_split);
  check_block_config(config_);
}

void CpuBackend::create_replica(const ReplicaSpec& spec) {
  Replica r;
  r.spec = spec;
  std::uint64_t seed_state = setup_.seed;
  const std::uint64_t base = splitmix64(seed_state);
  for (int i = 0; i < spec.layout.blocks; ++i) {
    std::uint64_t state = base + static_cast<std::uint64_t>(spec.layout.first_block + i);
    r.current.blocks.push_back(init_block_params<float>(config_, splitmix64(state)));
    r.grads.blocks.push_back(BlockParams<float>::zeros(config_));
  }
  const int vocab = setup_.model.vocab;
  if (spec.layout.embedding) {
    r.current.embedding = init_embedding<float>(config_, vocab, base ^ 0xE3B0C44298FC1C14ULL);
    r.grads.embedding = Embedding<float>{KMat<float>::Zero(vocab, config_.hidden), KMat<float>::Zero(config_.seq, config_.hidden)};
  }
  if (spec.layout.head) {
    r.current.head = init_lm_head<float>(config_, vocab, /*tied=*/false, base ^ 0x9B71D224BD62A6E5ULL);
    r.grads.head = LmHead<float>{KRow<float>::Zero(config_.hidden), KRow<float>::Zero(config_.hidden),
                                 KMat<float>::Zero(vocab, config_.hidden)};
  }
  // Adam's moments now, zero, as the first step would make them, every page written: made
  // (or first touched) there, they charged a measured run's first optimizer step with ~10x
  // its time in page faults (gpt-small: 90-115 ms against 9-13 ms).
  if (setup_.optimizer.kind == OptimizerKind::Adam)
    for_each_tensor(r.current, kAll, [&](const float*, Eigen::Index n) {
      r.adam.push_back(AdamState<float>{touched_zeros(n), touched_zeros(n), 0});
    });
  const auto [it, inserted] = replicas_.emplace(std::pair{spec.pipeline, spec.stage}, std::move(r));
  PIPESIM_ASSERT(inserted);
  (void)it;
}

CpuBackend::Replica& CpuBackend::replica(int pipeline, int stage) { return find_replica(replicas_, pipeline, stage); }

const CpuBackend::Replica& CpuBackend::replica(int pipeline, int stage) const {
  return find_replica(replicas_, pipeline, stage);
}

const CpuBackend::Weights& CpuBackend::weights(const Replica& r, std::int32_t version, const Op& op) const {
  return weights_of(r, version, op);
}

CpuBackend::Cache& CpuBackend::cache(Replica& r, const Op& op, bool create) { return cache_of(r, op, create); }

std::unique_ptr<Payload> CpuBackend::forward(const OpArgs& a, const Payload* input, double* loss) {
  Replica& r = replica(a.op.pipeline, a.op.stage);
  const Weights& w = weights(r, a.version, a.op);
  if (r.caches.count(a.op.microbatch)) throw InputError(to_string(a.op) + ": this micro-batch's forward already ran");
  Cache& c = cache(r, a.op, true);
  const std::int64_t before = c.bytes();
  std::optional<MicrobatchData> data;
  if (w.embedding || w.head)
    data = training_microbatch(setup_, a.op.microbatch, config_.batch);
  KMat<float> x = w.embedding ? embedding_forward(*w.embedding, config_, data->ids) : matrix_of(input, a.op, "input activation");
  if (w.embedding) c.ids = data->ids;
  c.blocks.resize(w.blocks.size());
  for (std::size_t i = 0; i < w.blocks.size(); ++i) x = block_forward(w.blocks[i], x, c.blocks[i]);
  c.forward_done = true;
  std::unique_ptr<Payload> out;
  if (w.head) {
    const float l = lm_head_forward(*w.head, w.head->weight, x, data->targets, c.head);
    if (loss) *loss = l;
  } else {
    out = std::make_unique<CpuPayload>(std::move(x));
  }
  account(before, c.bytes());
  return out;
}

KMat<float> CpuBackend::input_gradient(Replica& r, const OpArgs& a, const Payload* grad) {
  const Weights& w = weights(r, a.version, a.op);
  Cache& c = cache(r, a.op, false);
  if (!c.forward_done || c.input_grad_done)
    throw InputError(to_string(a.op) + ": the input gradient of this micro-batch was already computed");
  KMat<float> d = w.head ? lm_head_backward_input(*w.head, w.head->weight, c.head) : matrix_of(grad, a.op, "output gradient");
  for (std::size_t i = w.blocks.size(); i-- > 0;) d = block_backward_input(w.blocks[i], d, c.blocks[i]);
  c.input_grad_done = true;
  return d;
}

std::unique_ptr<Payload> CpuBackend::backward_input(const OpArgs& a, const Payload* grad) {
  Replica& r = replica(a.op.pipeline, a.op.stage);
  Cache& c = cache(r, a.op, false);
  const std::int64_t before = c.bytes();
  KMat<float> d = input_gradient(r, a, grad);
  std::unique_ptr<Payload> out;
  if (r.spec.layout.embedding)
    c.embed_dx = std::move(d);  // the embedding's W needs it; nothing goes upstream
  else
    out = std::make_unique<CpuPayload>(std::move(d));
  account(before, c.bytes());
  return out;
}

void CpuBackend::backward_weight(const OpArgs& a) {
  Replica& r = replica(a.op.pipeline, a.op.stage);
  Cache& c = cache(r, a.op, false);
  if (!c.input_grad_done) throw InputError(to_string(a.op) + ": the weight gradient needs the input gradient (I) first");
  const std::int64_t before = c.bytes();
  for (std::size_t i = r.grads.blocks.size(); i-- > 0;) block_backward_weight(c.blocks[i], r.grads.blocks[i]);
  if (r.grads.head) lm_head_backward_weight(c.head, *r.grads.head, r.grads.head->weight);
  if (r.grads.embedding) embedding_backward_weight(config_, c.ids, c.embed_dx, *r.grads.embedding);
  ++r.contributions;
  r.caches.erase(a.op.microbatch);
  account(before, 0);
}

std::unique_ptr<Payload> CpuBackend::backward(const OpArgs& a, const Payload* grad) {
  std::unique_ptr<Payload> out = backward_input(a, grad);
  backward_weight(a);
  return out;
}

void CpuBackend::optimizer_step(int pipeline, int stage) {
  Replica& r = replica(pipeline, stage);
  // The mean of the accumulated gradients, scaled inside the step (kernels/optimizer.hpp).
  const float scale = r.contributions > 1 ? 1.0f / static_cast<float>(r.contributions) : 1.0f;
  const OptimizerConfig& o = setup_.optimizer;
  AdamConfig adam;
  adam.lr = o.lr;
  // Every tensor in place, as the profiler times each group: packing the embedding and head
  // into one vector first copied them three times (gpt-small: 150 MB each way, a third of
  // the step). Each gradient is zeroed right after its tensor's step, while it is still in
  // the caches, as the profiler's probe does (kernels/cpu_profile_backend.cpp): zeroing them
  // all in a pass of their own afterwards made gpt-small's step 20-26 % slower.
  std::vector<float*> grads;
  for_each_tensor(r.grads, kAll, [&](float* p, Eigen::Index) { grads.push_back(p); });
  std::size_t k = 0;
  for_each_tensor(r.current, kAll, [&](float* p, Eigen::Index n) {
    PIPESIM_ASSERT(k < grads.size());
    const Eigen::Map<KVec<float>> weights(p, n);
    Eigen::Map<KVec<float>> grad(grads[k], n);
    if (o.kind == OptimizerKind::Sgd) {
      sgd_step(weights, grad, o.lr, scale);
    } else {
      PIPESIM_ASSERT(k < r.adam.size());
      adam_step(weights, grad, r.adam[k], adam, scale);
    }
    grad.setZero();
    ++k;
  });
  PIPESIM_ASSERT(k == grads.size());
  r.contributions = 0;
  ++r.current.version;
}

std::unique_ptr<GradientBuffer> CpuBackend::export_gradients(int pipeline, int stage) {
  Replica& r = replica(pipeline, stage);
  auto out = std::make_unique<HostGradients>(pack(r.grads, kAll));
  out->contributions = r.contributions;
  return out;
}

namespace {
template <class G>  // GradientBuffer or const GradientBuffer
auto& host_gradients(G& g) {
  auto* h = dynamic_cast<std::conditional_t<std::is_const_v<G>, const HostGradients, HostGradients>*>(&g);
  if (h == nullptr) throw InputError("GradSync: a gradient from another backend reached the CPU backend");
  return *h;
}
}  // namespace

void CpuBackend::add_gradients(GradientBuffer& sum, const GradientBuffer& other) {
  HostGradients& s = host_gradients(sum);
  const HostGradients& o = host_gradients(other);
  PIPESIM_ASSERT(s.values.size() == o.values.size());
  s.values += o.values;
}

void CpuBackend::import_gradients(int pipeline, int stage, const GradientBuffer& reduced) {
  Replica& r = replica(pipeline, stage);
  const HostGradients& g = host_gradients(reduced);
  Eigen::Index n = 0;
  for_each_tensor(r.grads, kAll, [&](const float*, Eigen::Index size) { n += size; });
  PIPESIM_ASSERT(g.values.size() == n);
  unpack(r.grads, kAll, g.values.data());
  r.contributions = reduced.contributions;
}

void CpuBackend::keep_version(int pipeline, int stage) {
  Replica& r = replica(pipeline, stage);
  r.kept.insert_or_assign(r.current.version, r.current);  // a real copy
}

void CpuBackend::drop_version(int pipeline, int stage, std::int32_t version) {
  Replica& r = replica(pipeline, stage);
  PIPESIM_ASSERT(r.kept.erase(version) == 1);
}

int CpuBackend::versions_held() const {
  int n = 0;
  for (const auto& [key, r] : replicas_) n += 1 + static_cast<int>(r.kept.size());
  return n;
}

std::unique_ptr<Payload> CpuBackend::copy_for_send(const Payload& p) {
  const auto* cpu = dynamic_cast<const CpuPayload*>(&p);
  PIPESIM_ASSERT(cpu != nullptr);
  return std::make_unique<CpuPayload>(cpu->matrix);
}

int CpuBackend::activations_held() const {
  int n = 0;
  for (const auto& [key, r] : replicas_) n += static_cast<int>(r.caches.size());
  return n;
}

std::vector<float> CpuBackend::flat_weights(int pipeline, int stage) const {
  const KVec<float> flat = pack(replica(pipeline, stage).current, kAll);
  return {flat.data(), flat.data() + flat.size()};
}


void CpuBackend::load_weights(int pipeline, int stage, const std::vector<float>& flat) {
  Replica& r = replica(pipeline, stage);
  Eigen::Index n = 0;
  for_each_tensor(r.current, kAll, [&](const float*, Eigen::Index size) { n += size; });
  PIPESIM_ASSERT(static_cast<std::size_t>(n) == flat.size());
  unpack(r.current, kAll, flat.data());
}

double CpuBackend::evaluate(int pipeline, int stage, const MicrobatchData& data) const {
  const Weights& w = replica(pipeline, stage).current;
  PIPESIM_ASSERT(w.embedding && w.head);
  KMat<float> x = embedding_forward(*w.embedding, config_, data.ids);
  BlockCache<float> cache;
  for (const auto& block : w.blocks) x = block_forward(block, x, cache);
  LmHeadCache<float> head;
  return lm_head_forward(*w.head, w.head->weight, x, data.targets, head);
}

}  // namespace pipesim
