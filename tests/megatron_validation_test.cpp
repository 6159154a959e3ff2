// Validation of the analytical cost model against published training runs, with the
// built-in catalog's one set of A100 parameters (no per-table refit). The runs are the CSV
// files of docs/validation/runs/, which `pipesim fit` reads too; docs/validation/analytical.md
// reproduces every table from the shell (`pipesim fit --evaluate`). This program prints
// each table as it checks it:
//
//   build/tests/megatron_validation_test
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cost_models/catalog.hpp"
#include "tools/fit_runs.hpp"

namespace pipesim {
namespace {

std::vector<TrainingRun> runs_of(const char* file) { return read_runs_file(std::string(PIPESIM_VALIDATION_RUNS) + "/" + file); }

struct Errors {
  double mean = 0, worst = 0;
};

// Prints the table and returns the mean and worst absolute relative error.
Errors check(const char* file, const Efficiency& e) {
  const std::vector<TrainingRun> runs = runs_of(file);
  std::printf("%s\n| run | measured (s) | predicted (s) | error |\n|---|---:|---:|---:|\n", file);
  Errors out;
  for (const TrainingRun& r : runs) {
    const double predicted = predict_run_seconds(r, e);
    const double error = (predicted - *r.seconds) / *r.seconds;
    std::printf("| %s | %.2f | %.2f | %+.1f %% |\n", r.name.c_str(), *r.seconds, predicted, 100 * error);
    out.mean += std::abs(error) / static_cast<double>(runs.size());
    out.worst = std::max(out.worst, std::abs(error));
  }
  std::printf("mean |error| %.2f %%, worst %.2f %%\n\n", 100 * out.mean, 100 * out.worst);
  return out;
}

// The activation memory of the runs with a measured activation-memory column, as `pipesim
// fit --evaluate` prints it: the memory model over one simulated iteration, fullest GPU.
Errors check_activations(const char* file) {
  const std::vector<TrainingRun> runs = runs_of(file);
  std::printf("%s\n| run | measured (GiB) | predicted (GiB) | error |\n|---|---:|---:|---:|\n", file);
  Errors out;
  for (const TrainingRun& r : runs) {
    const double measured = static_cast<double>(r.activation_memory.value());
    const double predicted = static_cast<double>(predict_run_memory(r).activations);
    const double error = (predicted - measured) / measured;
    std::printf("| %s | %.2f | %.2f | %+.1f %% |\n", r.name.c_str(), measured / (1 << 30), predicted / (1 << 30), 100 * error);
    out.mean += std::abs(error) / static_cast<double>(runs.size());
    out.worst = std::max(out.worst, std::abs(error));
  }
  std::printf("mean |error| %.2f %%, worst %.2f %%\n\n", 100 * out.mean, 100 * out.worst);
  return out;
}

const Efficiency& a100() {
  static const Efficiency e = find_gpu("a100-80g").efficiency;
  return e;
}

// Narayanan et al. 2021 (SC'21), Table 1: the runs the A100 parameters are fitted to.
TEST(MegatronValidation, Sc21TableOne) {
  const Errors e = check("sc21-table1.csv", a100());
  EXPECT_LE(e.mean, 0.02);
  EXPECT_LE(e.worst, 0.05);
}

// The catalog's gemm and gemm_k_overhead are the least-squares fit to the SC'21 table: this
// re-derives them, so that the catalog can be checked and updated (pipesim fit prints the
// same fit and its leave-one-out errors).
TEST(MegatronValidation, CatalogIsTheLeastSquaresFit) {
  const RunsFit fit =
      fit_runs(runs_of("sc21-table1.csv"), a100(), {EfficiencyParam::Gemm, EfficiencyParam::GemmKOverhead}, false);
  std::printf("least-squares fit: gemm %.4f gemm_k_overhead %.1f (rms relative time error %.2f %%, %d steps)\n\n",
              fit.fit.efficiency.gemm, fit.fit.efficiency.gemm_k_overhead, 100 * fit.fit.rms_relative,
              fit.fit.iterations);
  EXPECT_TRUE(fit.fit.converged);
  EXPECT_NEAR(fit.fit.efficiency.gemm, a100().gemm, 0.002);
  EXPECT_NEAR(fit.fit.efficiency.gemm_k_overhead, a100().gemm_k_overhead, 5);
}

// Korthikanti et al. 2022, Table 5: not fitted; 2022 software (fused gradient accumulation,
// overlapped backward collectives), sequence parallelism and selective recomputation.
TEST(MegatronValidation, KorthikantiTableFive) {
  const Errors e = check("korthikanti-table5.csv", a100());
  EXPECT_LE(e.mean, 0.035);
  EXPECT_LE(e.worst, 0.08);
}

// Korthikanti et al. 2022, Figure 1: activation memory per GPU of the same four models,
// tensor parallelism alone and sequence parallelism + selective recomputation. The paper's
// closed forms leave out the embedding dropout mask the first stage also holds (sbh bytes per
// micro-batch, or sbh/t with sequence parallelism), which pipesim counts: +0.4 .. +2.4 %.
TEST(MegatronValidation, KorthikantiFigureOneActivations) {
  const Errors e = check_activations("korthikanti-figure1.csv");
  EXPECT_LE(e.mean, 0.02);
  EXPECT_LE(e.worst, 0.03);
}

// Figure 7: the same with each technique alone and full recomputation. Where a stage holds
// one or two layers (530B, 1T) and keeps only their inputs (full recomputation), the mask the
// figure leaves out is a third of what is kept: up to +27 %. Printed; the bound catches a change.
TEST(MegatronValidation, KorthikantiFigureSevenActivations) {
  const Errors e = check_activations("korthikanti-figure7.csv");
  EXPECT_LE(e.mean, 0.06);
  EXPECT_LE(e.worst, 0.28);
}

// The runs the model does not describe well (docs/validation/analytical.md says why:
// DeepSpeed's pipeline engine, fp8 without Transformer Engine's casts, Llama 3's unpublished
// settings). Printed for the record; the bounds only catch a change that makes them worse than documented.
TEST(MegatronValidation, OtherPublishedRuns) {
  EXPECT_LE(check("mt-nlg.csv", a100()).worst, 0.20);
  EXPECT_LE(check("bigscience-bloom.csv", a100()).worst, 0.10);
  EXPECT_LE(check("nemo-h100-fp8.csv", find_gpu("h100-sxm").efficiency).worst, 0.36);
  EXPECT_LE(check("llama3-405b.csv", find_gpu("h100-sxm").efficiency).worst, 0.07);
}

}  // namespace
}  // namespace pipesim
