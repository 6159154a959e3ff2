// CPU transformer-block kernels (kernels/): shapes, causality, gradients against finite
// differences in double, the F / I / W split, optimizers, determinism, cache bytes
// against the memory model, and every error message.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "input_error.hpp"
#include "cost_models/transformer.hpp"
#include "kernels/cpu_block.hpp"
#include "kernels/optimizer.hpp"
#include "kernels/stage.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

BlockConfig small() { return BlockConfig{.batch = 2, .seq = 8, .hidden = 16, .heads = 2, .ffn = 64}; }

template <class T>
KMat<T> random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  KMat<T> m(rows, cols);
  for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = static_cast<T>(uniform_pm1(seed));
  return m;
}

// Every tensor random (gains around 1, biases nonzero), so no gradient path hides behind
// a zero or a one.
BlockParams<double> random_params(const BlockConfig& c, std::uint64_t seed) {
  BlockParams<double> p = init_block_params<double>(c, seed);
  std::uint64_t state = seed ^ 0x5eedULL;
  for (BlockTensor t : {BlockTensor::Ln1Gain, BlockTensor::Ln2Gain}) {
    for (double& v : p.row(t)) v = 1 + 0.3 * uniform_pm1(state);
  }
  for (BlockTensor t : {BlockTensor::Ln1Bias, BlockTensor::QkvBias, BlockTensor::OutBias, BlockTensor::Ln2Bias,
                        BlockTensor::MlpInBias, BlockTensor::MlpOutBias}) {
    for (double& v : p.row(t)) v = 0.2 * uniform_pm1(state);
  }
  return p;
}

TEST(KernelsCpu, ForwardShapeAndParameterCount) {
  const BlockConfig c = small();
  EXPECT_EQ(block_parameter_count(c), 4 * 16 * 16 + 2 * 16 * 64 + 9 * 16 + 64);
  const BlockParams<float> p = init_block_params<float>(c, 1);
  BlockCache<float> cache;
  const KMat<float> y = block_forward(p, random_matrix<float>(16, 16, 2), cache);
  EXPECT_EQ(y.rows(), 16);
  EXPECT_EQ(y.cols(), 16);
  EXPECT_TRUE(y.allFinite());
}

// Position t of a sequence sees positions 0..t of the same sequence only.
TEST(KernelsCpu, ForwardIsCausalAndSequencesAreIndependent) {
  const BlockConfig c = small();
  const BlockParams<float> p = init_block_params<float>(c, 3);
  const KMat<float> x = random_matrix<float>(16, 16, 4);
  BlockCache<float> cache;
  const KMat<float> y = block_forward(p, x, cache);
  for (int t = 0; t + 1 < c.seq; ++t) {
    KMat<float> x2 = x;
    x2.block(t + 1, 0, c.seq - t - 1, c.hidden) += random_matrix<float>(c.seq - t - 1, c.hidden, 5 + t);
    const KMat<float> y2 = block_forward(p, x2, cache);
    EXPECT_EQ(y2.topRows(t + 1), y.topRows(t + 1)) << "position " << t << " saw the future";
    EXPECT_NE(y2.row(t + 1), y.row(t + 1));
    EXPECT_EQ(y2.bottomRows(c.seq), y.bottomRows(c.seq)) << "the other sequence changed";
  }
}

struct Grads {
  KMat<double> dx;
  BlockParams<double> dp;
};

// L = Σ y ⊙ r, so dL/dy = r.
double loss(const BlockParams<double>& p, const KMat<double>& x, const KMat<double>& r) {
  BlockCache<double> cache;
  return block_forward(p, x, cache).cwiseProduct(r).sum();
}

