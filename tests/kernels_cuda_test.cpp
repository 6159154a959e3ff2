// CUDA backend of the transformer block (kernels/cuda/) against the CPU reference
// (kernels/cpu_block.hpp) tensor by tensor, against central differences in fp32 mode, and
// its F / I / W split, optimizer, determinism and error messages. Built only with
// PIPESIM_CUDA; every test that needs a GPU skips, naming the reason, where the runtime
// sees none (set PIPESIM_REQUIRE_GPU=1 to make that a failure, as tools/gpu-check.sh does).
//
// Tolerances (relative Frobenius error ||gpu - cpu|| / ||cpu|| per tensor):
//   fp32 GEMMs: 1e-4 everywhere. Both sides are fp32 and differ only in summation order
//     (GEMM blocking, warp reductions) and FMA contraction: about K·2^-24 ≈ 1e-6 for these
//     sizes; 1e-4 leaves two orders of margin and still fails any indexing or formula bug,
//     which moves a tensor by O(1).
//   bf16 GEMMs: 2e-2 for the forward, 5e-2 for gradients. Each GEMM operand is rounded to
//     8 mantissa bits (relative error up to 2^-9 ≈ 2e-3 each, so ~3e-3 per product after
//     fp32 accumulation); F chains four GEMM layers plus the attention products (~1e-2),
//     I and W go through as many again and reuse F's rounded activations (~2-3e-2).
//     The test BF16DiffersFromFp32 checks that the bf16 path really rounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

#include "input_error.hpp"
#include "kernels/cpu_block.hpp"
#include "kernels/cuda/cuda_block.hpp"
#include "kernels/cuda/cuda_context.hpp"
#include "kernels/cuda/cuda_error.hpp"
#include "require_gpu.hpp"
#include "kernels/cuda/cuda_stage.hpp"
#include "kernels/cuda/event_timer.hpp"
#include "kernels/cuda/sm_partition.hpp"
#include "kernels/cuda/transfer.hpp"
#include "kernels/optimizer.hpp"
#include "kernels/stage.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

KMat<float> random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  KMat<float> m(rows, cols);
  for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = static_cast<float>(uniform_pm1(seed));
  return m;
}

// Every tensor random (gains around 1, biases nonzero), so no path hides behind a 0 or 1.
BlockParams<float> random_params(const BlockConfig& c, std::uint64_t seed) {
  BlockParams<float> p = init_block_params<float>(c, seed);
  std::uint64_t state = seed ^ 0x5eedULL;
  for (BlockTensor t : {BlockTensor::Ln1Gain, BlockTensor::Ln2Gain}) {
    for (float& v : p.row(t)) v = static_cast<float>(1 + 0.3 * uniform_pm1(state));
  }
  for (BlockTensor t : {BlockTensor::Ln1Bias, BlockTensor::QkvBias, BlockTensor::OutBias, BlockTensor::Ln2Bias,
                        BlockTensor::MlpInBias, BlockTensor::MlpOutBias}) {
    for (float& v : p.row(t)) v = static_cast<float>(0.2 * uniform_pm1(state));
  }
  return p;
}

template <class A, class B>
double rel_error(const A& gpu, const B& cpu) {
  const double ref = cpu.template cast<double>().norm();
  const double diff = (gpu.template cast<double>() - cpu.template cast<double>()).norm();
  return ref > 0 ? diff / ref : diff;
}

// Each argument evaluated once (they are often a device call).
template <class A, class B>
void expect_close(const A& gpu, const B& cpu, double tol, const std::string& what) {
  ASSERT_EQ(gpu.rows(), cpu.rows()) << what;
  ASSERT_EQ(gpu.cols(), cpu.cols()) << what;
  EXPECT_LE(rel_error(gpu, cpu), tol) << what << " (relative Frobenius error)";
}

struct Tolerances {
  double forward, backward;
};
Tolerances tolerances(GemmPrecision p) { return p == GemmPrecision::Fp32 ? Tolerances{1e-4, 1e-4} : Tolerances{2e-2, 5e-2}; }

