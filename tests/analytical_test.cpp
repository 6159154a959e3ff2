// cost_models/analytical: stage times, partitioning, tensor parallelism, links,
// activations, optimizer step, errors, and the efficiency fit.
#include "input_error.hpp"
#include "cost_models/analytical.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "cost_models/efficiency_fit.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;

ModelSpec tiny_gpt() {
  ModelSpec m;
  m.name = "tiny";
  m.layers = 10;
  m.hidden = 256;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = 1024;
  m.seq_len = 128;
  m.vocab = 1024;  // a multiple of 128 x tp: no padding
  return m;
}

// 2 nodes x 4 GPUs: 100 TFLOP/s bf16, 1 TB/s HBM, 100 GB/s inside a node, 10 GB/s across.
ClusterSpec tiny_cluster() {
  ClusterSpec c;
  c.gpu.name = "gpu";
  c.gpu.peak_flops = {{"bf16", 100e12}};
  c.gpu.hbm_bandwidth = 1e12;
  c.gpu.memory_bytes = 80LL << 30;
  c.nodes = 2;
  c.gpus_per_node = 4;
  c.intra = LinkSpec{"fast", 1 * kNsPerUs, 100e9, ""};
  c.inter = LinkSpec{"slow", 5 * kNsPerUs, 10e9, ""};
  return c;
}

AnalyticalConfig tiny(int p = 4, int tp = 1) {
  AnalyticalConfig c;
  c.model = tiny_gpt();
  c.cluster = tiny_cluster();
  c.pipeline_devices = p;
  c.tp = tp;
  c.micro_batch_size = 2;
  return c;
}

double seconds(Tick t) { return ticks_to_seconds(t); }
Op F(int stage) { return make_op(OpKind::F, stage, 0); }
Op B(int stage) { return make_op(OpKind::B, stage, 0); }
Op I(int stage) { return make_op(OpKind::I, stage, 0); }
Op W(int stage) { return make_op(OpKind::W, stage, 0); }
OpScale stages(int n, int split = 1) { return OpScale{1, split, n}; }

