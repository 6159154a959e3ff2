// The CUDA pipeline ends (kernels/cuda/cuda_embedding.hpp, cuda_lm_head.hpp), the
// parameter groups behind them (cuda_params.hpp) and the weight copies and gradient
// scaling the executor's CUDA backend uses, against the CPU reference (kernels/embedding.hpp,
// kernels/lm_head.hpp). Built only with PIPESIM_CUDA; every test that needs a GPU skips
// where the runtime sees none (PIPESIM_REQUIRE_GPU=1 makes that a failure).
//
// Tolerances:
//   embedding: exact. The gather is one float add per number, as on the CPU; the scatter
//     adds each table row's contributions in the CPU loop's order.
//   head, fp32 GEMMs: loss 1e-5 relative, dx and gradients 1e-4 relative Frobenius
//     (summation order and FMA only, as kernels_cuda_test).
//   head, bf16 GEMMs: loss 1e-2 relative, dx and gradients 5e-2 (two operands rounded to 8
//     mantissa bits in each of the head's GEMMs; kernels_cuda_test's reasoning).
#include <gtest/gtest.h>

#include <cmath>
#include <array>
#include <cstdlib>
#include <memory>
#include <string>

#include "kernels/cuda/cuda_block.hpp"
#include "kernels/cuda/cuda_embedding.hpp"
#include "kernels/cuda/cuda_error.hpp"
#include "require_gpu.hpp"
#include "kernels/cuda/cuda_lm_head.hpp"
#include "kernels/cuda/transfer.hpp"
#include "kernels/embedding.hpp"
#include "kernels/lm_head.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

KMat<float> random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  KMat<float> m(rows, cols);
  for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = static_cast<float>(uniform_pm1(seed));
  return m;
}

// Ids from a small range, so most ids repeat (the scatter's interesting case).
std::vector<int> random_ids(int count, int range, std::uint64_t seed) {
  std::vector<int> ids(static_cast<std::size_t>(count));
  for (int& id : ids) id = static_cast<int>(splitmix64(seed) % static_cast<std::uint64_t>(range));
  return ids;
}

template <class A, class B>
double rel_error(const A& gpu, const B& cpu) {
  const double ref = cpu.template cast<double>().norm();
  const double diff = (gpu.template cast<double>() - cpu.template cast<double>()).norm();
  return ref > 0 ? diff / ref : diff;
}

struct Shape {
  BlockConfig c;
  int vocab;
};

// The kernels test's shapes (one wider than a warp in every row) with vocabularies that
// are no multiple of 32.
std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (const auto& [b, s, h, a, f, v] : {std::array<int, 6>{2, 8, 32, 4, 64, 50}, std::array<int, 6>{3, 5, 12, 3, 20, 37},
                                         std::array<int, 6>{1, 40, 48, 2, 96, 70}}) {
    BlockConfig c;
    c.batch = b;
    c.seq = s;
    c.hidden = h;
    c.heads = a;
    c.ffn = f;
    out.push_back({c, v});
  }
  return out;
}

LmHead<float> random_head(const BlockConfig& c, int vocab, std::uint64_t seed) {
  LmHead<float> head = init_lm_head<float>(c, vocab, /*tied=*/false, seed);
  std::uint64_t state = seed ^ 0x77ULL;
  for (Eigen::Index k = 0; k < head.gain.size(); ++k) {
    head.gain(k) = static_cast<float>(1 + 0.3 * uniform_pm1(state));
    head.bias(k) = static_cast<float>(0.2 * uniform_pm1(state));
  }
  head.weight *= 3.0f;  // logits of O(1) spread, so the softmax is not flat
  return head;
}

std::int64_t cpu_head_bytes(const LmHeadCache<float>& c) {
  const auto n = c.x.size() + c.mean.size() + c.rstd.size() + c.xn.size() + c.probs.size() + c.d_gain.size() +
                 c.d_bias.size() + static_cast<Eigen::Index>(c.targets.size());
  return static_cast<std::int64_t>(n) * 4;
}

