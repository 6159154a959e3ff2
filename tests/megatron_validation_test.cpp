// Validation of the analytical cost model against the published Megatron-LM runs
// (Narayanan et al., SC'21, arXiv 2104.04473, Table 1): achieved TFLOP/s per GPU of GPT
// models from 1.7B to 1T parameters on A100 GPUs. One set of efficiency constants for
// every row (the AnalyticalConfig defaults); docs/validation/analytical.md is this
// program's output:
//
//   build/tests/megatron_validation_test     (prints the table as Markdown, then checks)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cost_models/analytical.hpp"
#include "cost_models/efficiency_fit.hpp"
#include "cost_models/transformer.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"

namespace pipesim {
namespace {

// Table 1 and the run script of the paper's artifact (Megatron-LM examples/sc21/
// run_table_1.sh: micro-batch size, virtual-stage layers, DDP implementation).
struct Row {
  const char* params;  // billions, as the paper prints them
  int heads, hidden, layers, tp, pp, gpus, batch;
  double published;  // achieved TFLOP/s per GPU
  int mbs;           // --micro-batch-size
  int v;             // model chunks per device: layers / pp / --num-layers-per-virtual-pipeline-stage
  bool torch_ddp;    // --DDP-impl torch (gradient allreduce overlaps the backward) vs local
};

const std::vector<Row>& table1() {
  static const std::vector<Row> rows = {
      {"1.7", 24, 2304, 24, 1, 1, 32, 512, 137, 16, 1, true},
      {"3.6", 32, 3072, 30, 2, 1, 64, 512, 138, 16, 1, true},
      {"7.5", 32, 4096, 36, 4, 1, 128, 512, 142, 16, 1, true},
      {"18.4", 48, 6144, 40, 8, 1, 256, 1024, 135, 8, 1, true},
      {"39.1", 64, 8192, 48, 8, 2, 512, 1536, 138, 4, 1, false},
      {"76.1", 80, 10240, 60, 8, 4, 1024, 1792, 140, 2, 3, false},
      {"145.6", 96, 12288, 80, 8, 8, 1536, 2304, 148, 2, 2, false},
      {"310.1", 128, 16384, 96, 8, 16, 1920, 2160, 155, 1, 2, false},
      {"529.6", 128, 20480, 105, 8, 35, 2520, 2520, 163, 1, 3, false},
      {"1008.0", 160, 25600, 128, 8, 64, 3072, 3072, 163, 1, 1, false},
  };
  return rows;
}

// Selene's DGX A100 nodes: 8 A100-SXM4-80GB, NVLink3 through NVSwitch, 8 HDR InfiniBand
// NICs (one per GPU).
ClusterSpec selene(int gpus) {
  ClusterSpec c;
  c.gpu.name = "a100-80g";
  c.gpu.peak_flops = {{"fp16", 312e12}, {"bf16", 312e12}};  // dense tensor-core peak
  c.gpu.hbm_bandwidth = 2039e9;
  c.gpu.memory_bytes = 80LL << 30;
  c.nodes = gpus / 8;
  c.gpus_per_node = 8;
  c.intra = LinkSpec{"nvlink3", 2 * kNsPerUs, 300e9, "NVLink3: 12 links x 25 GB/s per direction"};
  c.inter = LinkSpec{"ib-hdr", 5 * kNsPerUs, 25e9, "HDR InfiniBand: 200 Gb/s per NIC and direction"};
  return c;
}

ModelSpec gpt(const Row& r) {
  ModelSpec m;
  m.name = std::string("gpt-") + r.params + "b";
  m.family = "gpt";
  m.layers = r.layers;
  m.hidden = r.hidden;
  m.heads = r.heads;
  m.kv_heads = r.heads;
  m.ffn_hidden = 4 * r.hidden;
  m.seq_len = 2048;
  m.vocab = 51200;
  return m;
}

struct Prediction {
  Row row;
  int dp = 0, m = 0;
  std::string schedule;
  double seconds = 0;  // one iteration
  double tflops = 0;   // per GPU
  double error = 0;    // (predicted - published) / published
};

Prediction predict(const Row& r, const Efficiency& efficiency = Efficiency{}) {
  Prediction p;
  p.row = r;
  p.dp = r.gpus / (r.tp * r.pp);
  p.m = r.batch / (p.dp * r.mbs);
  AnalyticalConfig c;
  c.model = gpt(r);
  c.cluster = selene(r.gpus);
  c.pipeline_devices = r.pp;
  c.tp = r.tp;
  c.dp = p.dp;
  c.micro_batch_size = r.mbs;
  c.dtype = "fp16";  // the runs used --fp16; A100's fp16 and bf16 peaks are equal
  c.recompute = Recompute::Full;
  c.overlap_grad_reduce = r.torch_ddp;
  c.scatter_gather = true;
  c.grad_reduce_bytes = 2;  // fp16 gradients in the 2021 data-parallel allreduce
  c.blocking_p2p = true;    // the 2021 code synchronised after every p2p exchange
  c.efficiency = efficiency;
  const AnalyticalCostModel model(c);
  ScheduleParams sp;
  sp.p = r.pp;
  sp.m = p.m;
  sp.v = r.v;
  p.schedule = r.v > 1 ? "interleaved" : "1f1b";
  const Schedule schedule = generate(p.schedule, sp);
  const SimResult result = simulate(schedule, model);
  p.seconds = ticks_to_seconds(result.makespan);
  p.tflops = megatron_flops_per_iteration(c.model, r.batch) / (p.seconds * r.gpus) / 1e12;
  p.error = (p.tflops - r.published) / r.published;
  return p;
}

// The time per iteration the published throughput implies.
double published_seconds(const Row& r) {
  return megatron_flops_per_iteration(gpt(r), r.batch) / (r.published * 1e12 * r.gpus);
}

EfficiencyFit fit_rows(const std::vector<int>& rows) {
  std::vector<double> measured;
  for (int i : rows) measured.push_back(published_seconds(table1()[static_cast<std::size_t>(i)]));
  return fit_compute_efficiency(
      [&](int k, const Efficiency& e) { return predict(table1()[static_cast<std::size_t>(rows[static_cast<std::size_t>(k)])], e).seconds; },
      measured);
}

TEST(MegatronValidation, Table1WithinSingleDigitMeanError) {
  std::printf("| params (B) | TP | PP | DP | GPUs | batch | mbs | m | schedule | iteration (s) | predicted TFLOP/s | published | error |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n");
  double sum = 0, worst = 0;
  for (const Row& r : table1()) {
    const Prediction p = predict(r);
    const std::string sched = p.schedule == "interleaved" ? "interleaved v=" + std::to_string(r.v) : p.schedule;
    std::printf("| %s | %d | %d | %d | %d | %d | %d | %d | %s | %.2f | %.1f | %.0f | %+.1f %% |\n", r.params, r.tp, r.pp, p.dp,
                r.gpus, r.batch, r.mbs, p.m, sched.c_str(), p.seconds, p.tflops, r.published, 100 * p.error);
    sum += std::abs(p.error);
    worst = std::max(worst, std::abs(p.error));
    EXPECT_LT(std::abs(p.error), 0.20) << r.params << "B";
  }
  const double mean = sum / static_cast<double>(table1().size());
  std::printf("\nmean absolute error %.1f %%, worst row %.1f %%\n\n", 100 * mean, 100 * worst);
  EXPECT_LT(mean, 0.10);
}

// The default compute efficiencies are the least-squares fit to the ten rows: this
// re-derives them, so that the constants in analytical.hpp can be checked and updated.
TEST(MegatronValidation, DefaultsAreTheLeastSquaresFit) {
  std::vector<int> all;
  for (int i = 0; i < static_cast<int>(table1().size()); ++i) all.push_back(i);
  const EfficiencyFit fit = fit_rows(all);
  std::printf("least-squares fit: gemm %.4f attention %.4f (rms relative time error %.2f %%, %d Gauss-Newton steps)\n\n",
              fit.efficiency.gemm, fit.efficiency.attention, 100 * fit.rms_relative, fit.iterations);
  EXPECT_NEAR(fit.efficiency.gemm, Efficiency{}.gemm, 0.005);
  EXPECT_NEAR(fit.efficiency.attention, Efficiency{}.attention, 0.005);
}

// Leave-one-out: fit on nine rows, predict the tenth. This is the error to expect on a
// configuration the constants have not seen.
TEST(MegatronValidation, LeaveOneOut) {
  std::printf("| params (B) | gemm | attention | predicted TFLOP/s | published | error |\n|---:|---:|---:|---:|---:|---:|\n");
  double sum = 0;
  const int n = static_cast<int>(table1().size());
  for (int out = 0; out < n; ++out) {
    std::vector<int> rows;
    for (int i = 0; i < n; ++i)
      if (i != out) rows.push_back(i);
    const EfficiencyFit fit = fit_rows(rows);
    const Row& r = table1()[static_cast<std::size_t>(out)];
    const Prediction p = predict(r, fit.efficiency);
    std::printf("| %s | %.3f | %.3f | %.1f | %.0f | %+.1f %% |\n", r.params, fit.efficiency.gemm, fit.efficiency.attention,
                p.tflops, r.published, 100 * p.error);
    sum += std::abs(p.error);
    EXPECT_LT(std::abs(p.error), 0.20) << r.params << "B";
  }
  std::printf("\nleave-one-out mean absolute error %.1f %%\n", 100 * sum / n);
  EXPECT_LT(sum / n, 0.10);
}

}  // namespace
}  // namespace pipesim
