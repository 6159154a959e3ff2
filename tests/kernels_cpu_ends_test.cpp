// The first and last stages' extras (kernels/embedding.hpp, kernels/lm_head.hpp): a whole
// model ids -> embedding -> blocks -> LM head -> loss, with gradients checked against
// central differences in double, tied and untied, and every error message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "input_error.hpp"
#include "kernels/embedding.hpp"
#include "kernels/lm_head.hpp"
#include "kernels/stage.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

constexpr int kVocab = 11;
BlockConfig small() { return BlockConfig{.batch = 2, .seq = 8, .hidden = 16, .heads = 2, .ffn = 64}; }

struct Model {
  Embedding<double> emb;
  Stage<double> stage;
  LmHead<double> head;
  bool tied;
  const KMat<double>& head_weight() const { return tied ? emb.tokens : head.weight; }
};

Model make_model(bool tied) {
  Model m{init_embedding<double>(small(), kVocab, 1), Stage<double>(small(), 1, 2), init_lm_head<double>(small(), kVocab, tied, 3), tied};
  std::uint64_t state = 4;
  for (double& v : m.head.gain) v = 1 + 0.3 * uniform_pm1(state);
  for (double& v : m.head.bias) v = 0.2 * uniform_pm1(state);
  return m;
}

std::vector<int> ids_from(std::uint64_t seed) {
  std::vector<int> ids(16);
  for (int& id : ids) id = static_cast<int>(splitmix64(seed) % kVocab);
  return ids;
}

double model_loss(const Model& m, const std::vector<int>& ids, const std::vector<int>& targets) {
  StageCache<double> sc;
  LmHeadCache<double> hc;
  const KMat<double> x = embedding_forward(m.emb, small(), ids);
  return lm_head_forward(m.head, m.head_weight(), m.stage.forward(x, sc), targets, hc);
}

class KernelsCpuEnds : public ::testing::TestWithParam<bool> {};

TEST_P(KernelsCpuEnds, WholeModelGradientsMatchFiniteDifferences) {
  const bool tied = GetParam();
  Model m = make_model(tied);
  const std::vector<int> ids = ids_from(5), targets = ids_from(6);
  // F on every stage, then I and W backwards, as a pipeline of three stages would.
  StageCache<double> sc;
  LmHeadCache<double> hc;
  const double loss = lm_head_forward(m.head, m.head_weight(), m.stage.forward(embedding_forward(m.emb, small(), ids), sc),
                                      targets, hc);
  EXPECT_NEAR(loss, model_loss(m, ids, targets), 0);
  const KMat<double> dy = lm_head_backward_input(m.head, m.head_weight(), hc);
  const KMat<double> dx = m.stage.backward_input(dy, sc);
  Embedding<double> emb_grad{KMat<double>::Zero(kVocab, 16), KMat<double>::Zero(8, 16)};
  LmHead<double> head_grad{KRow<double>::Zero(16), KRow<double>::Zero(16), KMat<double>::Zero(kVocab, 16)};
  // Tied: the head's weight gradient lands in the embedding's token gradient.
  lm_head_backward_weight(hc, head_grad, tied ? emb_grad.tokens : head_grad.weight);
  m.stage.backward_weight(sc);
  embedding_backward_weight(small(), ids, dx, emb_grad);

  const double h = 1e-6;
  auto check = [&](double* value, double analytic, const std::string& where) {
    const double saved = *value;
    *value = saved + h;
    const double up = model_loss(m, ids, targets);
    *value = saved - h;
    const double down = model_loss(m, ids, targets);
    *value = saved;
    EXPECT_NEAR((up - down) / (2 * h), analytic, 1e-7 * std::max(1.0, std::abs(analytic))) << where;
  };
  const int used = ids[3], unused_row = [&] {
    for (int v = 0; v < kVocab; ++v) {
      if (std::find(ids.begin(), ids.end(), v) == ids.end()) return v;
    }
    return used;
  }();
  for (int j : {0, 7, 15}) {
    check(&m.emb.tokens(used, j), emb_grad.tokens(used, j), "tokens(used)");
    check(&m.emb.tokens(unused_row, j), emb_grad.tokens(unused_row, j), "tokens(unused)");
    check(&m.emb.positions(5, j), emb_grad.positions(5, j), "positions");
    check(&m.head.gain(j), head_grad.gain(j), "head gain");
    check(&m.head.bias(j), head_grad.bias(j), "head bias");
    if (!tied) check(&m.head.weight(2, j), head_grad.weight(2, j), "head weight");
    check(&m.stage.params()[0].tensor(BlockTensor::QkvWeight)(j, 3), m.stage.grads()[0].tensor(BlockTensor::QkvWeight)(j, 3),
          "qkv weight");
  }
}

