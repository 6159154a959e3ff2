#pragma once
// Kernels of the pipeline's two ends and of gradient averaging (ends_ops.cu), as host
// functions that launch on a stream and check the launch (CudaError naming the kernel and
// `op`), like device_ops.hpp. Activations are row-major n x h (device_ops.hpp's layout);
// the embedding's tables keep the CPU's flat layout: column-major V x h and s x h
// (element (row, c) at c·rows + row), so their host copies are plain memcpys.
//
//   embedding F   x[r, c] = tokens[id_r, c] + positions[r % s, c]
//   embedding W   per distinct token id, its rows r added in ascending order (CSR built on
//                 the host), per position p the rows p, p+s, p+2s, ...: the CPU loop's
//                 order exactly, no atomics
//   head F        softmax of each logits row in place, loss term -log(p[target]) in double
//   head I        dlogits = (probs - onehot(target)) / n in place
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace pipesim {

// x (n x h row-major) from token ids (device, n of them) and the two tables.
void embedding_gather(const int* ids, const float* tokens, const float* positions, int vocab, int n, int seq, int hidden,
                      float* x, cudaStream_t stream, const std::string& op);

// Token table gradient: for each u < unique, grad_tokens[ids_u, :] += Σ dx[rows[k], :] over
// k in [offsets[u], offsets[u+1]) in that order. Position table gradient:
// grad_positions[p, :] += Σ_i dx[i·seq + p, :] for i = 0 .. n/seq - 1.
void embedding_scatter(const int* unique_ids, const int* offsets, const int* rows, int unique, const float* dx,
                       int vocab, int n, int seq, int hidden, float* grad_tokens, float* grad_positions,
                       cudaStream_t stream, const std::string& op);

// One row of `cols` logits per target: the row becomes its softmax (exp(l - max) / Σ), and
// loss[r] = -log(p[target_r]) in double (kernels/lm_head.cpp's formula).
void softmax_cross_entropy_forward(float* logits, const int* targets, int rows, int cols, double* loss,
                                   cudaStream_t stream, const std::string& op);
// probs[r, target_r] -= 1, then every entry times inv_n.
void softmax_cross_entropy_backward(float* probs, const int* targets, int rows, int cols, float inv_n,
                                    cudaStream_t stream, const std::string& op);

// p[i] *= s (the optimizer step's gradient averaging).
void scale_in_place(float* p, float s, std::int64_t count, cudaStream_t stream, const std::string& op);

}  // namespace pipesim