class KernelsCudaEnds : public ::testing::Test {
 protected:
  void SetUp() override {
    PIPESIM_SKIP_WITHOUT_GPU();
    ctx_ = std::make_unique<CudaContext>(0);
  }
  CudaContext& ctx() { return *ctx_; }
  std::unique_ptr<CudaContext> ctx_;
};

TEST_F(KernelsCudaEnds, EmbeddingForwardAndScatterAreTheCpusBitForBit) {
  for (const Shape& sh : shapes()) {
    const BlockConfig& c = sh.c;
    SCOPED_TRACE("b=" + std::to_string(c.batch) + " s=" + std::to_string(c.seq) + " h=" + std::to_string(c.hidden));
    const Embedding<float> host = init_embedding<float>(c, sh.vocab, 11);
    CudaEmbedding gpu(ctx(), c, host);
    EXPECT_EQ(gpu.host_params().tokens, host.tokens);
    EXPECT_EQ(gpu.host_params().positions, host.positions);
    const std::vector<int> ids = random_ids(c.tokens(), 7, 5);  // ids 0..6 only: many repeats
    EXPECT_EQ(to_host(ctx(), gpu.forward(ids)), embedding_forward(host, c, ids));

    Embedding<float> grads{KMat<float>::Zero(sh.vocab, c.hidden), KMat<float>::Zero(c.seq, c.hidden)};
    for (std::uint64_t k = 0; k < 2; ++k) {  // twice: the second adds into the first
      const KMat<float> dx = random_matrix(c.tokens(), c.hidden, 100 + k);
      embedding_backward_weight(c, ids, dx, grads);
      gpu.backward_weight(ids, to_device(ctx(), dx));
    }
    const Embedding<float> g = gpu.host_grads();
    EXPECT_EQ(g.tokens, grads.tokens);
    EXPECT_EQ(g.positions, grads.positions);
    EXPECT_GT(grads.tokens.norm(), 0.0f);
  }
}

TEST_F(KernelsCudaEnds, EmbeddingErrors) {
  const Shape sh = shapes().front();
  CudaEmbedding gpu(ctx(), sh.c, init_embedding<float>(sh.c, sh.vocab, 1));
  std::vector<int> ids(static_cast<std::size_t>(sh.c.tokens()), 0);
  ids[3] = sh.vocab;
  try {
    gpu.forward(ids);
    FAIL() << "an id outside the vocabulary";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "kernels: cuda embedding forward: token id 50 at 3 is outside the vocabulary [0, 50)");
  }
  try {
    gpu.forward(std::vector<int>(3, 0));
    FAIL() << "too few ids";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "kernels: cuda embedding forward: 3 token ids, expected batch x seq = 16");
  }
  ids[3] = 0;
  DeviceMatrix wrong = to_device(ctx(), random_matrix(sh.c.tokens(), sh.c.hidden + 1, 3));
  EXPECT_THROW(gpu.backward_weight(ids, wrong), InputError);
}

void check_head(CudaContext& ctx, const Shape& sh, GemmPrecision precision) {
  const BlockConfig& c = sh.c;
  const double loss_tol = precision == GemmPrecision::Fp32 ? 1e-5 : 1e-2;
  const double tol = precision == GemmPrecision::Fp32 ? 1e-4 : 5e-2;
  SCOPED_TRACE(std::string(precision_name(precision)) + " b=" + std::to_string(c.batch) + " s=" + std::to_string(c.seq) +
               " h=" + std::to_string(c.hidden) + " V=" + std::to_string(sh.vocab));
  const LmHead<float> host = random_head(c, sh.vocab, 21);
  CudaLmHead gpu(ctx, c, host, precision);
  const KMat<float> x = random_matrix(c.tokens(), c.hidden, 8);
  const std::vector<int> targets = random_ids(c.tokens(), sh.vocab, 9);

  LmHeadCache<float> cc;
  const float cpu_loss = lm_head_forward(host, host.weight, x, targets, cc);
  CudaLmHeadCache gc;
  const float gpu_loss = gpu.forward(to_device(ctx, x), targets, gc);
  EXPECT_NEAR(gpu_loss, cpu_loss, loss_tol * std::abs(cpu_loss));
  EXPECT_EQ(gc.holds, CudaLmHeadCache::Holds::Forward);
  EXPECT_EQ(gc.bytes(), cpu_head_bytes(cc));

  const KMat<float> cpu_dx = lm_head_backward_input(host, host.weight, cc);
  const KMat<float> gpu_dx = to_host(ctx, gpu.backward_input(gc));
  EXPECT_LE(rel_error(gpu_dx, cpu_dx), tol) << "dx";
  EXPECT_EQ(gc.bytes(), cpu_head_bytes(cc)) << "after I: x, mean and rstd freed";
  EXPECT_TRUE(gc.x.empty());

  LmHead<float> cpu_grads{KRow<float>::Zero(c.hidden), KRow<float>::Zero(c.hidden), KMat<float>::Zero(sh.vocab, c.hidden)};
  lm_head_backward_weight(cc, cpu_grads, cpu_grads.weight);
  gpu.backward_weight(gc);
  EXPECT_EQ(gc.bytes(), 0);
  const LmHead<float> g = gpu.host_grads();
  EXPECT_LE(rel_error(g.gain, cpu_grads.gain), tol) << "gain gradient";
  EXPECT_LE(rel_error(g.bias, cpu_grads.bias), tol) << "bias gradient";
  EXPECT_LE(rel_error(g.weight, cpu_grads.weight), tol) << "weight gradient";
}

