#include "cost_models/transformer.hpp"

#include <cstdio>
#include <string>

#include "core/error.hpp"

namespace pipesim {
namespace {

// Bytes per element of a dropout mask (PyTorch keeps it as uint8 / bool).
constexpr double kMaskBytes = 1;
// Megatron accumulates weight gradients into fp32 main gradients in place
// (gradient_accumulation_fusion): read 4 + write 4 bytes per weight element.
constexpr double kMainGradRmwBytes = 8;
// Vocabulary-parallel cross entropy, HBM bytes per logit element and rank: forward casts
// the bf16 logits to fp32 (2 + 4), takes the max (4), subtracts it (4 + 4), exponentiates
// (4 + 4), sums (4) and normalises in place (4 + 4): 38. Backward subtracts the one-hot
// target (~0), scales by the loss gradient (4 + 4) and casts back (4 + 2): 14.
constexpr double kCrossEntropyFwdBytes = 38;
constexpr double kCrossEntropyBwdBytes = 14;

int kv_heads_of(const ModelSpec& m) { return m.kv_heads > 0 ? m.kv_heads : m.heads; }
int head_dim_of(const ModelSpec& m) { return m.head_dim > 0 ? m.head_dim : m.hidden / m.heads; }
// Key (= value) heads one of t ranks holds: t > kv replicates one kv head on each rank.
int kv_per_rank(const ModelSpec& m, int t) { return kv_heads_of(m) >= t ? kv_heads_of(m) / t : 1; }

// Sizes one tensor-parallel rank works on, as doubles (FLOPs and bytes overflow int64 for
// trillion-parameter models).
struct Rank {
  double b, s, h, e;
  double tokens;  // b·s
  double hq;      // query (and attention output) width per rank: heads x head dim / t
  double hkv;     // key (= value) width per rank: kv heads per rank x head dim
  double heads;   // attention heads per rank
  double f;       // ffn width per rank
  double vocab;   // vocabulary rows per rank (rounded up)
  double rep;     // elements of a b·s·h tensor in the norm/dropout regions: /t with SP
  bool swiglu, flash;
};

Rank rank_of(const ModelSpec& m, const Microbatch& mb) {
  const double t = mb.tp;
  const double head_dim = head_dim_of(m);
  Rank r{};
  r.b = static_cast<double>(mb.sequences);
  r.s = m.seq_len;
  r.h = m.hidden;
  r.e = mb.element_bytes;
  r.tokens = r.b * r.s;
  r.hq = m.heads * head_dim / t;
  r.hkv = kv_per_rank(m, mb.tp) * head_dim;
  r.heads = m.heads / t;
  r.f = m.ffn_hidden / t;
  r.vocab = static_cast<double>((m.vocab + mb.tp - 1) / mb.tp);
  r.rep = mb.sequence_parallel ? r.tokens * r.h / t : r.tokens * r.h;
  r.swiglu = m.mlp == MlpKind::SwiGlu;
  r.flash = mb.flash_attention;
  return r;
}

// A weight GEMM X[n x k]·W[k x o] for the three passes.
void gemm(PassWork& w, std::string_view name, Pass pass, const Rank& r, double k, double o) {
  const double n = r.tokens;
  const double flops = 2 * n * k * o;
  switch (pass) {
    case Pass::Forward: w.kernels.push_back({name, flops, r.e * (n * k + k * o + n * o)}); break;
    case Pass::InputGrad: w.kernels.push_back({name, flops, r.e * (n * o + k * o + n * k)}); break;
    case Pass::WeightGrad: w.kernels.push_back({name, flops, r.e * (n * k + n * o) + kMainGradRmwBytes * k * o}); break;
  }
}

void elementwise(PassWork& w, std::string_view name, double bytes) { w.kernels.push_back({name, 0, bytes}); }

}  // namespace

std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "?";
}

int dtype_bytes(std::string_view dtype) {
  if (dtype == "bf16" || dtype == "fp16" || dtype == "fp8") return 2;
  if (dtype == "fp32" || dtype == "tf32") return 4;
  throw InputError("dtype: unknown dtype " + quote(dtype) + "; expected bf16, fp16, fp8, tf32 or fp32");
}

