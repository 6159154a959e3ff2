// OpNumbering (schedules/op_numbering.hpp) and the engine's SlotNumbering (sim/slot_numbering.hpp): both numberings are bijections between (device,
// index) and their ids, in the order their types name, and their ids do not mix.
#include <gtest/gtest.h>

#include <concepts>
#include <cstdint>
#include <set>
#include <type_traits>
#include <vector>

#include "schedules/dependencies.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_numbering.hpp"
#include "sim/slot_numbering.hpp"

namespace pipesim {
namespace {

// An id of one numbering is no id of the other, and no number is an id without a cast.
static_assert(!std::is_convertible_v<GraphId, SlotId> && !std::is_convertible_v<SlotId, GraphId>);
static_assert(!std::is_convertible_v<std::uint32_t, GraphId> && !std::is_convertible_v<std::uint32_t, SlotId>);
static_assert(std::same_as<decltype(GraphNumbering{}.id(0, 0)), GraphId>);
static_assert(std::same_as<decltype(SlotNumbering{}.id(0, 0)), SlotId>);
template <class Numbered, class Id>
concept takes_id = requires(const Numbered& n, Id id) { n.device_of(id); };
static_assert(takes_id<DependencyGraph, GraphId> && !takes_id<DependencyGraph, SlotId>);
static_assert(takes_id<SlotNumbering, SlotId> && !takes_id<SlotNumbering, GraphId>);
static_assert(!takes_id<GraphNumbering, std::uint32_t>);
// No runtime cost: an id is its 32-bit number.
static_assert(sizeof(GraphId) == 4 && sizeof(SlotId) == 4);

// Every op has one id, ids below size(), each naming its op back; the cursor visits them in
// increasing id order.
template <class Id>
void expect_bijection(const Schedule& s, const OpNumbering<Id>& ids) {
  std::set<std::uint32_t> seen;
  for (int d = 0; d < static_cast<int>(s.ops.size()); ++d) {
    for (std::uint32_t i = 0; i < s.ops[static_cast<std::size_t>(d)].size(); ++i) {
      const Id id = ids.id(d, i);
      ASSERT_LT(at(id), ids.size());
      EXPECT_TRUE(seen.insert(static_cast<std::uint32_t>(id)).second) << "device " << d << " index " << i;
      EXPECT_EQ(ids.device_of(id), d);
      EXPECT_EQ(ids.index_of(id, d), i);
      EXPECT_EQ(ids.id_from(ids.id(d, 0), i), id);
    }
  }
  std::vector<std::uint32_t> order;
  ids.for_each([&](int d, std::uint32_t i, Id id) {
    EXPECT_EQ(ids.id(d, i), id);
    order.push_back(static_cast<std::uint32_t>(id));
  });
  EXPECT_EQ(order, std::vector<std::uint32_t>(seen.begin(), seen.end()));
}

Schedule with_lengths(const std::vector<std::size_t>& lengths) {
  Schedule s;
  s.num_devices = static_cast<int>(lengths.size());
  for (std::size_t n : lengths) s.ops.emplace_back(n, make_op(OpKind::F, 0, 0, 0));
  return s;
}

TEST(OpNumbering, GraphIdsAreDeviceMajorAndSlotIdsInterleaved) {
  ScheduleParams params;
  params.p = 4;
  params.m = 8;
  const Schedule s = generate("1f1b", params);
  const GraphNumbering graph(s);
  const SlotNumbering slots(s);
  expect_bijection(s, graph);
  expect_bijection(s, slots);
  EXPECT_FALSE(graph.interleaved());
  EXPECT_TRUE(slots.interleaved());
  const std::uint32_t length = graph.length(0);
  EXPECT_EQ(graph.id(1, 2), GraphId{length + 2});  // device by device
  EXPECT_EQ(slots.id(1, 2), SlotId{2 * 4 + 1});     // index by index
  std::vector<GraphId> all;
  for (const GraphId id : ids_below<GraphId>(3)) all.push_back(id);
  EXPECT_EQ(all, (std::vector<GraphId>{GraphId{0}, GraphId{1}, GraphId{2}}));
}

TEST(OpNumbering, UnevenListsInterleaveOnlyWhenLittleIsWasted) {
  // 8 + 7 ops in 16 ids: 1 of 15 wasted, under 1/8: interleaved, the unused id skipped.
  const Schedule close = with_lengths({8, 7});
  const SlotNumbering a(close);
  EXPECT_TRUE(a.interleaved());
  EXPECT_EQ(a.size(), 16u);
  expect_bijection(close, a);
  // 8 + 2 ops would take 16 ids for 10: the slots stay device-major, dense.
  const Schedule far = with_lengths({8, 2});
  const SlotNumbering b(far);
  EXPECT_FALSE(b.interleaved());
  EXPECT_EQ(b.size(), 10u);
  expect_bijection(far, b);
  expect_bijection(far, GraphNumbering(far));
}

}  // namespace
}  // namespace pipesim
