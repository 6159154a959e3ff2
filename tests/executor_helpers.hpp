#pragma once
// Shared by the executor tests: small runs of gpt-tiny and look-ups into their records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
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

struct Case {
  std::string name;
  int p, m, iterations;
  friend void PrintTo(const Case& c, std::ostream* os) {
    *os << c.name << " p=" << c.p << " m=" << c.m << " iterations=" << c.iterations;
  }
};

// Every generator, for the executor tests (CPU and CUDA): shapes picked for the generators
// below (odd m where allowed); a generator not listed (a new schedule) runs at the smallest
// shape it accepts, so adding one needs no edit here.
inline std::vector<Case> every_generator() {
  std::vector<Case> cases = {{"gpipe", 2, 3, 2},        {"1f1b", 4, 4, 2},      {"interleaved", 2, 4, 2}, {"zb-h1", 2, 4, 2},
          {"zb-h2", 2, 4, 2},        {"chimera", 4, 4, 2},   {"pipedream", 2, 3, 3},   {"pipedream-2bw", 2, 2, 3},
          {"async-1f1b", 2, 3, 2},   {"amp", 2, 3, 2},       {"amdp", 4, 4, 2},        {"dualpipe", 2, 4, 2},
          {"dualpipev", 2, 4, 2},    {"looped-bfs", 2, 2, 2}, {"interleaved-zb", 2, 4, 2}, {"zb-v", 2, 4, 2},
          {"v-half", 2, 4, 2},       {"v-min", 2, 4, 2}};
  for (const GeneratorInfo& g : generators()) {
    if (std::any_of(cases.begin(), cases.end(), [&](const Case& c) { return c.name == g.name; })) continue;
    for (int p : {2, 4}) {
      for (int m = 2; m <= 8 && (cases.empty() || cases.back().name != g.name); ++m) {
        ScheduleParams q;
        q.p = p;
        q.m = m;
        q.iterations = 2;
        try {
          (void)generate(g.name, q);
          cases.push_back({std::string(g.name), p, m, 2});
        } catch (const InputError&) {
        }
      }
    }
  }
  return cases;
}

inline std::string case_name(const ::testing::TestParamInfo<Case>& param) {
  std::string n = param.param.name;
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n;
}

}  // namespace pipesim::testing_executor