TEST_F(KernelsCudaEnds, HeadMatchesTheCpuInBothPrecisions) {
  for (const Shape& sh : shapes())
    for (GemmPrecision p : {GemmPrecision::Fp32, GemmPrecision::Bf16}) check_head(ctx(), sh, p);
}

// dx, the gain and the weight gradient against central differences of the GPU's own fp32 loss.
TEST_F(KernelsCudaEnds, HeadGradientsMatchFiniteDifferences) {
  const Shape sh = shapes()[1];
  const BlockConfig& c = sh.c;
  const LmHead<float> host = random_head(c, sh.vocab, 4);
  CudaLmHead gpu(ctx(), c, host, GemmPrecision::Fp32);
  const KMat<float> x = random_matrix(c.tokens(), c.hidden, 6);
  const std::vector<int> targets = random_ids(c.tokens(), sh.vocab, 2);
  CudaLmHeadCache cache;
  gpu.forward(to_device(ctx(), x), targets, cache);
  const KMat<float> dx = to_host(ctx(), gpu.backward_input(cache));
  gpu.backward_weight(cache);
  const LmHead<float> grads = gpu.host_grads();
  const float step = 1e-2f;
  auto loss_at = [&](const KMat<float>& xx) {
    CudaLmHeadCache cc;
    return static_cast<double>(gpu.forward(to_device(ctx(), xx), targets, cc));
  };
  for (int k = 0; k < 8; ++k) {
    const Eigen::Index i = (k * 7) % x.rows(), j = (k * 5) % x.cols();
    KMat<float> plus = x, minus = x;
    plus(i, j) += step;
    minus(i, j) -= step;
    const double fd = (loss_at(plus) - loss_at(minus)) / (2 * step);
    EXPECT_NEAR(dx(i, j), fd, 2e-3 + 2e-2 * std::abs(fd)) << "dx(" << i << ", " << j << ")";
  }
  // Parameters: perturb the flat group (gain at 0.., weight at 2h..) and restore it.
  const KVec<float> base = gpu.params().get();
  const KVec<float> flat_grads = gpu.params().get_grads();
  EXPECT_EQ(flat_grads.segment(0, c.hidden), grads.gain.transpose());
  for (const Eigen::Index at : {Eigen::Index{1}, Eigen::Index{2 * c.hidden + 3}, Eigen::Index{2 * c.hidden + 41}}) {
    KVec<float> p = base;
    p(at) += step;
    gpu.params().set(p);
    const double up = loss_at(x);
    p(at) -= 2 * step;
    gpu.params().set(p);
    const double down = loss_at(x);
    const double fd = (up - down) / (2 * step);
    EXPECT_NEAR(flat_grads(at), fd, 2e-3 + 2e-2 * std::abs(fd)) << "parameter " << at;
  }
  gpu.params().set(base);
}

