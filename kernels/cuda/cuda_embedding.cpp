#include "kernels/cuda/cuda_embedding.hpp"

#include <map>
#include <string>

#include "kernels/cuda/ends_ops.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

KVec<float> pack(const Embedding<float>& e) {
  KVec<float> flat(e.tokens.size() + e.positions.size());
  flat.head(e.tokens.size()) = Eigen::Map<const KVec<float>>(e.tokens.data(), e.tokens.size());
  flat.tail(e.positions.size()) = Eigen::Map<const KVec<float>>(e.positions.data(), e.positions.size());
  return flat;
}

DeviceBuffer<int> upload_ints(CudaContext& ctx, const std::vector<int>& v, const std::string& op) {
  DeviceBuffer<int> d(static_cast<std::int64_t>(v.size()), ctx.stream(), op);
  if (!v.empty())
    // From pageable memory: returns once `v` has been staged, so `v` may go right after.
    cuda_check(cudaMemcpyAsync(d.data(), v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice, ctx.stream()),
               "cudaMemcpyAsync", op);
  return d;
}

}  // namespace

CudaEmbedding::CudaEmbedding(CudaContext& ctx, const BlockConfig& c, const Embedding<float>& host)
    : ctx_(&ctx), config_(c), vocab_(static_cast<int>(host.tokens.rows())) {
  check_block_config(c);
  if (host.tokens.rows() < 1 || host.tokens.cols() != c.hidden || host.positions.rows() != c.seq ||
      host.positions.cols() != c.hidden)
    throw InputError("kernels: cuda embedding: tables " + std::to_string(host.tokens.rows()) + " x " +
                     std::to_string(host.tokens.cols()) + " and " + std::to_string(host.positions.rows()) + " x " +
                     std::to_string(host.positions.cols()) + ", expected V x " + std::to_string(c.hidden) + " and " +
                     std::to_string(c.seq) + " x " + std::to_string(c.hidden));
  params_ = CudaParams(ctx, pack(host), /*bf16_mirror=*/false, "embedding");
}

void CudaEmbedding::check_ids(const std::vector<int>& ids, const char* who) const {
  if (static_cast<int>(ids.size()) != config_.tokens())
    throw InputError(std::string("kernels: cuda ") + who + ": " + std::to_string(ids.size()) +
                     " token ids, expected batch x seq = " + std::to_string(config_.tokens()));
  for (std::size_t r = 0; r < ids.size(); ++r)
    if (ids[r] < 0 || ids[r] >= vocab_)
      throw InputError(std::string("kernels: cuda ") + who + ": token id " + std::to_string(ids[r]) + " at " +
                       std::to_string(r) + " is outside the vocabulary [0, " + std::to_string(vocab_) + ")");
}

DeviceMatrix CudaEmbedding::forward(const std::vector<int>& ids) const {
  check_ids(ids, "embedding forward");
  const std::string op = "embedding forward";
  const int n = config_.tokens(), h = config_.hidden;
  const DeviceBuffer<int> d_ids = upload_ints(*ctx_, ids, op + ": token ids");
  DeviceMatrix x;
  x.rows = n;
  x.cols = h;
  x.buf = DeviceBuffer<float>(static_cast<std::int64_t>(n) * h, ctx_->stream(), op);
  const float* tokens = params_.data();
  const float* positions = tokens + static_cast<std::int64_t>(vocab_) * h;
  embedding_gather(d_ids.data(), tokens, positions, vocab_, n, config_.seq, h, x.data(), ctx_->stream(), op);
  return x;
}

void CudaEmbedding::backward_weight(const std::vector<int>& ids, const DeviceMatrix& dx) {
  check_ids(ids, "embedding backward_weight");
  const int n = config_.tokens(), h = config_.hidden;
  if (dx.rows != n || dx.cols != h || dx.buf.size() != static_cast<std::int64_t>(n) * h)
    throw InputError("kernels: cuda embedding backward_weight: gradient is " + std::to_string(dx.rows) + " x " +
                     std::to_string(dx.cols) + ", expected tokens x hidden = " + std::to_string(n) + " x " +
                     std::to_string(h));
  // Rows of each distinct id, ascending (the CPU adds them in that order).
  std::map<int, std::vector<int>> rows_of;
  for (int r = 0; r < n; ++r) rows_of[ids[static_cast<std::size_t>(r)]].push_back(r);
  std::vector<int> unique, offsets{0}, rows;
  for (const auto& [id, list] : rows_of) {
    unique.push_back(id);
    rows.insert(rows.end(), list.begin(), list.end());
    offsets.push_back(static_cast<int>(rows.size()));
  }
  const std::string op = "embedding backward_weight";
  const DeviceBuffer<int> d_unique = upload_ints(*ctx_, unique, op), d_offsets = upload_ints(*ctx_, offsets, op),
                          d_rows = upload_ints(*ctx_, rows, op);
  float* grad_tokens = params_.grad();
  float* grad_positions = grad_tokens + static_cast<std::int64_t>(vocab_) * h;
  embedding_scatter(d_unique.data(), d_offsets.data(), d_rows.data(), static_cast<int>(unique.size()), dx.data(), vocab_,
                    n, config_.seq, h, grad_tokens, grad_positions, ctx_->stream(), op);
}

Embedding<float> CudaEmbedding::unpack(const KVec<float>& flat) const {
  Embedding<float> e;
  const Eigen::Index vh = static_cast<Eigen::Index>(vocab_) * config_.hidden;
  e.tokens = Eigen::Map<const KMat<float>>(flat.data(), vocab_, config_.hidden);
  e.positions = Eigen::Map<const KMat<float>>(flat.data() + vh, config_.seq, config_.hidden);
  return e;
}

Embedding<float> CudaEmbedding::host_params() const { return unpack(params_.get()); }
Embedding<float> CudaEmbedding::host_grads() const { return unpack(params_.get_grads()); }

CudaEmbedding CudaEmbedding::weight_copy() const {
  CudaEmbedding c;
  c.ctx_ = ctx_;
  c.config_ = config_;
  c.vocab_ = vocab_;
  c.params_ = params_.weight_copy();
  return c;
}

}  // namespace pipesim