TEST(KernelsCpu, InputAndWeightGradientsMatchFiniteDifferences) {
  const BlockConfig c = small();
  const BlockParams<double> p = random_params(c, 7);
  const KMat<double> x = random_matrix<double>(16, 16, 8), r = random_matrix<double>(16, 16, 9);
  BlockCache<double> cache;
  block_forward(p, x, cache);
  const KMat<double> dx = block_backward_input(p, r, cache);
  BlockParams<double> dp = BlockParams<double>::zeros(c);
  block_backward_weight(cache, dp);

  const double h = 1e-6;
  auto expect_close = [](double numeric, double analytic, const std::string& where) {
    EXPECT_NEAR(numeric, analytic, 1e-6 * std::max(1.0, std::abs(analytic))) << where;
  };
  std::uint64_t pick = 11;
  for (int k = 0; k < 12; ++k) {
    const auto i = static_cast<Eigen::Index>(splitmix64(pick) % 16), j = static_cast<Eigen::Index>(splitmix64(pick) % 16);
    KMat<double> xp = x, xm = x;
    xp(i, j) += h;
    xm(i, j) -= h;
    expect_close((loss(p, xp, r) - loss(p, xm, r)) / (2 * h), dx(i, j), "dx(" + std::to_string(i) + "," + std::to_string(j) + ")");
  }
  for (BlockTensor t : kBlockTensors) {
    const auto size = static_cast<std::uint64_t>(tensor_shape(c, t).size());
    for (int k = 0; k < 4; ++k) {
      const auto at = static_cast<Eigen::Index>(k == 0 ? size - 1 : splitmix64(pick) % size);
      BlockParams<double> pp = p, pm = p;
      pp.tensor(t).data()[at] += h;
      pm.tensor(t).data()[at] -= h;
      expect_close((loss(pp, x, r) - loss(pm, x, r)) / (2 * h), dp.tensor(t).data()[at],
                   std::string(tensor_name(t)) + "[" + std::to_string(at) + "]");
    }
  }
}

