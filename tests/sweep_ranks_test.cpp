// `mpirun -np N pipesim sweep` (tools/sweep_ranks.hpp) against the real binary: the outputs
// are byte for byte the single process's; a rank that fails or dies ends the job with one
// line, a non-zero exit and every existing output as it was. Skipped, saying why, where the
// build has no MPI (PIPESIM_MPI) or mpirun is missing; the build without MPI refuses to run
// as one of several ranks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/cli_runner.hpp"

namespace {

namespace fs = std::filesystem;
using pipesim::testing_cli::Result;
using pipesim::testing_cli::run_shell;
using pipesim::testing_cli::slurp;
using testing::HasSubstr;
using testing::MatchesRegex;

// 30 groups of 8 combinations: every rank gets work, in well under a second.
const std::string kGrid =
    "sweep --model gpt3-1.3b --gpus 8 --schedules 1f1b,gpipe,interleaved,zb-h1,chimera --pp 2,4 -m 8,16,32 "
    "--tp 1,2 --micro-batch-size 1,2 --recompute none,full";

class Folder {
 public:
  explicit Folder(const std::string& name)
      : dir_(fs::temp_directory_path() / ("pipesim_ranks_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  Result run(const std::string& command_line) const {
    return run_shell("cd '" + dir_.string() + "' && " + command_line);
  }
  // Its stdout and its stderr apart. mpirun forwards rank 0's two streams separately, so in a
  // capture of both together its closing `sweep:` line (stderr) can land inside a table line
  // (stdout): the tables are compared on stdout alone.
  struct Apart {
    int code = -1;
    std::string out, err;
  };
  Apart run_apart(const std::string& command_line) const {
    const std::string err = dir_.string() + ".stderr";
    // `exec 2>` inside the subshell outlasts run_shell's 2>&1, which applies to the subshell.
    const Result r = run_shell("(exec 2>'" + err + "'; cd '" + dir_.string() + "' && " + command_line + ")");
    Apart a{r.code, r.out, slurp(err)};
    fs::remove(err);
    return a;
  }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  fs::path dir_;
};

const std::string kPipesim = PIPESIM_CLI;

#if PIPESIM_TEST_MPI

// mpirun with N ranks on however few cores this machine has; as root where that is who runs.
std::string mpirun(int ranks, const std::string& env = "") {
  std::string cmd = std::string(PIPESIM_MPIEXEC) + " -q -np " + std::to_string(ranks) + " --oversubscribe";
  if (::geteuid() == 0) cmd += " --allow-run-as-root";
  if (!env.empty()) cmd += " -x " + env;
  return cmd + " ";
}

class SweepRanks : public testing::Test {
 protected:
  void SetUp() override {
    if (::access(PIPESIM_MPIEXEC, X_OK) != 0) GTEST_SKIP() << "no mpirun at " << PIPESIM_MPIEXEC;
  }
};

TEST_F(SweepRanks, OutputsAreTheSingleProcessesBytes) {
  const Folder dir("same");
  const std::string outputs = " --csv s.csv --json s.json --report s.html --jobs ";
  const Folder::Apart one = dir.run_apart(kPipesim + " " + kGrid + outputs + "2");
  ASSERT_EQ(one.code, 0) << one.err;
  const std::string csv = slurp(dir.path("s.csv")), json = slurp(dir.path("s.json")), html = slurp(dir.path("s.html"));
  ASSERT_GT(csv.size(), 1000u);
  for (int ranks : {2, 3}) {
    fs::remove(dir.path("s.csv"));
    const Folder::Apart many = dir.run_apart(mpirun(ranks) + kPipesim + " " + kGrid + outputs + "1");
    ASSERT_EQ(many.code, 0) << many.err;
    EXPECT_EQ(slurp(dir.path("s.csv")), csv) << ranks << " ranks";
    EXPECT_EQ(slurp(dir.path("s.json")), json) << ranks << " ranks";
    EXPECT_EQ(slurp(dir.path("s.html")), html) << ranks << " ranks";
    // Only rank 0 prints: the tables once, and its timing line names the ranks.
    EXPECT_THAT(many.err, HasSubstr("on " + std::to_string(ranks) + " ranks x 1 thread\n"));
    EXPECT_EQ(many.out, one.out);
  }
  EXPECT_EQ(dir.files(), (std::vector<std::string>{"s.csv", "s.html", "s.json"}));
}

// Two blocks (docs/sweep.md#blocks), one after the other on the same ranks: still the bytes of
// one process.
TEST_F(SweepRanks, TwoBlocksAreTheSingleProcessesBytes) {
  const Folder dir("blocks");
  std::string grid = kGrid;
  grid.replace(grid.find("--gpus 8"), 8, "--gpus 8,4");
  const std::string outputs = " --csv s.csv --json s.json --report s.html --jobs ";
  const Folder::Apart one = dir.run_apart(kPipesim + " " + grid + outputs + "2");
  ASSERT_EQ(one.code, 0) << one.err;
  const std::string csv = slurp(dir.path("s.csv")), json = slurp(dir.path("s.json")), html = slurp(dir.path("s.html"));
  ASSERT_THAT(csv, HasSubstr("\n8,0,h100-sxm,")) << "rows of block 8";
  ASSERT_THAT(csv, HasSubstr("\n4,0,h100-sxm,")) << "rows of block 4";
  fs::remove(dir.path("s.csv"));
  const Folder::Apart many = dir.run_apart(mpirun(2) + kPipesim + " " + grid + outputs + "1");
  ASSERT_EQ(many.code, 0) << many.err;
  EXPECT_EQ(slurp(dir.path("s.csv")), csv);
  EXPECT_EQ(slurp(dir.path("s.json")), json);
  EXPECT_EQ(slurp(dir.path("s.html")), html);
  EXPECT_THAT(many.out, HasSubstr("=== block 4 (2 of 2) ===\n"));
  EXPECT_EQ(many.out, one.out);
}

// Fewer groups than ranks: the first chunks, which every rank takes from the plan, leave the
// last ranks none; they end at once, and the outputs are still one process's.
TEST_F(SweepRanks, RanksWithoutAFirstChunkEndAtOnce) {
  const Folder dir("few");
  const std::string grid = kPipesim + " sweep --model gpt3-1.3b --gpus 8 --schedules 1f1b,zb-h1 --pp 2 -m 8 --tp 1,2 "
                                      "--csv s.csv --json s.json --jobs 1";
  const Folder::Apart one = dir.run_apart(grid);
  ASSERT_EQ(one.code, 0) << one.err;
  const std::string csv = slurp(dir.path("s.csv")), json = slurp(dir.path("s.json"));
  fs::remove(dir.path("s.csv"));
  const Folder::Apart many = dir.run_apart(mpirun(3) + grid);
  ASSERT_EQ(many.code, 0) << many.err;
  EXPECT_EQ(slurp(dir.path("s.csv")), csv);
  EXPECT_EQ(slurp(dir.path("s.json")), json);
  EXPECT_EQ(many.out, one.out);
}

TEST_F(SweepRanks, ProgressNamesTheRanksWorking) {
  const Folder dir("progress");
  // 40 iterations: long enough (~0.3 s) for rank 0's progress calls, 0.1 s apart, to see both ranks at work.
  const Result r = dir.run(mpirun(2) + kPipesim + " " + kGrid + " --iterations 40 --jobs 1 --progress 1ms");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pipesim: progress: sweep, 2 of 2 ranks working: "));
  EXPECT_THAT(r.out, HasSubstr("pipesim: progress: sweep on 2 ranks: done, 240 combinations in "));
}

// A folder whose outputs exist before a run that must fail, and what must hold after it.
class Existing : public Folder {
 public:
  explicit Existing(const std::string& name) : Folder(name) {
    for (const char* f : {"s.csv", "s.json"}) std::ofstream(path(f)) << "before\n";
  }
  // The grid on two ranks of one thread with PIPESIM_SWEEP_TEST_FAIL=`hook` on every rank.
  Result run_failing(const std::string& hook) const {
    return run("PIPESIM_SWEEP_TEST_FAIL=" + hook + " " + mpirun(2, "PIPESIM_SWEEP_TEST_FAIL") + kPipesim + " " +
               kGrid + " --jobs 1 --csv s.csv --json s.json");
  }
  void expect_nothing_lost() const {
    EXPECT_EQ(slurp(path("s.csv")), "before\n");
    EXPECT_EQ(slurp(path("s.json")), "before\n");
    EXPECT_EQ(files(), (std::vector<std::string>{"s.csv", "s.json"})) << "temporary files left";
  }
};

TEST_F(SweepRanks, AFailingRankEndsTheJobWithOneLineNamingItAndTheConfiguration) {
  for (const char* rank : {"1", "0"}) {  // another rank's failure, and rank 0's own
    const Existing dir(std::string("fails") + rank);
    const Result r = dir.run_failing(rank);
    EXPECT_EQ(r.code, 5) << r.out;
    EXPECT_THAT(r.out, MatchesRegex(std::string("pipesim: internal error: rank ") + rank +
                                    " failed on configuration [0-9]+ \\(h100-sxm, [a-z0-9-]+( v=2)?, tp [12], pp [24], m "
                                    "[0-9]+, b [12], recompute (none|full)\\): a failure injected by "
                                    "PIPESIM_SWEEP_TEST_FAIL \\(a bug in pipesim; please report it with the command\\)\n"));
    dir.expect_nothing_lost();
  }
}

TEST_F(SweepRanks, ARankThatDiesLeavesEveryOutputAsItWas) {
  const Existing dir("dies");
  const Result r = dir.run_failing("1:abort");
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pipesim: error: rank 1 died (signal 6, Aborted) on configuration ")) << r.out;
  dir.expect_nothing_lost();
}

TEST_F(SweepRanks, BadInputIsOneLineFromRankZero) {
  const Existing dir("input");
  // The same on every rank: rank 0 says it once.
  Result r = dir.run(mpirun(2) + kPipesim + " " + kGrid + " --jobs 0 --csv s.csv --json s.json");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out, "pipesim: error: --jobs must be at least 1, got 0\n");
  // An output only rank 0 writes.
  r = dir.run(mpirun(2) + kPipesim + " " + kGrid + " --csv s.csv --json nodir/s.json");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out, "pipesim: error: --json: cannot write 'nodir/s.json': the folder 'nodir' does not exist\n");
  // Another rank's own (MPMD: rank 1 runs other flags): rank 0 names it.
  r = dir.run(mpirun(1) + kPipesim + " " + kGrid + " --csv s.csv : -np 1 " + kPipesim + " " + kGrid + " --top 0");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out, "pipesim: error: rank 1: --top must be at least 1, got 0\n");
  dir.expect_nothing_lost();
}

