// PyTorch both ways (schedules/schedule_io, schedules/pytorch_format, schedules/lowering):
// PyTorch's own test artifacts (tests/data/pytorch/SOURCES.md) read, run and written back
// byte for byte; pipesim's generators written in PyTorch's formats, parsed with PyTorch's
// action grammar and compared with PyTorch's orders; the lowering pass against PyTorch's
// lowered file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>

#include "cost_models/uniform.hpp"
#include "input_error.hpp"
#include "schedules/generator.hpp"
#include "schedules/lowering.hpp"
#include "schedules/op_text.hpp"
#include "schedules/pytorch_format.hpp"
#include "schedules/schedule_io.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;

const std::string kPytorch = std::string(PIPESIM_TEST_DATA) + "/pytorch";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

ScheduleParams params(int p, int m, int v = 2) {
  ScheduleParams out;
  out.p = p;
  out.m = m;
  out.v = v;
  return out;
}

// PyTorch's _action_regex (torch/distributed/pipelining/schedules.py, commit 00722e64),
// matched against the whole cell, and its OVERLAP_F_B container "(a;b)OVERLAP_F_B".
bool pytorch_parses(const std::string& cell) {
  static const std::regex action(R"((\d+)(F|I|B|W|UNSHARD|RESHARD|REDUCE_GRAD|SEND_F|RECV_F|SEND_B|RECV_B)(\d*))");
  if (cell.empty()) return true;  // None: an idle step
  if (cell.front() == '(') {
    const std::size_t close = cell.find(')');
    if (close == std::string::npos || cell.substr(close + 1) != "OVERLAP_F_B") return false;
    std::stringstream inner(cell.substr(1, close - 1));
    for (std::string sub; std::getline(inner, sub, ';');)
      if (!std::regex_match(sub, action)) return false;
    return true;
  }
  return std::regex_match(cell, action);
}

std::vector<std::vector<std::string>> cells_of(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  std::stringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    rows.emplace_back();
    std::stringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) rows.back().push_back(cell);
  }
  return rows;
}

// Each device's ops without the stage-level ones (PyTorch's compute-only schedules have none).
std::vector<std::vector<Op>> compute_ops(const Schedule& s) {
  std::vector<std::vector<Op>> out(s.ops.size());
  for (std::size_t d = 0; d < s.ops.size(); ++d)
    for (const Op& op : s.ops[d])
      if (is_microbatch_op(op.kind)) out[d].push_back(op);
  return out;
}

// PyTorch's _merge_bw: an I directly followed by its W becomes one B.
Schedule merge_bw(Schedule s) {
  s.cells = CellLayout{};
  for (auto& list : s.ops) {
    std::vector<Op> merged;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Op& op = list[i];
      if (op.kind == OpKind::I && i + 1 < list.size() && list[i + 1] == make_op(OpKind::W, op.stage, op.microbatch)) {
        merged.push_back(make_op(OpKind::B, op.stage, op.microbatch));
        ++i;
      } else {
        merged.push_back(op);
      }
    }
    list = merged;
  }
  return s;
}

UniformCostModel unit_costs() {
  UniformCostConfig cfg;
  cfg.stage = StageCosts{1000, 2000, 1000};  // F = I = W = 1 us per full stage
  return UniformCostModel(cfg);
}

// ---- reading PyTorch's files ----------------------------------------------------------------

TEST(PytorchRead, DualPipeVArtifactIsPipesimsDualPipeV) {
  const Schedule s = read_schedule_file(kPytorch + "/dualpipev_4rank_10mb.csv");
  EXPECT_EQ(s.num_devices, 4);
  EXPECT_EQ(s.num_stages, 8);
  EXPECT_EQ(s.microbatches, 10);
  EXPECT_EQ(s.placement, (std::vector<std::vector<int>>{{0, 1, 2, 3, 3, 2, 1, 0}}));
  // (0F7;7B3)OVERLAP_F_B runs as its sub-actions in order: 0F7 then 7B3.
  EXPECT_EQ(s.ops[0][17], make_op(OpKind::F, 0, 7));
  EXPECT_EQ(s.ops[0][18], make_op(OpKind::B, 7, 3));
  EXPECT_EQ(s.cells.column[0][17], s.cells.column[0][18]);
  EXPECT_EQ(s.ops, compute_ops(generate("dualpipev", params(4, 10))));
  EXPECT_TRUE(validate(s).ok());
  const SimResult r = simulate(s, unit_costs());
  EXPECT_EQ(r.makespan, simulate(generate("dualpipev", params(4, 10)), unit_costs()).makespan);
}

