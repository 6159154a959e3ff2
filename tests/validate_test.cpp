// Validation: every class of broken schedule is reported with its own message, a cycle
// is reported as the chain of waiting ops, and the critical path is the zero-link makespan.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "schedules/op_text.hpp"
#include "schedules/validate.hpp"

#include <set>

namespace pipesim {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

Schedule from_text(int devices, int stages, const std::vector<std::vector<std::string>>& lists) {
  Schedule s;
  s.num_devices = devices;
  s.num_stages = stages;
  s.placement = round_robin_placement(stages, devices);
  std::set<int> forwards;  // the micro-batches the ops run, as a file's header would count them
  for (const auto& list : lists) {
    s.ops.emplace_back();
    for (const auto& text : list) {
      s.ops.back().push_back(*parse_op(text));
      if (s.ops.back().back().kind == OpKind::F) forwards.insert(s.ops.back().back().microbatch);
    }
  }
  s.microbatches = static_cast<int>(forwards.size());
  return s;
}

std::string all_errors(const ValidationReport& r) {
  std::string out;
  for (const auto& e : r.errors) out += e + "\n";
  return out;
}

TEST(Validate, GoodScheduleHasNoErrorsAndCriticalPathIsTheMakespan) {
  const Schedule s = from_text(2, 2, {{"0F0", "0F1", "0B0", "0B1", "0OPT"}, {"1F0", "1B0", "1F1", "1B1", "1OPT"}});
  const auto r = validate(s, [](const Op& op) -> std::int64_t { return op.kind == OpKind::F ? 1 : op.kind == OpKind::B ? 2 : 0; });
  EXPECT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.critical_path, 9);  // (m+p-1)(tF+tB) = 3 * 3
  EXPECT_EQ(r.critical_path_ops.front(), "0F0 (device 0)");
}

TEST(Validate, TheHeadersCountsMustBeTheOps) {
  // A header that claims more micro-batches than the ops run would scale the throughput.
  Schedule s = from_text(1, 1, {{"0F0", "0B0", "0OPT"}});
  ASSERT_TRUE(validate(s).ok());
  s.microbatches = 2000000000;
  EXPECT_THAT(all_errors(validate(s)), HasSubstr("the forwards cover 1 distinct micro-batch ids, but microbatches "
                                                 "2000000000 x iterations 1 says 2000000000"));
  s.microbatches = 1;
  s.iterations = 2;
  EXPECT_THAT(all_errors(validate(s)), HasSubstr("microbatches 1 x iterations 2 says 2"));
  s.iterations = 1;
  s.microbatch_split = 2147483647;  // every op 1/2^31 of a micro-batch: 0 ns
  EXPECT_THAT(all_errors(validate(s)), HasSubstr("microbatch_split 2147483647 does not divide microbatches 1"));
}

TEST(Validate, CycleIsReportedAsTheChainOfWaitingOps) {
  const Schedule s = from_text(2, 2, {{"0B0", "0F0"}, {"1F0", "1B0"}});
  const auto r = validate(s);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(all_errors(r), HasSubstr("deadlock: "));
  // Every op on the cycle appears once, and the chain closes on itself.
  EXPECT_THAT(r.cycle, ElementsAre("0F0 (device 0)", "0B0 (device 0)"));
  EXPECT_THAT(all_errors(r), HasSubstr("deadlock: 0F0 (device 0) waits for 0B0 (device 0) waits for 0F0 (device 0)"));
}

TEST(Validate, CrossDeviceCycleThroughOrderOnly) {
  // Device 1 takes micro-batch 1 first; device 0 must then send 0F1 before waiting on 0B0.
  const Schedule s = from_text(2, 2, {{"0F0", "0F1", "0B1", "0B0"}, {"1F1", "1B1", "1F0", "1B0"}});
  EXPECT_TRUE(validate(s).ok());  // legal: device 1 takes micro-batch 1 first
  const Schedule bad = from_text(2, 2, {{"0F0", "0B0", "0F1", "0B1"}, {"1F1", "1B1", "1F0", "1B0"}});
  const auto r = validate(bad);
  EXPECT_THAT(all_errors(r), HasSubstr("deadlock: 1B0 (device 1) waits for 1F0 (device 1) waits for 1B1 (device 1) waits for "
                                       "1F1 (device 1) waits for 0F1 (device 0) waits for 0B0 (device 0) waits for 1B0 (device 1)"));
}

