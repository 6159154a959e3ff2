// executor/text_corpus.hpp: which bytes are text, the fixed split, and the windows that
// training and validation read.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "cost_models/catalog.hpp"
#include "executor/text_corpus.hpp"

namespace pipesim {
namespace {

std::string text_of(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; s.size() < n; ++i) s += "line " + std::to_string(i) + " of the corpus\n";
  s.resize(n);
  return s;
}

TEST(TextCorpus, TheLastTenthIsTheValidationSplit) {
  const TextCorpus c = make_text_corpus("t", text_of(1005));
  EXPECT_EQ(c.train.size(), 905u);
  EXPECT_EQ(c.validation.size(), 100u);
  EXPECT_EQ(c.bytes(), 1005u);
  EXPECT_EQ(std::string(c.validation.begin(), c.validation.end()), text_of(1005).substr(905));
}

TEST(TextCorpus, Utf8IsTextAndOtherBytesAreNot) {
  EXPECT_NO_THROW(make_text_corpus("t", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\x85 ok"));  // incl. a C1 control
  const auto message = [](const std::string& bytes) {
    try {
      make_text_corpus("b", bytes);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("ab\xc0\xaf"), "--data 'b': bytes that are not UTF-8 at line 1, byte 2: a binary file, expected UTF-8 text");
  EXPECT_EQ(message("a\n\xed\xa0\x80"),  // a UTF-16 surrogate
            "--data 'b': bytes that are not UTF-8 at line 2, byte 2: a binary file, expected UTF-8 text");
  EXPECT_EQ(message("abc\xe2\x82"), "--data 'b': bytes that are not UTF-8 at line 1, byte 3: a binary file, expected UTF-8 text");
  EXPECT_EQ(message("ok \xf8\x88\x80\x80\x80"), "--data 'b': bytes that are not UTF-8 at line 1, byte 3: a binary file, expected UTF-8 text");
  EXPECT_EQ(message(std::string("\0", 1)), "--data 'b': a NUL byte at line 1, byte 0: a binary file, expected UTF-8 text");
}

TEST(TextCorpus, TrainingWindowsAreNextTokenPairsFromTheTrainingSplit) {
  const TextCorpus c = make_text_corpus("t", text_of(2000));
  const MicrobatchData a = corpus_microbatch(c, 7, 3, 4, 32);
  ASSERT_EQ(a.ids.size(), 128u);
  const std::string train(c.train.begin(), c.train.end());
  for (int j = 0; j < 4; ++j) {
    std::string ids, targets;
    for (int i = 0; i < 32; ++i) {
      ids += static_cast<char>(a.ids[static_cast<std::size_t>(j * 32 + i)]);
      targets += static_cast<char>(a.targets[static_cast<std::size_t>(j * 32 + i)]);
    }
    const std::size_t at = train.find(ids + targets.back());
    ASSERT_NE(at, std::string::npos) << "sequence " << j << " is not a window of the training split";
    EXPECT_EQ(targets, train.substr(at + 1, 32));
  }
  EXPECT_EQ(corpus_microbatch(c, 7, 3, 4, 32).ids, a.ids);  // a pure function of (seed, micro-batch)
  EXPECT_NE(corpus_microbatch(c, 8, 3, 4, 32).ids, a.ids);
  EXPECT_NE(corpus_microbatch(c, 7, 4, 4, 32).ids, a.ids);
}

TEST(TextCorpus, ValidationWindowsSpanTheValidationSplitInWholeBatches) {
  const TextCorpus c = make_text_corpus("t", text_of(2000));
  const auto batches = corpus_validation(c, 5, 2, 32);  // 5 windows: rounded up to 3 batches of 2
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches.front().ids.front(), c.validation.front());
  EXPECT_EQ(batches.back().targets.back(), c.validation.back());
  for (const auto& b : batches) EXPECT_EQ(b.ids.size(), 64u);
}

TEST(TextCorpus, TheModelMustFit) {
  ModelSpec m = find_model("gpt-tiny");
  const TextCorpus c = make_text_corpus("t", text_of(330));
  EXPECT_NO_THROW(check_corpus_fits(c, m));  // 33 validation bytes: one sequence of 32 + 1
  EXPECT_THROW(check_corpus_fits(make_text_corpus("t", text_of(329)), m), InputError);
  m.vocab = 255;
  EXPECT_THROW(check_corpus_fits(c, m), InputError);
}

}  // namespace
}  // namespace pipesim
