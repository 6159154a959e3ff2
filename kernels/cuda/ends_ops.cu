// Kernels of ends_ops.hpp: grid-stride loops for the elementwise ones, one warp per row for
// the softmax rows. Deterministic: every sum has a fixed order, no atomics.
#include <algorithm>
#include <cmath>

#include "kernels/cuda/cuda_error.hpp"
#include "kernels/cuda/ends_ops.hpp"
#include "kernels/cuda/launch.cuh"

namespace pipesim {
using namespace cuda_launch;  // kernels/cuda/launch.cuh

namespace {

__global__ void gather_kernel(const int* ids, const float* tokens, const float* positions, int vocab, int n, int seq,
                              int hidden, float* x) {
  const std::int64_t count = static_cast<std::int64_t>(n) * hidden;
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) {
    const std::int64_t r = i / hidden;
    const std::int64_t c = i % hidden;
    x[i] = tokens[c * vocab + ids[r]] + positions[c * seq + r % seq];
  }
}

__global__ void scatter_tokens_kernel(const int* unique_ids, const int* offsets, const int* rows, int unique,
                                      const float* dx, int vocab, int hidden, float* grad) {
  const std::int64_t count = static_cast<std::int64_t>(unique) * hidden;
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) {
    const std::int64_t u = i / hidden;
    const std::int64_t c = i % hidden;
    float* g = grad + c * vocab + unique_ids[u];
    float v = *g;
    for (int k = offsets[u]; k < offsets[u + 1]; ++k) v += dx[static_cast<std::int64_t>(rows[k]) * hidden + c];
    *g = v;
  }
}

__global__ void scatter_positions_kernel(const float* dx, int n, int seq, int hidden, float* grad) {
  const std::int64_t count = static_cast<std::int64_t>(seq) * hidden;
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) {
    const std::int64_t p = i / hidden;
    const std::int64_t c = i % hidden;
    float* g = grad + c * seq + p;
    float v = *g;
    for (std::int64_t r = p; r < n; r += seq) v += dx[r * hidden + c];
    *g = v;
  }
}

__global__ void cross_entropy_forward_kernel(float* logits, const int* targets, int rows, int cols, double* loss) {
  const std::int64_t row = global_thread() / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (row >= rows) return;  // the whole warp leaves together
  float* p = logits + row * cols;
  float top = -INFINITY;
  for (int c = lane; c < cols; c += 32) top = fmaxf(top, p[c]);
  top = warp_max(top);
  float sum = 0;
  for (int c = lane; c < cols; c += 32) {
    const float e = expf(p[c] - top);
    p[c] = e;
    sum += e;
  }
  sum = warp_sum(sum);
  __syncwarp();
  // As the CPU: log of (exponential at the target / sum), the quotient in float, the log in double.
  if (lane == 0) loss[row] = -log(static_cast<double>(p[targets[row]] / sum));
  __syncwarp();
  for (int c = lane; c < cols; c += 32) p[c] = p[c] / sum;
}

__global__ void cross_entropy_backward_kernel(float* probs, const int* targets, int rows, int cols, float inv_n) {
  const std::int64_t count = static_cast<std::int64_t>(rows) * cols;
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) {
    const std::int64_t r = i / cols;
    const int c = static_cast<int>(i % cols);
    const float v = c == targets[r] ? probs[i] - 1.0f : probs[i];
    probs[i] = v * inv_n;
  }
}

__global__ void scale_kernel(float* p, float s, std::int64_t count) {
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) p[i] *= s;
}

}  // namespace

void embedding_gather(const int* ids, const float* tokens, const float* positions, int vocab, int n, int seq, int hidden,
                      float* x, cudaStream_t stream, const std::string& op) {
  const std::int64_t count = static_cast<std::int64_t>(n) * hidden;
  if (count <= 0) return;
  gather_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(ids, tokens, positions, vocab, n, seq, hidden, x);
  cuda_check_launch("gather_kernel", op);
}

void embedding_scatter(const int* unique_ids, const int* offsets, const int* rows, int unique, const float* dx,
                       int vocab, int n, int seq, int hidden, float* grad_tokens, float* grad_positions,
                       cudaStream_t stream, const std::string& op) {
  const std::int64_t tokens = static_cast<std::int64_t>(unique) * hidden;
  if (tokens > 0) {
    scatter_tokens_kernel<<<elementwise_blocks(tokens), kThreads, 0, stream>>>(unique_ids, offsets, rows, unique, dx,
                                                                                vocab, hidden, grad_tokens);
    cuda_check_launch("scatter_tokens_kernel", op);
  }
  const std::int64_t positions = static_cast<std::int64_t>(seq) * hidden;
  if (positions > 0 && n > 0) {
    scatter_positions_kernel<<<elementwise_blocks(positions), kThreads, 0, stream>>>(dx, n, seq, hidden, grad_positions);
    cuda_check_launch("scatter_positions_kernel", op);
  }
}

void softmax_cross_entropy_forward(float* logits, const int* targets, int rows, int cols, double* loss,
                                   cudaStream_t stream, const std::string& op) {
  if (rows <= 0) return;
  cross_entropy_forward_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(logits, targets, rows, cols, loss);
  cuda_check_launch("cross_entropy_forward_kernel", op);
}

void softmax_cross_entropy_backward(float* probs, const int* targets, int rows, int cols, float inv_n,
                                    cudaStream_t stream, const std::string& op) {
  const std::int64_t count = static_cast<std::int64_t>(rows) * cols;
  if (count <= 0) return;
  cross_entropy_backward_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(probs, targets, rows, cols, inv_n);
  cuda_check_launch("cross_entropy_backward_kernel", op);
}

void scale_in_place(float* p, float s, std::int64_t count, cudaStream_t stream, const std::string& op) {
  if (count <= 0) return;
  scale_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(p, s, count);
  cuda_check_launch("scale_kernel", op);
}

}  // namespace pipesim