// Shapes: the CPU test's, one with nothing a multiple of anything (head_dim 4), and one
// wider than a warp in both the sequence (softmax rows) and hidden (LayerNorm rows).
std::vector<BlockConfig> configs() {
  return {BlockConfig{.batch = 2, .seq = 8, .hidden = 32, .heads = 4, .ffn = 64},
          BlockConfig{.batch = 3, .seq = 5, .hidden = 12, .heads = 3, .ffn = 20},
          BlockConfig{.batch = 1, .seq = 40, .hidden = 48, .heads = 2, .ffn = 96}};
}

std::string describe(const BlockConfig& c, GemmPrecision p) {
  return std::string(precision_name(p)) + " b=" + std::to_string(c.batch) + " s=" + std::to_string(c.seq) +
         " h=" + std::to_string(c.hidden) + " a=" + std::to_string(c.heads) + " f=" + std::to_string(c.ffn);
}

class KernelsCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    PIPESIM_SKIP_WITHOUT_GPU();
    ctx_ = std::make_unique<CudaContext>(0);
  }
  CudaContext& ctx() { return *ctx_; }
  std::unique_ptr<CudaContext> ctx_;
};

// Without a GPU the runtime's refusal becomes a CudaError that names the call and the op.
TEST(KernelsCudaNoDevice, ContextWithoutADeviceIsANamedCudaError) {
  std::string why;
  if (cuda_device_count(&why) > 0) GTEST_SKIP() << "a GPU is present (KernelsCuda.BadDeviceIsANamedCudaError covers this)";
  try {
    CudaContext ctx(0);
    FAIL() << "a context without a device";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda: cudaSetDevice in context for device 0: "), std::string::npos) << e.what();
  }
}

// The SM split rule (no GPU needed): equal groups, a multiple of the alignment, at least
// the minimum, else 0. Hopper: minimum 8, alignment 8; an H200 has 132 SMs.
TEST(KernelsCudaNoDevice, SmsPerPartition) {
  EXPECT_EQ(sms_per_partition(132, 1, 8, 8), 128);
  EXPECT_EQ(sms_per_partition(132, 2, 8, 8), 64);
  EXPECT_EQ(sms_per_partition(132, 4, 8, 8), 32);
  EXPECT_EQ(sms_per_partition(132, 8, 8, 8), 16);
  EXPECT_EQ(sms_per_partition(132, 16, 8, 8), 8);
  EXPECT_EQ(sms_per_partition(132, 17, 8, 8), 0);
  EXPECT_EQ(sms_per_partition(132, 3, 8, 2), 44);
  EXPECT_EQ(sms_per_partition(10, 2, 8, 1), 0);
  EXPECT_EQ(sms_per_partition(0, 2, 8, 8), 0);
  EXPECT_EQ(sms_per_partition(132, 0, 8, 8), 0);
}

TEST_F(KernelsCuda, BadDeviceIsANamedCudaError) {
  const int count = cuda_device_count();
  try {
    CudaContext bad(count);
    FAIL() << "device " << count << " of " << count;
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("cudaSetDevice in context for device " + std::to_string(count)),
              std::string::npos)
        << e.what();
  }
}

