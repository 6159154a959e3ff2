// How a run says its backend launched the ops (tools/run_flags.hpp: launch_json, launch_line,
// from BackendStats): nothing for the CPU backend, so its outputs stay as they were; totals,
// the devices' paths and the GPU time for the CUDA backend (docs/gpu.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tools/run_flags.hpp"

namespace pipesim {
namespace {

using ::testing::HasSubstr;

BackendStats cuda_device(const std::string& path, std::int64_t graphs, std::int64_t direct, std::int64_t ns) {
  BackendStats s;
  s.path = path;
  s.launches.stage_ops = graphs + direct;
  s.launches.graph_launches = graphs;
  s.launches.direct_ops = direct;
  s.launches.captures = 3;
  s.launches.instantiations = 3;
  s.timed_ops = graphs + direct;
  s.device_ns = ns;
  return s;
}

TEST(LaunchReport, CpuBackendSaysNothing) {
  MeasuredRun run;
  run.backend_stats.resize(2);  // CpuBackend::stats(): empty path
  EXPECT_TRUE(launch_json(run).is_null());
  EXPECT_EQ(launch_line(run), "");
}

TEST(LaunchReport, CudaTotalsPathsAndGpuTime) {
  MeasuredRun run;
  run.backend_stats = {cuda_device("graphs", 21, 3, 2'000'000), cuda_device("graphs", 9, 3, 500'000),
                       cuda_device("direct (fallback: forward of slot 1: cuda: x)", 0, 12, 1'500'000)};
  const auto j = launch_json(run);
  EXPECT_EQ(j["path"], "graphs; direct (fallback: forward of slot 1: cuda: x)");
  EXPECT_EQ(j["block_ops"], 48);
  EXPECT_EQ(j["graph_launches"], 30);
  EXPECT_EQ(j["direct_ops"], 18);
  EXPECT_EQ(j["captures"], 9);
  EXPECT_DOUBLE_EQ(j["device_time_s"].get<double>(), 4e-3);
  ASSERT_EQ(j["devices"].size(), 3u);
  EXPECT_EQ(j["devices"][2]["path"], "direct (fallback: forward of slot 1: cuda: x)");
  EXPECT_EQ(j["devices"][0]["graph_launches"], 21);
  EXPECT_THAT(launch_line(run), HasSubstr("30 of 48 block ops replayed as one graph launch each, 18 launched kernel by "
                                          "kernel; 9 captures; GPU time of the ops 4.000 ms (CUDA events)\n"));
}

}  // namespace
}  // namespace pipesim