double PassWork::flops() const {
  double sum = 0;
  for (const Kernel& k : kernels) sum += k.flops;
  return sum;
}

double PassWork::bytes() const {
  double sum = 0;
  for (const Kernel& k : kernels) sum += k.bytes;
  return sum;
}

PassWork layer_work(const ModelSpec& m, const Microbatch& mb, Pass pass) {
  const Rank r = rank_of(m, mb);
  const double n = r.tokens, e = r.e;
  const double qkv = r.hq + 2 * r.hkv;
  const double scores = r.b * r.heads * r.s * r.s;  // attention-score elements per rank
  const double up = r.swiglu ? 2 * r.f : r.f;       // width of the MLP's first GEMM(s)
  PassWork w;
  switch (pass) {
    case Pass::Forward:
      w.collectives = 2;
      elementwise(w, "norm", 2 * e * r.rep);
      gemm(w, "qkv", pass, r, r.h, qkv);
      if (r.flash) {
        // Reads Q, K, V, writes O and the fp32 log-sum-exp of each row and head.
        w.kernels.push_back({"flash attention", 4 * n * r.s * r.hq, e * (2 * n * r.hq + 2 * n * r.hkv) + 4 * n * r.heads, true});
      } else {
        w.kernels.push_back({"attention scores", 2 * n * r.s * r.hq, e * (n * r.hq + n * r.hkv + scores), true});
        elementwise(w, "softmax", 2 * e * scores);
        elementwise(w, "attention dropout", (2 * e + kMaskBytes) * scores);
        w.kernels.push_back({"attention values", 2 * n * r.s * r.hq, e * (scores + n * r.hkv + n * r.hq), true});
      }
      gemm(w, "attention output", pass, r, r.hq, r.h);
      elementwise(w, "bias dropout add", (3 * e + kMaskBytes) * r.rep);
      elementwise(w, "norm", 2 * e * r.rep);
      gemm(w, "mlp in", pass, r, r.h, up);
      elementwise(w, r.swiglu ? "swiglu" : "gelu", (r.swiglu ? 3 : 2) * e * n * r.f);
      gemm(w, "mlp out", pass, r, r.f, r.h);
      elementwise(w, "bias dropout add", (3 * e + kMaskBytes) * r.rep);
      break;
    case Pass::InputGrad:
      w.collectives = 2;
      elementwise(w, "dropout backward", (2 * e + kMaskBytes) * r.rep);
      gemm(w, "mlp out dgrad", pass, r, r.f, r.h);
      elementwise(w, r.swiglu ? "swiglu backward" : "gelu backward", (r.swiglu ? 5 : 3) * e * n * r.f);
      gemm(w, "mlp in dgrad", pass, r, r.h, up);
      elementwise(w, "norm backward", 4 * e * r.rep);  // reads x, dy, the residual's gradient
      elementwise(w, "dropout backward", (2 * e + kMaskBytes) * r.rep);
      gemm(w, "attention output dgrad", pass, r, r.hq, r.h);
      if (r.flash) {
        // Recomputes QK^T, then dV, dP, dQ, dK: 5 products. Reads Q, K, V, O, dO and the
        // log-sum-exp, writes dQ, dK, dV.
        w.kernels.push_back({"flash attention backward", 10 * n * r.s * r.hq,
                             e * (4 * n * r.hq + 4 * n * r.hkv) + 4 * n * r.heads, true});
      } else {
        // dP = dO·V^T and dV = P^T·dO: both operands get a gradient, no weights involved.
        w.kernels.push_back({"attention values backward", 4 * n * r.s * r.hq,
                             e * (n * r.hq + n * r.hkv + scores + scores + n * r.hkv), true});
        elementwise(w, "attention dropout backward", (2 * e + kMaskBytes) * scores);
        elementwise(w, "softmax backward", 3 * e * scores);
        w.kernels.push_back({"attention scores backward", 4 * n * r.s * r.hq,
                             e * (scores + n * r.hq + n * r.hkv + n * r.hq + n * r.hkv), true});
      }
      gemm(w, "qkv dgrad", pass, r, r.h, qkv);
      elementwise(w, "norm backward", 4 * e * r.rep);
      break;
    case Pass::WeightGrad:
      gemm(w, "mlp out wgrad", pass, r, r.f, r.h);
      gemm(w, "mlp in wgrad", pass, r, r.h, up);
      gemm(w, "attention output wgrad", pass, r, r.hq, r.h);
      gemm(w, "qkv wgrad", pass, r, r.h, qkv);
      break;
  }
  return w;
}

