// Communication ops in device lists (SEND_F / RECV_F / SEND_B / RECV_B), as the engine runs
// them (sim/engine.hpp): a send is posted where it stands, a receive waits where it stands,
// neither takes device time. Their placement can cost time or deadlock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cost_models/uniform.hpp"
#include "input_error.hpp"
#include "schedules/generator.hpp"
#include "schedules/lowering.hpp"
#include "schedules/schedule_io.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;

UniformCostModel costs(Tick latency = 0) {
  UniformCostConfig cfg;
  cfg.stage = StageCosts{1000, 2000, 1000};
  cfg.link_latency = latency;
  return UniformCostModel(cfg);
}

Tick makespan(const std::string& csv, Tick latency = 0) {
  return simulate(parse_schedule_csv(csv, "comms.csv"), costs(latency)).makespan;
}

TEST(CommOps, LoweredScheduleRunsLikeTheComputeOrderOnFreeLinks) {
  // On free links PyTorch's placement (sends right after their producers) costs nothing.
  // With a latency its receives, posted where the lowering put them, can hold a message
  // back: never faster than the compute order.
  for (const char* name : {"1f1b", "gpipe", "interleaved", "zb-h1", "zb-v", "dualpipev", "looped-bfs", "interleaved-zb"}) {
    for (Tick latency : {Tick{0}, Tick{300}}) {
      SCOPED_TRACE(std::string(name) + " latency " + std::to_string(latency));
      ScheduleParams p;
      p.p = 4;
      p.m = 8;
      const Schedule s = generate(name, p);
      const Tick lowered = simulate(add_send_recv(s), costs(latency)).makespan;
      if (latency == 0)
        EXPECT_EQ(lowered, simulate(s, costs(latency)).makespan);
      else
        EXPECT_GE(lowered, simulate(s, costs(latency)).makespan);
    }
  }
}

TEST(CommOps, APostedSendLateInTheListDelaysTheReceiver) {
  // Two stages, two micro-batches, GPipe order. With the sends right after each forward,
  // rank 1 starts at 1 us; with both sends after 0F1, the first activation leaves at 2 us
  // and everything downstream shifts by 1 us.
  const std::string early =
      "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
      "1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n";
  const std::string late =
      "0F0,0F1,0SEND_F0,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
      "1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n";
  EXPECT_EQ(makespan(early), 9000);  // (m + p - 1)(F + B)
  EXPECT_EQ(makespan(late), 10000);
}

TEST(CommOps, AMessageMovesOnlyOnceItsReceiveIsPosted) {
  // 1F1B, p = 2, m = 2, 1 us link latency. Rank 1 posting its receive of micro-batch 1
  // first lets that activation travel while it works (makespan 11 us); posting it after
  // 1B0 holds the message back until then (12 us).
  const std::string rank0 = "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n";
  EXPECT_EQ(makespan(rank0 + "1RECV_F0,1RECV_F1,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n", 1000), 11000);
  EXPECT_EQ(makespan(rank0 + "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n", 1000), 12000);
  // The receive does not stop its device: the same order without comm ops runs alike.
  EXPECT_EQ(makespan("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", 1000), 11000);
}

TEST(CommOps, ASendAfterTheOpWaitingForItsAnswerDeadlocksAndTheCycleIsNamed) {
  // Rank 0 waits at 0B0 for a gradient that rank 1 can only compute from the activation
  // rank 0 sends after 0B0.
  const std::string csv =
      "0F0,0RECV_B0,0B0,0SEND_F0\n"
      "1RECV_F0,1F0,1B0,1SEND_B0\n";
  const Schedule s = parse_schedule_csv(csv, "deadlock.csv");
  EXPECT_THAT(error_of([&] { simulate(s, costs()); }),
              HasSubstr("deadlock: 2 device(s) cannot go on: device 0 waits at 0B0 for 0RECV_B0 (device 0) which waits "
                        "for 1SEND_B0 (device 1); device 1 waits at 1F0 for 1RECV_F0 (device 1) which waits for 0SEND_F0 "
                        "(device 0)"));
  const ValidationReport v = validate(s);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.errors.back(), HasSubstr("deadlock: "));
  EXPECT_THAT(v.errors.back(), HasSubstr("0RECV_B0 (device 0) waits for 1SEND_B0 (device 1)"));
  EXPECT_THAT(v.errors.back(), HasSubstr("1RECV_F0 (device 1) waits for 0SEND_F0 (device 0)"));
  // A receive posted after the op that needs it: that device alone is stuck.
  EXPECT_THAT(error_of([&] { simulate(parse_schedule_csv("0F0,0SEND_F0,0B0\n1F0,1RECV_F0,1B0\n", "own.csv"), costs()); }),
              HasSubstr("device 1 waits at 1F0 for 1RECV_F0 (device 1)"));
}

TEST(CommOps, ObserverSeesZeroLengthCommOpsAndTheirTransfers) {
  const Schedule s = add_send_recv(generate("1f1b", ScheduleParams{}));
  TimelineRecorder rec;
  const SimResult r = simulate(s, costs(), &rec);
  std::size_t comms = 0;
  for (const OpRecord& op : rec.timeline.ops)
    if (is_comm(op.op.kind)) {
      ++comms;
      EXPECT_EQ(op.start, op.end);
    }
  EXPECT_EQ(comms, 2u * 2 * 8 * 3);  // send + receive, each way, 8 micro-batches, 3 boundaries
  EXPECT_EQ(rec.timeline.transfers.size(), 2u * 8 * 3);
  EXPECT_GT(r.makespan, 0);
}

TEST(CommOps, BadCommOpsAreReported) {
  const auto problems = [](const std::string& csv) {
    const ValidationReport v = validate(parse_schedule_csv(csv, "bad.csv"));
    std::string all;
    for (const std::string& e : v.errors) all += e + "; ";
    return all;
  };
  EXPECT_THAT(problems("0F0,0RECV_F0,0B0\n1F0,1B0\n"), HasSubstr("0RECV_F0: stage 0 receives no activation"));
  EXPECT_THAT(problems("0F0,0B0\n1F0,1SEND_F0,1B0\n"), HasSubstr("1SEND_F0: the last stage has no next stage"));
  EXPECT_THAT(problems("0F0,0SEND_B0,0B0\n1F0,1B0\n"), HasSubstr("0SEND_B0: stage 0 has no previous stage"));
  EXPECT_THAT(problems("0F0,0B0\n1F0,1B0,1RECV_B0\n"), HasSubstr("1RECV_B0: the last stage receives no gradient"));
  EXPECT_THAT(problems("0F0,0SEND_F0,0SEND_F0,0B0\n1F0,1B0\n"), HasSubstr("duplicate op 0SEND_F0"));
  // A receive takes its message from its send, never straight from the compute op.
  EXPECT_THAT(problems("0F0,0RECV_B0,0B0\n1F0,1B0\n"), HasSubstr("0RECV_B0 needs its send 1SEND_B0, which no device runs"));
  EXPECT_THAT(problems("0F0,0F1,0B0,0B1\n1F0,1F1,1B0,1SEND_B1\n"), HasSubstr("1SEND_B1 needs the backward it sends 1I1, which no device runs"));
}

}  // namespace
}  // namespace pipesim