TEST(PytorchRead, InterleavedZeroBubbleArtifactIsPipesimsInterleavedZb) {
  const Schedule s = read_schedule_file(kPytorch + "/zb1p_2rank_2stagep_compute.csv");
  EXPECT_EQ(s.num_stages, 4);
  EXPECT_EQ(s.chunks_per_device(), 2);
  EXPECT_EQ(s.ops, compute_ops(generate("interleaved-zb", params(2, 8, 2))));
}

TEST(PytorchRead, ComputeCommsArtifactRunsWithItsSendsAndReceives) {
  const Schedule s = read_schedule_file(kPytorch + "/zb1p_2rank_2stagep_comms.csv");
  EXPECT_EQ(s.ops[0][1], make_op(OpKind::SendF, 0, 0));
  EXPECT_EQ(s.ops[0][2], make_op(OpKind::RecvF, 2, 0));
  EXPECT_EQ(s.ops[1][0], make_op(OpKind::RecvF, 1, 0));
  const ValidationReport v = validate(s);
  EXPECT_TRUE(v.ok()) << (v.errors.empty() ? "" : v.errors.front());
  const SimResult r = simulate(s, unit_costs());
  // The same compute order without the comm ops: the placement of the receives costs time
  // here (rank 0 waits at 0RECV_B0 where the compute-only order would run 0F3 first).
  const SimResult plain = simulate(merge_bw(read_schedule_file(kPytorch + "/zb1p_2rank_2stagep_compute.csv")), unit_costs());
  EXPECT_GE(r.makespan, plain.makespan);
  for (const DeviceStats& d : r.devices) EXPECT_EQ(d.busy, 8 * 3000);  // comm ops take no device time
}

TEST(PytorchRead, FsdpActionsAreKeptAsText) {
  const Schedule s = parse_schedule_csv("0UNSHARD,0F0,0SEND_F0,0RESHARD\n1RECV_F0,1F0\n", "fsdp.csv");
  ASSERT_EQ(s.ops[0].size(), 2u);
  ASSERT_EQ(s.cells.kept.size(), 2u);
  EXPECT_EQ(s.cells.kept[0].text, "0UNSHARD");
  EXPECT_EQ(schedule_to_pytorch(s, PytorchFormat::ComputeComms), "0UNSHARD,0F0,0SEND_F0,0RESHARD\n1RECV_F0,1F0\n");
}

// ---- writing: byte for byte back ----------------------------------------------------------

TEST(PytorchWrite, ArtifactsRoundTripByteForByte) {
  for (const char* name : {"dualpipev_4rank_10mb.csv", "zb1p_2rank_2stagep_compute.csv"}) {
    SCOPED_TRACE(name);
    const std::string text = slurp(kPytorch + "/" + name);
    const Schedule s = parse_schedule_csv(text, name);
    EXPECT_EQ(schedule_to_pytorch(s, PytorchFormat::ComputeOnly), text);
    EXPECT_EQ(schedule_to_csv(s), text);
  }
  const std::string comms = slurp(kPytorch + "/zb1p_2rank_2stagep_comms.csv");
  EXPECT_EQ(schedule_to_pytorch(parse_schedule_csv(comms, "comms.csv"), PytorchFormat::ComputeComms), comms);
}

TEST(PytorchWrite, LoweringReproducesPytorchsLoweredFile) {
  // PyTorch made the comms artifact from the compute one with _merge_bw and _add_send_recv
  // (and no REDUCE_GRAD: that commit's lowering added none).
  const Schedule compute = merge_bw(read_schedule_file(kPytorch + "/zb1p_2rank_2stagep_compute.csv"));
  const Schedule lowered = add_send_recv(compute);
  EXPECT_EQ(lowered.ops, read_schedule_file(kPytorch + "/zb1p_2rank_2stagep_comms.csv").ops);
}