PassWork embedding_work(const ModelSpec& m, const Microbatch& mb, Pass pass) {
  const Rank r = rank_of(m, mb);
  const double n = r.tokens, e = r.e;
  const double positions = m.learned_positions ? e : 0;  // reads the position rows too
  PassWork w;
  switch (pass) {
    case Pass::Forward:
      w.collectives = 1;  // the vocabulary-parallel lookup is summed over ranks
      elementwise(w, "embedding lookup", 2 * e * n * r.h);
      elementwise(w, "embedding dropout", (positions + 2 * e + kMaskBytes) * r.rep);
      break;
    case Pass::InputGrad: break;  // nothing upstream of the embedding needs a gradient
    case Pass::WeightGrad:
      elementwise(w, "embedding dropout backward", (2 * e + kMaskBytes) * r.rep);
      // Scatter-add of dY into the fp32 rows this rank owns (about 1/t of the tokens).
      elementwise(w, "embedding wgrad", e * n * r.h + kMainGradRmwBytes * n * r.h / mb.tp);
      break;
  }
  return w;
}

PassWork head_work(const ModelSpec& m, const Microbatch& mb, Pass pass) {
  const Rank r = rank_of(m, mb);
  const double n = r.tokens, e = r.e;
  PassWork w;
  switch (pass) {
    case Pass::Forward:
      elementwise(w, "final norm", 2 * e * r.rep);
      gemm(w, "lm head", pass, r, r.h, r.vocab);
      elementwise(w, "cross entropy", kCrossEntropyFwdBytes * n * r.vocab);
      break;
    case Pass::InputGrad:
      w.collectives = 1;  // the head's input gradient is summed over the vocabulary shards
      elementwise(w, "cross entropy backward", kCrossEntropyBwdBytes * n * r.vocab);
      gemm(w, "lm head dgrad", pass, r, r.h, r.vocab);
      elementwise(w, "final norm backward", 4 * e * r.rep);
      break;
    case Pass::WeightGrad: gemm(w, "lm head wgrad", pass, r, r.h, r.vocab); break;
  }
  return w;
}

double layer_flops(const ModelSpec& m, std::int64_t b, Pass pass) {
  return layer_work(m, Microbatch{b, 1, false, 2}, pass).flops();
}

double head_flops(const ModelSpec& m, std::int64_t b, Pass pass) {
  return head_work(m, Microbatch{b, 1, false, 2}, pass).flops();
}

