#include "executor/op_gap_probe.hpp"

#include <algorithm>
#include <vector>

#include "core/units.hpp"
#include "cost_models/catalog.hpp"
#include "executor/executor.hpp"
#include "schedules/generator.hpp"

namespace pipesim {

TimingStats measure_op_gaps() {
  ModelSpec model = find_model(kOpGapModel);
  model.layers = 1;
  ScheduleParams params;
  params.p = 1;
  params.m = kOpGapMicrobatches;
  params.iterations = kOpGapIterations;
  const Schedule schedule = generate("gpipe", params);
  const MeasuredRun run = run_schedule(schedule, model);
  std::vector<OpRecord> ops = run.timeline.ops;
  std::sort(ops.begin(), ops.end(), [](const OpRecord& a, const OpRecord& b) { return a.ref.index < b.ref.index; });
  // The first iteration's ops: m forwards, m backwards and its optimizer step.
  const std::size_t first = 2 * static_cast<std::size_t>(kOpGapMicrobatches) + 1;
  PIPESIM_ASSERT(ops.size() == first * kOpGapIterations);
  std::vector<double> gaps;
  for (std::size_t i = first; i < ops.size(); ++i)
    gaps.push_back(ticks_to_seconds(std::max<Tick>(1, ops[i].start - ops[i - 1].end)));
  PIPESIM_ASSERT(!gaps.empty());
  return summarize_timings(gaps);
}

Profile with_executor_gaps(Profile p) {
  if (p.backend == "cpu") p.executor.op_gap = measure_op_gaps();
  return p;
}

}  // namespace pipesim
