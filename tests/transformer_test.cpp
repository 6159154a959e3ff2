// cost_models/transformer: FLOPs, parameters and activation memory against the papers'
// closed forms and published parameter counts.
#include "input_error.hpp"
#include "cost_models/transformer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;

// A small GPT: h = 256, a = 8, f = 4h, s = 128, V = 1000.
ModelSpec tiny_gpt() {
  ModelSpec m;
  m.name = "tiny";
  m.layers = 4;
  m.hidden = 256;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = 1024;
  m.seq_len = 128;
  m.vocab = 1000;
  return m;
}

ModelSpec gpt3_13b() {
  ModelSpec m;
  m.name = "gpt3-13b";
  m.layers = 40;
  m.hidden = 5140;
  m.heads = 40;
  m.kv_heads = 40;
  m.head_dim = 128;  // Brown et al. 2020, Table 2.1: 40 heads of 128 in a 5140-wide model
  m.ffn_hidden = 4 * 5140;
  m.seq_len = 2048;
  m.vocab = 50257;
  return m;
}

ModelSpec llama2(int layers, int hidden, int heads, int kv_heads, int ffn) {
  ModelSpec m;
  m.name = "llama2";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.seq_len = 4096;
  m.vocab = 32000;
  m.tied_embeddings = false;
  m.mlp = MlpKind::SwiGlu;
  m.linear_bias = false;
  m.rms_norm = true;
  m.learned_positions = false;
  return m;
}

TEST(TransformerFlops, GptLayerMatchesNarayananAndZeroBubble) {
  const ModelSpec m = tiny_gpt();
  const double b = 2, s = 128, h = 256;
  // Narayanan et al. 2021: forward 24bsh² + 4bs²h. Zero Bubble Table 1: B = sbh(24h + 8s),
  // W = sbh(24h).
  EXPECT_DOUBLE_EQ(layer_flops(m, 2, Pass::Forward), 24 * b * s * h * h + 4 * b * s * s * h);
  EXPECT_DOUBLE_EQ(layer_flops(m, 2, Pass::InputGrad), s * b * h * (24 * h + 8 * s));
  EXPECT_DOUBLE_EQ(layer_flops(m, 2, Pass::WeightGrad), s * b * h * (24 * h));
  EXPECT_DOUBLE_EQ(head_flops(m, 2, Pass::Forward), 2 * b * s * h * 1000);
  EXPECT_DOUBLE_EQ(head_flops(m, 2, Pass::InputGrad), 2 * b * s * h * 1000);
  EXPECT_DOUBLE_EQ(head_flops(m, 2, Pass::WeightGrad), 2 * b * s * h * 1000);
}

TEST(TransformerFlops, GqaAndSwiGlu) {
  ModelSpec m = tiny_gpt();
  m.kv_heads = 2;  // head dim 32: K and V are 64 wide
  m.mlp = MlpKind::SwiGlu;
  m.ffn_hidden = 688;
  const double b = 1, s = 128, h = 256, kvw = 64, f = 688;
  const double gemms = 2 * b * s * h * (h + 2 * kvw) + 2 * b * s * h * h + 3 * 2 * b * s * h * f;
  EXPECT_DOUBLE_EQ(layer_flops(m, 1, Pass::Forward), gemms + 4 * b * s * s * h);
  EXPECT_DOUBLE_EQ(layer_flops(m, 1, Pass::InputGrad), gemms + 8 * b * s * s * h);
  EXPECT_DOUBLE_EQ(layer_flops(m, 1, Pass::WeightGrad), gemms);
}

