#pragma once
// What a run trains and validates on: the text corpus of ModelSetup::corpus
// (executor/text_corpus.hpp, `pipesim run --data FILE`) or, without one, the synthetic
// sequences (executor/synthetic_data.hpp). Every backend takes its micro-batches from here.
#include <algorithm>
#include <vector>

#include "executor/backend.hpp"
#include "executor/synthetic_data.hpp"
#include "executor/text_corpus.hpp"

namespace pipesim {

// The tokens and targets of micro-batch op `microbatch`: `sequences` sequences of seq_len.
inline MicrobatchData training_microbatch(const ModelSetup& s, int microbatch, int sequences) {
  if (s.corpus) return corpus_microbatch(*s.corpus, s.seed, microbatch, sequences, s.model.seq_len);
  return synthetic_microbatch(s.seed, microbatch, sequences, s.model.seq_len, s.model.vocab);
}

// The validation set of `count` sequences (rounded up to whole micro-batches) in
// micro-batches of `sequences`: the corpus's validation windows, or synthetic sequences from
// a seed no training micro-batch uses.
inline std::vector<MicrobatchData> validation_batches(const ModelSetup& s, int count, int sequences) {
  if (s.corpus) return corpus_validation(*s.corpus, count, sequences, s.model.seq_len);
  std::vector<MicrobatchData> out;
  const int batches = (count + sequences - 1) / sequences;
  for (int k = 0; k < batches; ++k)
    out.push_back(synthetic_microbatch(s.seed ^ 0x76616C6964617465ULL, k, sequences, s.model.seq_len, s.model.vocab));
  return out;
}

}  // namespace pipesim