TEST(AnalyticalPartition, BalancedRemainderGoesToStagesAfterTheFirst) {
  const AnalyticalCostModel model(tiny());
  auto layers = [&](int n) {
    std::vector<int> out;
    for (int s = 0; s < n; ++s) out.push_back(model.layers_of(s, n));
    return out;
  };
  EXPECT_EQ(layers(4), (std::vector<int>{2, 3, 3, 2}));
  EXPECT_EQ(layers(8), (std::vector<int>{1, 2, 2, 1, 1, 1, 1, 1}));
  EXPECT_EQ(layers(12), (std::vector<int>{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(layers(1), (std::vector<int>{10}));
  // The executor cuts a model by the same rule (cost_models/stage_layout.hpp).
  for (int s = 0; s < 4; ++s) EXPECT_EQ(stage_layout(10, s, 4).blocks, model.layers_of(s, 4)) << s;
  EXPECT_EQ(stage_layout(10, 2, 4).first_block, 5);
}

// Megatron's --decoder-first/last-pipeline-num-layers: the first and last pipeline device
// get those layers, the devices between share the rest by the rule, each device's layers
// are cut into its chunks (interleaved stage s on device s mod p) by the rule again.
TEST(AnalyticalPartition, UnevenFirstAndLastDevices) {
  AnalyticalConfig c = tiny(4);  // 10 layers on 4 devices
  c.partition.first = 1;
  c.partition.last = 1;
  const AnalyticalCostModel model(c);
  auto layers = [&](int n) {
    std::vector<int> out;
    for (int s = 0; s < n; ++s) out.push_back(model.layers_of(s, n));
    return out;
  };
  EXPECT_EQ(layers(4), (std::vector<int>{1, 4, 4, 1}));
  // v = 2: device 1 has 4 layers in 2 chunks (stages 1 and 5), device 0 has 1 (stages 0, 4).
  EXPECT_EQ(layers(8), (std::vector<int>{0, 2, 2, 0, 1, 2, 2, 1}));
  c.partition.last = -1;  // only the first: 9 layers over the other 3 devices
  EXPECT_EQ(AnalyticalCostModel(c).layers_of(3, 4), 3);
  c.partition.first = 0;  // an embedding-only first stage; 10 layers over devices 1-3 by the rule: 3, 4, 3
  EXPECT_EQ(AnalyticalCostModel(c).layers_of(0, 4), 0);
  EXPECT_EQ(AnalyticalCostModel(c).layers_of(1, 4), 3);
  EXPECT_EQ(AnalyticalCostModel(c).layers_of(2, 4), 4);
  c.partition.first = 6;
  c.partition.last = 5;
  EXPECT_EQ(error_of([&] { AnalyticalCostModel{c}; }),
            "analytical: partition: first/last pipeline-stage layers (6 + 5) exceed the model's 10 layers");
  c.pipeline_devices = 2;
  c.partition.first = 3;
  c.partition.last = 3;
  EXPECT_EQ(error_of([&] { AnalyticalCostModel{c}; }),
            "analytical: partition: first + last pipeline-stage layers must add up to the model's 10 layers with 2 "
            "pipeline devices");
  c.pipeline_devices = 1;
  EXPECT_EQ(error_of([&] { AnalyticalCostModel{c}; }),
            "analytical: partition: first/last pipeline-stage layers need at least 2 pipeline devices");
}

TEST(AnalyticalPartition, CustomPartition) {
  AnalyticalConfig c = tiny();
  c.partition.layers = {1, 4, 4, 1};
  const AnalyticalCostModel model(c);
  EXPECT_EQ(model.layers_of(1, 4), 4);
  const double layer_f = model.layer_times().forward;
  EXPECT_NEAR(seconds(model.compute_time(F(1), stages(4))), 4 * layer_f, 1e-9);
  EXPECT_NEAR(seconds(model.compute_time(F(2), stages(4))), 4 * layer_f, 1e-9);
  EXPECT_EQ(error_of([&] { model.compute_time(F(0), stages(8)); }),
            "analytical: partition: 4 entries, but the schedule has 8 stages");
  c.partition.layers = {1, 4, 4};
  EXPECT_EQ(error_of([&] { AnalyticalCostModel{c}; }), "analytical: partition: sums to 9 layers, but the model has 10");
  c.partition.layers = {6, -1, 5};
  EXPECT_EQ(error_of([&] { AnalyticalCostModel{c}; }), "analytical: partition: entry 1 must be >= 0, got -1");
}

TEST(AnalyticalTimes, StagesAddEmbeddingAndHead) {
  const AnalyticalCostModel model(tiny());
  const LayerTimes& l = model.layer_times();
  const OpScale sc = stages(4);
  // Middle stages: layers x layer time (ns rounding).
  EXPECT_NEAR(seconds(model.compute_time(F(1), sc)), 3 * l.forward, 1e-9);
  EXPECT_NEAR(seconds(model.compute_time(I(1), sc)), 3 * l.input_grad, 1e-9);
  EXPECT_NEAR(seconds(model.compute_time(W(1), sc)), 3 * l.weight_grad, 1e-9);
  EXPECT_LE(std::abs(model.compute_time(B(1), sc) - model.compute_time(I(1), sc) - model.compute_time(W(1), sc)), 1);
  // Stage 0 and stage 3 both have 2 layers; the embedding and the LM head come on top.
  EXPECT_GT(model.compute_time(F(0), sc), model.compute_time(F(1), sc) * 2 / 3);
  EXPECT_GT(model.compute_time(F(3), sc), model.compute_time(F(0), sc));  // the head outweighs the lookup
  // W is GEMMs only and I has the attention backward too: T_W < T_F < T_I (Zero Bubble).
  EXPECT_LT(l.weight_grad, l.forward);
  EXPECT_LT(l.forward, l.input_grad);
  // Chunks do not rescale: the model is cut into the schedule's num_stages stages.
  EXPECT_EQ(model.compute_time(F(1), OpScale{2, 1, 4}), model.compute_time(F(1), sc));
  // A split micro-batch costs its share.
  EXPECT_LE(std::abs(model.compute_time(F(1), stages(4, 2)) - model.compute_time(F(1), sc) / 2), 1);
}

// Hardware with (practically) unlimited HBM bandwidth: only FLOPs count, so TP divides a
// layer's compute exactly and adds 2 ring allreduces in F and 2 in I.
TEST(AnalyticalTimes, TensorParallelHalvesComputeAndAddsItsCollectives) {
  AnalyticalConfig c1 = tiny(1, 1), c2 = tiny(1, 2), c8 = tiny(1, 8);
  for (AnalyticalConfig* c : {&c1, &c2, &c8}) {
    c->cluster.gpu.hbm_bandwidth = 1e30;
    c->efficiency.tile_m = c->efficiency.tile_n = 1;  // no tile padding, no tile overhead: GEMMs at the ceiling
    c->efficiency.gemm_k_overhead = 0;
  }
  const LayerTimes t1 = AnalyticalCostModel(c1).layer_times(), t2 = AnalyticalCostModel(c2).layer_times();
  EXPECT_NEAR(t2.forward * 2, t1.forward, 1e-12 * t1.forward);
  EXPECT_NEAR(t2.input_grad * 2, t1.input_grad, 1e-12 * t1.input_grad);
  EXPECT_NEAR(t2.weight_grad * 2, t1.weight_grad, 1e-12 * t1.weight_grad);
  EXPECT_EQ(t1.tp_forward, 0);
  const double bytes = 2.0 * 128 * 256 * 2;  // b·s·h bf16
  const double eff = Efficiency{}.network;
  const double ring2 = 2 * 0.5 * bytes / (100e9 * eff) + 2 * 1e-6;  // intra-node
  EXPECT_NEAR(t2.tp_forward, 2 * ring2, 1e-15);
  EXPECT_NEAR(t2.tp_input_grad, 2 * ring2, 1e-15);
  // tp = 8 spans both 4-GPU nodes: the allreduces run on the inter-node link.
  const double ring8 = 2 * 7.0 / 8 * bytes / (10e9 * eff) + 14 * 5e-6;
  EXPECT_NEAR(AnalyticalCostModel(c8).layer_times().tp_forward, 2 * ring8, 1e-15);
}

TEST(AnalyticalTimes, RecomputationAddsToTheBackward) {
  AnalyticalConfig none = tiny(), full = tiny(), selective = tiny();
  full.recompute = Recompute::Full;
  selective.recompute = Recompute::Selective;
  const AnalyticalCostModel n(none), f(full), s(selective);
  const OpScale sc = stages(4);
  const LayerTimes& l = n.layer_times();
  // Full: each of stage 1's 3 layers reruns its forward in I (and so in B).
  EXPECT_NEAR(seconds(f.compute_time(I(1), sc) - n.compute_time(I(1), sc)), 3 * (l.forward + l.tp_forward), 2e-9);
  EXPECT_NEAR(seconds(f.compute_time(B(1), sc) - n.compute_time(B(1), sc)), 3 * (l.forward + l.tp_forward), 2e-9);
  EXPECT_EQ(f.compute_time(F(1), sc), n.compute_time(F(1), sc));
  EXPECT_EQ(f.compute_time(W(1), sc), n.compute_time(W(1), sc));
  // Selective: only the attention core, a fraction of the forward.
  const Tick extra = s.compute_time(B(1), sc) - n.compute_time(B(1), sc);
  EXPECT_GT(extra, 0);
  EXPECT_LT(extra, f.compute_time(B(1), sc) - n.compute_time(B(1), sc));
}

// Which TP collectives are charged: none overlapped (Megatron 2021), the column-parallel
// layers' backward ones under their GEMMs (Megatron's default), or all (--tp-comm-overlap).
TEST(AnalyticalTimes, TensorParallelOverlap) {
  AnalyticalConfig c = tiny(1, 2);
  c.sequence_parallel = true;
  c.tp_overlap = TpOverlap::None;
  const LayerTimes none = AnalyticalCostModel(c).layer_times();
  c.tp_overlap = TpOverlap::Backward;
  const LayerTimes backward = AnalyticalCostModel(c).layer_times();
  c.tp_overlap = TpOverlap::All;
  const LayerTimes all = AnalyticalCostModel(c).layer_times();
  // Sequence parallelism, t = 2: F has 2 AG + 2 RS, I 4 AG + 2 RS (the re-gathers), each half a
  // 2-rank ring of b·s·h bf16 on the intra-node link.
  const double half_ring = 0.5 * (2 * 0.5 * (2.0 * 128 * 256 * 2) / (100e9 * Efficiency{}.network) + 2 * 1e-6);
  EXPECT_NEAR(none.tp_forward, 4 * half_ring, 1e-15);
  EXPECT_NEAR(none.tp_input_grad, 6 * half_ring, 1e-15);
  EXPECT_EQ(none.tp_hidden_in_backward, 0);
  // Backward: the re-gathers hide under the input-gradient GEMMs (only what outlasts them
  // stays), the reduce-scatters under the weight-gradient GEMMs of a fused B.
  EXPECT_EQ(backward.tp_forward, none.tp_forward);
  EXPECT_LT(backward.tp_input_grad, none.tp_input_grad);
  EXPECT_GE(backward.tp_input_grad, 4 * half_ring - 1e-15);  // the 2 gradient all-gathers and 2 reduce-scatters stay in I
  EXPECT_NEAR(backward.tp_hidden_in_backward, 2 * half_ring, 1e-15);  // both fit under their wgrad GEMMs
  EXPECT_LT(all.tp_forward, none.tp_forward);
  EXPECT_LE(all.tp_input_grad, backward.tp_input_grad);
  // B = I + W less what it hides; split I and W hide nothing in W.
  c.tp_overlap = TpOverlap::Backward;
  const AnalyticalCostModel model(c);
  const OpScale sc = stages(1);
  // 10 layers' hidden collectives, and the head's reduce-scatter (at most half a ring).
  const double saved = seconds(model.compute_time(I(0), sc) + model.compute_time(W(0), sc) - model.compute_time(B(0), sc));
  EXPECT_GE(saved, 10 * backward.tp_hidden_in_backward - 3e-9);
  EXPECT_LE(saved, 10 * backward.tp_hidden_in_backward + half_ring + 3e-9);
}

// Without gradient-accumulation fusion every weight gradient is written and added into the
// main gradient by a separate memory-bound kernel (Megatron before 2022).
TEST(AnalyticalTimes, UnfusedGradientAccumulationCostsAMemoryPass) {
  AnalyticalConfig c = tiny(1, 1);
  const LayerTimes fused = AnalyticalCostModel(c).layer_times();
  c.gradient_accumulation_fusion = false;
  const LayerTimes unfused = AnalyticalCostModel(c).layer_times();
  const double weights = 256.0 * 768 + 256 * 256 + 256 * 1024 * 2;  // qkv, output, mlp in and out
  const double pass = weights * (2 + 2 * 2) / (1e12 * Efficiency{}.memory);  // bf16 grad + 2-byte main grads r/w
  EXPECT_NEAR(unfused.weight_grad - fused.weight_grad, pass, 1e-3 * pass + 1e-12);
  EXPECT_EQ(unfused.forward, fused.forward);
}

// Megatron pads the vocabulary to a multiple of 128 x tp: the embedding and head hold the
// padded rows, and the head's GEMMs run on them.
TEST(AnalyticalTimes, VocabularyPadding) {
  AnalyticalConfig c = tiny(4, 2);
  c.model.vocab = 1000;
  const AnalyticalCostModel padded(c);
  EXPECT_EQ(padded.config().model.vocab, 1024);
  EXPECT_EQ(padded.stage_parameters(0, 4) - 2 * layer_parameters_per_rank(c.model, 2), 512 * 256 + 128 * 256);
  c.vocab_multiple = 1;
  EXPECT_EQ(AnalyticalCostModel(c).config().model.vocab, 1000);
}

TEST(AnalyticalOptimizer, StepBytesPerDtype) {
  for (const auto& [dtype, bytes] : {std::pair{"bf16", 42.0}, std::pair{"fp16", 50.0}, std::pair{"fp32", 36.0}}) {
    AnalyticalConfig c = tiny(4, 1);
    c.dtype = dtype;
    c.cluster.gpu.peak_flops[dtype] = 100e12;
    const AnalyticalCostModel model(c);
    const double params = static_cast<double>(model.stage_parameters(1, 4));
    EXPECT_NEAR(seconds(model.compute_time(opt_step(1), stages(4))), params * bytes / (1e12 * Efficiency{}.memory), 2e-9)
        << dtype;
  }
}

TEST(AnalyticalMemory, ActivationsPerStage) {
  AnalyticalConfig c = tiny();
  const AnalyticalCostModel model(c);
  const Microbatch mb{2, 1, false, 2};
  const ModelSpec& m = c.model;
  const std::int64_t layer = layer_activation_bytes(m, mb, Recompute::None);
  const std::int64_t held = layer_weight_grad_bytes(m, mb);
  const ActivationCost mid = model.activation(F(1), stages(4));
  EXPECT_EQ(mid.bytes, 3 * layer);
  EXPECT_EQ(mid.freed_by_input_grad, 3 * (layer - held));
  EXPECT_EQ(model.activation(F(0), stages(4)).bytes, 2 * layer + embedding_activation_bytes(m, mb));
  const ActivationCost last = model.activation(F(3), stages(4));
  EXPECT_EQ(last.bytes, 2 * layer + head_activation_bytes(m, mb));
  EXPECT_EQ(last.freed_by_input_grad, last.bytes - 2 * held - head_weight_grad_bytes(m, mb));
  EXPECT_EQ(model.activation(F(1), stages(4, 2)).bytes, 3 * layer / 2);
  // Full recomputation keeps the layer inputs only, and W needs more than that: I frees nothing.
  c.recompute = Recompute::Full;
  const ActivationCost full = AnalyticalCostModel(c).activation(F(1), stages(4));
  EXPECT_EQ(full.bytes, 3 * layer_activation_bytes(m, mb, Recompute::Full));
  EXPECT_EQ(full.freed_by_input_grad, 0);
}

TEST(AnalyticalLinks, MessagesAndLinkSelectionByNode) {
  // tp = 2 on 4-GPU nodes: devices 0, 1 on node 0; 2, 3 on node 1.
  AnalyticalConfig c = tiny(4, 2);
  const AnalyticalCostModel model(c);
  const std::int64_t full = 2LL * 128 * 256 * 2;
  EXPECT_EQ(model.message_bytes(F(0), stages(4)), full / 2);  // scatter/gather: 1/t per rank
  EXPECT_EQ(model.message_bytes(B(2), stages(4, 2)), full / 4);
  EXPECT_EQ(model.node_of_device(1), 0);
  EXPECT_EQ(model.node_of_device(2), 1);
  const double eff = Efficiency{}.network;
  const TransferCost same = model.transfer(0, 1, 1'000'000);
  EXPECT_EQ(same.occupancy, std::llround(1e6 / (100e9 * eff) * 1e9));
  // Latency + the receivers' all-gather of the other rank's half on the intra-node link.
  EXPECT_EQ(same.latency, 1000 + std::llround(1e6 / (100e9 * eff) * 1e9) + 1000);
  const TransferCost cross = model.transfer(1, 2, 1'000'000);
  EXPECT_EQ(cross.occupancy, std::llround(1e6 / (10e9 * eff) * 1e9));
  EXPECT_EQ(cross.latency, 5000 + std::llround(1e6 / (100e9 * eff) * 1e9) + 1000);
  c.scatter_gather = false;
  const AnalyticalCostModel plain(c);
  EXPECT_EQ(plain.message_bytes(F(0), stages(4)), full);
  EXPECT_EQ(plain.transfer(1, 2, 1'000'000).latency, 5000);
  c.sequence_parallel = true;  // the output is sharded by sequence already
  EXPECT_EQ(AnalyticalCostModel(c).message_bytes(F(0), stages(4)), full / 2);
}

TEST(AnalyticalLinks, BlockingP2pChargesTheSender) {
  AnalyticalConfig c = tiny(4, 1);
  const AnalyticalCostModel async(c);
  c.blocking_p2p = true;
  const AnalyticalCostModel blocking(c);
  const double bytes = 2.0 * 128 * 256 * 2, eff = Efficiency{}.network;
  const double intra = bytes / (100e9 * eff) + 1e-6;  // all 4 devices on node 0
  EXPECT_NEAR(seconds(blocking.compute_time(F(0), stages(4)) - async.compute_time(F(0), stages(4))), intra, 2e-9);
  EXPECT_EQ(blocking.compute_time(F(3), stages(4)), async.compute_time(F(3), stages(4)));  // the last sends nothing
  EXPECT_NEAR(seconds(blocking.compute_time(I(3), stages(4)) - async.compute_time(I(3), stages(4))), intra, 2e-9);
  EXPECT_EQ(blocking.compute_time(I(0), stages(4)), async.compute_time(I(0), stages(4)));
  EXPECT_EQ(blocking.compute_time(W(1), stages(4)), async.compute_time(W(1), stages(4)));
  const TransferCost t = blocking.transfer(0, 1, 1'000'000);
  EXPECT_EQ(t.occupancy, 0);
  EXPECT_EQ(t.latency, 0);
}

TEST(AnalyticalOptimizer, AdamDataParallelAndTiedEmbeddings) {
  AnalyticalConfig c = tiny(4, 1);
  const double mem = c.cluster.gpu.hbm_bandwidth * Efficiency{}.memory, eff = Efficiency{}.network;
  const AnalyticalCostModel one(c);
  const double p1 = static_cast<double>(one.stage_parameters(1, 4));
  EXPECT_EQ(one.stage_parameters(1, 4), 3 * layer_parameters(c.model));
  // bf16 mixed-precision Adam: 42 bytes of HBM traffic per parameter (analytical.cpp).
  EXPECT_NEAR(seconds(one.compute_time(opt_step(1), stages(4))), p1 * 42 / mem, 1e-9);
  // dp = 2: a pipeline fills a 4-GPU node, so the ring crosses nodes on one NIC per GPU.
  c.dp = 2;
  const AnalyticalCostModel two(c);
  const double ring = 2 * 0.5 * p1 * 2 / (10e9 * eff) + 2 * 5e-6;
  EXPECT_NEAR(two.dp_reduce_seconds(1, 4), ring, 1e-12);
  EXPECT_NEAR(seconds(two.compute_time(opt_step(1), stages(4))), p1 * 42 / mem + ring, 1e-9);
  // Overlapped with the last backward: only what outlasts it is left.
  c.overlap_grad_reduce = true;
  const double exposed = std::max(0.0, ring - seconds(two.compute_time(B(1), stages(4))));
  EXPECT_NEAR(seconds(AnalyticalCostModel(c).compute_time(opt_step(1), stages(4))), p1 * 42 / mem + exposed, 2e-9);
  // ZeRO-1: half the update, reduce-scatter + all-gather instead of the allreduce.
  c.overlap_grad_reduce = false;
  c.zero1 = true;
  EXPECT_NEAR(seconds(AnalyticalCostModel(c).compute_time(opt_step(1), stages(4))), p1 / 2 * 42 / mem + ring, 1e-9);
  // Tied embeddings: the first and last stages sum their copies (intra-node: p·tp = 4).
  const AnalyticalCostModel tied(tiny(4, 1));
  const double emb = 1024.0 * 256;
  const double first = static_cast<double>(tied.stage_parameters(0, 4));
  EXPECT_NEAR(seconds(tied.compute_time(opt_step(0), stages(4))), first * 42 / mem + emb * 2 / (100e9 * eff) + 2e-6, 1e-9);
  EXPECT_EQ(tied.stage_parameters(3, 4), 2 * layer_parameters(c.model) + head_parameters(c.model) + 1024 * 256);
}

TEST(AnalyticalOptimizer, GradientSyncSizes) {
  const AnalyticalCostModel model(tiny(4, 1));
  EXPECT_EQ(model.grad_bytes(grad_sync(1), stages(4)), 2 * model.stage_parameters(1, 4));
  EXPECT_EQ(model.allreduce_time(1, 1'000'000), 0);
  const double eff = Efficiency{}.network;
  EXPECT_EQ(model.allreduce_time(2, 1'000'000), std::llround((1e6 / (100e9 * eff) + 2e-6) * 1e9));
}

TEST(AnalyticalEngine, OneFOneBHoldsPMicroBatchesOnStageZero) {
  const AnalyticalCostModel model(tiny(4, 1));
  ScheduleParams params;
  params.p = 4;
  params.m = 8;
  const Schedule s = generate("1f1b", params);
  const SimResult r = simulate(s, model);
  EXPECT_EQ(r.devices[0].peak_activation_bytes, 4 * model.activation(F(0), scale_of(s)).bytes);
  const Tick per_mb = model.compute_time(F(0), scale_of(s)) + model.compute_time(B(0), scale_of(s));
  EXPECT_GT(r.makespan, 8 * per_mb);
  // Interleaved: 8 virtual stages of 1-2 layers each, on the same 4 devices.
  params.v = 2;
  const Schedule iv = generate("interleaved", params);
  EXPECT_EQ(model.compute_time(F(1), scale_of(iv)), model.compute_time(F(1), stages(8)));
  EXPECT_GT(simulate(iv, model).makespan, 0);
}

TEST(AnalyticalErrors, BadConfigs) {
  auto err = [](auto edit) {
    AnalyticalConfig c = tiny();
    edit(c);
    return error_of([&] { AnalyticalCostModel{c}; });
  };
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.tp = 3; }), "analytical: tp (3) must divide the attention heads (8) of model tiny");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.dtype = "fp12"; }),
            "analytical: dtype: unknown dtype 'fp12'; expected bf16, fp16, fp8, tf32 or fp32");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.dtype = "fp8"; }),
            "analytical: GPU 'gpu' lists no peak FLOP/s for dtype fp8 (it lists: bf16)");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.efficiency.gemm = 1.5; }),
            "analytical: efficiency.gemm must lie in (0, 1], got 1.5");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.efficiency.network = 0; }),
            "analytical: efficiency.network must lie in (0, 1], got 0");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.efficiency.gemm_k_overhead = -1; }),
            "analytical: efficiency.gemm_k_overhead must lie in [0, 1e6] elements, got -1");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.efficiency.tile_n = 0; }),
            "analytical: efficiency.tile_m and tile_n must lie in 1..4096, got 128 x 0");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.vocab_multiple = 0; }), "analytical: vocab_multiple must be positive, got 0");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.cluster.gpu.sms = -1; }), "analytical: GPU 'gpu': sms must not be negative, got -1");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.dp = 3; }),
            "analytical: tp x p x dp = 1 x 4 x 3 = 12 GPUs, but the cluster has 8 (2 nodes x 4)");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.dp = 0; }), "analytical: dp must be positive, got 0");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.micro_batch_size = 0; }), "analytical: micro_batch_size must be positive, got 0");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.pipeline_devices = 0; }), "analytical: pipeline_devices (p) must be positive, got 0");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.grad_reduce_bytes = 0; }), "analytical: grad_reduce_bytes must be positive, got 0");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.cluster.gpu.hbm_bandwidth = 0; }), "analytical: GPU 'gpu': hbm_bandwidth must be positive");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.cluster.inter.bandwidth = 0; }),
            "analytical: inter-node link 'slow': bandwidth must be a positive number of bytes/s");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.cluster.intra.latency = -1; }),
            "analytical: intra-node link 'fast': latency must not be negative");
  EXPECT_EQ(err([](AnalyticalConfig& c) { c.cluster.gpus_per_node = 0; }),
            "analytical: cluster: nodes and gpus_per_node must be positive, got 2 x 0");
  EXPECT_EQ(err([](AnalyticalConfig& c) {
              c.cluster.gpus_per_node = 6;
              c.tp = 4;
              c.pipeline_devices = 1;
            }),
            "analytical: tp (4) and gpus_per_node (6) must divide one another, so that no tensor-parallel group "
            "straddles nodes unevenly");
  EXPECT_THAT(err([](AnalyticalConfig& c) { c.model.vocab = 0; }), HasSubstr("vocab must be positive"));
}