// F, the cache F leaves, I, the cache I leaves, and W against the CPU block, every tensor.
TEST_F(KernelsCuda, BlockMatchesTheCpuReference) {
  for (GemmPrecision precision : {GemmPrecision::Fp32, GemmPrecision::Bf16}) {
    const Tolerances tol = tolerances(precision);
    for (const BlockConfig& c : configs()) {
      SCOPED_TRACE(describe(c, precision));
      const BlockParams<float> p = random_params(c, 11);
      const KMat<float> x = random_matrix(c.tokens(), c.hidden, 12), dy = random_matrix(c.tokens(), c.hidden, 13);
      BlockCache<float> cpu_cache;
      BlockParams<float> cpu_grads = BlockParams<float>::zeros(c);
      const KMat<float> cpu_y = block_forward(p, x, cpu_cache);
      const std::int64_t cpu_bytes_f = cpu_cache.bytes();
      const BlockCache<float> cpu_after_f = cpu_cache;
      const KMat<float> cpu_dx = block_backward_input(p, dy, cpu_cache);
      const std::int64_t cpu_bytes_i = cpu_cache.bytes();
      const BlockCache<float> cpu_after_i = cpu_cache;
      block_backward_weight(cpu_cache, cpu_grads);

      CudaBlock block(ctx(), p, precision);
      CudaBlockCache cache;
      const DeviceMatrix y = block.forward(to_device(ctx(), x), cache);
      expect_close(to_host(ctx(), y), cpu_y, tol.forward, "y");
      EXPECT_EQ(cache.bytes(), cpu_bytes_f);
      {
        const BlockCache<float> g = cache_to_host(ctx(), cache, c);
        EXPECT_EQ(g.holds, BlockCache<float>::Holds::Forward);
        expect_close(g.x, cpu_after_f.x, 0.0, "cache x");
        expect_close(g.mean1, cpu_after_f.mean1, tol.forward, "cache mean1");
        expect_close(g.rstd1, cpu_after_f.rstd1, tol.forward, "cache rstd1");
        expect_close(g.xn1, cpu_after_f.xn1, tol.forward, "cache xn1");
        expect_close(g.qkv, cpu_after_f.qkv, tol.forward, "cache qkv");
        expect_close(g.probs, cpu_after_f.probs, tol.forward, "cache probs");
        expect_close(g.attn, cpu_after_f.attn, tol.forward, "cache attn");
        expect_close(g.x1, cpu_after_f.x1, tol.forward, "cache x1");
        expect_close(g.mean2, cpu_after_f.mean2, tol.forward, "cache mean2");
        expect_close(g.rstd2, cpu_after_f.rstd2, tol.forward, "cache rstd2");
        expect_close(g.xn2, cpu_after_f.xn2, tol.forward, "cache xn2");
        expect_close(g.u, cpu_after_f.u, tol.forward, "cache u");
        expect_close(g.g, cpu_after_f.g, tol.forward, "cache g");
        // The causal mask: exactly zero above the diagonal of every (sequence, head) block.
        for (int k = 0; k < c.batch * c.heads; ++k) {
          for (int t = 0; t < c.seq; ++t) {
            for (int u = t + 1; u < c.seq; ++u) ASSERT_EQ(g.probs(t, k * c.seq + u), 0.0f) << k << " " << t << " " << u;
          }
        }
      }

      const DeviceMatrix dx = block.backward_input(to_device(ctx(), dy), cache);
      expect_close(to_host(ctx(), dx), cpu_dx, tol.backward, "dx");
      EXPECT_EQ(cache.bytes(), cpu_bytes_i);
      {
        const BlockCache<float> g = cache_to_host(ctx(), cache, c);
        EXPECT_EQ(g.holds, BlockCache<float>::Holds::InputGrad);
        EXPECT_EQ(g.x.size() + g.qkv.size() + g.probs.size() + g.x1.size() + g.u.size() + g.mean1.size(), 0);
        expect_close(g.d_y, cpu_after_i.d_y, 0.0, "cache d_y");
        expect_close(g.d_u, cpu_after_i.d_u, tol.backward, "cache d_u");
        expect_close(g.d_out, cpu_after_i.d_out, tol.backward, "cache d_out");
        expect_close(g.d_qkv, cpu_after_i.d_qkv, tol.backward, "cache d_qkv");
        expect_close(g.d_ln1_gain, cpu_after_i.d_ln1_gain, tol.backward, "cache d_ln1_gain");
        expect_close(g.d_ln1_bias, cpu_after_i.d_ln1_bias, tol.backward, "cache d_ln1_bias");
        expect_close(g.d_ln2_gain, cpu_after_i.d_ln2_gain, tol.backward, "cache d_ln2_gain");
        expect_close(g.d_ln2_bias, cpu_after_i.d_ln2_bias, tol.backward, "cache d_ln2_bias");
      }

      block.backward_weight(cache);
      EXPECT_EQ(cache.bytes(), 0);
      const BlockParams<float> grads = block.grads();
      for (BlockTensor t : kBlockTensors) {
        expect_close(grads.tensor(t), cpu_grads.tensor(t), tol.backward, std::string(tensor_name(t)) + " gradient");
      }
    }
  }
}