TEST(TransformerFlops, TensorParallelRanksSplitTheWork) {
  const ModelSpec m = tiny_gpt();
  for (Pass pass : {Pass::Forward, Pass::InputGrad, Pass::WeightGrad}) {
    const double whole = layer_work(m, Microbatch{2, 1, false, 2}, pass).flops();
    EXPECT_DOUBLE_EQ(layer_work(m, Microbatch{2, 4, false, 2}, pass).flops() * 4, whole);
  }
  // Megatron: 2 allreduces of b·s·h in F, 2 in I, none in W; none at all without TP.
  const Microbatch tp4{2, 4, false, 2};
  const double bsh = 2.0 * 128 * 256 * 2;
  for (Pass pass : {Pass::Forward, Pass::InputGrad}) {
    const PassWork w = layer_work(m, tp4, pass);
    ASSERT_EQ(w.collectives.size(), 2u);
    for (const Collective& c : w.collectives) {
      EXPECT_EQ(c.kind, CollectiveKind::AllReduce) << c.name;
      EXPECT_DOUBLE_EQ(c.bytes, bsh) << c.name;
    }
    EXPECT_DOUBLE_EQ(w.collective_bytes(4), 2 * 2 * 0.75 * bsh);  // a ring moves 2(t-1)/t of each
  }
  EXPECT_TRUE(layer_work(m, tp4, Pass::WeightGrad).collectives.empty());
  EXPECT_TRUE(layer_work(m, Microbatch{}, Pass::Forward).collectives.empty());
}

// Sequence parallelism (Korthikanti et al. 2022, §4.2.2): each allreduce becomes an
// all-gather + reduce-scatter of the same tensor, and the backward all-gathers the inputs
// of the column-parallel QKV and MLP-in GEMMs again for their weight gradients: per layer
// 2 AG + 2 RS forward, 4 AG + 2 RS backward (3 allreduce volumes instead of 2).
TEST(TransformerFlops, SequenceParallelCollectivesAndTheBackwardRegather) {
  const ModelSpec m = tiny_gpt();
  const Microbatch sp{2, 4, true, 2};
  const double bsh = 2.0 * 128 * 256 * 2;
  auto count = [](const PassWork& w, CollectiveKind kind) {
    return std::count_if(w.collectives.begin(), w.collectives.end(), [&](const Collective& c) { return c.kind == kind; });
  };
  const PassWork f = layer_work(m, sp, Pass::Forward), i = layer_work(m, sp, Pass::InputGrad);
  EXPECT_EQ(count(f, CollectiveKind::AllGather), 2);
  EXPECT_EQ(count(f, CollectiveKind::ReduceScatter), 2);
  EXPECT_EQ(count(i, CollectiveKind::AllGather), 4);
  EXPECT_EQ(count(i, CollectiveKind::ReduceScatter), 2);
  EXPECT_DOUBLE_EQ(f.collective_bytes(4), 4 * 0.75 * bsh);
  EXPECT_DOUBLE_EQ(i.collective_bytes(4), 6 * 0.75 * bsh);
  // The re-gathers run under the input-gradient GEMM of their layer (Megatron overlaps them
  // by default), the input-gradient reduce-scatters under the weight-gradient GEMMs.
  for (const Collective& c : i.collectives) {
    if (c.kind == CollectiveKind::ReduceScatter) {
      EXPECT_TRUE(c.megatron_async) << c.name;
      EXPECT_EQ(c.partner_pass, Pass::WeightGrad) << c.name;
      const PassWork w = layer_work(m, sp, Pass::WeightGrad);
      EXPECT_EQ(w.kernels[static_cast<std::size_t>(c.partner)].kind, KernelKind::Gemm) << c.name;
    } else if (std::string_view(c.name).find("re-gather") != std::string_view::npos) {
      EXPECT_TRUE(c.megatron_async) << c.name;
      EXPECT_EQ(c.partner_pass, Pass::InputGrad) << c.name;
      EXPECT_EQ(std::string_view(i.kernels[static_cast<std::size_t>(c.partner)].name).substr(0, 3),
                std::string_view(c.name).substr(0, 3));  // "mlp ..." under "mlp in dgrad", "qkv ..." under "qkv dgrad"
    } else {
      EXPECT_FALSE(c.megatron_async) << c.name;
    }
  }
}