TEST_F(KernelsCudaEnds, HeadStateErrors) {
  const Shape sh = shapes().front();
  CudaLmHead gpu(ctx(), sh.c, random_head(sh.c, sh.vocab, 1), GemmPrecision::Bf16);
  CudaLmHeadCache cache;
  EXPECT_THROW(gpu.backward_input(cache), InputError);
  EXPECT_THROW(gpu.backward_weight(cache), InputError);
  std::vector<int> targets(static_cast<std::size_t>(sh.c.tokens()), 0);
  targets[2] = -1;
  try {
    gpu.forward(to_device(ctx(), random_matrix(sh.c.tokens(), sh.c.hidden, 1)), targets, cache);
    FAIL() << "a negative target";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "kernels: cuda lm head forward: target -1 at 2 is outside the vocabulary [0, 50)");
  }
  LmHead<float> tied = init_lm_head<float>(sh.c, sh.vocab, /*tied=*/true, 1);
  EXPECT_THROW(CudaLmHead(ctx(), sh.c, tied, GemmPrecision::Bf16), InputError);
}

// A weight copy computes what the original did before the original moved on, and has no
// gradient; scaling a gradient is exact.
TEST_F(KernelsCudaEnds, WeightCopiesAndGradientScaling) {
  const Shape sh = shapes().front();
  const BlockConfig& c = sh.c;
  CudaLmHead head(ctx(), c, random_head(c, sh.vocab, 3), GemmPrecision::Bf16);
  const KMat<float> x = random_matrix(c.tokens(), c.hidden, 4);
  const std::vector<int> targets = random_ids(c.tokens(), sh.vocab, 5);
  CudaLmHeadCache cache;
  const float before = head.forward(to_device(ctx(), x), targets, cache);
  head.backward_input(cache);
  head.backward_weight(cache);
  const CudaLmHead copy = head.weight_copy();
  const KVec<float> p0 = head.params().get();
  const KVec<float> g = head.params().get_grads();
  head.params().scale_grads(0.25f);
  EXPECT_EQ(head.params().get_grads(), (g * 0.25f).eval());
  head.params().sgd_step(0.5);
  CudaLmHeadCache c1, c2;
  EXPECT_NE(head.forward(to_device(ctx(), x), targets, c1), before);
  EXPECT_EQ(copy.forward(to_device(ctx(), x), targets, c2), before);
  EXPECT_EQ(copy.params().get(), p0) << "the copy keeps the old weights";
  CudaLmHead mutable_copy = head.weight_copy();
  EXPECT_THROW(mutable_copy.params().zero_grads(), InputError);
  EXPECT_THROW(mutable_copy.params().sgd_step(0.1), InputError);
  copy.backward_input(c2);
  EXPECT_THROW(mutable_copy.backward_weight(c2), InputError);

  CudaEmbedding emb(ctx(), c, init_embedding<float>(c, sh.vocab, 2));
  const CudaEmbedding emb_copy = emb.weight_copy();
  EXPECT_EQ(emb_copy.host_params().tokens, emb.host_params().tokens);

  // Blocks: the copy's forward is the original's bit for bit; W on the copy is refused.
  CudaBlock block(ctx(), init_block_params<float>(c, 9), GemmPrecision::Bf16);
  const CudaBlock block_copy = block.weight_copy();
  const DeviceMatrix xb = to_device(ctx(), random_matrix(c.tokens(), c.hidden, 10));
  CudaBlockCache bc1, bc2;
  EXPECT_EQ(to_host(ctx(), block.forward(xb, bc1)), to_host(ctx(), block_copy.forward(xb, bc2)));
  const DeviceMatrix dy = to_device(ctx(), random_matrix(c.tokens(), c.hidden, 12));
  block.backward(dy, bc1);
  block_copy.backward_input(dy, bc2);
  CudaBlock block_copy2 = block.weight_copy();
  EXPECT_FALSE(block_copy2.has_grads());
  EXPECT_THROW(block_copy2.backward_weight(bc2), InputError);
  const BlockParams<float> bg = block.grads();
  block.scale_grads(0.5f);
  EXPECT_EQ(block.grads().data, (bg.data * 0.5f).eval());
}

}  // namespace
}  // namespace pipesim