// The bf16 path rounds (it is not fp32 under another name), and only by about bf16's epsilon.
TEST_F(KernelsCuda, Bf16DiffersFromFp32ByRoundingOnly) {
  const BlockConfig c = configs().front();
  const BlockParams<float> p = random_params(c, 21);
  const KMat<float> x = random_matrix(c.tokens(), c.hidden, 22);
  CudaBlock fp32(ctx(), p, GemmPrecision::Fp32), bf16(ctx(), p, GemmPrecision::Bf16);
  CudaBlockCache c1, c2;
  const KMat<float> y32 = to_host(ctx(), fp32.forward(to_device(ctx(), x), c1));
  const KMat<float> y16 = to_host(ctx(), bf16.forward(to_device(ctx(), x), c2));
  const double e = rel_error(y16, y32);
  EXPECT_GT(e, 1e-4) << "bf16 GEMMs gave fp32 numbers";
  EXPECT_LT(e, 2e-2);
}

// Loss L = Σ y ⊙ R: its gradients from I and W against central differences of the GPU's
// own fp32 forward (step 1e-2; rounding error ~1e-4 and truncation ~1e-4 at that step).
TEST_F(KernelsCuda, GradientsMatchFiniteDifferencesInFp32) {
  const BlockConfig c = configs()[1];
  const BlockParams<float> p = random_params(c, 31);
  const KMat<float> x = random_matrix(c.tokens(), c.hidden, 32), r = random_matrix(c.tokens(), c.hidden, 33);
  CudaBlock block(ctx(), p, GemmPrecision::Fp32);
  auto loss = [&](const KMat<float>& at) {
    CudaBlockCache cache;
    const KMat<float> y = to_host(ctx(), block.forward(to_device(ctx(), at), cache));
    return (y.cast<double>().array() * r.cast<double>().array()).sum();
  };
  CudaBlockCache cache;
  block.forward(to_device(ctx(), x), cache);
  const KMat<float> dx = to_host(ctx(), block.backward_input(to_device(ctx(), r), cache));
  block.backward_weight(cache);
  const BlockParams<float> grads = block.grads();
  const float step = 1e-2f;
  auto check = [](double fd, double analytic, const std::string& what) {
    EXPECT_NEAR(fd, analytic, 2e-3 + 2e-2 * std::abs(analytic)) << what;
  };
  std::uint64_t state = 34;
  for (int k = 0; k < 8; ++k) {
    const Eigen::Index i = static_cast<Eigen::Index>(splitmix64(state) % static_cast<std::uint64_t>(x.size()));
    KMat<float> plus = x, minus = x;
    plus.data()[i] += step;
    minus.data()[i] -= step;
    check((loss(plus) - loss(minus)) / (2.0 * step), dx.data()[i], "dx[" + std::to_string(i) + "]");
  }
  for (BlockTensor t : kBlockTensors) {
    const std::int64_t size = tensor_shape(c, t).size(), offset = tensor_offset(c, t);
    for (int k = 0; k < 3; ++k) {
      const std::int64_t i = offset + static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(size));
      BlockParams<float> q = p;
      q.data[i] += step;
      block.set_params(q);
      const double up = loss(x);
      q.data[i] -= 2 * step;
      block.set_params(q);
      const double down = loss(x);
      check((up - down) / (2.0 * step), grads.data[i], std::string(tensor_name(t)) + "[" + std::to_string(i - offset) + "]");
    }
  }
  block.set_params(p);
}

