#pragma once
// Synthetic training data: the token ids and targets of one micro-batch, a pure function
// of (seed, micro-batch id), so every backend, pipeline shape and thread timing sees the
// same numbers.
//
// Each sequence follows a fixed rule a model can learn, so the loss visibly falls: over
// an alphabet of A = min(V, 16) tokens (a model first learns which tokens occur, loss from
// about ln V to ln A, then the rule, towards 0),
//   t_0 = random in [0, A),   t_(i+1) = (5 t_i + 7) mod A
//   ids = t_0 .. t_(s-1),  targets = t_1 .. t_s   (next-token prediction)
// Sequence j of micro-batch k starts from splitmix64 of (seed, k, j). An op of a schedule
// that splits micro-batches (Chimera halving, microbatch_split) carries its own id, so it
// simply has fewer sequences.
#include <cstdint>
#include <vector>

#include "kernels/block_params.hpp"

namespace pipesim {

struct MicrobatchData {
  std::vector<int> ids;      // sequences x seq_len, row-major by sequence
  std::vector<int> targets;  // same layout: the next token of each position
};

// The random state of sequence j of micro-batch k (the synthetic data's and the corpus's).
inline std::uint64_t sequence_state(std::uint64_t seed, int microbatch, int j) {
  return seed ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(microbatch)) << 20) ^
         static_cast<std::uint64_t>(j) * 0x9E3779B97F4A7C15ULL;
}

inline MicrobatchData synthetic_microbatch(std::uint64_t seed, int microbatch, int sequences, int seq_len, int vocab) {
  MicrobatchData d;
  const auto n = static_cast<std::size_t>(sequences) * static_cast<std::size_t>(seq_len);
  d.ids.reserve(n);
  d.targets.reserve(n);
  const auto v = static_cast<std::uint64_t>(vocab < 16 ? vocab : 16);
  for (int j = 0; j < sequences; ++j) {
    std::uint64_t state = sequence_state(seed, microbatch, j);
    std::uint64_t t = splitmix64(state) % v;
    for (int i = 0; i < seq_len; ++i) {
      d.ids.push_back(static_cast<int>(t));
      t = (5 * t + 7) % v;
      d.targets.push_back(static_cast<int>(t));
    }
  }
  return d;
}

}  // namespace pipesim
