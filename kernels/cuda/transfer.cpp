#include "kernels/cuda/transfer.hpp"

#include <vector>

#include "core/error.hpp"

namespace pipesim {
namespace {

std::vector<float> fetch(CudaContext& ctx, const DeviceBuffer<float>& b, const char* what) {
  std::vector<float> host(static_cast<std::size_t>(b.size()));
  if (b.empty()) return host;
  const std::string op = std::string("copy ") + what + " to the host";
  cuda_check(cudaMemcpyAsync(host.data(), b.data(), static_cast<std::size_t>(b.bytes()), cudaMemcpyDeviceToHost,
                             ctx.stream()),
             "cudaMemcpyAsync", op);
  ctx.synchronize(op);
  return host;
}

// A row-major rows x cols device buffer as a column-major KMat.
KMat<float> matrix(CudaContext& ctx, const DeviceBuffer<float>& b, Eigen::Index rows, const char* what) {
  if (b.empty()) return {};
  const std::vector<float> host = fetch(ctx, b, what);
  const Eigen::Index cols = static_cast<Eigen::Index>(host.size()) / rows;
  PIPESIM_ASSERT(rows * cols == static_cast<Eigen::Index>(host.size()));
  return Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(host.data(), rows, cols);
}

KVec<float> vec(CudaContext& ctx, const DeviceBuffer<float>& b, const char* what) {
  const std::vector<float> host = fetch(ctx, b, what);
  return Eigen::Map<const KVec<float>>(host.data(), static_cast<Eigen::Index>(host.size()));
}

}  // namespace

DeviceMatrix to_device(CudaContext& ctx, const KMat<float>& m) {
  if (m.rows() > INT32_MAX || m.cols() > INT32_MAX) throw InputError("kernels: cuda: matrix too large for the device copy");
  const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rm = m;
  DeviceMatrix d;
  d.rows = static_cast<int>(m.rows());
  d.cols = static_cast<int>(m.cols());
  d.buf = DeviceBuffer<float>(static_cast<std::int64_t>(m.size()), ctx.stream(), "copy a matrix to the device");
  if (m.size() > 0) {
    cuda_check(cudaMemcpyAsync(d.data(), rm.data(), static_cast<std::size_t>(d.buf.bytes()), cudaMemcpyHostToDevice,
                               ctx.stream()),
               "cudaMemcpyAsync", "copy a matrix to the device");
    ctx.synchronize("copy a matrix to the device");
  }
  return d;
}

KMat<float> to_host(CudaContext& ctx, const DeviceMatrix& m) {
  if (m.buf.empty()) return KMat<float>(m.rows, m.cols);
  return matrix(ctx, m.buf, m.rows, "a matrix");
}

BlockCache<float> cache_to_host(CudaContext& ctx, const CudaBlockCache& d, const BlockConfig& c) {
  BlockCache<float> h;
  h.holds = d.holds == CudaBlockCache::Holds::Forward     ? BlockCache<float>::Holds::Forward
            : d.holds == CudaBlockCache::Holds::InputGrad ? BlockCache<float>::Holds::InputGrad
                                                          : BlockCache<float>::Holds::Nothing;
  const Eigen::Index n = c.tokens();
  h.x = matrix(ctx, d.x, n, "cache x");
  h.qkv = matrix(ctx, d.qkv, n, "cache qkv");
  h.x1 = matrix(ctx, d.x1, n, "cache x1");
  h.u = matrix(ctx, d.u, n, "cache u");
  h.xn1 = matrix(ctx, d.xn1, n, "cache xn1");
  h.attn = matrix(ctx, d.attn, n, "cache attn");
  h.xn2 = matrix(ctx, d.xn2, n, "cache xn2");
  h.g = matrix(ctx, d.g, n, "cache g");
  h.d_qkv = matrix(ctx, d.d_qkv, n, "cache d_qkv");
  h.d_out = matrix(ctx, d.d_out, n, "cache d_out");
  h.d_u = matrix(ctx, d.d_u, n, "cache d_u");
  h.d_y = matrix(ctx, d.d_y, n, "cache d_y");
  if (!d.mean1.empty()) h.mean1 = vec(ctx, d.mean1, "cache mean1");
  if (!d.rstd1.empty()) h.rstd1 = vec(ctx, d.rstd1, "cache rstd1");
  if (!d.mean2.empty()) h.mean2 = vec(ctx, d.mean2, "cache mean2");
  if (!d.rstd2.empty()) h.rstd2 = vec(ctx, d.rstd2, "cache rstd2");
  const std::pair<const DeviceBuffer<float>*, KRow<float>*> rows[] = {
      {&d.d_ln1_gain, &h.d_ln1_gain}, {&d.d_ln1_bias, &h.d_ln1_bias}, {&d.d_ln2_gain, &h.d_ln2_gain}, {&d.d_ln2_bias, &h.d_ln2_bias}};
  for (const auto& [from, to] : rows) {
    if (!from->empty()) *to = vec(ctx, *from, "cache norm gradient").transpose();
  }
  if (!d.probs.empty()) {
    // Device [i][j][t][u] (block k = i·a + j, row t, column u) -> CPU column k·s + u, row t.
    const std::vector<float> p = fetch(ctx, d.probs, "cache probs");
    const Eigen::Index s = c.seq, blocks = static_cast<Eigen::Index>(c.batch) * c.heads;
    h.probs.resize(s, blocks * s);
    for (Eigen::Index k = 0; k < blocks; ++k) {
      for (Eigen::Index t = 0; t < s; ++t) {
        for (Eigen::Index u = 0; u < s; ++u) h.probs(t, k * s + u) = p[static_cast<std::size_t>((k * s + t) * s + u)];
      }
    }
  }
  return h;
}

}  // namespace pipesim