// The LM head: 2bshV per pass; with TP, the vocabulary-parallel cross entropy allreduces 3
// fp32 values per token (max, target logit, sum of exponentials) and the head's input
// gradient is reduced.
TEST(TransformerFlops, HeadCrossEntropyCollectives) {
  const ModelSpec m = tiny_gpt();
  const PassWork f = head_work(m, Microbatch{2, 4, false, 2}, Pass::Forward);
  ASSERT_EQ(f.collectives.size(), 3u);
  for (const Collective& c : f.collectives) EXPECT_DOUBLE_EQ(c.bytes, 4.0 * 2 * 128) << c.name;
  const PassWork i = head_work(m, Microbatch{2, 4, false, 2}, Pass::InputGrad);
  ASSERT_EQ(i.collectives.size(), 1u);
  EXPECT_EQ(i.collectives[0].kind, CollectiveKind::AllReduce);
  EXPECT_DOUBLE_EQ(i.collectives[0].bytes, 2.0 * 128 * 256 * 2);
  // The head GEMM of a 1000-row vocabulary on 4 ranks: 250 rows each.
  for (const Kernel& k : f.kernels) {
    if (k.kind == KernelKind::Gemm) {
      EXPECT_DOUBLE_EQ(k.gemm.m, 256);
      EXPECT_DOUBLE_EQ(k.gemm.n, 250);
      EXPECT_DOUBLE_EQ(k.gemm.k, 256);
      EXPECT_DOUBLE_EQ(k.flops, 2.0 * 256 * 250 * 256);
    }
  }
}

// One training iteration without recomputation is 6 x (GEMM weights) x tokens, plus the
// attention products 12·B·s²·(a·d) per layer (3 passes x 4bs²·a·d): exact, not approximate.
TEST(TransformerFlops, IterationIsSixParamsTokensPlusAttention) {
  for (const ModelSpec& m : {tiny_gpt(), gpt3_13b(), llama2(32, 4096, 32, 32, 11008), llama2(80, 8192, 64, 8, 28672)}) {
    const std::int64_t batch = 3;
    double flops = 0;
    for (Pass pass : {Pass::Forward, Pass::InputGrad, Pass::WeightGrad})
      flops += m.layers * layer_flops(m, batch, pass) + head_flops(m, batch, pass);
    const double tokens = static_cast<double>(batch) * m.seq_len;
    const double six_n_t = 6 * static_cast<double>(matmul_parameters(m)) * tokens;
    const double width = m.head_dim > 0 ? m.heads * m.head_dim : m.hidden;  // a·d
    const double attention = 12.0 * batch * m.seq_len * m.seq_len * width * m.layers;
    EXPECT_NEAR(flops, six_n_t + attention, 1e-12 * flops) << m.name;
    // The attention term is the whole difference, and a small one at these lengths.
    EXPECT_LT(attention / flops, 0.15) << m.name;
  }
}

// Narayanan et al. eq. (3) is our count with 4 forward-equivalents per layer (full
// recomputation) and 3 for the LM head.
TEST(TransformerFlops, MegatronEquationThreeIsRecomputedCount) {
  ModelSpec m = gpt3_13b();
  m.hidden = 5120;  // the equation assumes a·d = h and f = 4h
  m.head_dim = 0;
  m.ffn_hidden = 4 * 5120;
  const std::int64_t batch = 1536;
  const double ours = 4 * m.layers * layer_flops(m, batch, Pass::Forward) + 3 * head_flops(m, batch, Pass::Forward);
  EXPECT_NEAR(megatron_flops_per_iteration(m, batch), ours, 1e-12 * ours);
}

