#pragma once
// Shared by the executor tests: small runs of gpt-tiny and look-ups into their records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "cost_models/catalog.hpp"
#include "executor/executor.hpp"
#include "schedules/generator.hpp"

namespace pipesim::testing_executor {

inline const ModelSpec& tiny() {
  static const ModelSpec m = find_model("gpt-tiny");
  return m;
}

inline Schedule make(const std::string& name, int p, int m, int iterations = 1) {
  ScheduleParams params;
  params.p = p;
  params.m = m;
  params.v = 2;
  params.iterations = iterations;
  return generate(name, params);
}

inline RunOptions quick(OptimizerKind kind = OptimizerKind::Sgd, double lr = 0.05) {
  RunOptions o;
  o.optimizer = {kind, lr};
  o.timeout = std::chrono::seconds(30);
  return o;
}

// Records by (device, index).
inline std::map<std::pair<int, int>, OpRecord> by_ref(const Timeline& t) {
  std::map<std::pair<int, int>, OpRecord> out;
  for (const OpRecord& r : t.ops) out[{r.ref.device, r.ref.index}] = r;
  return out;
}

// The final weights of one pipeline (keep_final_weights), all stages in one vector.
inline std::vector<float> whole_model(const MeasuredRun& run, int pipeline = 0) {
  std::vector<float> out;
  for (const auto& stage : run.final_weights[static_cast<std::size_t>(pipeline)]) out.insert(out.end(), stage.begin(), stage.end());
  return out;
}

// Largest |value - reference| relative to the largest |reference|.
inline double relative_difference(const std::vector<float>& value, const std::vector<float>& reference) {
  EXPECT_EQ(value.size(), reference.size());
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < value.size() && i < reference.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(value[i] - reference[i])));
    scale = std::max(scale, static_cast<double>(std::abs(reference[i])));
  }
  return diff / scale;
}

}  // namespace pipesim::testing_executor