#else  // no MPI in this build

TEST(SweepRanks, SkippedWithoutMpi) {
  GTEST_SKIP() << "this build has no MPI (PIPESIM_MPI=OFF, or no MPI found): only the refusal below is tested";
}

TEST(SweepRanks, ABuildWithoutMpiRefusesToRunAsOneOfSeveralRanks) {
  const Folder dir("refuse");
  std::ofstream(dir.path("s.csv")) << "before\n";
  for (const char* env : {"OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2", "PMI_RANK=1 PMI_SIZE=4"}) {
    const Result r = dir.run(std::string(env) + " " + kPipesim + " " + kGrid + " --csv s.csv");
    EXPECT_EQ(r.code, 2) << r.out;
    if (std::string(env).rfind("OMPI", 0) == 0)
      EXPECT_EQ(r.out, "pipesim: error: this pipesim was built without MPI, but was started as rank 0 of 2 (mpirun, "
                       "srun): rebuild with -DPIPESIM_MPI=ON (README), or run it alone\n");
    else
      EXPECT_EQ(r.out, "") << "only rank 0 prints";
  }
  EXPECT_EQ(slurp(dir.path("s.csv")), "before\n");
}

#endif

// srun of several tasks without an MPI plugin (srun --mpi=none) gives no PMI to start MPI
// with: every task refuses, task 0 says why in one line, no file is written. A batch script's
// own commands (SLURM_PROCID without SLURM_STEP_NUM_TASKS) and a step of one task run alone.
TEST(SweepSrun, WithoutAnMpiPluginIsRefusedWithOneLine) {
  const Folder dir("srun");
  std::ofstream(dir.path("s.csv")) << "before\n";
  for (const char* task : {"0", "1"}) {
    const Result r = dir.run(std::string("SLURM_PROCID=") + task + " SLURM_STEP_NUM_TASKS=2 " + kPipesim + " " + kGrid +
                             " --csv s.csv");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_EQ(r.out, task[0] == '0' ? "pipesim: error: started by srun as task 0 of 2 without an MPI plugin: run srun "
                                      "--mpi=pmix (or set MpiDefault=pmix in slurm.conf; "
                                      "docs/sweep.md#a-slurm-batch-script)\n"
                                    : "")
        << "task " << task;
  }
  EXPECT_EQ(slurp(dir.path("s.csv")), "before\n");
  for (const char* env : {"SLURM_PROCID=0 SLURM_NTASKS=2", "SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=1"}) {
    const Result r = dir.run(std::string(env) + " " + kPipesim + " " + kGrid + " --csv s.csv");
    EXPECT_EQ(r.code, 0) << env << ": " << r.out;
  }
  EXPECT_NE(slurp(dir.path("s.csv")), "before\n");
}

// Alone, a configuration that fails for a reason of its own (a bug, here injected) is named.
TEST(SweepFailure, OneProcessNamesTheConfiguration) {
  const Folder dir("alone");
  std::ofstream(dir.path("s.csv")) << "before\n";
  const Result r = dir.run("PIPESIM_SWEEP_TEST_FAIL=0 " + kPipesim + " " + kGrid + " --jobs 2 --csv s.csv");
  EXPECT_EQ(r.code, 5) << r.out;
  EXPECT_THAT(r.out, MatchesRegex("pipesim: internal error: configuration [0-9]+ \\(h100-sxm, .*\\): a failure "
                                  "injected by PIPESIM_SWEEP_TEST_FAIL \\(a bug in pipesim; please report it with the "
                                  "command\\)\n"));
  EXPECT_EQ(slurp(dir.path("s.csv")), "before\n");
  EXPECT_EQ(dir.files(), std::vector<std::string>{"s.csv"});
}

}  // namespace
