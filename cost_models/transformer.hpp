#pragma once
// What a transformer asks of a GPU, counted, with no hardware in it: FLOPs and HBM bytes
// of every kernel of a layer, the embedding and the LM head; parameters; activation
// memory. cost_models/analytical.hpp turns these into seconds; docs/cost-model.md has
// the derivations.
//
// Notation (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", arXiv 2205.05198): b sequences of length s per micro-batch,
// hidden h, a heads of dimension d (h/a unless ModelSpec::head_dim says otherwise; the
// formulas below are written for a·d = h), kv key/value heads (GQA), ffn width f,
// vocabulary V, tensor-parallel degree t. FLOPs count a multiply-add as 2.
//
// Forward FLOPs of one layer (Narayanan et al. 2021, arXiv 2104.04473, §5.1 / appendix):
//   QKV 2bsh(h + 2·kv·d)   scores QK^T 2bs²h   attention·V 2bs²h   output 2bsh²
//   MLP 4bshf (GeLU, two matrices) or 6bshf (SwiGLU, three)
//   = 24bsh² + 4bs²h for GPT (kv = a, f = 4h), the paper's per-layer count.
// Backward, split as Zero Bubble does (Qi et al. 2023, arXiv 2401.10241, Table 1):
//   input gradient I: dX = dY·W^T per weight GEMM (= its forward FLOPs), and both
//     operands' gradients of the two attention products (2x their forward FLOPs, they
//     have no weights): 24bsh² + 8bs²h for GPT.
//   weight gradient W: dW = X^T·dY per weight GEMM (= its forward FLOPs): 24bsh².
#include <cstdint>
#include <string_view>
#include <vector>

#include "cost_models/gemm_model.hpp"
#include "cost_models/model_spec.hpp"