INSTANTIATE_TEST_SUITE_P(TiedAndUntied, KernelsCpuEnds, ::testing::Values(true, false));

TEST(KernelsCpuEndsErrors, Messages) {
  const BlockConfig c = small();
  EXPECT_EQ(error_of([&] { init_embedding<float>(c, 0, 1); }), "kernels: embedding: vocab = 0, expected at least 1");
  EXPECT_EQ(error_of([&] { init_lm_head<float>(c, 0, true, 1); }), "kernels: lm head: vocab = 0, expected at least 1");
  const Embedding<float> e = init_embedding<float>(c, kVocab, 1);
  EXPECT_EQ(error_of([&] { embedding_forward(e, c, std::vector<int>(3)); }),
            "kernels: embedding forward: 3 token ids, expected batch x seq = 16");
  std::vector<int> ids(16, 0);
  ids[4] = kVocab;
  EXPECT_EQ(error_of([&] { embedding_forward(e, c, ids); }),
            "kernels: embedding forward: token id 11 at 4 is outside the vocabulary [0, 11)");
  Embedding<float> grads{KMat<float>::Zero(kVocab, 16), KMat<float>::Zero(8, 16)};
  EXPECT_EQ(error_of([&] { embedding_backward_weight(c, std::vector<int>(16, 0), KMat<float>(KMat<float>::Zero(16, 3)), grads); }),
            "kernels: embedding backward_weight: gradient is 16 x 3, expected tokens x hidden = 16 x 16");

  const LmHead<float> head = init_lm_head<float>(c, kVocab, false, 2);
  LmHeadCache<float> cache;
  const KMat<float> x = KMat<float>::Ones(16, 16);
  EXPECT_EQ(error_of([&] { lm_head_forward(head, head.weight, x, std::vector<int>(15, 0), cache); }),
            "kernels: lm head forward: input 16 x 16, weight 11 x 16, 15 targets; expected n x h, V x h and n targets "
            "(h = 16)");
  EXPECT_EQ(error_of([&] { lm_head_forward(head, head.weight, x, std::vector<int>(16, -1), cache); }),
            "kernels: lm head forward: target -1 at 0 is outside the vocabulary [0, 11)");
  EXPECT_EQ(error_of([&] { lm_head_backward_input(head, head.weight, cache); }),
            "kernels: lm head backward_input: the cache holds no forward; run forward first");
  LmHead<float> head_grads{KRow<float>::Zero(16), KRow<float>::Zero(16), KMat<float>::Zero(kVocab, 16)};
  EXPECT_EQ(error_of([&] { lm_head_backward_weight(cache, head_grads, head_grads.weight); }),
            "kernels: lm head backward_weight: the cache holds no input gradient; run backward_input first");
  lm_head_forward(head, head.weight, x, std::vector<int>(16, 0), cache);
  lm_head_backward_input(head, head.weight, cache);
  KMat<float> wrong = KMat<float>::Zero(kVocab, 4);
  EXPECT_EQ(error_of([&] { lm_head_backward_weight(cache, head_grads, wrong); }),
            "kernels: lm head backward_weight: weight gradient is 11 x 4, expected V x h = 11 x 16");
}

}  // namespace
}  // namespace pipesim
