// The kernels of a layer, the embedding and the LM head: FLOPs, HBM bytes, GEMM shapes and
// tensor-parallel collectives (cost_models/transformer.hpp; docs/cost-model.md).
#include "cost_models/transformer.hpp"

namespace pipesim {
namespace {

// Vocabulary-parallel cross entropy, HBM bytes per logit element and rank: forward casts
// the bf16 logits to fp32 (2 + 4), takes the max (4), subtracts it (4 + 4), exponentiates
// (4 + 4), sums (4) and normalises in place (4 + 4): 38. Backward subtracts the one-hot
// target (~0), scales by the loss gradient (4 + 4) and casts back (4 + 2): 14.
constexpr double kCrossEntropyFwdBytes = 38;
constexpr double kCrossEntropyBwdBytes = 14;
// Each of the cross entropy's 3 allreduces carries one fp32 value per token.
constexpr double kCrossEntropyReduceBytes = 4;

// Sizes one tensor-parallel rank works on, as doubles (FLOPs and bytes overflow int64 for
// trillion-parameter models).
struct Rank {
  double b, s, h, e;
  double tokens;  // b·s
  double d;       // head dim
  double hq;      // query (and attention output) width per rank: heads x head dim / t
  double hkv;     // key (= value) width per rank: kv heads per rank x head dim
  double heads;   // attention heads per rank
  double f;       // ffn width per rank
  double vocab;   // vocabulary rows per rank (rounded up)
  double rep;     // elements of a b·s·h tensor in the norm/dropout regions: /t with SP
  double full;    // bytes of one whole b·s·h activation (what a TP collective carries)
  double grad_rmw;  // read-modify-write of a main-gradient element
  int tp;
  bool sp, swiglu, flash, causal, fused_accumulation;
};

Rank rank_of(const ModelSpec& m, const Microbatch& mb) {
  const double t = mb.tp;
  Rank r{};
  r.b = static_cast<double>(mb.sequences);
  r.s = m.seq_len;
  r.h = m.hidden;
  r.e = mb.element_bytes;
  r.tokens = r.b * r.s;
  r.d = head_dim(m);
  r.hq = m.heads * r.d / t;
  r.hkv = kv_heads_per_rank(m, mb.tp) * r.d;
  r.heads = m.heads / t;
  r.f = m.ffn_hidden / t;
  r.vocab = static_cast<double>((m.vocab + mb.tp - 1) / mb.tp);
  r.rep = mb.sequence_parallel ? r.tokens * r.h / t : r.tokens * r.h;
  r.full = r.tokens * r.h * r.e;
  r.grad_rmw = 2.0 * mb.main_grad_bytes;
  r.fused_accumulation = mb.fused_grad_accumulation;
  r.tp = mb.tp;
  r.sp = mb.sequence_parallel;
  r.swiglu = m.mlp == MlpKind::SwiGlu;
  r.flash = mb.flash_attention;
  r.causal = mb.causal;
  return r;
}

// A weight GEMM Y[n x o] = X[n x k]·W[k x o] in one of the three passes; returns its index.
// Forward: M = n, N = o, K = k. Input gradient dX = dY·Wᵀ: M = n, N = k, K = o. Weight
// gradient dW = Xᵀ·dY: M = k, N = o, K = n (the tokens).
int gemm(PassWork& w, std::string_view name, Pass pass, const Rank& r, double k, double o) {
  const double n = r.tokens;
  Kernel g{name, KernelKind::Gemm, 2 * n * k * o, 0, {}};
  switch (pass) {
    case Pass::Forward:
      g.bytes = r.e * (n * k + k * o + n * o);
      g.gemm = {n, o, k, 1};
      break;
    case Pass::InputGrad:
      g.bytes = r.e * (n * o + k * o + n * k);
      g.gemm = {n, k, o, 1};
      break;
    case Pass::WeightGrad:
      // Fused: the GEMM adds into the main gradient. Unfused: it writes its own gradient,
      // which a separate kernel then adds in.
      g.bytes = r.e * (n * k + n * o) + (r.fused_accumulation ? r.grad_rmw : r.e) * k * o;
      g.gemm = {k, o, n, 1};
      break;
  }
  w.kernels.push_back(g);
  const int index = static_cast<int>(w.kernels.size()) - 1;
  if (pass == Pass::WeightGrad && !r.fused_accumulation)
    w.kernels.push_back({"gradient accumulation", KernelKind::Memory, 0, (r.e + r.grad_rmw) * k * o, {}});
  return index;
}

// One product of the unfused attention, for every query head of every sequence:
// C[s x cols] = A[s x inner]·B[inner x cols]; it reads and writes `bytes`.
void attention_gemm(PassWork& w, std::string_view name, const Rank& r, double cols, double inner, double bytes) {
  const GemmShape shape{r.s, cols, inner, r.b * r.heads};
  w.kernels.push_back({name, KernelKind::Gemm, shape.flops(), bytes, shape});
}

void memory(PassWork& w, std::string_view name, double bytes) { w.kernels.push_back({name, KernelKind::Memory, 0, bytes, {}}); }

void collective(PassWork& w, std::string_view name, CollectiveKind kind, double bytes, int partner = -1,
                Pass partner_pass = Pass::Forward, bool megatron_async = false) {
  w.collectives.push_back({name, kind, bytes, partner, partner_pass, megatron_async});
}

// Where the weight-gradient pass puts its n-th weight GEMM (mlp out 0, mlp in 1, attention
// output 2, qkv 3; an unfused accumulation kernel follows each), for the collectives that
// run under a weight-gradient GEMM (the column-parallel layers' input-gradient reductions).
int wgrad_gemm(const Rank& r, int nth) { return r.fused_accumulation ? nth : 2 * nth; }

}  // namespace

int kv_heads(const ModelSpec& m) { return m.kv_heads > 0 ? m.kv_heads : m.heads; }
int head_dim(const ModelSpec& m) { return m.head_dim > 0 ? m.head_dim : m.hidden / m.heads; }
int kv_heads_per_rank(const ModelSpec& m, int t) { return kv_heads(m) >= t ? kv_heads(m) / t : 1; }

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

double PassWork::collective_bytes(int tp) const {
  if (tp <= 1) return 0;
  const double share = (tp - 1.0) / tp;
  double sum = 0;
  for (const Collective& c : collectives) sum += (c.kind == CollectiveKind::AllReduce ? 2 : 1) * share * c.bytes;
  return sum;
}

PassWork layer_work(const ModelSpec& m, const Microbatch& mb, Pass pass) {
  const Rank r = rank_of(m, mb);
  const double n = r.tokens, e = r.e;
  const double qkv = r.hq + 2 * r.hkv;
  const double scores = r.b * r.heads * r.s * r.s;  // attention-score elements per rank
  const double up = r.swiglu ? 2 * r.f : r.f;       // width of the MLP's first GEMM(s)
  // Flash attention skips the masked half of a causal score matrix.
  const double fused = r.causal ? 0.5 : 1.0;
  const bool tp = r.tp > 1;
  PassWork w;
  switch (pass) {
    case Pass::Forward: {
      memory(w, "norm", 2 * e * r.rep);
      const int qkv_gemm = gemm(w, "qkv", pass, r, r.h, qkv);
      if (tp && r.sp) collective(w, "all-gather before qkv", CollectiveKind::AllGather, r.full, qkv_gemm);
      if (r.flash) {
        // Reads Q, K, V, writes O and the fp32 log-sum-exp of each row and head.
        w.kernels.push_back({"flash attention", KernelKind::FusedAttention, fused * 4 * n * r.s * r.hq,
                             e * (2 * n * r.hq + 2 * n * r.hkv) + 4 * n * r.heads, {}});
      } else {
        attention_gemm(w, "attention scores", r, r.s, r.d, e * (n * r.hq + n * r.hkv + scores));
        memory(w, "softmax", 2 * e * scores);
        memory(w, "attention dropout", (2 * e + kDropoutMaskBytes) * scores);
        attention_gemm(w, "attention values", r, r.d, r.s, e * (scores + n * r.hkv + n * r.hq));
      }
      const int out = gemm(w, "attention output", pass, r, r.hq, r.h);
      if (tp) collective(w, "attention output reduction", r.sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce, r.full, out);
      memory(w, "bias dropout add", (3 * e + kDropoutMaskBytes) * r.rep);
      memory(w, "norm", 2 * e * r.rep);
      const int in = gemm(w, "mlp in", pass, r, r.h, up);
      if (tp && r.sp) collective(w, "all-gather before mlp in", CollectiveKind::AllGather, r.full, in);
      memory(w, r.swiglu ? "swiglu" : "gelu", (r.swiglu ? 3 : 2) * e * n * r.f);
      const int down = gemm(w, "mlp out", pass, r, r.f, r.h);
      if (tp) collective(w, "mlp output reduction", r.sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce, r.full, down);
      memory(w, "bias dropout add", (3 * e + kDropoutMaskBytes) * r.rep);
      break;
    }
    case Pass::InputGrad: {
      memory(w, "dropout backward", (2 * e + kDropoutMaskBytes) * r.rep);
      const int down = gemm(w, "mlp out dgrad", pass, r, r.f, r.h);
      if (tp && r.sp) collective(w, "all-gather of the mlp output gradient", CollectiveKind::AllGather, r.full, down, Pass::InputGrad);
      memory(w, r.swiglu ? "swiglu backward" : "gelu backward", (r.swiglu ? 5 : 3) * e * n * r.f);
      const int in = gemm(w, "mlp in dgrad", pass, r, r.h, up);
      if (tp && r.sp) collective(w, "mlp in input re-gather", CollectiveKind::AllGather, r.full, in, Pass::InputGrad, true);
      if (tp)
        collective(w, "mlp input gradient reduction", r.sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce,
                   r.full, wgrad_gemm(r, 1), Pass::WeightGrad, true);
      memory(w, "norm backward", 4 * e * r.rep);  // reads x, dy, the residual's gradient
      memory(w, "dropout backward", (2 * e + kDropoutMaskBytes) * r.rep);
      const int out = gemm(w, "attention output dgrad", pass, r, r.hq, r.h);
      if (tp && r.sp) collective(w, "all-gather of the attention output gradient", CollectiveKind::AllGather, r.full, out,
                                 Pass::InputGrad);
      if (r.flash) {
        // Recomputes QK^T, then dV, dP, dQ, dK: 5 products. Reads Q, K, V, O, dO and the
        // log-sum-exp, writes dQ, dK, dV.
        w.kernels.push_back({"flash attention backward", KernelKind::FusedAttention, fused * 10 * n * r.s * r.hq,
                             e * (4 * n * r.hq + 4 * n * r.hkv) + 4 * n * r.heads, {}});
      } else {
        // dP = dO·Vᵀ and dV = Pᵀ·dO: both operands get a gradient, no weights involved.
        attention_gemm(w, "attention dP", r, r.s, r.d, e * (n * r.hq + n * r.hkv + scores));
        attention_gemm(w, "attention dV", r, r.d, r.s, e * (scores + n * r.hq + n * r.hkv));
        memory(w, "attention dropout backward", (2 * e + kDropoutMaskBytes) * scores);
        memory(w, "softmax backward", 3 * e * scores);
        // dQ = dS·K and dK = dSᵀ·Q.
        attention_gemm(w, "attention dQ", r, r.d, r.s, e * (scores + n * r.hkv + n * r.hq));
        attention_gemm(w, "attention dK", r, r.d, r.s, e * (scores + n * r.hq + n * r.hkv));
      }
      const int q = gemm(w, "qkv dgrad", pass, r, r.h, qkv);
      if (tp && r.sp) collective(w, "qkv input re-gather", CollectiveKind::AllGather, r.full, q, Pass::InputGrad, true);
      if (tp)
        collective(w, "qkv input gradient reduction", r.sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce,
                   r.full, wgrad_gemm(r, 3), Pass::WeightGrad, true);
      memory(w, "norm backward", 4 * e * r.rep);
      break;
    }
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
      memory(w, "embedding lookup", 2 * e * n * r.h);
      // The vocabulary-parallel lookup is summed over ranks (scattered by sequence with SP).
      if (r.tp > 1)
        collective(w, "embedding reduction", r.sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce, r.full);
      memory(w, "embedding dropout", (positions + 2 * e + kDropoutMaskBytes) * r.rep);
      break;
    case Pass::InputGrad: break;  // nothing upstream of the embedding needs a gradient
    case Pass::WeightGrad:
      memory(w, "embedding dropout backward", (2 * e + kDropoutMaskBytes) * r.rep);
      // Scatter-add of dY into the fp32 rows this rank owns (about 1/t of the tokens).
      memory(w, "embedding wgrad", e * n * r.h + r.grad_rmw * n * r.h / mb.tp);
      break;
  }
  return w;
}

PassWork head_work(const ModelSpec& m, const Microbatch& mb, Pass pass) {
  const Rank r = rank_of(m, mb);
  const double n = r.tokens, e = r.e;
  const bool tp = r.tp > 1;
  PassWork w;
  switch (pass) {
    case Pass::Forward: {
      memory(w, "final norm", 2 * e * r.rep);
      const int head = gemm(w, "lm head", pass, r, r.h, r.vocab);
      if (tp && r.sp) collective(w, "all-gather before the lm head", CollectiveKind::AllGather, r.full, head);
      memory(w, "cross entropy", kCrossEntropyFwdBytes * n * r.vocab);
      if (tp)
        for (std::string_view what : {"cross entropy max", "cross entropy target logit", "cross entropy sum"})
          collective(w, what, CollectiveKind::AllReduce, kCrossEntropyReduceBytes * n);
      break;
    }
    case Pass::InputGrad: {
      memory(w, "cross entropy backward", kCrossEntropyBwdBytes * n * r.vocab);
      const int head = gemm(w, "lm head dgrad", pass, r, r.h, r.vocab);
      if (tp && r.sp) collective(w, "lm head input re-gather", CollectiveKind::AllGather, r.full, head, Pass::InputGrad, true);
      // The head's input gradient is summed over the vocabulary shards.
      if (tp)
        collective(w, "lm head input gradient reduction", r.sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce,
                   r.full, 0, Pass::WeightGrad, true);
      memory(w, "final norm backward", 4 * e * r.rep);
      break;
    }
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

}  // namespace pipesim