namespace pipesim {

enum class Recompute : std::uint8_t {
  None,       // keep every activation the backward needs
  Selective,  // recompute the attention core (QK^T, softmax, dropout, ·V): drops the s² terms
  Full,       // keep each layer's input only, recompute the layer in the backward
};

std::string_view recompute_name(Recompute r);  // "none", "selective", "full"
// The Recompute named `text`; InputError "<what>: expected none, selective or full, got 'x'".
Recompute parse_recompute(std::string_view text, std::string_view what);

// Bytes per element of a dropout mask (PyTorch keeps it as uint8 / bool).
inline constexpr double kDropoutMaskBytes = 1;

// Key/value heads (= heads without GQA), head dimension (hidden / heads unless given), and
// the key/value heads one of t ranks holds (t > kv replicates one on each rank).
int kv_heads(const ModelSpec& m);
int head_dim(const ModelSpec& m);
int kv_heads_per_rank(const ModelSpec& m, int tp);

// Storage bytes of one element of `dtype` ("bf16", "fp16": 2; "fp32", "tf32": 4; "fp8": 2,
// since fp8 training keeps weights and activations in bf16 outside the GEMMs). InputError
// naming the accepted dtypes otherwise.
int dtype_bytes(std::string_view dtype);

// One micro-batch as one tensor-parallel rank sees it.
struct Microbatch {
  std::int64_t sequences = 1;      // b
  int tp = 1;                      // t
  bool sequence_parallel = false;  // norms and dropouts sharded along the sequence
  int element_bytes = 2;           // activations and weights
  // Fused attention (FlashAttention, Dao et al. 2022): QK^T, softmax, dropout and ·V in one
  // kernel that never writes the s x s scores to HBM; its backward recomputes QK^T (5
  // products instead of 4) and it keeps only the fp32 log-sum-exp per row and head.
  bool flash_attention = false;
  // Causal (decoder) masking. Fused kernels skip the masked upper triangle: half the
  // attention FLOPs. Unfused attention computes all s x s products and masks them after.
  bool causal = false;
  // Weight gradients accumulate into main gradients of main_grad_bytes per element across
  // micro-batches: inside the weight-gradient GEMM (Megatron's gradient accumulation fusion,
  // since 2022: a read-modify-write of the main gradient), or, unfused, the GEMM writes a
  // low-precision gradient and a separate kernel adds it in (read it, read-modify-write the
  // main gradient).
  bool fused_grad_accumulation = true;
  int main_grad_bytes = 4;
};

enum class Pass : std::uint8_t { Forward, InputGrad, WeightGrad };

enum class KernelKind : std::uint8_t {
  Gemm,            // a (batched) matrix product with a shape: cost_models/gemm_model.hpp
  FusedAttention,  // a flash-attention kernel: Efficiency::attention of the peak
  Memory,          // element-wise or reduction: HBM bytes only
};

// One kernel (or a fused group) of a pass, on one tensor-parallel rank.
struct Kernel {
  std::string_view name;
  KernelKind kind = KernelKind::Memory;
  double flops = 0;  // matmul FLOPs; 0 for memory-bound kernels
  double bytes = 0;  // HBM bytes read + written
  GemmShape gemm;    // KernelKind::Gemm: its M, N, K and batch (flops = 2·M·N·K·batch)
};

enum class CollectiveKind : std::uint8_t { AllReduce, AllGather, ReduceScatter };

// One tensor-parallel collective of a pass on the t ranks of a layer. Megatron (Shoeybi et
// al. 2019; Korthikanti et al. 2022, §4.2.2): per layer, 2 allreduces of b·s·h in the
// forward (after the row-parallel attention output and MLP output) and 2 in the input
// gradient (the conjugates before the column-parallel QKV and MLP input). With sequence
// parallelism each allreduce is a reduce-scatter + all-gather pair, and the backward
// all-gathers the column-parallel layers' inputs again for their weight gradients (they are
// not kept): 2 more all-gathers. The vocabulary-parallel embedding sums its lookup (1 in the
// forward), the LM head reduces its input gradient (and gathers its input with SP), and the
// vocabulary-parallel cross entropy allreduces 3 fp32 values per token (max, target logit,
// sum of exponentials).
struct Collective {
  std::string_view name;
  CollectiveKind kind = CollectiveKind::AllReduce;
  double bytes = 0;  // the whole tensor on one rank (the gathered size for AG / RS)
  // The GEMM it can run under: the kernel `partner` (index into that pass's kernels) of
  // pass `partner_pass`; -1: none. `megatron_async`: Megatron overlaps it without
  // --tp-comm-overlap (the column-parallel layers' backward: the input-gradient reduction
  // under the weight-gradient GEMM, the SP re-gather under the input-gradient GEMM).
  int partner = -1;
  Pass partner_pass = Pass::Forward;
  bool megatron_async = false;
};

struct PassWork {
  std::vector<Kernel> kernels;
  std::vector<Collective> collectives;  // empty when t = 1
  double flops() const;
  double bytes() const;
  // Bytes the pass's collectives move per rank in a ring of t (2(t-1)/t for an allreduce,
  // (t-1)/t for an all-gather or reduce-scatter, of their tensors).
  double collective_bytes(int tp) const;
};

// Per TP rank, one micro-batch. Recomputation is the caller's business (it reruns the
// forward).
PassWork layer_work(const ModelSpec& m, const Microbatch& mb, Pass pass);
// Token (+ position) embedding lookup, dropout; its weight gradient is a scatter-add.
PassWork embedding_work(const ModelSpec& m, const Microbatch& mb, Pass pass);
// Final norm, LM head GEMM (2bshV forward), vocabulary-parallel cross entropy.
PassWork head_work(const ModelSpec& m, const Microbatch& mb, Pass pass);

// Unsharded FLOPs of one layer / the LM head for b sequences (t = 1): the formulas above.
double layer_flops(const ModelSpec& m, std::int64_t b, Pass pass);
double head_flops(const ModelSpec& m, std::int64_t b, Pass pass);
// Megatron's FLOPs per iteration (Narayanan et al. 2021, eq. 3), which assumes full
// recomputation (4 forward-equivalents per layer, 3 for the LM head) and GPT shapes:
// 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) for a batch of B sequences.
double megatron_flops_per_iteration(const ModelSpec& m, std::int64_t batch);

// Parameters (whole model, no sharding).
std::int64_t layer_parameters(const ModelSpec& m);      // attention + MLP + 2 norms
std::int64_t embedding_parameters(const ModelSpec& m);  // tokens (+ positions)
std::int64_t head_parameters(const ModelSpec& m);       // final norm (+ LM head if untied)
std::int64_t total_parameters(const ModelSpec& m);
// Weights every token multiplies (all GEMM weights and the LM head): the N of 6·N·tokens.
std::int64_t matmul_parameters(const ModelSpec& m);

// Parameters one tensor-parallel rank holds (Megatron's split: column-parallel weights and
// their biases, row-parallel weights and the vocabulary are cut t ways; norms, row-parallel
// biases and position embeddings are replicated). The vocabulary is rounded up to t.
std::int64_t layer_parameters_per_rank(const ModelSpec& m, int tp);
std::int64_t embedding_parameters_per_rank(const ModelSpec& m, int tp);
std::int64_t head_parameters_per_rank(const ModelSpec& m, int tp);

// Activation bytes one layer keeps per micro-batch from its forward to its backward
// (Korthikanti et al. 2022, §4 and Table 2, generalised to GQA and SwiGLU):
//   none       sbh(34 + 5as/h)            t-way TP: sbh(10 + 24/t + 5as/(ht))   +SP: all /t
//   selective  34sbh                      t-way TP: sbh(10 + 24/t)              +SP: 34sbh/t
//   full       2sbh (the layer input)     +SP: 2sbh/t
// (bf16; the dropout masks are 1 byte per element whatever the dtype). With flash
// attention the 5as²b term is replaced by the 4·a·s·b bytes of the log-sum-exp.
std::int64_t layer_activation_bytes(const ModelSpec& m, const Microbatch& mb, Recompute r);
// What the weight-gradient pass W still needs once I is done: the inputs of the weight
// GEMMs and the output gradients I produced for them; 32sbh for GPT (Zero Bubble's M_W).
std::int64_t layer_weight_grad_bytes(const ModelSpec& m, const Microbatch& mb);
// First stage: the embedding dropout mask (sbh bytes, /t with SP).
std::int64_t embedding_activation_bytes(const ModelSpec& m, const Microbatch& mb);
// Last stage: final norm input and LM head input (sbh each, /t with SP) and the fp32
// logits the cross entropy keeps (4sbV/t, Korthikanti §4.3).
std::int64_t head_activation_bytes(const ModelSpec& m, const Microbatch& mb);
// ... of which W still needs the head input and the logits' gradient.
std::int64_t head_weight_grad_bytes(const ModelSpec& m, const Microbatch& mb);

// InputError unless the shape is consistent (positive sizes, heads divide hidden, kv
// heads divide heads) and splits t ways (t divides heads and ffn; t and kv divide one
// another). `who` starts the message, e.g. "analytical".
// Sequences per micro-batch the formulas take (with check_model's size bounds, every count
// then fits in 64 bits).
inline constexpr int kMaxMicroBatchSize = 4096;

void check_model(const ModelSpec& m, int tp, std::string_view who);

}  // namespace pipesim