TEST(Validate, MissingBackwardAndSplitProblems) {
  const Schedule s = from_text(1, 1, {{"0F0", "0F1", "0I1", "0F2", "0B2", "0I2", "0W2"}});
  const auto r = validate(s);
  EXPECT_THAT(all_errors(r), HasSubstr("0F0 has no backward (neither B nor I)"));
  EXPECT_THAT(all_errors(r), HasSubstr("0I1 has no weight-gradient W"));
  EXPECT_THAT(all_errors(r), HasSubstr("0B2 and 0I2 both run"));
}

TEST(Validate, BackwardBeforeForwardOnTheSameDevice) {
  const Schedule s = from_text(1, 1, {{"0B0", "0F0"}});
  EXPECT_THAT(all_errors(validate(s)), HasSubstr("device 0 op 0: backward of 0F0 is listed before its forward (op 1)"));
}

TEST(Validate, DuplicateWrongDeviceOutOfRangeAndMissingProducer) {
  const Schedule s = from_text(2, 2, {{"0F0", "0F0", "1F1", "5F0", "0B0", "0B1"}, {"1F0", "1B0", "1B1"}});
  const std::string errors = all_errors(validate(s));
  EXPECT_THAT(errors, HasSubstr("device 0 op 1: duplicate op 0F0 (also at device 0 position 0)"));
  EXPECT_THAT(errors, HasSubstr("device 0 op 2: 1F1: runs on device 0, but pipeline 0 stage 1 is placed on device 1"));
  EXPECT_THAT(errors, HasSubstr("device 0 op 3: 5F0: stage 5 outside [0, 2)"));
  EXPECT_THAT(errors, HasSubstr("1B1 needs its forward 1F1, which no device runs"));
}

TEST(Validate, UnmatchedCollective) {
  Schedule s = from_text(2, 1, {{"0F0", "0B0", "0GRADSYNC", "0OPT"}, {}});
  s.num_pipelines = 2;
  s.placement = {{0}, {1}};
  s.ops[1] = {*parse_op("1:0F1"), *parse_op("1:0B1"), *parse_op("1:0OPT")};
  EXPECT_THAT(all_errors(validate(s)), HasSubstr("0GRADSYNC occurrence 0 has 1 participant(s), expected one per pipeline (2)"));
}

TEST(Validate, InconsistentShapeThrows) {
  Schedule s = from_text(2, 2, {{"0F0"}, {"1F0"}});
  s.ops.pop_back();
  EXPECT_THAT([&] { validate(s); }, testing::ThrowsMessage<InputError>(HasSubstr("1 op lists for 2 devices")));
  Schedule t = from_text(2, 2, {{"0F0"}, {"1F0"}});
  t.placement[0][1] = 7;
  EXPECT_THAT([&] { validate(t); }, testing::ThrowsMessage<InputError>(HasSubstr("placed on device 7, outside [0, 2)")));
}

// The pairing check numbers micro-batch ids densely; ids far apart (a schedule built in code:
// the file readers refuse them) are ranked instead of offset, with the same reports in the
// same (pipeline, stage, micro-batch) order.
TEST(Validate, PairingReportsInOrderForDenseAndFarApartMicrobatchIds) {
  for (const std::string far : {"3", "2000000000"}) {
    const Schedule s = from_text(1, 1, {{"0F" + far, "0F0", "0I1", "0F1", "0F2", "0B" + far}});
    EXPECT_THAT(validate(s).errors, testing::IsSupersetOf({
                                        "device 0 op 1: 0F0 has no backward (neither B nor I)",
                                        "device 0 op 2: 0I1 has no weight-gradient W",
                                        "device 0 op 2: backward of 0F1 is listed before its forward (op 3)",
                                        "device 0 op 4: 0F2 has no backward (neither B nor I)",
                                    }))
        << far;
    std::vector<std::string> pairing;
    for (const auto& e : validate(s).errors)
      if (e.find("backward") != std::string::npos || e.find("weight-gradient") != std::string::npos) pairing.push_back(e);
    EXPECT_THAT(pairing, ElementsAre(HasSubstr("0F0 has no backward"), HasSubstr("0I1 has no weight-gradient"),
                                     HasSubstr("backward of 0F1"), HasSubstr("0F2 has no backward")))
        << far;
  }
}

}  // namespace
}  // namespace pipesim