TEST(TransformerParameters, PublishedCounts) {
  // GPT-3 13B (Brown et al. 2020, Table 2.1): 13.0B.
  EXPECT_NEAR(static_cast<double>(total_parameters(gpt3_13b())), 13.0e9, 0.01 * 13.0e9);
  // Llama-2 7B: 6,738,415,616 parameters in the released checkpoint, exactly.
  EXPECT_EQ(total_parameters(llama2(32, 4096, 32, 32, 11008)), 6'738'415'616);
  // Llama-2 70B (GQA, 8 kv heads): 68,976,648,192.
  EXPECT_EQ(total_parameters(llama2(80, 8192, 64, 8, 28672)), 68'976'648'192);
}

// Narayanan et al. eq. (2): P = 12lh²(1 + 13/(12h) + (V + s)/(12lh)), which leaves out the
// final LayerNorm (2h).
TEST(TransformerParameters, MegatronEquationTwo) {
  ModelSpec m = gpt3_13b();
  m.hidden = 5120;
  m.head_dim = 0;
  m.ffn_hidden = 4 * 5120;
  m.vocab = 51200;
  const std::int64_t l = m.layers, h = m.hidden, V = m.vocab, s = m.seq_len;
  EXPECT_EQ(total_parameters(m) - 2 * h, 12 * l * h * h + 13 * l * h + (V + s) * h);
  // Table 1's 1T row: 1008.0 billion.
  m.layers = 128;
  m.hidden = 25600;
  m.heads = 160;
  m.kv_heads = 160;
  m.ffn_hidden = 4 * 25600;
  EXPECT_NEAR(static_cast<double>(total_parameters(m)) / 1e9, 1008.0, 0.05);
}

TEST(TransformerParameters, TensorParallelShards) {
  const ModelSpec m = tiny_gpt();
  const std::int64_t h = m.hidden;
  // Replicated per rank: two LayerNorms (4h) and the row-parallel biases (2h).
  const std::int64_t replicated = 6 * h;
  EXPECT_EQ(4 * (layer_parameters_per_rank(m, 4) - replicated), layer_parameters(m) - replicated);
  EXPECT_EQ(embedding_parameters_per_rank(m, 8), 125 * h + m.seq_len * h);  // 1000 / 8 rows
  EXPECT_EQ(embedding_parameters_per_rank(m, 3), 334 * h + m.seq_len * h);  // rounded up
  EXPECT_EQ(head_parameters_per_rank(m, 2), 2 * h);                         // tied: the norm
  ModelSpec untied = m;
  untied.tied_embeddings = false;
  EXPECT_EQ(head_parameters_per_rank(untied, 2), 2 * h + 500 * h);
}

// Korthikanti et al. 2022, Table 2, with s = 128, b = 2, h = 256, a = 8 (bf16).
TEST(TransformerActivations, KorthikantiTableTwo) {
  const ModelSpec m = tiny_gpt();
  const std::int64_t s = 128, b = 2, h = 256, a = 8, sbh = s * b * h;
  auto act = [&](int t, bool sp, Recompute r) { return layer_activation_bytes(m, Microbatch{b, t, sp, 2}, r); };
  EXPECT_EQ(act(1, false, Recompute::None), 34 * sbh + 5 * a * s * s * b);
  EXPECT_EQ(act(4, false, Recompute::None), 10 * sbh + 24 * sbh / 4 + 5 * a * s * s * b / 4);
  EXPECT_EQ(act(4, true, Recompute::None), (34 * sbh + 5 * a * s * s * b) / 4);
  EXPECT_EQ(act(1, false, Recompute::Selective), 34 * sbh);
  EXPECT_EQ(act(4, false, Recompute::Selective), 10 * sbh + 24 * sbh / 4);
  EXPECT_EQ(act(4, true, Recompute::Selective), 34 * sbh / 4);
  EXPECT_EQ(act(4, false, Recompute::Full), 2 * sbh);
  EXPECT_EQ(act(4, true, Recompute::Full), 2 * sbh / 4);
  // Zero Bubble Table 1: W still needs 32sbh of the 34sbh + 5as²b.
  EXPECT_EQ(layer_weight_grad_bytes(m, Microbatch{b, 1, false, 2}), 32 * sbh);
}

TEST(TransformerActivations, EmbeddingHeadAndFlashAttention) {
  const ModelSpec m = tiny_gpt();
  const std::int64_t s = 128, b = 2, h = 256, a = 8, V = 1000, sbh = s * b * h;
  EXPECT_EQ(embedding_activation_bytes(m, Microbatch{b, 1, false, 2}), sbh);  // dropout mask
  EXPECT_EQ(head_activation_bytes(m, Microbatch{b, 2, false, 2}), 4 * sbh + 4 * s * b * V / 2);
  EXPECT_EQ(head_weight_grad_bytes(m, Microbatch{b, 2, false, 2}), 2 * sbh + 2 * s * b * V / 2);
  // Flash attention: no s² tensors, the fp32 log-sum-exp (4 bytes per row and head) instead.
  Microbatch flash{b, 1, false, 2, true};
  EXPECT_EQ(layer_activation_bytes(m, flash, Recompute::None), 34 * sbh + 4 * s * b * a);
  EXPECT_EQ(layer_activation_bytes(m, flash, Recompute::Selective), 34 * sbh + 4 * s * b * a);
  // Same forward FLOPs; the backward recomputes QK^T (2bs²h more).
  EXPECT_DOUBLE_EQ(layer_work(m, flash, Pass::Forward).flops(), layer_flops(m, b, Pass::Forward));
  EXPECT_DOUBLE_EQ(layer_work(m, flash, Pass::InputGrad).flops(),
                   layer_flops(m, b, Pass::InputGrad) + 2.0 * b * s * s * h);
}

TEST(TransformerBytes, ElementWiseKernelsCarryNoFlops) {
  const PassWork w = layer_work(tiny_gpt(), Microbatch{2, 1, false, 2}, Pass::Forward);
  ASSERT_FALSE(w.kernels.empty());
  int attention = 0;
  for (const Kernel& k : w.kernels) {
    EXPECT_GT(k.bytes, 0) << k.name;
    if (k.kind == KernelKind::Memory) {
      EXPECT_EQ(k.flops, 0) << k.name;
    } else {
      EXPECT_DOUBLE_EQ(k.flops, k.gemm.flops()) << k.name;  // every GEMM's FLOPs are its shape's
    }
    attention += k.gemm.batch > 1 ? 1 : 0;
  }
  EXPECT_EQ(attention, 2);  // QK^T and P·V, batched over b x heads
  // Softmax reads and writes the b·a·s² scores once each (2 bytes per element).
  for (const Kernel& k : w.kernels)
    if (k.name == "softmax") {
      EXPECT_DOUBLE_EQ(k.bytes, 2.0 * 2 * 2 * 8 * 128 * 128);
    }
}

// Every kernel of a known shape, counted by hand: tiny GPT (h 256, 8 heads of 32, f 1024,
// s 128), b = 2 (n = 256 tokens), one rank, bf16.
TEST(TransformerBytes, ExactKernelsOfAKnownShape) {
  const ModelSpec m = tiny_gpt();
  const double n = 256, h = 256, f = 1024, s = 128, e = 2, scores = 2.0 * 8 * 128 * 128;
  struct Expect {
    const char* name;
    double flops, bytes, M, N, K, batch;
  };
  const Expect forward[] = {
      {"norm", 0, 2 * e * n * h, 0, 0, 0, 1},
      {"qkv", 2 * n * h * 3 * h, e * (n * h + h * 3 * h + n * 3 * h), n, 3 * h, h, 1},
      {"attention scores", 2 * s * s * 32 * 16, e * (n * h + n * h + scores), s, s, 32, 16},
      {"softmax", 0, 2 * e * scores, 0, 0, 0, 1},
      {"attention dropout", 0, (2 * e + 1) * scores, 0, 0, 0, 1},
      {"attention values", 2 * s * 32 * s * 16, e * (scores + n * h + n * h), s, 32, s, 16},
      {"attention output", 2 * n * h * h, e * (n * h + h * h + n * h), n, h, h, 1},
      {"bias dropout add", 0, (3 * e + 1) * n * h, 0, 0, 0, 1},
      {"norm", 0, 2 * e * n * h, 0, 0, 0, 1},
      {"mlp in", 2 * n * h * f, e * (n * h + h * f + n * f), n, f, h, 1},
      {"gelu", 0, 2 * e * n * f, 0, 0, 0, 1},
      {"mlp out", 2 * n * f * h, e * (n * f + f * h + n * h), n, h, f, 1},
      {"bias dropout add", 0, (3 * e + 1) * n * h, 0, 0, 0, 1},
  };
  const PassWork w = layer_work(m, Microbatch{2, 1, false, 2}, Pass::Forward);
  ASSERT_EQ(w.kernels.size(), std::size(forward));
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    const Kernel& k = w.kernels[i];
    const Expect& x = forward[i];
    EXPECT_EQ(k.name, x.name) << i;
    EXPECT_DOUBLE_EQ(k.flops, x.flops) << x.name;
    EXPECT_DOUBLE_EQ(k.bytes, x.bytes) << x.name;
    if (x.M > 0) {
      EXPECT_EQ(k.kind, KernelKind::Gemm) << x.name;
      EXPECT_DOUBLE_EQ(k.gemm.m, x.M) << x.name;
      EXPECT_DOUBLE_EQ(k.gemm.n, x.N) << x.name;
      EXPECT_DOUBLE_EQ(k.gemm.k, x.K) << x.name;
      EXPECT_DOUBLE_EQ(k.gemm.batch, x.batch) << x.name;
    }
  }
  // Weight gradients: dW[k x o] = Xᵀ·dY, K = the tokens; fused into fp32 main gradients
  // (read-modify-write 8 bytes per weight), or unfused: the GEMM writes its bf16 gradient
  // and a separate kernel adds it in (2 + 8 bytes per weight).
  const PassWork wg = layer_work(m, Microbatch{2, 1, false, 2}, Pass::WeightGrad);
  ASSERT_EQ(wg.kernels.size(), 4u);
  EXPECT_EQ(wg.kernels[0].name, "mlp out wgrad");
  EXPECT_DOUBLE_EQ(wg.kernels[0].gemm.m, f);
  EXPECT_DOUBLE_EQ(wg.kernels[0].gemm.n, h);
  EXPECT_DOUBLE_EQ(wg.kernels[0].gemm.k, n);
  EXPECT_DOUBLE_EQ(wg.kernels[0].bytes, e * (n * f + n * h) + 8 * f * h);
  Microbatch unfused{2, 1, false, 2};
  unfused.fused_grad_accumulation = false;
  const PassWork wu = layer_work(m, unfused, Pass::WeightGrad);
  ASSERT_EQ(wu.kernels.size(), 8u);
  EXPECT_DOUBLE_EQ(wu.kernels[0].bytes, e * (n * f + n * h) + e * f * h);
  EXPECT_EQ(wu.kernels[1].name, "gradient accumulation");
  EXPECT_DOUBLE_EQ(wu.kernels[1].bytes, (e + 8) * f * h);
  EXPECT_DOUBLE_EQ(wu.flops(), wg.flops());
  // The input gradient's four attention products each read one s x s operand.
  const PassWork ig = layer_work(m, Microbatch{2, 1, false, 2}, Pass::InputGrad);
  double attention_bytes = 0;
  for (const Kernel& k : ig.kernels) {
    if (k.kind == KernelKind::Gemm && k.gemm.batch > 1) attention_bytes += k.bytes;
  }
  EXPECT_DOUBLE_EQ(attention_bytes, 4 * e * (scores + n * h + n * h));
}

// Causal masking: a fused kernel skips the masked half of the scores (the forward's QKᵀ
// and ·V, the backward's five products); the GEMMs of the layer are unchanged.
TEST(TransformerFlops, CausalFlashAttentionHalvesTheAttentionFlops) {
  const ModelSpec m = tiny_gpt();
  const double b = 2, s = 128, h = 256;
  Microbatch full{2, 1, false, 2, true}, causal{2, 1, false, 2, true, true};
  EXPECT_DOUBLE_EQ(layer_work(m, full, Pass::Forward).flops() - layer_work(m, causal, Pass::Forward).flops(),
                   0.5 * 4 * b * s * s * h);
  EXPECT_DOUBLE_EQ(layer_work(m, full, Pass::InputGrad).flops() - layer_work(m, causal, Pass::InputGrad).flops(),
                   0.5 * 10 * b * s * s * h);
  // Unfused attention computes every product and masks after: causal changes nothing.
  Microbatch plain{2, 1, false, 2, false, true};
  EXPECT_DOUBLE_EQ(layer_work(m, plain, Pass::Forward).flops(), layer_flops(m, 2, Pass::Forward));
  for (const Kernel& k : layer_work(m, causal, Pass::Forward).kernels) {
    if (k.name == "flash attention") {
      EXPECT_EQ(k.kind, KernelKind::FusedAttention);
    }
  }
}

TEST(TransformerChecks, Errors) {
  ModelSpec m = tiny_gpt();
  EXPECT_EQ(error_of([&] { check_model(m, 3, "analytical"); }),
            "analytical: tp (3) must divide the attention heads (8) of model tiny");
  m.ffn_hidden = 1022;
  EXPECT_EQ(error_of([&] { check_model(m, 4, "analytical"); }),
            "analytical: tp (4) must divide ffn_hidden (1022) of model tiny");
  m = tiny_gpt();
  m.kv_heads = 3;
  EXPECT_EQ(error_of([&] { check_model(m, 1, "analytical"); }), "analytical: model tiny: kv_heads (3) must divide heads (8)");
  m.kv_heads = 2;
  EXPECT_EQ(error_of([&] { check_model(m, 8, "x"); }), "");  // each rank keeps one kv head
  m.kv_heads = 4;
  m.heads = 8;
  m.hidden = 250;
  EXPECT_EQ(error_of([&] { check_model(m, 1, "x"); }),
            "x: model tiny: heads (8) must divide hidden (250), or head_dim must be given");
  m.head_dim = 32;
  EXPECT_EQ(error_of([&] { check_model(m, 1, "x"); }), "");
  m.head_dim = -1;
  EXPECT_THAT(error_of([&] { check_model(m, 1, "x"); }), HasSubstr("head_dim must be positive (or 0 for hidden / heads)"));
  m = tiny_gpt();
  m.layers = 0;
  EXPECT_EQ(error_of([&] { check_model(m, 1, "x"); }), "x: model tiny: layers must be positive, got 0");
  m = tiny_gpt();
  EXPECT_EQ(error_of([&] { check_model(m, 0, "x"); }), "x: tp must be positive, got 0");
  m.kv_heads = -1;
  EXPECT_THAT(error_of([&] { check_model(m, 1, "x"); }), HasSubstr("kv_heads must be positive (or 0 for = heads)"));
  m.kv_heads = 0;  // 0 = multi-head attention
  EXPECT_DOUBLE_EQ(layer_flops(m, 1, Pass::Forward), layer_flops(tiny_gpt(), 1, Pass::Forward));
}

TEST(TransformerChecks, Dtypes) {
  EXPECT_EQ(dtype_bytes("bf16"), 2);
  EXPECT_EQ(dtype_bytes("fp16"), 2);
  EXPECT_EQ(dtype_bytes("fp8"), 2);
  EXPECT_EQ(dtype_bytes("fp32"), 4);
  EXPECT_EQ(dtype_bytes("tf32"), 4);
  EXPECT_EQ(error_of([] { dtype_bytes("fp12"); }), "dtype: unknown dtype 'fp12'; expected bf16, fp16, fp8, tf32 or fp32");
  EXPECT_EQ(recompute_name(Recompute::Selective), "selective");
}

}  // namespace
}  // namespace pipesim