// B is I then W, bit for bit; W accumulates; the same inputs give the same bits.
TEST_F(KernelsCuda, BackwardIsInputThenWeightAndDeterministic) {
  for (GemmPrecision precision : {GemmPrecision::Fp32, GemmPrecision::Bf16}) {
    SCOPED_TRACE(precision_name(precision));
    const BlockConfig c = configs().front();
    const BlockParams<float> p = random_params(c, 41);
    const KMat<float> x = random_matrix(c.tokens(), c.hidden, 42), dy = random_matrix(c.tokens(), c.hidden, 43);
    CudaBlock a(ctx(), p, precision), b(ctx(), p, precision);
    CudaBlockCache ca, cb;
    const KMat<float> ya = to_host(ctx(), a.forward(to_device(ctx(), x), ca));
    const KMat<float> yb = to_host(ctx(), b.forward(to_device(ctx(), x), cb));
    EXPECT_EQ(ya, yb);
    const KMat<float> dxa = to_host(ctx(), a.backward(to_device(ctx(), dy), ca));
    const KMat<float> dxb = to_host(ctx(), b.backward_input(to_device(ctx(), dy), cb));
    b.backward_weight(cb);
    EXPECT_EQ(dxa, dxb);
    const BlockParams<float> once = a.grads();
    EXPECT_EQ(once.data, b.grads().data);
    a.forward(to_device(ctx(), x), ca);
    a.backward(to_device(ctx(), dy), ca);
    EXPECT_LE(rel_error(a.grads().data, (2 * once.data).eval()), 1e-6);
    a.zero_grads();
    EXPECT_EQ(a.grads().data, KVec<float>::Zero(once.data.size()));
  }
}

// A two-block stage: the same initial parameters as the CPU Stage (bit for bit), then F,
// I, W and an SGD step against it.
TEST_F(KernelsCuda, StageMatchesTheCpuStage) {
  const BlockConfig c = configs()[2];
  for (GemmPrecision precision : {GemmPrecision::Fp32, GemmPrecision::Bf16}) {
    SCOPED_TRACE(precision_name(precision));
    const Tolerances tol = tolerances(precision);
    Stage<float> cpu(c, 2, 51);
    CudaStage gpu(ctx(), c, 2, 51, precision);
    ASSERT_EQ(gpu.blocks(), 2);
    EXPECT_EQ(gpu.parameter_count(), cpu.parameter_count());
    for (int i = 0; i < 2; ++i) EXPECT_EQ(gpu.params()[static_cast<std::size_t>(i)].data, cpu.params()[static_cast<std::size_t>(i)].data);
    const KMat<float> x = random_matrix(c.tokens(), c.hidden, 52), dy = random_matrix(c.tokens(), c.hidden, 53);
    StageCache<float> cpu_cache;
    CudaStageCache gpu_cache;
    expect_close(to_host(ctx(), gpu.forward(to_device(ctx(), x), gpu_cache)), cpu.forward(x, cpu_cache), tol.forward, "y");
    expect_close(to_host(ctx(), gpu.backward_input(to_device(ctx(), dy), gpu_cache)), cpu.backward_input(dy, cpu_cache),
                 tol.backward, "dx");
    gpu.backward_weight(gpu_cache);
    cpu.backward_weight(cpu_cache);
    for (std::size_t i = 0; i < 2; ++i) expect_close(gpu.grads()[i].data, cpu.grads()[i].data, tol.backward, "grads");
    gpu.sgd_step(0.1);
    cpu.sgd_step(0.1);
    for (std::size_t i = 0; i < 2; ++i) expect_close(gpu.params()[i].data, cpu.params()[i].data, tol.backward, "params");
  }
}