TEST(PytorchWrite, EveryOnePipelineGeneratorParsesWithPytorchsGrammar) {
  for (const auto& g : generators()) {
    ScheduleParams p = params(4, 8);
    if (std::string(g.name) == "amp" || std::string(g.name) == "pipedream" || std::string(g.name) == "pipedream-2bw" ||
        std::string(g.name) == "async-1f1b")
      continue;  // flush-free: one optimizer step per micro-batch, not PyTorch's one iteration
    const Schedule s = generate(g.name, p);
    SCOPED_TRACE(g.name);
    if (s.num_pipelines != 1) {
      EXPECT_THAT(error_of([&] { schedule_to_pytorch(s, PytorchFormat::ComputeOnly); }),
                  HasSubstr("--format pytorch: PyTorch pipelining runs one pipeline; '" + std::string(g.name) + "' has 2"));
      continue;
    }
    for (PytorchFormat f : {PytorchFormat::ComputeOnly, PytorchFormat::ComputeComms}) {
      const std::string csv = schedule_to_pytorch(s, f);
      const auto rows = cells_of(csv);
      ASSERT_EQ(rows.size(), 4u);
      for (const auto& row : rows)
        for (const std::string& cell : row) EXPECT_TRUE(pytorch_parses(cell)) << "'" << cell << "'";
      EXPECT_EQ(csv.find("OPT"), std::string::npos);
      EXPECT_EQ(csv.find("GRADSYNC"), std::string::npos);
      EXPECT_EQ(csv.find(':'), std::string::npos);
      if (f == PytorchFormat::ComputeOnly) {
        EXPECT_EQ(parse_schedule_csv(csv, "back.csv").ops, compute_ops(s));
        EXPECT_EQ(csv.find("REDUCE_GRAD"), std::string::npos);  // PyTorch's runtime adds it itself
      } else {
        // One REDUCE_GRAD per stage, and the lowered file runs as fast as the compute order
        // on free links (every send right after its producer).
        const Schedule back = parse_schedule_csv(csv, "back.csv");
        std::size_t reduce = 0;
        for (std::size_t at = csv.find("REDUCE_GRAD"); at != std::string::npos; at = csv.find("REDUCE_GRAD", at + 1)) ++reduce;
        EXPECT_EQ(static_cast<int>(reduce), s.num_stages);
        EXPECT_TRUE(validate(back).ok());
        EXPECT_EQ(simulate(back, unit_costs()).makespan, simulate(s, unit_costs()).makespan);
      }
    }
  }
}

TEST(PytorchWrite, OneF1BCommsMatchesPytorchsLowering) {
  // 1F1B p = 2, m = 3 lowered by PyTorch's rules (_add_reduce_grad, then _add_send_recv).
  EXPECT_EQ(schedule_to_pytorch(generate("1f1b", params(2, 3, 1)), PytorchFormat::ComputeComms),
            "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0F2,0SEND_F2,0RECV_B1,0B1,0RECV_B2,0B2,0REDUCE_GRAD\n"
            "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1RECV_F2,1B1,1SEND_B1,1F2,1B2,1SEND_B2,1REDUCE_GRAD\n");
}

TEST(PytorchWrite, WhatPytorchCannotExpressIsAnError) {
  ScheduleParams two = params(4, 8, 1);
  two.iterations = 2;
  EXPECT_THAT(error_of([&] { schedule_to_pytorch(generate("1f1b", two), PytorchFormat::ComputeOnly); }),
              HasSubstr("--format pytorch: a PyTorch schedule covers one iteration; '1f1b' has 2 (use --iterations 1)"));
  EXPECT_THAT(error_of([&] { schedule_to_pytorch(generate("dualpipe", params(4, 8)), PytorchFormat::ComputeComms); }),
              HasSubstr("--format pytorch-comms: PyTorch pipelining runs one pipeline; 'dualpipe' has 2"));
}

TEST(Lowering, ErrorsNameTheStuckOps) {
  // Rank 0 lists its backward first, which needs rank 1's, which needs rank 0's forward.
  const Schedule bad = parse_schedule_csv("0B0,0F0\n1F0,1B0\n", "bad.csv");
  EXPECT_THAT(error_of([&] { add_send_recv(bad); }),
              HasSubstr("add_send_recv: no device can go on; each waits for an input no list provides first: "
                        "0B0 (device 0), 1F0 (device 1)"));
  EXPECT_THAT(error_of([&] { add_send_recv(add_send_recv(generate("1f1b", params(2, 2, 1)))); }),
              HasSubstr("add_send_recv: the schedule has communication ops already (0SEND_F0 on device 0)"));
  EXPECT_THAT(error_of([&] { add_reduce_grad(add_reduce_grad(generate("1f1b", params(2, 2, 1)))); }),
              HasSubstr("add_reduce_grad: the schedule has GradSync ops already (0GRADSYNC on device 0)"));
}

}  // namespace
}  // namespace pipesim
