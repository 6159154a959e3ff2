// ProfiledCostModel (cost_models/profiled.hpp) on a synthetic profile whose times are
// exact lines in b: stage sums, interleaved chunks, interpolation, Chimera's half
// micro-batches, optimizer, memory, links; the profile file's validation, one malformed
// class at a time; and `pipesim profile` / `simulate --cost` / `compare --cost` end to end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>

#include "input_error.hpp"
#include "synthetic_profile.hpp"
#include "cli_runner.hpp"
#include "cost_models/catalog.hpp"
#include "cost_models/profiled.hpp"
#include "cost_models/transformer.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "executor/cuda_plugin.hpp"
#include "executor/shared_layout.hpp"

namespace pipesim {
namespace {

using ::testing::HasSubstr;

TimingStats at(double seconds) { return exact_timing(seconds); }

Profile synthetic(const ModelSpec& m, const std::vector<int>& sizes = {1, 2, 4}) {
  return synthetic_profile(m, sizes, at);
}

ProfiledCostModel model_at(int b, const ModelSpec& m = find_model("gpt-tiny")) {
  ProfiledCostConfig c = synthetic_config(find_model("gpt-tiny"));
  c.model = m;
  c.micro_batch_size = b;
  return ProfiledCostModel(c);
}

Tick ns(double seconds) { return static_cast<Tick>(std::llround(seconds * 1e9)); }

TEST(ProfiledCost, WholeModelOnOneStage) {
  const ProfiledCostModel cm = model_at(2);
  const OpScale one{1, 1, 1};
  EXPECT_EQ(cm.compute_time(make_op(OpKind::F, 0, 0), one), ns(8 * block_f(2) + emb_f(2) + head_f(2)));
  EXPECT_EQ(cm.compute_time(make_op(OpKind::I, 0, 0), one), ns(8 * block_i(2) + head_i(2)));
  EXPECT_EQ(cm.compute_time(make_op(OpKind::W, 0, 0), one), ns(8 * block_w(2) + emb_w(2) + head_w(2)));
  EXPECT_EQ(cm.compute_time(make_op(OpKind::B, 0, 0), one),
            ns(8 * (block_i(2) + block_w(2)) + emb_w(2) + head_i(2) + head_w(2)));
  EXPECT_EQ(cm.fit(Piece::Block, Measure::Forward).kind(), FitKind::Line);
  EXPECT_THAT(cm.label(), HasSubstr("profiled: gpt-tiny on cpu (Test CPU), measured 2026-11-30, micro-batch size 2"));
}

TEST(ProfiledCost, StagesSumToTheWholeModel) {
  for (int b : {1, 3, 4}) {  // 3: between measured sizes
    const ProfiledCostModel cm = model_at(b);
    for (OpKind k : {OpKind::F, OpKind::I, OpKind::W, OpKind::B}) {
      const Tick whole = cm.compute_time(make_op(k, 0, 0), OpScale{1, 1, 1});
      for (int stages : {2, 3, 4, 5, 8}) {  // 3 and 5 cut 8 layers unevenly
        Tick sum = 0;
        for (int s = 0; s < stages; ++s) sum += cm.compute_time(make_op(k, s, 0), OpScale{1, 1, stages});
        EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(whole), stages) << "b=" << b << " stages=" << stages;
      }
    }
  }
}

TEST(ProfiledCost, StagesFollowTheLayoutRule) {
  const ProfiledCostModel cm = model_at(1);
  // 8 layers in 3 stages: 2, 3, 3 (stage_layout: the remainder to stages 1..r, as the
  // analytical model cuts it).
  const OpScale three{1, 1, 3};
  EXPECT_EQ(cm.compute_time(make_op(OpKind::F, 0, 0), three), ns(2 * block_f(1) + emb_f(1)));
  EXPECT_EQ(cm.compute_time(make_op(OpKind::F, 1, 0), three), ns(3 * block_f(1)));
  EXPECT_EQ(cm.compute_time(make_op(OpKind::F, 2, 0), three), ns(3 * block_f(1) + head_f(1)));
  EXPECT_EQ(cm.compute_time(make_op(OpKind::I, 0, 0), three), ns(2 * block_i(1)));  // no I for the embedding
  EXPECT_THAT(error_of([&] { cm.compute_time(make_op(OpKind::F, 0, 0), OpScale{1, 1, 9}); }),
              HasSubstr("tiny.json: model 'gpt-tiny': stage layout: 9 stages need between 1 and 8"));
}

TEST(ProfiledCost, InterleavedChunksAreStagesOfAFinerCut) {
  const ProfiledCostModel cm = model_at(2);
  ScheduleParams params;
  params.p = 2;
  params.m = 4;
  params.v = 2;
  const Schedule s = generate("interleaved", params);
  const OpScale scale = scale_of(s);
  ASSERT_EQ(scale.num_stages, 4);
  Tick chunks = 0;
  for (int stage = 0; stage < scale.num_stages; ++stage) chunks += cm.compute_time(make_op(OpKind::F, stage, 0), scale);
  EXPECT_NEAR(static_cast<double>(chunks), static_cast<double>(cm.compute_time(make_op(OpKind::F, 0, 0), OpScale{})), 4);
  EXPECT_EQ(cm.compute_time(make_op(OpKind::F, 3, 0), scale), ns(2 * block_f(2) + head_f(2)));
  // The engine runs it: every device's busy time is the sum of its ops.
  const SimResult r = simulate(s, cm);
  EXPECT_GT(r.makespan, 0);
}

TEST(ProfiledCost, InterpolatesAndHalvesMicroBatches) {
  const ProfiledCostModel three = model_at(3);
  EXPECT_EQ(three.compute_time(make_op(OpKind::F, 1, 0), OpScale{1, 1, 4}), ns(2 * block_f(3)));
  // Chimera's halves: a micro-batch of 4 split in 2 runs at b = 2.
  const ProfiledCostModel four = model_at(4);
  EXPECT_EQ(four.compute_time(make_op(OpKind::B, 1, 0), OpScale{1, 2, 4}), ns(2 * (block_i(2) + block_w(2))));
  EXPECT_EQ(four.message_bytes(make_op(OpKind::F, 0, 0), OpScale{1, 2, 2}), 4 * 2 * 32 * 64);
}

TEST(ProfiledCost, RefusesSizesFarOutsideTheProfile) {
  EXPECT_NO_THROW(model_at(8));  // 2x the largest
  EXPECT_EQ(error_of([] { model_at(9); }),
            "tiny.json: block forward: micro-batch size 9 is too far outside the profile: the profiled micro-batch "
            "sizes are 1..4 (extrapolation reaches 0.5..8); profile it with --micro-batch-sizes");
  const ProfiledCostModel one = model_at(1);
  EXPECT_NO_THROW(one.compute_time(make_op(OpKind::F, 0, 0), OpScale{1, 2, 1}));  // b = 0.5
  EXPECT_THAT(error_of([&] { one.compute_time(make_op(OpKind::F, 0, 0), OpScale{1, 4, 1}); }),
              HasSubstr("micro-batch size 0.25 is too far outside the profile"));
}

TEST(ProfiledCost, ModelMustHaveTheProfiledShape) {
  ModelSpec deeper = find_model("gpt-tiny");
  deeper.name = "gpt-tiny-12";
  deeper.layers = 12;
  const ProfiledCostModel cm = model_at(1, deeper);
  EXPECT_EQ(cm.compute_time(make_op(OpKind::F, 0, 0), OpScale{}), ns(12 * block_f(1) + emb_f(1) + head_f(1)));
  EXPECT_THAT(error_of([] { model_at(1, find_model("gpt-small")); }),
              HasSubstr("tiny.json: model 'gpt-small' (hidden 256, heads 8, ffn 1024, seq_len 128, vocab 2048, tied) "
                        "does not have the profiled block shape of 'gpt-tiny'"));
  EXPECT_THAT(error_of([] { model_at(1, find_model("llama2-7b")); }), HasSubstr("profiles hold GPT blocks"));
  ProfiledCostConfig c;
  c.profile = synthetic(find_model("gpt-tiny"));
  c.optimizer = "lion";
  EXPECT_EQ(error_of([&] { (void)ProfiledCostModel(c); }), "profile: optimizer must be adam or sgd, got 'lion'");
}

TEST(ProfiledCost, OptimizerGradientsAndTiedEmbeddings) {
  const ModelSpec m = find_model("gpt-tiny");  // tied
  const ProfiledCostModel cm = model_at(2);
  const std::int64_t vh = static_cast<std::int64_t>(m.vocab) * m.hidden;
  const Tick sync = cm.allreduce_time(2, vh * 4);
  EXPECT_EQ(sync, ns(static_cast<double>(vh * 4) / 10e9 + 2 * 1e-6));  // ring of 2: bytes / bandwidth + 2 latencies
  const Op opt0 = opt_step(0), opt1 = opt_step(1);
  const OpScale two{1, 1, 2};
  EXPECT_EQ(cm.compute_time(opt0, two), ns(4 * 60e-6 + 22e-6) + sync);
  EXPECT_EQ(cm.compute_time(opt1, two), ns(4 * 60e-6 + 0.5e-6 + 19e-6) + sync);  // keeps a tied copy
  EXPECT_EQ(cm.compute_time(opt0, OpScale{}), ns(8 * 60e-6 + 22e-6 + 0.5e-6));  // one stage: no copy, no sync
  EXPECT_EQ(cm.grad_bytes(grad_sync(0), OpScale{}), 4 * total_parameters(m));
  EXPECT_EQ(cm.grad_bytes(grad_sync(1), two), 4 * (4 * layer_parameters(m) + 2 * m.hidden + vh));
  ProfiledCostConfig c = cm.config();
  c.optimizer = "sgd";
  c.tied_embedding_sync = false;
  EXPECT_EQ(ProfiledCostModel(c).compute_time(opt0, two), ns(4 * 7e-6 + 3e-6));
}

TEST(ProfiledCost, AGradSyncMembersWorkIsTheProfilesCopiesPerParameterTimesItsStages) {
  const ModelSpec m = find_model("gpt-tiny");
  EXPECT_EQ(model_at(1).grad_sync_work(grad_sync(0), OpScale{1, 1, 2}), 0);  // no copies in the profile: none
  ProfiledCostConfig c = model_at(1).config();
  c.profile.gradient_copies.parameters = 2 * layer_parameters(m);  // copies of a stage of 2 blocks
  c.profile.gradient_copies.copy_out = at(30e-6);
  c.profile.gradient_copies.copy_in = at(10e-6);
  const ProfiledCostModel cm(c);
  const double per_parameter = 40e-6 / static_cast<double>(2 * layer_parameters(m));
  const OpScale two{1, 1, 2};
  for (int stage : {0, 1}) {
    const auto parameters = static_cast<double>(cm.stage_parameters(stage, 2));
    EXPECT_EQ(cm.grad_sync_work(grad_sync(stage), two), ns(per_parameter * parameters)) << stage;
  }
  EXPECT_EQ(cm.grad_sync_work(grad_sync(0), OpScale{}), ns(per_parameter * static_cast<double>(total_parameters(m))));
}

// With the copies' sum (profile version 7) the GradSync runs as the CPU executor runs it: the
// member's work before it joins is the copy out, the copy in comes after the sum, and the
// collective is the last member's (participants - 1) sums of the stage's parameters.
TEST(ProfiledCost, WithTheCopiesSumTheLastMemberSums) {
  const ModelSpec m = find_model("gpt-tiny");
  ProfiledCostConfig c = model_at(1).config();
  c.profile.gradient_copies.parameters = 2 * layer_parameters(m);
  c.profile.gradient_copies.copy_out = at(30e-6);
  c.profile.gradient_copies.copy_in = at(10e-6);
  const OpScale two{1, 1, 2};
  const std::int64_t bytes = 4 * 2 * layer_parameters(m);  // a stage's gradient, as profiled
  const Tick ring = ProfiledCostModel(c).allreduce_time(2, bytes);
  EXPECT_EQ(ProfiledCostModel(c).collective_style(), CostModel::CollectiveStyle::Streams);  // version 6: as before
  EXPECT_EQ(ProfiledCostModel(c).grad_sync_work_after(grad_sync(0), two), 0);
  c.profile.gradient_copies.sum = at(20e-6);
  const ProfiledCostModel cm(c);
  EXPECT_EQ(cm.collective_style(), CostModel::CollectiveStyle::MemberThreads);
  EXPECT_EQ(cm.allreduce_time(2, bytes), ns(20e-6));  // one sum of the profiled stage
  EXPECT_EQ(cm.allreduce_time(4, bytes), ns(60e-6));  // three
  EXPECT_EQ(cm.allreduce_time(2, bytes / 2), ns(10e-6));
  EXPECT_NE(cm.allreduce_time(2, bytes), ring);
  EXPECT_EQ(cm.allreduce_time(1, bytes), 0);
  const double per_parameter = 10e-6 / static_cast<double>(2 * layer_parameters(m));
  for (int stage : {0, 1}) {
    const auto parameters = static_cast<double>(cm.stage_parameters(stage, 2));
    EXPECT_EQ(cm.grad_sync_work_after(grad_sync(stage), two), ns(per_parameter * parameters)) << stage;
    EXPECT_LT(cm.grad_sync_work_after(grad_sync(stage), two), cm.grad_sync_work(grad_sync(stage), two));
  }
}

TEST(ProfiledCost, MemoryMessagesAndLinks) {
  const ProfiledCostModel cm = model_at(2);
  const std::int64_t n = 2 * 32;
  const ActivationCost first = cm.activation(make_op(OpKind::F, 0, 0), OpScale{1, 1, 2});
  EXPECT_EQ(first.bytes, 4 * 1000 * n + 4 * n);
  EXPECT_EQ(first.freed_by_input_grad, 4 * 200 * n);  // the embedding's ids stay until W
  const ActivationCost last = cm.activation(make_op(OpKind::F, 1, 0), OpScale{1, 1, 2});
  EXPECT_EQ(last.bytes, 4 * 1000 * n + 2000 * n + 64);
  EXPECT_EQ(last.freed_by_input_grad, 4 * 200 * n + 500 * n);
  EXPECT_EQ(cm.message_bytes(make_op(OpKind::F, 0, 0), OpScale{}), 4 * n * 64);
  const TransferCost t = cm.transfer(0, 1, 1'000'000);
  EXPECT_EQ(t.occupancy, 100'000);  // 1 MB at 10 GB/s
  EXPECT_EQ(t.latency, 1'000);
  EXPECT_FALSE(t.hand_off());  // a profile without the sender's parts (version 5 and before)
  EXPECT_EQ(cm.allreduce_time(1, 1'000'000), 0);
  EXPECT_EQ(cm.allreduce_time(4, 1'000'000), ns(1.5 * 1e6 / 10e9 + 6e-6));
}

TEST(ProfiledCost, AHandOffsSenderCopiesAndWakesAndItsLatencyIsTheWakeUp) {
  ProfiledCostConfig c = synthetic_config(find_model("gpt-tiny"));
  c.profile.link.wake = at(20e-6);
  c.profile.link.samples[0].copy = at(1e-6);   // 4096 bytes
  c.profile.link.samples[1].copy = at(13e-6);  // 65536 bytes
  const ProfiledCostModel cm(c);
  const TransferCost t = cm.transfer(0, 1, 4096 + 61440 / 2);
  EXPECT_EQ(t.latency, 1'000);
  EXPECT_EQ(t.sender, 7'000);  // halfway between the samples' copies
  EXPECT_EQ(t.wake, 20'000);
  EXPECT_TRUE(t.latency_is_wake);
  EXPECT_EQ(cm.transfer(0, 1, 2 * 65536).sender, 26'000);  // in proportion beyond the last sample
}

TEST(ProfiledCost, TheExecutorsWorkBetweenOpsIsItsGapsMean) {
  ProfiledCostConfig c = synthetic_config(find_model("gpt-tiny"));
  EXPECT_EQ(ProfiledCostModel(c).between_ops(), 0);  // not measured
  c.profile.executor.op_gap = summarize_timings({3e-6, 4e-6, 8e-6});
  EXPECT_EQ(ProfiledCostModel(c).between_ops(), 5'000);
}

TEST(ProfiledCost, PiecewisePolicyFollowsABend) {
  ProfiledCostConfig c;
  c.profile = synthetic(find_model("gpt-tiny"));
  c.profile.micro_batches[1].block.forward = at(block_f(2) * 1.5);  // a bump at b = 2
  c.source = "bent.json";
  c.micro_batch_size = 2;
  const ProfiledCostModel automatic(c);
  EXPECT_EQ(automatic.fit(Piece::Block, Measure::Forward).kind(), FitKind::Piecewise);
  EXPECT_EQ(automatic.compute_time(make_op(OpKind::F, 1, 0), OpScale{1, 1, 8}), ns(1.5 * block_f(2)));  // exact there
  c.fit = FitPolicy::Line;
  const ProfiledCostModel line(c);
  EXPECT_NE(line.compute_time(make_op(OpKind::F, 1, 0), OpScale{1, 1, 8}), ns(1.5 * block_f(2)));
}

// ---- the file ---------------------------------------------------------------------------

TEST(ProfileFile, RoundTrip) {
  const Profile p = synthetic(find_model("gpt-tiny"));
  const std::string path = testing_cli::temp_path("roundtrip.profile.json");
  std::ofstream(path, std::ios::binary) << profile_json_text(p);
  const Profile back = read_profile_file(path);
  EXPECT_EQ(profile_json_text(back), profile_json_text(p));
  EXPECT_EQ(back.micro_batches.size(), 3u);
  EXPECT_EQ(back.settings.clock, "wall");
  EXPECT_TRUE(back.machine.hostname.empty());
  // Every clock a backend writes reads back (the CUDA profiler's "events" too).
  for (const char* clock : {"thread-cpu", "events"}) {
    Profile q = p;
    q.settings.clock = clock;
    EXPECT_EQ(parse_profile(profile_json_text(q), "clock.json").settings.clock, clock);
  }
  // A virtual device's share of its GPU (written by the CUDA profiler) reads back.
  Profile v = p;
  v.backend = "cuda";
  v.libraries.cuda = "runtime 13.0, driver 13.0, cuBLAS 13.1.0, bf16 GEMMs";
  v.machine.virtual_devices = 4;
  v.machine.sms = 32;
  const Profile vb = parse_profile(profile_json_text(v), "virtual.json");
  EXPECT_EQ(vb.machine.virtual_devices, 4);
  EXPECT_EQ(vb.machine.sms, 32);
  EXPECT_EQ(profile_json_text(vb), profile_json_text(v));
  EXPECT_EQ(error_of([] { read_profile_file("/nonexistent/p.json"); }),
            "cannot read profile '/nonexistent/p.json': No such file or directory");
}

// Each malformed class: the valid file with one change, and the one-line error it gives.
struct Broken {
  std::string pointer;  // JSON pointer of the change
  std::function<void(nlohmann::json&)> change;
  std::string error;  // the message after "bad.json: "
};

TEST(ProfileFile, EveryMalformedClassHasItsOneLineError) {
  const nlohmann::json good = nlohmann::json::parse(profile_json_text(synthetic(find_model("gpt-tiny"))));
  using J = nlohmann::json;
  auto set = [](const char* ptr, J value) { return [=](J& j) { j[J::json_pointer(ptr)] = value; }; };
  auto erase = [](const char* parent, const char* key) { return [=](J& j) { j[J::json_pointer(parent)].erase(key); }; };
  const std::vector<Broken> cases = {
      {"/format", set("/format", "other"), "/format: expected 'pipesim-profile'; got 'other'"},
      {"/version", set("/version", 8), "/version: this pipesim reads versions 1 to 7; got 8 (written by another pipesim)"},
      {"/extra", set("/extra", 1), "/: unknown field 'extra' (expected format, version, backend, date, machine, "
                                   "libraries, settings, model, dtype, parameters, optimizer, micro_batches, link, interference, "
                                   "shared_core, gradient_copies, executor)"},
      {"/date", erase("", "date"), "/: missing field 'date'"},
      {"/backend", set("/backend", "tpu"), "/backend: expected 'cpu' or 'cuda'; got 'tpu'"},
      {"/date", set("/date", "yesterday"), "/date: expected a UTC date like 2026-11-30T07:51:38Z; got 'yesterday'"},
      {"/machine/cores", set("/machine/cores", 0), "/machine/cores: expected a positive integer; got 0"},
      {"/libraries/cuda", set("/backend", "cuda"), "/libraries/cuda: a cuda profile must name the CUDA version; got null"},
      {"/settings/clock", set("/settings/clock", "sundial"), "/settings/clock: expected 'wall', 'thread-cpu' or 'events'; got 'sundial'"},
      {"/model/family", set("/model/family", "llama"),
       "/model/family: expected 'gpt' (the profiled kernels are GPT blocks); got 'llama'"},
      {"/model/heads", set("/model/heads", 3), "/model/heads: 3 heads do not divide hidden 64"},
      {"/dtype", set("/dtype", "bf16"), "/dtype: expected 'fp32' (the only dtype the kernels run); got 'bf16'"},
      {"/parameters/block", set("/parameters/block", 5),
       "/parameters/block: 5 parameters, but the model's shape has 49984"},
      {"/optimizer/block/adam/median_s", set("/optimizer/block/adam/median_s", -1),
       "/optimizer/block/adam/median_s: expected a positive number of seconds; got -1"},
      {"/micro_batches", set("/micro_batches", J::array()),
       "/micro_batches: expected a non-empty array of micro-batch sizes; got []"},
      {"/micro_batches/1/size", set("/micro_batches/1/size", 1),
       "/micro_batches/1/size: sizes must increase strictly; 1 follows 1"},
      {"/micro_batches/0/block/forward/p10_s", set("/micro_batches/0/block/forward/p10_s", 1.0),
       "/micro_batches/0/block/forward: expected min_s <= p10_s <= median_s <= p90_s <= max_s"},
      {"/micro_batches/0/block/forward/repeats", set("/micro_batches/0/block/forward/repeats", 0),
       "/micro_batches/0/block/forward/repeats: expected a positive integer; got 0"},
      {"/micro_batches/0/head/forward/median_s", set("/micro_batches/0/head/forward/median_s", "fast"),
       "/micro_batches/0/head/forward/median_s: expected a positive number of seconds; got 'fast'"},
      {"/micro_batches/0/embedding/input_grad", set("/micro_batches/0/embedding/input_grad", J::object()),
       "/micro_batches/0/embedding: unknown field 'input_grad' (expected forward, weight_grad, activation_bytes, "
       "held_after_input_grad_bytes)"},
      {"/micro_batches/0/block/activation_bytes", set("/micro_batches/0/block/activation_bytes", 1.5),
       "/micro_batches/0/block/activation_bytes: expected a positive integer; got 1.5"},
      {"/micro_batches/0/block/held_after_input_grad_bytes",
       set("/micro_batches/0/block/held_after_input_grad_bytes", 1 << 30),
       "/micro_batches/0/block/held_after_input_grad_bytes: exceeds activation_bytes (32000)"},
      {"/micro_batches/2/message_bytes", set("/micro_batches/2/message_bytes", -8),
       "/micro_batches/2/message_bytes: expected a positive integer; got -8"},
      {"/link/bandwidth_bytes_per_s", set("/link/bandwidth_bytes_per_s", 0),
       "/link/bandwidth_bytes_per_s: expected a positive number of bytes per second; got 0"},
      {"/link/samples/1/bytes", set("/link/samples/1/bytes", 4096),
       "/link/samples/1/bytes: sizes must increase strictly; 4096 follows 4096"},
  };
  for (const Broken& b : cases) {
    J j = good;
    b.change(j);
    const std::string got = error_of([&] { parse_profile(j.dump(), "bad.json"); });
    EXPECT_EQ(got, "bad.json: " + b.error) << b.pointer;
    EXPECT_EQ(got.find('\n'), std::string::npos);
  }
  J one_sample = good;
  one_sample["link"]["samples"].erase(0);
  EXPECT_EQ(error_of([&] { parse_profile(one_sample.dump(), "bad.json"); }),
            "bad.json: /link/samples: expected an array of at least two message sizes; got an array of 1 element");
  EXPECT_THAT(error_of([] { parse_profile("{\"format\": ", "bad.json"); }), HasSubstr("bad.json: line 1, column 12: invalid JSON ("));
  EXPECT_EQ(error_of([] { parse_profile("[1, 2]", "bad.json"); }), "bad.json: /: expected an object; got [1,2]");
  EXPECT_EQ(error_of([] { parse_profile("", "bad.json"); }).find("bad.json: line 1, column 1: invalid JSON"), 0u);
}

// ---- the command line -------------------------------------------------------------------

TEST(ProfileCli, ProfileThenSimulateAndCompareWithCost) {
  using namespace testing_cli;
  const std::string path = temp_path("tiny.profile.json");
  const Result p = run("profile --model gpt-tiny --micro-batch-sizes 1,2 --repeats 2 --warmup 1 --link-sizes 4KiB,64KiB "
                       "--clock thread-cpu --quiet --out " + path);
  ASSERT_EQ(p.code, 0) << p.out;
  EXPECT_THAT(p.out, HasSubstr("profile of gpt-tiny on cpu ("));
  EXPECT_THAT(p.out, HasSubstr("fits over b (auto): block F"));
  EXPECT_THAT(p.out, HasSubstr("profile written to " + path));
  EXPECT_NO_THROW(read_profile_file(path));
  // The interference curve's table (by default cores - 1 neighbours, at b = 2), or why none.
  if (read_profile_file(path).interference.measured())
    EXPECT_THAT(p.out, HasSubstr("interference (slowdown with k neighbours busy running block passes, micro-batch "
                                 "size 2):"));
  else
    EXPECT_THAT(p.out, HasSubstr("interference: none in the profile"));
  const Result none = run("profile --model gpt-tiny --micro-batch-sizes 1 --repeats 1 --warmup 0 --link-sizes 4KiB,64KiB "
                          "--neighbours 0 --quiet --out " + path + ".none");
  ASSERT_EQ(none.code, 0) << none.out;
  EXPECT_THAT(none.out, HasSubstr("interference: none in the profile (--neighbours 0, "));
  EXPECT_FALSE(read_profile_file(path + ".none").interference.measured());
  // A GradSync member's copies of a stage (4 blocks of gpt-tiny by default), on the CPU.
  EXPECT_THAT(p.out, HasSubstr("gradient copies (a GradSync member's, a stage of " +
                               std::to_string(4 * layer_parameters(find_model("gpt-tiny"))) + " parameters): out "));
  // The turns on shared cores: measured by default on the CPU (twice the usable cores' device
  // threads), a line each way.
  if (const ProfileSharedCore turns = read_profile_file(path).shared_core; turns.measured())
    EXPECT_THAT(p.out, HasSubstr(std::to_string(turns.threads) + " device threads taking turns on " +
                                 std::to_string(turns.cores) + " cores (micro-batch size 2, means): block F "));
  else
    EXPECT_THAT(p.out, HasSubstr("in turns on shared cores: not in the profile"));
  const Result off = run("profile --model gpt-tiny --micro-batch-sizes 1 --repeats 1 --warmup 0 --link-sizes 4KiB,64KiB "
                         "--neighbours 0 --shared-core off --quiet --out " + path + ".off");
  ASSERT_EQ(off.code, 0) << off.out;
  EXPECT_THAT(off.out, HasSubstr("in turns on shared cores: not in the profile (--shared-core off, "));
  EXPECT_FALSE(read_profile_file(path + ".off").shared_core.measured());

  const Result s = run("simulate --schedule 1f1b -p 4 -m 8 --cost " + path + " --micro-batch-size 2");
  ASSERT_EQ(s.code, 0) << s.out;
  EXPECT_THAT(s.out, HasSubstr("cost model    profiled: gpt-tiny on cpu ("));
  EXPECT_THAT(s.out, HasSubstr("micro-batch size 2, adam, from " + path));
  EXPECT_THAT(s.out, HasSubstr("makespan"));
  const Result js = run("simulate --schedule zb-h1 -p 2 -m 4 --model gpt-tiny --cost " + path + " --json");
  ASSERT_EQ(js.code, 0) << js.out;
  const nlohmann::json j = nlohmann::json::parse(js.out);
  EXPECT_THAT(j.at("cost_model").get<std::string>(), HasSubstr("profiled: gpt-tiny"));
  EXPECT_GT(j.at("makespan_s").get<double>(), 0) << js.out;

  const Result c = run("compare --schedules gpipe,1f1b,interleaved -p 2 -m 4 --cost " + path);
  ASSERT_EQ(c.code, 0) << c.out;
  EXPECT_THAT(c.out, HasSubstr("cost model: profiled: gpt-tiny"));
  EXPECT_THAT(c.out, HasSubstr("interleaved"));

  // A config saved from a --cost run (it holds every default, --hardware too) loads again.
  const std::string saved = temp_path("cost.config.json");
  const Result save = run("simulate -p 2 -m 4 --cost " + path + " --save-config " + saved + " --json");
  ASSERT_EQ(save.code, 0) << save.out;
  const Result load = run("simulate --config " + saved + " --json");
  ASSERT_EQ(load.code, 0) << load.out;
  EXPECT_EQ(load.out, save.out);
  expect_one_line_error(run("simulate --cost " + path + " --hardware a100-80g"),
                        "--hardware: not used with --cost (the profile measured its own machine)");
  expect_one_line_error(run("simulate --cost " + path + " --tp-overlap all"),
                        "--tp-overlap: not used with --cost (the profile measured its own machine)");
  expect_one_line_error(run("simulate --cost " + path + " --model gpt-small"),
                        "does not have the profiled block shape of 'gpt-tiny'");
  expect_one_line_error(run("simulate --cost " + path + " --micro-batch-size 64"),
                        "micro-batch size 64 is too far outside the profile");
  expect_one_line_error(run("simulate --cost " + path + " -p 16 -m 16"), "stage layout: 16 stages need between 1 and 8");
  expect_one_line_error(run("simulate --cost " + path + " --cost-optimizer lion"),
                        "--cost-optimizer: expected adam or sgd, got 'lion'");
  expect_one_line_error(run("simulate --cost " + path + " --cost-fit cubic"),
                        "--cost-fit: expected auto, line or piecewise, got 'cubic'");
  expect_one_line_error(run("simulate --cost /nonexistent/p.json"), "cannot read profile '/nonexistent/p.json'");
}

// --cost-hardware prices a GPU profile's runs on the catalog GPU it was measured on: the
// committed H200 profile of one of 4 virtual devices (32 of 132 SMs).
TEST(ProfileCli, CostHardwareAssessesAGpuProfile) {
  using namespace testing_cli;
  const std::string profile = std::string(PIPESIM_EXAMPLES) + "/../docs/validation/gpu-h200/profile-cuda-gpt3-1.3b.json";
  const Result s = run("simulate --schedule 1f1b -p 4 -m 8 --cost " + profile + " --cost-hardware h200 --json");
  ASSERT_EQ(s.code, 0) << s.out;
  const nlohmann::json j = nlohmann::json::parse(s.out);
  const nlohmann::json& a = j;  // the assessment's fields stand beside the metrics
  EXPECT_EQ(a.at("hardware"), "h200");
  EXPECT_EQ(a.at("gpus"), 4);
  const GpuSpec h200 = find_gpu("h200");
  EXPECT_EQ(a.at("capacity_bytes"), h200.memory_bytes / 4);
  const double seconds = j.at("time_per_iteration_s").get<double>();
  EXPECT_NEAR(a.at("tokens_per_s").get<double>(), 8.0 * 2048 / seconds, 1e-6 * a.at("tokens_per_s").get<double>());
  EXPECT_GT(a.at("mfu").get<double>(), 0.01);
  EXPECT_LT(a.at("mfu").get<double>(), 0.6);  // against the bf16 peak of 32 of the 132 SMs
  const Result table = run("simulate --schedule 1f1b -p 4 -m 8 --cost " + profile + " --cost-hardware h200");
  ASSERT_EQ(table.code, 0) << table.out;
  EXPECT_THAT(table.out, HasSubstr("gpt3-1.3b on 1 x 4 GPUs: tp=1 pp=4 m=8"));
  EXPECT_THAT(table.out, HasSubstr("h200      1f1b"));
}

TEST(ProfileCli, BadProfileRequests) {
  using namespace testing_cli;
  const std::string out = temp_path("never.profile.json");
  // Without a GPU (or CUDA in this build) the CUDA profile is refused, exit code 6; with one
  // it profiles (tools/gpu-check.sh runs it).
  std::string why_no_cuda;
  try {
    cuda_gpus();
  } catch (const CudaUnavailable& e) {
    why_no_cuda = e.what();
  }
  if (!why_no_cuda.empty()) {
    const Result r = run("profile --backend cuda --model gpt-tiny --out " + out);
    EXPECT_EQ(r.code, 6) << r.out;
    EXPECT_EQ(r.out, "pipesim: error: " + why_no_cuda + "\n");
    EXPECT_THAT(why_no_cuda, testing::StartsWith(cuda_plugin_built() ? "--backend cuda: no CUDA device is visible ("
                                                                      : "--backend cuda: this pipesim was built without CUDA"));
  }
  expect_one_line_error(run("profile --model llama2-7b --out " + out), "is not a GPT block");
  expect_one_line_error(run("profile --model gpt-tiny --micro-batch-sizes 1,x --out " + out),
                        "--micro-batch-sizes: expected a comma-separated list of positive integers like 1,2,4; got '1,x'");
  expect_one_line_error(run("profile --model gpt-tiny --link-sizes 4KiB,lots --out " + out), "--link-sizes");
  expect_one_line_error(run("profile --model gpt-tiny --out /nonexistent/dir/p.json"),
                        "--out: cannot write '/nonexistent/dir/p.json': the folder '/nonexistent/dir' does not exist");
  expect_one_line_error(run("profile --model gpt-tiny --repeats 0 --out " + out), "profile: repeats must be at least 1");
}

}  // namespace
}  // namespace pipesim
