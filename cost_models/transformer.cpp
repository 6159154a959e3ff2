#include "cost_models/transformer.hpp"

#include <cstdio>
#include <string>

#include "core/error.hpp"

namespace pipesim {

std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "?";
}

Recompute parse_recompute(std::string_view text, std::string_view what) {
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
    if (text == recompute_name(r)) return r;
  throw InputError(std::string(what) + ": expected none, selective or full, got " + quote(text));
}

int dtype_bytes(std::string_view dtype) {
  if (dtype == "bf16" || dtype == "fp16" || dtype == "fp8") return 2;
  if (dtype == "fp32" || dtype == "tf32") return 4;
  throw InputError("dtype: unknown dtype " + quote(dtype) + "; expected bf16, fp16, fp8, tf32 or fp32");
}

// ---- parameters ----------------------------------------------------------------------

namespace {

std::int64_t norm_parameters(const ModelSpec& m) { return (m.rms_norm ? 1 : 2) * static_cast<std::int64_t>(m.hidden); }

// Per rank with t-way tensor parallelism (t = 1: the whole layer).
std::int64_t layer_parameters_split(const ModelSpec& m, int t) {
  const std::int64_t h = m.hidden, f = m.ffn_hidden / t, d = head_dim(m);
  const std::int64_t q = m.heads / t * d;
  const std::int64_t qkv = q + 2 * kv_heads_per_rank(m, t) * d;
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
  const std::int64_t h = m.hidden, f = m.ffn_hidden, d = head_dim(m);
  const std::int64_t q = m.heads * d;
  const std::int64_t qkv = q + 2 * static_cast<std::int64_t>(kv_heads(m)) * d;
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
  const std::int64_t t = mb.tp, h = m.hidden, d = head_dim(m);
  RankMem r{};
  r.e = mb.element_bytes;
  r.tokens = mb.sequences * m.seq_len;
  r.hq = m.heads / t * d;
  r.hkv = kv_heads_per_rank(m, mb.tp) * d;
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
  const std::int64_t n = r.tokens, mask = static_cast<std::int64_t>(kDropoutMaskBytes);
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
  return static_cast<std::int64_t>(kDropoutMaskBytes) * mem_of(m, mb).rep;
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
  const int kv = kv_heads(m);
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
  const double h = m.hidden, f = m.ffn_hidden, s = m.seq_len, q = static_cast<double>(m.heads) * head_dim(m);
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
