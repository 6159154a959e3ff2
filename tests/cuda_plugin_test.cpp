// The CUDA plugin's loading (executor/cuda_plugin.hpp, docs/gpu.md "Loading"), through the real
// binary: a run that does not ask for CUDA never loads a CUDA library; --version says what the
// build has without loading it; every reason a CUDA run cannot start is one line, exit code 6.
// Runs in every build (without PIPESIM_CUDA the answers are "not built"); no test here needs a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "cli_runner.hpp"
#include "executor/cuda_plugin.hpp"

namespace pipesim {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing_cli::Result;
using testing_cli::run;
using testing_cli::run_shell;

// The binary with the plugin looked for at `plugin`, and the dynamic loader's list of the
// libraries it opens (LD_DEBUG=libs, on stderr with the output).
Result run_with_plugin(const std::string& plugin, const std::string& args) {
  return run_shell("PIPESIM_CUDA_PLUGIN='" + plugin + "' " + PIPESIM_CLI + " " + args);
}
Result run_traced(const std::string& args) { return run_shell(std::string("LD_DEBUG=libs ") + PIPESIM_CLI + " " + args); }

void expect_no_cuda(const Result& r, const std::string& error) {
  EXPECT_EQ(r.code, 6) << r.out;
  EXPECT_EQ(r.out, "pipesim: error: " + error + "\n");
}

TEST(CudaPlugin, RunsThatStayOnTheCpuLoadNoCudaLibrary) {
  for (const std::string args : {"--version", "schedule --schedule 1f1b -p 2 -m 4 --format text",
                                 "run --model gpt-tiny --schedule 1f1b -p 2 -m 2 --iterations 1"}) {
    const Result r = run_traced(args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("find library=libc.so.6")) << "LD_DEBUG=libs lists what the loader opens";
    // ("--version" names the plugin's path in its output: only the loader's lines count.)
    EXPECT_THAT(r.out, Not(ContainsRegex("(calling init: |find library=)[^\n]*(libcudart|libcublas|libpipesim_cuda)")))
        << args;
  }
}

TEST(CudaPlugin, VersionSaysWhatTheBuildHas) {
  const Result r = run("--version");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, StartsWith("pipesim "));
  EXPECT_THAT(r.out, HasSubstr("\n  build   "));
  EXPECT_THAT(r.out, HasSubstr("\n  zlib    "));
  EXPECT_THAT(r.out, HasSubstr("\n  python  module "));
  if (!cuda_plugin_built()) {
    EXPECT_THAT(r.out, HasSubstr("\n  cuda    not built (PIPESIM_CUDA=OFF): --backend cpu only\n"));
    return;
  }
  // Where the binary finds it in the build tree, ../lib*/pipesim/ from tools/; not loaded.
  const std::filesystem::path exe = PIPESIM_CLI;
  EXPECT_THAT(r.out, HasSubstr("\n  cuda    plugin " + exe.parent_path().parent_path().string() + "/lib"));
  EXPECT_THAT(r.out, HasSubstr("/pipesim/libpipesim_cuda.so (loaded by --backend cuda only; pipesim --check-cuda loads it)\n"));
  EXPECT_THAT(run_with_plugin("/nonexistent/libpipesim_cuda.so", "--version").out,
              HasSubstr("\n  cuda    plugin built, but missing: /nonexistent/libpipesim_cuda.so\n"));
}

TEST(CudaPlugin, EveryReasonACudaRunCannotStartIsOneLineAndExitCode6) {
  const std::string use_cpu = "; use --backend cpu";
  if (!cuda_plugin_built()) {
    const std::string error = "--backend cuda: this pipesim was built without CUDA (configure with -DPIPESIM_CUDA=ON "
                              "where nvcc and cuBLAS are installed, docs/gpu.md)" + use_cpu;
    expect_no_cuda(run("run --backend cuda"), error);
    expect_no_cuda(run("--check-cuda"), error);
    return;
  }
#ifndef PIPESIM_TEST_FAKE_PLUGIN
  FAIL() << "the plugin is built, but tests/CMakeLists.txt gave this test no fake plugin";
#else
  const std::string missing = "/nonexistent/libpipesim_cuda.so";
  expect_no_cuda(run_with_plugin(missing, "run --backend cuda"),
                 "--backend cuda: cannot load the CUDA plugin '" + missing + "': " + missing +
                     ": cannot open shared object file: No such file or directory" + use_cpu);
  expect_no_cuda(run_with_plugin(missing, "profile --backend cuda --model gpt-tiny --out /tmp/never.json"),
                 "--backend cuda: cannot load the CUDA plugin '" + missing + "': " + missing +
                     ": cannot open shared object file: No such file or directory" + use_cpu);
  // A shared library that is not a plugin, and a plugin of another build.
  expect_no_cuda(run_with_plugin(PIPESIM_TEST_OTHER_LIBRARY, "run --backend cuda"),
                 std::string("--backend cuda: '") + PIPESIM_TEST_OTHER_LIBRARY +
                     "' is not a pipesim CUDA plugin (no pipesim_cuda_plugin)" + use_cpu);
  const Result other = run_with_plugin(PIPESIM_TEST_FAKE_PLUGIN, "run --backend cuda");
  EXPECT_EQ(other.code, 6) << other.out;
  EXPECT_THAT(other.out, StartsWith(std::string("pipesim: error: --backend cuda: the CUDA plugin '") +
                                    PIPESIM_TEST_FAKE_PLUGIN +
                                    "' was built by another pipesim ('pipesim 0.0.1, another build', this is 'pipesim "));
  EXPECT_EQ(std::count(other.out.begin(), other.out.end(), '\n'), 1) << other.out;
  // The real plugin, on this machine: a GPU, or the runtime's reason there is none.
  const CudaRuntimeInfo info = cuda_plugin().runtime_info();
  const Result check = run("--check-cuda");
  EXPECT_THAT(check.out, StartsWith("cuda\n  plugin   "));
  EXPECT_THAT(check.out, HasSubstr("\n  runtime  CUDA " + info.runtime + ", cuBLAS " + info.cublas + "\n"));
  if (info.gpus.empty()) {
    EXPECT_EQ(check.code, 6) << check.out;
    EXPECT_THAT(check.out, HasSubstr("\npipesim: error: --backend cuda: no CUDA device is visible (" + info.why_none +
                                     ")" + use_cpu + "\n"));
    const Result r = run("run --backend cuda");
    EXPECT_EQ(r.code, 6) << r.out;
    EXPECT_THAT(r.out, StartsWith("pipesim: error: --backend cuda: no CUDA device is visible ("));
  } else {
    EXPECT_EQ(check.code, 0) << check.out;
    EXPECT_THAT(check.out, HasSubstr("\n  GPU 0    " + info.gpus[0] + "\n"));
  }
#endif
}

}  // namespace
}  // namespace pipesim
