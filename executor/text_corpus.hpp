#pragma once
// Real training data: a UTF-8 text file read as bytes (byte-level tokens, vocabulary 256), cut
// once into a training split and a validation split.
//
//   file     any UTF-8 text; refused (InputError, one line naming the file) when missing,
//            not a regular file, empty, binary (a NUL byte, or bytes that are not UTF-8: the
//            line and byte are named) or too small for the model (below)
//   tokens   the file's bytes, 0..255: no tokenizer, every UTF-8 text and every language
//            works, and the model's vocabulary must be at least 256 (gpt-tiny's is 256)
//   split    the last 10 % of the bytes (n / 10, rounded down) are the validation split, the
//            rest the training split; fixed, so every schedule, seed and run validates on
//            the same text. Each split must hold one sequence (seq_len + 1 tokens: the
//            inputs and the next-token targets), so a file needs 10 x (seq_len + 1) bytes
//   train    sequence j of micro-batch k starts at splitmix64(seed, k, j) mod
//            (training bytes - seq_len): a pure function of (seed, micro-batch), like the
//            synthetic data (executor/synthetic_data.hpp), so every pipeline shape and
//            thread timing trains on the same numbers
//   validate RunOptions::validation_sequences windows of seq_len + 1 bytes, evenly spaced over
//            the validation split (the same for every seed)
//
// `fortunes` names the corpus of the Debian package fortunes (+ fortunes-min, installed by
// tools/bootstrap.sh): every regular file of /usr/share/games/fortunes without an
// extension, in name order, concatenated (about 2.5 MB of English).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cost_models/model_spec.hpp"
#include "executor/synthetic_data.hpp"

namespace pipesim {

inline constexpr const char* kFortunesDir = "/usr/share/games/fortunes";
inline constexpr int kByteVocabulary = 256;

struct TextCorpus {
  std::string name;  // the file as given, or "fortunes"
  std::vector<std::uint8_t> train, validation;
  std::uint64_t bytes() const { return train.size() + validation.size(); }
};

// Reads `path` (or the fortunes corpus for "fortunes") and splits it. InputError for a
// missing, unreadable, empty or binary file.
std::shared_ptr<const TextCorpus> load_text_corpus(const std::string& path);

// The corpus from bytes already read (`name` for messages): the checks and the split.
TextCorpus make_text_corpus(const std::string& name, const std::string& text);

// InputError unless `model` can train on the corpus: a vocabulary of at least 256 and
// one sequence of seq_len + 1 tokens in each split.
void check_corpus_fits(const TextCorpus& corpus, const ModelSpec& model);

// Micro-batch `microbatch` of the training split: `sequences` windows of seq_len tokens.
MicrobatchData corpus_microbatch(const TextCorpus& corpus, std::uint64_t seed, int microbatch, int sequences,
                                 int seq_len);

// `count` validation windows (rounded up to whole micro-batches), as micro-batches of
// `sequences` each.
std::vector<MicrobatchData> corpus_validation(const TextCorpus& corpus, int count, int sequences, int seq_len);

}  // namespace pipesim
