// `pipesim schedule --format pytorch / pytorch-comms`, and -p / -m / -v checked against a
// schedule file, end to end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_runner.hpp"

namespace {

using testing::HasSubstr;
using namespace pipesim::testing_cli;

const std::string kPytorch = std::string(PIPESIM_TEST_DATA) + "/pytorch";

TEST(PytorchCli, FormatsWritePytorchsCsv) {
  const Result only = run("schedule --schedule 1f1b -p 2 -m 3 --format pytorch");
  ASSERT_EQ(only.code, 0) << only.out;
  EXPECT_EQ(only.out, "0F0,0F1,0B0,0F2,0B1,0B2\n1F0,1B0,1F1,1B1,1F2,1B2\n");
  const Result comms = run("schedule --schedule 1f1b -p 2 -m 3 --format pytorch-comms");
  ASSERT_EQ(comms.code, 0) << comms.out;
  EXPECT_THAT(comms.out, HasSubstr("0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,"));
  EXPECT_THAT(comms.out, HasSubstr(",0B2,0REDUCE_GRAD\n"));
  // A PyTorch file comes back as it was, blank and overlapped cells included.
  const Result back = run("schedule --schedule-file " + kPytorch + "/dualpipev_4rank_10mb.csv --format pytorch");
  ASSERT_EQ(back.code, 0) << back.out;
  EXPECT_EQ(back.out, slurp(kPytorch + "/dualpipev_4rank_10mb.csv"));
}

// A compute_comms file: checked (the sends and receives cost nothing on the critical path)
// and simulated.
TEST(PytorchCli, ComputeCommsFilesAreCheckedAndSimulated) {
  const std::string file = kPytorch + "/zb1p_2rank_2stagep_comms.csv";
  const Result check = run("check --schedule-file " + file);
  ASSERT_EQ(check.code, 0) << check.out;
  EXPECT_THAT(check.out, HasSubstr("valid (176 ops on 2 devices)"));
  EXPECT_THAT(check.out, HasSubstr("critical-path lower bound 24.500 ms"));
  const Result sim = run("simulate --schedule-file " + file + " --fwd 1ms --bwd 2ms --wgrad 1ms");
  ASSERT_EQ(sim.code, 0) << sim.out;
  EXPECT_THAT(sim.out, HasSubstr("makespan"));
}

TEST(PytorchCli, WhatPytorchCannotExpressIsAOneLineError) {
  expect_one_line_error(run("schedule --schedule chimera -p 4 -m 4 --format pytorch"),
                        "--format pytorch: PyTorch pipelining runs one pipeline; 'chimera' has 2");
  expect_one_line_error(run("schedule --schedule 1f1b --iterations 2 --format pytorch-comms"),
                        "--format pytorch-comms: a PyTorch schedule covers one iteration; '1f1b' has 2");
}

TEST(PytorchCli, ShapeFlagsAreCheckedAgainstTheFile) {
  const std::string file = kPytorch + "/zb1p_2rank_2stagep_compute.csv";
  ASSERT_EQ(run("simulate --schedule-file " + file + " -p 2 -m 8 -v 2").code, 0);
  expect_one_line_error(run("simulate --schedule-file " + file + " -p 4"),
                        "-p/--stages 4: '" + file + "' has 2 devices (drop -p/--stages, or give 2)");
  expect_one_line_error(run("simulate --schedule-file " + file + " -m 4"),
                        "-m/--microbatches 4: '" + file + "' has 8 micro-batches per iteration");
  expect_one_line_error(run("check --schedule-file " + file + " -v 3"),
                        "-v/--chunks 3: '" + file + "' has 2 chunks per device");
}

}  // namespace