// The fit recovers the efficiencies that produced a set of "measurements" to 0.1 %. The
// samples need different shares of each parameter's work for them to be told apart: width
// against sequence length (GEMMs against fused attention), tokens per micro-batch (the
// GEMM tile overhead weighs on small K), and compute-bound kernels (ample HBM bandwidth).
TEST(EfficiencyFit, RecoversKnownParameters) {
  std::vector<AnalyticalConfig> configs;
  for (int seq : {256, 2048})
    for (int hidden : {256, 1024})
      for (int b : {1, 8}) {
        AnalyticalConfig c = tiny(1, 1);
        c.cluster.gpu.hbm_bandwidth = 1e15;
        c.flash_attention = true;
        c.micro_batch_size = b;
        c.model.seq_len = seq;
        c.model.hidden = hidden;
        c.model.ffn_hidden = 4 * hidden;
        configs.push_back(c);
      }
  auto predict = [&](int i, const Efficiency& e) {
    AnalyticalConfig c = configs[static_cast<std::size_t>(i)];
    c.efficiency = e;
    const AnalyticalCostModel model(c);
    return seconds(model.compute_time(F(0), stages(1)) + model.compute_time(B(0), stages(1)));
  };
  Efficiency truth;
  truth.gemm = 0.61;
  truth.gemm_k_overhead = 250;
  truth.attention = 0.37;
  std::vector<double> measured;
  for (int i = 0; i < static_cast<int>(configs.size()); ++i) measured.push_back(predict(i, truth));
  const std::vector<EfficiencyParam> params = {EfficiencyParam::Gemm, EfficiencyParam::GemmKOverhead,
                                               EfficiencyParam::Attention};
  const EfficiencyFit fit = fit_efficiency(predict, measured, Efficiency{}, params);  // starts at 0.786, 370, 0.55
  EXPECT_TRUE(fit.converged);
  EXPECT_NEAR(fit.efficiency.gemm, 0.61, 0.61e-3);
  EXPECT_NEAR(fit.efficiency.gemm_k_overhead, 250, 0.25);
  EXPECT_NEAR(fit.efficiency.attention, 0.37, 0.37e-3);
  EXPECT_LT(fit.rms_relative, 1e-5);
  ASSERT_EQ(fit.predicted.size(), measured.size());
  EXPECT_EQ(fit.efficiency.memory, Efficiency{}.memory);  // not fitted
  EXPECT_EQ(error_of([&] { fit_efficiency(predict, {1.0, 2.0}, Efficiency{}, params); }),
            "efficiency fit: needs at least 3 measurements for 3 unknowns, got 2");
  EXPECT_EQ(error_of([&] { fit_efficiency(predict, {1.0, -2.0, 1.0}, Efficiency{}, params); }),
            "efficiency fit: measurement 1 must be a positive time");
  EXPECT_EQ(error_of([&] { fit_efficiency(predict, {1.0}, Efficiency{}, {EfficiencyParam::Gemm, EfficiencyParam::Gemm}); }),
            "efficiency fit: parameter 'gemm' is listed twice");
  EXPECT_EQ(error_of([&] { fit_efficiency(predict, {1.0}, Efficiency{}, {}); }), "efficiency fit: no parameters to fit");
  EXPECT_EQ(error_of([&] { parse_efficiency_param("gem", "--parameters"); }),
            "--parameters: unknown efficiency parameter 'gem' (expected gemm, gemm_k_overhead, wave_smoothing, "
            "misaligned, attention, memory, network)");
}

}  // namespace
}  // namespace pipesim