// The float backend against the double reference, everywhere.
TEST(KernelsCpu, FloatAgreesWithDouble) {
  const BlockConfig c = small();
  const BlockParams<double> pd = random_params(c, 12);
  BlockParams<float> pf = BlockParams<float>::zeros(c);
  pf.data = pd.data.cast<float>();
  const KMat<double> x = random_matrix<double>(16, 16, 13), r = random_matrix<double>(16, 16, 14);
  BlockCache<double> cd;
  BlockCache<float> cf;
  BlockParams<double> gd = BlockParams<double>::zeros(c);
  BlockParams<float> gf = BlockParams<float>::zeros(c);
  const KMat<double> yd = block_forward(pd, x, cd);
  const KMat<float> yf = block_forward(pf, KMat<float>(x.cast<float>()), cf);
  const KMat<double> dxd = block_backward(pd, r, cd, gd);
  const KMat<float> dxf = block_backward(pf, KMat<float>(r.cast<float>()), cf, gf);
  EXPECT_LT((yf.cast<double>() - yd).cwiseAbs().maxCoeff(), 1e-5);
  EXPECT_LT((dxf.cast<double>() - dxd).cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_LT((gf.data.cast<double>() - gd.data).cwiseAbs().maxCoeff() / gd.data.cwiseAbs().maxCoeff(), 1e-5);
}

TEST(KernelsCpu, FullBackwardIsInputThenWeightBitForBit) {
  const BlockConfig c = small();
  const BlockParams<float> p = init_block_params<float>(c, 15);
  const KMat<float> x = random_matrix<float>(16, 16, 16), dy = random_matrix<float>(16, 16, 17);
  BlockCache<float> c1, c2;
  BlockParams<float> g1 = BlockParams<float>::zeros(c), g2 = BlockParams<float>::zeros(c);
  block_forward(p, x, c1);
  block_forward(p, x, c2);
  const KMat<float> dx1 = block_backward(p, dy, c1, g1);
  const KMat<float> dx2 = block_backward_input(p, dy, c2);
  block_backward_weight(c2, g2);
  EXPECT_EQ(dx1, dx2);
  EXPECT_EQ(g1.data, g2.data);
  EXPECT_EQ(c1.bytes(), 0);
}

// What F keeps and what I keeps for W, against cost_models/transformer.hpp in fp32: the
// memory model also counts two dropout masks (1 byte per h element) and the attention
// dropout's mask and output (5 bytes per score in fp32); the kernels keep the LayerNorm
// statistics (4 numbers per token) and the norms' gain/bias gradients for W (4h numbers).
TEST(KernelsCpu, CacheBytesMatchTheMemoryModel) {
  const BlockConfig c = small();
  ModelSpec m;
  m.layers = 1, m.hidden = c.hidden, m.heads = c.heads, m.ffn_hidden = c.ffn, m.seq_len = c.seq, m.vocab = 100;
  const Microbatch mb{.sequences = c.batch, .tp = 1, .sequence_parallel = false, .element_bytes = 4};
  const std::int64_t n = c.tokens(), h = c.hidden, scores = std::int64_t{c.batch} * c.heads * c.seq * c.seq;
  const BlockParams<float> p = init_block_params<float>(c, 18);
  BlockCache<float> cache;
  block_forward(p, random_matrix<float>(16, 16, 19), cache);
  EXPECT_EQ(cache.bytes(), layer_activation_bytes(m, mb, Recompute::None) - 2 * n * h - 5 * scores + 16 * n);
  block_backward_input(p, random_matrix<float>(16, 16, 20), cache);
  EXPECT_EQ(cache.bytes(), layer_weight_grad_bytes(m, mb) + 4 * 4 * h);
}

TEST(KernelsCpu, SgdAndAdamOneStepByHand) {
  KVec<double> p(2), g(2);
  p << 1.0, -2.0;
  g << 0.5, -0.25;
  KVec<double> q = p;
  sgd_step(q, g, 0.1);
  EXPECT_DOUBLE_EQ(q(0), 0.95);
  EXPECT_DOUBLE_EQ(q(1), -1.975);

  // First step: m = (1-β1)g, v = (1-β2)g², bias-corrected to g and g², so p -= lr·g/(|g|+eps).
  AdamState<double> s;
  const AdamConfig a{.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
  adam_step(p, g, s, a);
  EXPECT_EQ(s.step, 1);
  EXPECT_DOUBLE_EQ(s.m(0), 0.05);
  EXPECT_DOUBLE_EQ(s.v(1), 0.001 * 0.0625);
  EXPECT_NEAR(p(0), 1.0 - 0.01 * 0.5 / (0.5 + 1e-8), 1e-15);
  EXPECT_NEAR(p(1), -2.0 + 0.01 * 0.25 / (0.25 + 1e-8), 1e-15);
  // Second step with the same gradient: m = 0.095 → m̂ = 0.095/0.19 = 0.5; v̂ = g² again.
  adam_step(p, g, s, a);
  EXPECT_NEAR(p(0), 1.0 - 2 * 0.01 * 0.5 / (0.5 + 1e-8), 1e-12);

  // Float: the same numbers to float precision.
  KVec<float> pf(2), gf(2);
  pf << 1.0f, -2.0f;
  gf << 0.5f, -0.25f;
  AdamState<float> sf;
  adam_step(pf, gf, sf, a);
  EXPECT_FLOAT_EQ(pf(0), 0.99f);
  EXPECT_FLOAT_EQ(pf(1), -1.99f);
}

TEST(KernelsCpu, StageGradientsMatchFiniteDifferencesAndSplitIsExact) {
  const BlockConfig c = small();
  Stage<double> stage(c, 2, 21);
  EXPECT_EQ(stage.parameter_count(), 2 * block_parameter_count(c));
  const KMat<double> x = random_matrix<double>(16, 16, 22), r = random_matrix<double>(16, 16, 23);
  StageCache<double> cache;
  stage.forward(x, cache);
  const KMat<double> dx = stage.backward_input(r, cache);
  stage.backward_weight(cache);
  auto stage_loss = [&](const Stage<double>& s, const KMat<double>& in) {
    StageCache<double> scratch;
    return s.forward(in, scratch).cwiseProduct(r).sum();
  };
  const double h = 1e-6;
  for (auto [i, j] : {std::pair{0, 0}, std::pair{7, 3}, std::pair{15, 15}}) {
    KMat<double> xp = x, xm = x;
    xp(i, j) += h;
    xm(i, j) -= h;
    EXPECT_NEAR((stage_loss(stage, xp) - stage_loss(stage, xm)) / (2 * h), dx(i, j), 1e-6);
  }
  for (int b = 0; b < 2; ++b) {
    for (BlockTensor t : {BlockTensor::Ln1Gain, BlockTensor::QkvWeight, BlockTensor::MlpOutBias}) {
      Stage<double> sp = stage, sm = stage;
      sp.params()[static_cast<std::size_t>(b)].tensor(t)(0, 1) += h;
      sm.params()[static_cast<std::size_t>(b)].tensor(t)(0, 1) -= h;
      EXPECT_NEAR((stage_loss(sp, x) - stage_loss(sm, x)) / (2 * h),
                  stage.grads()[static_cast<std::size_t>(b)].tensor(t)(0, 1), 1e-6)
          << "block " << b << " " << tensor_name(t);
    }
  }
  // B accumulates the same gradients again: exactly twice the I-then-W ones.
  const KVec<double> once = stage.grads()[1].data;
  stage.forward(x, cache);
  EXPECT_EQ(stage.backward(r, cache), dx);
  EXPECT_EQ(stage.grads()[1].data, KVec<double>(2 * once));
  stage.zero_grads();
  EXPECT_EQ(stage.grads()[0].data.cwiseAbs().sum(), 0);
}

TEST(KernelsCpu, SameSeedSameBits) {
  auto run = [](std::uint64_t seed) {
    Stage<float> stage(small(), 2, seed);
    StageCache<float> cache;
    const KMat<float> y = stage.forward(random_matrix<float>(16, 16, 24), cache);
    stage.backward(random_matrix<float>(16, 16, 25), cache);
    stage.adam_step(AdamConfig{});
    stage.sgd_step(0.1);
    return std::pair{y, stage.params()[1].data};
  };
  const auto a = run(26), b = run(26), other = run(27);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
  EXPECT_NE(a.first, other.first);
}

TEST(KernelsCpu, ErrorMessages) {
  BlockConfig c = small();
  c.heads = 3;
  EXPECT_EQ(error_of([&] { check_block_config(c); }), "kernels: block config: heads = 3 does not divide hidden = 16");
  c = small();
  c.seq = 0;
  EXPECT_EQ(error_of([&] { check_block_config(c); }), "kernels: block config: seq = 0, expected a positive size");
  c = small();
  c.ln_eps = 0;
  EXPECT_EQ(error_of([&] { check_block_config(c); }),
            "kernels: block config: ln_eps = 0.000000, expected a positive number");
  EXPECT_EQ(error_of([&] { Stage<float>(small(), 0, 1); }), "kernels: stage: blocks = 0, expected at least 1");

  const BlockParams<float> p = init_block_params<float>(small(), 1);
  BlockCache<float> cache;
  EXPECT_EQ(error_of([&] { block_forward(p, KMat<float>(KMat<float>::Zero(15, 16)), cache); }),
            "kernels: block forward: input is 15 x 16, expected tokens x hidden = 16 x 16");
  EXPECT_EQ(error_of([&] { block_backward_input(p, KMat<float>(KMat<float>::Zero(16, 16)), cache); }),
            "kernels: block backward_input: the activation cache holds no forward; run forward first");
  BlockParams<float> grads = BlockParams<float>::zeros(small());
  block_forward(p, KMat<float>(KMat<float>::Ones(16, 16)), cache);
  EXPECT_EQ(error_of([&] { block_backward_weight(cache, grads); }),
            "kernels: block backward_weight: the activation cache holds no input gradient; run backward_input first");
  EXPECT_EQ(error_of([&] { block_backward_input(p, KMat<float>(KMat<float>::Zero(16, 15)), cache); }),
            "kernels: block backward_input: output gradient is 16 x 15, expected tokens x hidden = 16 x 16");
  block_backward_input(p, KMat<float>(KMat<float>::Ones(16, 16)), cache);
  BlockConfig wider = small();
  wider.ffn = 32;
  BlockParams<float> wrong = BlockParams<float>::zeros(wider);
  EXPECT_EQ(error_of([&] { block_backward_weight(cache, wrong); }),
            "kernels: block backward_weight: the gradient buffer holds 2224 numbers (hidden 16, ffn 32) but the "
            "cache is of a block with hidden 16, ffn 64");

  Stage<float> stage(small(), 2, 1);
  StageCache<float> one(1);
  EXPECT_EQ(error_of([&] { stage.backward_input(KMat<float>(KMat<float>::Zero(16, 16)), one); }),
            "kernels: stage backward_input: the cache has 1 block entries for a stage of 2 blocks");
  EXPECT_EQ(error_of([&] { stage.backward_weight(one); }),
            "kernels: stage backward_weight: the cache has 1 block entries for a stage of 2 blocks");

  KVec<float> v3 = KVec<float>::Zero(3), v2 = KVec<float>::Zero(2);
  EXPECT_EQ(error_of([&] { sgd_step(v3, v2, 0.1); }), "kernels: sgd: 2 gradients for 3 parameters");
  EXPECT_EQ(error_of([&] { sgd_step(v3, v3, -1.0); }), "kernels: sgd: lr = -1.000000, expected >= 0");
  AdamState<float> s;
  EXPECT_EQ(error_of([&] { adam_step(v3, v2, s, AdamConfig{}); }), "kernels: adam: 2 gradients for 3 parameters");
  s.m = v2;
  EXPECT_EQ(error_of([&] { adam_step(v3, v3, s, AdamConfig{}); }),
            "kernels: adam: moments of 2 / 3 numbers for 3 parameters");
  EXPECT_EQ(error_of([&] { check_adam_config({.lr = -1}); }), "kernels: adam: lr = -1.000000, expected >= 0");
  EXPECT_EQ(error_of([&] { check_adam_config({.beta1 = 1}); }), "kernels: adam: beta1 = 1.000000, expected in [0, 1)");
  EXPECT_EQ(error_of([&] { check_adam_config({.beta2 = -0.5}); }),
            "kernels: adam: beta2 = -0.500000, expected in [0, 1)");
  EXPECT_EQ(error_of([&] { check_adam_config({.eps = 0}); }), "kernels: adam: eps = 0.000000, expected > 0");
}

}  // namespace
}  // namespace pipesim
