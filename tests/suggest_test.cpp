// core/suggest.hpp: the edit distance against hand-counted cases, and the names the "did
// you mean" of schedule, model, GPU and link errors offers.
#include "core/suggest.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "cost_models/catalog.hpp"
#include "schedules/generator.hpp"

namespace pipesim {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

std::string error_of(auto f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(EditDistance, CountsEachEditOnce) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);  // the textbook case: k->s, e->i, +g
  EXPECT_EQ(edit_distance("zbh1", "zb-h1"), 1u);      // one insertion
  EXPECT_EQ(edit_distance("1f1b", "1fb1"), 1u);       // one swap of neighbours
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);          // optimal string alignment: no edit of a swapped pair
  EXPECT_EQ(edit_distance("H100-SXM", "h100-sxm"), 0u);
  EXPECT_EQ(edit_distance("gpipe", "dualpipe"), 4u);
}

TEST(ClosestNames, TheClosestOnesElseThosePrefixedAtMostThree) {
  const std::vector<std::string> known = {"gpipe", "1f1b", "zb-h1", "zb-h2", "zb-v", "interleaved", "interleaved-zb"};
  EXPECT_THAT(closest_names("zb-h3", known), ElementsAre("zb-h1", "zb-h2"));
  EXPECT_THAT(closest_names("1F1B", known), ElementsAre("1f1b"));
  EXPECT_THAT(closest_names("interleave", known), ElementsAre("interleaved", "interleaved-zb"));
  EXPECT_THAT(closest_names("1f1", known), ElementsAre("1f1b"));
  EXPECT_THAT(closest_names("zb-h", known), ElementsAre("zb-h1", "zb-h2", "zb-v"));  // two prefixed, one 1 edit away
  EXPECT_THAT(closest_names("gpiep", known), ElementsAre("gpipe"));                  // the nearest only: 1 edit
  EXPECT_THAT(closest_names("zb-h3", std::vector<std::string>{"zb-v", "zb-h1"}), ElementsAre("zb-h1"));
  EXPECT_THAT(closest_names("zb", known), ElementsAre("zb-h1", "zb-h2", "zb-v"));
  EXPECT_THAT(closest_names("zb", known, 2), ElementsAre("zb-h1", "zb-h2"));
  EXPECT_TRUE(closest_names("2f2b", known).empty());
  EXPECT_TRUE(closest_names("", known).empty());
  EXPECT_TRUE(closest_names(std::string(100000, 'z'), known).empty());
}

TEST(DidYouMean, OneOrAShortList) {
  const std::vector<std::string> known = {"a100-40g", "a100-80g", "h100-sxm", "h200"};
  EXPECT_EQ(did_you_mean("h100", known), "did you mean 'h100-sxm' or 'h200'? ");  // a prefix, then 1 edit
  EXPECT_EQ(did_you_mean("h100-sx", known), "did you mean 'h100-sxm'? ");
  EXPECT_EQ(did_you_mean("a100", known), "did you mean 'a100-40g' or 'a100-80g'? ");
  EXPECT_EQ(did_you_mean("a", {"ab", "ac", "ad"}), "did you mean 'ab', 'ac' or 'ad'? ");
  EXPECT_EQ(did_you_mean("tpu-v5", known), "");
}

TEST(DidYouMean, InTheErrorsOfEveryKindOfName) {
  EXPECT_THAT(error_of([] { find_generator("zbh1"); }),
              HasSubstr("unknown schedule 'zbh1' (did you mean 'zb-h1'? known: gpipe, 1f1b,"));
  EXPECT_THAT(error_of([] { find_generator("2f2b"); }), HasSubstr("unknown schedule '2f2b' (known: gpipe, 1f1b,"));
  EXPECT_THAT(error_of([] { find_model("llama-2-70b"); }),
              HasSubstr("unknown model 'llama-2-70b' (did you mean 'llama2-70b'? known: gpt3-1.3b,"));
  EXPECT_THAT(error_of([] { find_gpu("h100"); }),
              HasSubstr("unknown gpu 'h100' (did you mean 'h100-sxm' or 'h200'? known: a100-40g,"));
  EXPECT_THAT(error_of([] { find_link("nvlnk4"); }),
              HasSubstr("unknown link 'nvlnk4' (did you mean 'nvlink4'? known: nvlink3,"));
}

}  // namespace
}  // namespace pipesim
