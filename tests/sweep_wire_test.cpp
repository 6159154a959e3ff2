// What the ranks of an MPI sweep send each other (tools/sweep_wire.hpp), without MPI: every
// row of a real sweep, with its skipped combinations and their examples, encoded and decoded
// gives the same CSV and JSON as the rows themselves; a failure travels with its code, index
// and message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "tools/sweep_output.hpp"
#include "tools/sweep_wire.hpp"
#include "tools/sweep_work.hpp"

namespace {

using namespace pipesim;

SweepGrid small_grid() {
  SweepGrid g;
  g.hardware = {"h100-sxm", "a100-80g"};
  VariantLists lists;
  lists.schedules = {"1f1b", "interleaved", "pipedream-2bw"};
  g.variants = expand_variants(lists);
  g.tp = {1, 2, 16};  // 16 does not divide gpt3-1.3b's heads: skipped with an example
  g.pp = {2, 4};
  g.microbatches = {4, 8};
  g.micro_batch_size = {1, 2};
  g.recompute = {"none", "full"};
  return g;
}

SweepSettings small_settings() {
  SweepSettings s;
  s.hardware.model = "gpt3-1.3b";
  s.hardware.nodes = 1;
  s.hardware.gpus_per_node = 8;
  return s;
}

std::string outputs(const SweepSettings& s, const SweepGrid& g, const SweepResult& r) {
  std::ostringstream csv;
  write_sweep_csv(csv, g, r);
  return csv.str() + sweep_json(s, g, r, SweepSelection{}).dump();
}

TEST(SweepWire, EveryGroupsOutcomeComesBackAsItWent) {
  const SweepSettings settings = small_settings();
  const SweepGrid grid = small_grid();
  const SweepWork work(settings, grid, 1);
  std::atomic<std::size_t> done{0};
  SweepCollector direct(work), travelled(work);
  RankRequest request;
  for (std::size_t g = 0; g < work.groups(); ++g) {
    GroupOutcome o = work.evaluate(g, done);
    request.outcomes.push_back(o);
    direct.add(std::move(o));
  }
  const std::string bytes = encode_request(request);
  const RankRequest back = decode_request(bytes, grid);
  EXPECT_EQ(back.kind, RequestKind::More);
  ASSERT_EQ(back.outcomes.size(), request.outcomes.size());
  std::size_t rows = 0, skips = 0;
  for (std::size_t i = 0; i < back.outcomes.size(); ++i) {
    const GroupOutcome &a = request.outcomes[i], &b = back.outcomes[i];
    ASSERT_EQ(a.rows.size(), b.rows.size());
    for (std::size_t k = 0; k < a.rows.size(); ++k) {
      EXPECT_EQ(grid_index(grid, b.rows[k].point), a.rows[k].index);  // the point is rebuilt from the index
      EXPECT_EQ(b.rows[k].point.recompute, a.rows[k].point.recompute);
    }
    EXPECT_EQ(a.skips, b.skips);
    for (std::size_t r = 0; r < kNumSkipReasons; ++r) {
      ASSERT_EQ(a.examples[r].has_value(), b.examples[r].has_value());
      if (a.examples[r]) {
        EXPECT_EQ(a.examples[r]->message, b.examples[r]->message);
      }
    }
    rows += a.rows.size(), skips += a.skips.size();
    travelled.add(GroupOutcome(b));
  }
  EXPECT_EQ(rows + skips, grid.size());
  EXPECT_GT(rows, 50u);
  EXPECT_GT(skips, 10u);
  const SweepResult x = direct.finish(1), y = travelled.finish(1);
  EXPECT_EQ(outputs(settings, grid, y), outputs(settings, grid, x));
  // Compact: a row is a few hundred bytes, not the SweepRow's in-memory size with its point.
  EXPECT_LT(bytes.size(), rows * 330 + skips * 10 + 4096);
}

TEST(SweepWire, AFailureTravelsWithItsCodeIndexAndMessage) {
  RankRequest failure;
  failure.kind = RequestKind::Failure;
  failure.exit_code = 3;
  failure.index = 41;
  failure.message = "bad\nthing";
  const RankRequest back = decode_request(encode_request(failure), small_grid());
  EXPECT_EQ(back.kind, RequestKind::Failure);
  EXPECT_EQ(back.exit_code, 3);
  EXPECT_EQ(back.index, 41u);
  EXPECT_EQ(back.message, "bad\nthing");
  EXPECT_TRUE(back.outcomes.empty());
}

TEST(SweepWire, ARangeIsTwoNumbers) { EXPECT_EQ(sizeof(GroupRange), 16u); }

TEST(SweepWork, ChunksShrinkWithTheWorkLeftAndCoverEveryGroupOnce) {
  const SweepSettings settings = small_settings();
  const SweepGrid grid = small_grid();
  const SweepWork work(settings, grid, 1);
  GroupQueue queue(work);
  std::vector<std::size_t> sizes;
  std::size_t expected = 0;
  for (;;) {
    const auto [first, last] = queue.take(0.25);
    if (first == last) break;
    EXPECT_EQ(first, expected);
    expected = last;
    sizes.push_back(last - first);
  }
  EXPECT_EQ(expected, work.groups());
  EXPECT_FALSE(queue.next().has_value());
  EXPECT_GE(sizes.size(), 3u);  // a quarter at a time: never all at once
  EXPECT_EQ(sizes.front(), 1u);  // the largest group alone is more than a quarter of 12
}

// The least work a chunk holds (towards the end, where a quarter of what is left is less
// than one small group): groups while their work stays under it, still at least one.
TEST(SweepWork, AChunkHoldsAtLeastTheWorkAsked) {
  const SweepSettings settings = small_settings();
  const SweepGrid grid = small_grid();
  const SweepWork work(settings, grid, 1);
  GroupQueue queue(work);
  const double all = queue.left();
  double sum = 0;
  for (std::size_t g = 0; g < work.groups(); ++g) sum += work.work(g);
  EXPECT_EQ(all, sum);
  const auto [a, b] = queue.take(0.01, 0.5 * all);  // half of all the work, largest groups first
  double taken = 0;
  for (std::size_t g = a; g < b; ++g) taken += work.work(g);
  EXPECT_LE(taken, 0.5 * all);
  EXPECT_GT(taken + work.work(b), 0.5 * all);  // one more would be over
  EXPECT_EQ(queue.left(), all - taken);
  const auto [c, d] = queue.take(0.01, 0);  // a share smaller than any group: one group
  EXPECT_EQ(c, b);
  EXPECT_EQ(d, b + 1);
}

}  // namespace

