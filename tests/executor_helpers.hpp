#pragma once
// Shared by the executor tests: small runs of gpt-tiny and look-ups into their records.
#include <map>

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

}  // namespace pipesim::testing_executor