double megatron_flops_per_iteration(const ModelSpec& m, std::int64_t batch) {
  const double B = static_cast<double>(batch), s = m.seq_len, l = m.layers, h = m.hidden, V = m.vocab;
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

// ---- parameters ----------------------------------------------------------------------

namespace {

std::int64_t norm_parameters(const ModelSpec& m) { return (m.rms_norm ? 1 : 2) * static_cast<std::int64_t>(m.hidden); }

// Per rank with t-way tensor parallelism (t = 1: the whole layer).
std::int64_t layer_parameters_split(const ModelSpec& m, int t) {
  const std::int64_t h = m.hidden, f = m.ffn_hidden / t, head_dim = head_dim_of(m);
  const std::int64_t q = m.heads / t * head_dim;
  const std::int64_t qkv = q + 2 * kv_per_rank(m, t) * head_dim;
  const std::int64_t up = m.mlp == MlpKind::SwiGlu ? 2 * f : f;
  const std::int64_t bias = m.linear_bias ? 1 : 0;
  const std::int64_t attention = h * qkv + bias * qkv + q * h + bias * h;
  const std::int64_t mlp = h * up + bias * up + f * h + bias * h;
  return attention + mlp + 2 * norm_parameters(m);
}

}  // namespace

std::int64_t layer_parameters(const ModelSpec& m) { return layer_parameters_split(m, 1); }
std::int64_t layer_parameters_per_rank(const ModelSpec& m, int tp) { return layer_parameters_split(m, tp); }

std::int64_t embedding_parameters(const ModelSpec& m) { return embedding_parameters_per_rank(m, 1); }

std::int64_t embedding_parameters_per_rank(const ModelSpec& m, int tp) {
  const std::int64_t h = m.hidden;
  const std::int64_t rows = (m.vocab + tp - 1) / tp;
  return rows * h + (m.learned_positions ? static_cast<std::int64_t>(m.seq_len) * h : 0);
}

std::int64_t head_parameters(const ModelSpec& m) { return head_parameters_per_rank(m, 1); }

std::int64_t head_parameters_per_rank(const ModelSpec& m, int tp) {
  const std::int64_t rows = (m.vocab + tp - 1) / tp;
  return norm_parameters(m) + (m.tied_embeddings ? 0 : rows * m.hidden);
}

std::int64_t total_parameters(const ModelSpec& m) {
  return m.layers * layer_parameters(m) + embedding_parameters(m) + head_parameters(m);
}

std::int64_t matmul_parameters(const ModelSpec& m) {
  const std::int64_t h = m.hidden, f = m.ffn_hidden, head_dim = head_dim_of(m);
  const std::int64_t q = m.heads * head_dim;
  const std::int64_t qkv = q + 2 * static_cast<std::int64_t>(kv_heads_of(m)) * head_dim;
  const std::int64_t mlp = (m.mlp == MlpKind::SwiGlu ? 3 : 2) * h * f;
  return m.layers * (h * qkv + q * h + mlp) + static_cast<std::int64_t>(m.vocab) * h;
}

// ---- activation memory ---------------------------------------------------------------

namespace {

// Integer sizes for memory (exact bytes, no rounding).
struct RankMem {
  std::int64_t e, tokens, hq, hkv, f, vocab, rep, scores, heads;
  bool swiglu, flash;
};

RankMem mem_of(const ModelSpec& m, const Microbatch& mb) {
  const std::int64_t t = mb.tp, h = m.hidden, head_dim = head_dim_of(m);
  RankMem r{};
  r.e = mb.element_bytes;
  r.tokens = mb.sequences * m.seq_len;
  r.hq = m.heads / t * head_dim;
  r.hkv = kv_per_rank(m, mb.tp) * head_dim;
  r.f = m.ffn_hidden / t;
  r.vocab = (m.vocab + t - 1) / t;
  r.rep = mb.sequence_parallel ? r.tokens * h / t : r.tokens * h;
  r.scores = mb.sequences * (m.heads / t) * static_cast<std::int64_t>(m.seq_len) * m.seq_len;
  r.heads = m.heads / t;
  r.swiglu = m.mlp == MlpKind::SwiGlu;
  r.flash = mb.flash_attention;
  return r;
}

}  // namespace

std::int64_t layer_activation_bytes(const ModelSpec& m, const Microbatch& mb, Recompute rc) {
  const RankMem r = mem_of(m, mb);
  if (rc == Recompute::Full) return r.e * r.rep;  // the layer input
  const std::int64_t n = r.tokens, mask = static_cast<std::int64_t>(kMaskBytes);
  // Attention: norm input, QKV input, Q, K, V, output-projection input, dropout mask.
  const std::int64_t attention = r.e * (2 * r.rep + n * r.hq + 2 * n * r.hkv + n * r.hq) + mask * r.rep;
  // Softmax output, its dropout mask, the dropout output (the ·V operand); flash
  // attention keeps the fp32 log-sum-exp instead, which no recomputation drops.
  const std::int64_t core = r.flash ? 4 * n * r.heads : (2 * r.e + mask) * r.scores;
  // MLP: norm input, first-GEMM input, GeLU input and output (SwiGLU: gate, up, product), mask.
  const std::int64_t mlp = r.e * (2 * r.rep + (r.swiglu ? 3 : 2) * n * r.f) + mask * r.rep;
  return attention + mlp + (rc == Recompute::None || r.flash ? core : 0);
}

std::int64_t layer_weight_grad_bytes(const ModelSpec& m, const Microbatch& mb) {
  const RankMem r = mem_of(m, mb);
  const std::int64_t n = r.tokens, up = r.swiglu ? 2 * r.f : r.f;
  // Inputs of the four weight GEMMs ...
  const std::int64_t inputs = r.rep + n * r.hq + r.rep + n * r.f;
  // ... and the gradients of their outputs, which I computed.
  const std::int64_t grads = n * (r.hq + 2 * r.hkv) + r.rep + n * up + r.rep;
  return r.e * (inputs + grads);
}

std::int64_t embedding_activation_bytes(const ModelSpec& m, const Microbatch& mb) {
  return static_cast<std::int64_t>(kMaskBytes) * mem_of(m, mb).rep;
}

std::int64_t head_activation_bytes(const ModelSpec& m, const Microbatch& mb) {
  const RankMem r = mem_of(m, mb);
  return 2 * r.e * r.rep + 4 * r.tokens * r.vocab;
}

std::int64_t head_weight_grad_bytes(const ModelSpec& m, const Microbatch& mb) {
  const RankMem r = mem_of(m, mb);
  return r.e * (r.rep + r.tokens * r.vocab);
}

// ---- checks --------------------------------------------------------------------------

void check_model(const ModelSpec& m, int tp, std::string_view who) {
  const std::string w(who);
  const std::string name = m.name.empty() ? "model" : "model " + m.name;
  auto positive = [&](const char* field, long long v) {
    if (v <= 0) throw InputError(w + ": " + name + ": " + field + " must be positive, got " + std::to_string(v));
  };
  positive("layers", m.layers);
  positive("hidden", m.hidden);
  positive("heads", m.heads);
  positive("ffn_hidden", m.ffn_hidden);
  positive("seq_len", m.seq_len);
  positive("vocab", m.vocab);
  if (m.kv_heads < 0) throw InputError(w + ": " + name + ": kv_heads must be positive (or 0 for = heads), got " + std::to_string(m.kv_heads));
  if (m.head_dim < 0) throw InputError(w + ": " + name + ": head_dim must be positive (or 0 for hidden / heads), got " + std::to_string(m.head_dim));
  if (m.head_dim == 0 && m.hidden % m.heads != 0)
    throw InputError(w + ": " + name + ": heads (" + std::to_string(m.heads) + ") must divide hidden (" +
                     std::to_string(m.hidden) + "), or head_dim must be given");
  const int kv = kv_heads_of(m);
  if (m.heads % kv != 0)
    throw InputError(w + ": " + name + ": kv_heads (" + std::to_string(kv) + ") must divide heads (" + std::to_string(m.heads) + ")");
  if (tp <= 0) throw InputError(w + ": tp must be positive, got " + std::to_string(tp));
  if (m.heads % tp != 0)
    throw InputError(w + ": tp (" + std::to_string(tp) + ") must divide the attention heads (" + std::to_string(m.heads) + ") of " + name);
  if (m.ffn_hidden % tp != 0)
    throw InputError(w + ": tp (" + std::to_string(tp) + ") must divide ffn_hidden (" + std::to_string(m.ffn_hidden) + ") of " + name);
  if (kv % tp != 0 && tp % kv != 0)
    throw InputError(w + ": tp (" + std::to_string(tp) + ") and kv_heads (" + std::to_string(kv) + ") of " + name +
                     " must divide one another");
  // Parameters and bytes are counted in 64-bit integers: a shape whose counts could overflow
  // them (a file with 2^31 layers of hidden 2^30) is refused here, estimated in double. The
  // bounds are ~1000x today's largest models (Llama 3 70B at 128k context: ~5e14 bytes);
  // with at most kMaxMicroBatchSize sequences per micro-batch, 64 bits hold every count.
  const double h = m.hidden, f = m.ffn_hidden, s = m.seq_len, q = static_cast<double>(m.heads) * head_dim_of(m);
  const double parameters = m.layers * (4 * h * q + 3 * h * f + 4 * h) + (static_cast<double>(m.vocab) + s) * h;
  const double sequence_bytes = m.layers * (s * 16 * (h + q + f) + 6 * static_cast<double>(m.heads) * s * s);  // fp32
  if (parameters > 1e15 || sequence_bytes > 1e15) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  " is too large: ~%.1e parameters and ~%.1e activation bytes per sequence (at most 1e15 each, so that "
                  "64-bit counts cannot overflow)",
                  parameters, sequence_bytes);
    throw InputError(w + ": " + name + buf);
  }
}

}  // namespace pipesim