namespace {

// Under MPI every rank computes the other ranks' first chunks from the plan (no request for
// them): rank 0's queue then goes on after them, and together with what rank 0 and the later
// requests take they cover every group once.
TEST(SweepWork, FirstChunksComeFromThePlanAndTheQueueGoesOnAfterThem) {
  const SweepSettings settings = small_settings();
  const SweepGrid grid = small_grid();
  const SweepWork work(settings, grid, 1);
  GroupQueue rank0(work), rank2(work);
  const auto first = rank0.take_first_chunks(3, 1.0 / 12);
  ASSERT_EQ(first.size(), 2u);  // ranks 1 and 2
  EXPECT_EQ(rank2.take_first_chunks(3, 1.0 / 12), first);  // what rank 2 computes alone
  EXPECT_EQ(first[0].first, 0u);
  EXPECT_LT(first[0].first, first[0].second);  // at least one group each
  EXPECT_EQ(first[1].first, first[0].second);
  EXPECT_LT(first[1].first, first[1].second);
  std::size_t expected = first[1].second;
  while (const auto g = rank0.next()) EXPECT_EQ(*g, expected++);  // rank 0's threads: the rest
  EXPECT_EQ(expected, work.groups());
  // More ranks than groups: the last ones start with nothing (and end at once).
  GroupQueue many(work);
  const auto chunks = many.take_first_chunks(static_cast<int>(work.groups()) + 3, 0.01);
  EXPECT_EQ(chunks.back().first, chunks.back().second);
  EXPECT_EQ(chunks[work.groups() - 1].second, work.groups());
}

}  // namespace