// SGD and Adam on the same parameters and gradients as the CPU optimizer: the same numbers
// to float rounding (FMA contraction on the GPU: a few ulps).
TEST_F(KernelsCuda, OptimizerMatchesTheCpuOptimizer) {
  const BlockConfig c = configs()[1];
  const BlockParams<float> p = random_params(c, 61);
  BlockParams<float> g = BlockParams<float>::zeros(c);
  std::uint64_t state = 62;
  for (float& v : g.data) v = static_cast<float>(uniform_pm1(state));
  CudaBlock block(ctx(), p, GemmPrecision::Bf16);
  block.set_grads(g);
  KVec<float> cpu = p.data;
  sgd_step(cpu, g.data, 0.5);  // a large step, so the forward below can tell old from new parameters
  block.sgd_step(0.5);
  EXPECT_LE((block.params().data - cpu).cwiseAbs().maxCoeff(), 5e-6f);
  const AdamConfig adam{.lr = 1e-2, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
  AdamState<float> cpu_state;
  for (int step = 1; step <= 2; ++step) {
    adam_step(cpu, g.data, cpu_state, adam);
    block.adam_step(adam);
    const AdamState<float> s = block.adam_state();
    EXPECT_EQ(s.step, step);
    EXPECT_LE((block.params().data - cpu).cwiseAbs().maxCoeff(), 5e-6f) << "step " << step;
    EXPECT_LE(rel_error(s.m, cpu_state.m), 1e-6) << "step " << step;
    EXPECT_LE(rel_error(s.v, cpu_state.v), 1e-6) << "step " << step;
  }
  // The bf16 copy the GEMMs read follows the update: F now matches the CPU F of the new
  // parameters, not of the old ones.
  BlockParams<float> updated = p;
  updated.data = cpu;
  const KMat<float> x = random_matrix(c.tokens(), c.hidden, 63);
  BlockCache<float> cpu_cache;
  const KMat<float> want = block_forward(updated, x, cpu_cache), old = block_forward(p, x, cpu_cache);
  CudaBlockCache cache;
  const KMat<float> got = to_host(ctx(), block.forward(to_device(ctx(), x), cache));
  EXPECT_LT(rel_error(got, want), 2e-2);
  EXPECT_GT(rel_error(old, want), 3 * rel_error(got, want)) << "the forward used the parameters before the update";
}

TEST_F(KernelsCuda, EventTimerMeasuresAForward) {
  const BlockConfig c = configs()[2];
  CudaBlock block(ctx(), random_params(c, 71), GemmPrecision::Bf16);
  const DeviceMatrix x = to_device(ctx(), random_matrix(c.tokens(), c.hidden, 72));
  CudaBlockCache cache;
  CudaEventTimer timer(ctx());
  timer.start();
  block.forward(x, cache);
  const double ms = timer.stop_ms();
  EXPECT_GT(ms, 0.0);
  EXPECT_LT(ms, 10'000.0);
  EXPECT_THROW(timer.stop_ms(), CudaError);
}

TEST_F(KernelsCuda, InputErrors) {
  const BlockConfig c = configs().front();
  CudaBlock block(ctx(), random_params(c, 81), GemmPrecision::Fp32);
  CudaBlockCache cache;
  EXPECT_EQ(error_of([&] { block.forward(to_device(ctx(), random_matrix(3, c.hidden, 1)), cache); }),
            "kernels: cuda block forward: input is 3 x 32, expected tokens x hidden = 16 x 32");
  EXPECT_EQ(error_of([&] { block.backward_input(to_device(ctx(), random_matrix(16, 32, 1)), cache); }),
            "kernels: cuda block backward_input: the activation cache holds no forward; run forward first");
  EXPECT_EQ(error_of([&] { block.backward_weight(cache); }),
            "kernels: cuda block backward_weight: the activation cache holds no input gradient; run backward_input "
            "first");
  BlockConfig other = c;
  other.hidden = 16;
  EXPECT_EQ(error_of([&] { block.set_params(init_block_params<float>(other, 1)); }),
            "kernels: cuda block set_params: parameters of a block with hidden 16, ffn 64 (" +
                std::to_string(block_parameter_count(other)) + " numbers) for a block with hidden 32, ffn 64 (" +
                std::to_string(block_parameter_count(c)) + ")");
  EXPECT_EQ(error_of([&] { block.sgd_step(-1); }), "kernels: sgd: lr = -1.000000, expected >= 0");
  EXPECT_EQ(error_of([&] { CudaStage(ctx(), c, 0, 1, GemmPrecision::Fp32); }),
            "kernels: cuda stage: blocks = 0, expected at least 1");
  CudaStage stage(ctx(), c, 2, 1, GemmPrecision::Fp32);
  CudaStageCache one(1);
  EXPECT_EQ(error_of([&] { stage.backward_weight(one); }),
            "kernels: cuda stage backward_weight: the cache has 1 block entries for a stage of 2 blocks");
}

}  // namespace
}  // namespace pipesim
