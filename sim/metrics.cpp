#include "sim/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

Staleness summarize_staleness(const std::vector<StageStaleness>& stages) {
  Staleness s;
  s.per_stage = stages;
  std::int64_t backwards = 0, mismatched = 0, mismatch_sum = 0, gradients = 0, delay_sum = 0;
  for (const auto& st : stages) {
    backwards += st.backwards;
    mismatched += st.mismatched;
    mismatch_sum += st.mismatch_sum;
    gradients += st.gradients;
    delay_sum += st.delay_sum;
    s.max_mismatch = std::max(s.max_mismatch, st.max_mismatch);
    s.max_delay = std::max(s.max_delay, st.max_delay);
  }
  if (backwards > 0) {
    s.mean_mismatch = static_cast<double>(mismatch_sum) / static_cast<double>(backwards);
    s.mismatched_fraction = static_cast<double>(mismatched) / static_cast<double>(backwards);
  }
  if (gradients > 0) s.mean_delay = static_cast<double>(delay_sum) / static_cast<double>(gradients);
  return s;
}

}  // namespace

IterationWindow iteration_window(const SimResult& result, int warmup) {
  const auto& ends = result.iteration_end;
  PIPESIM_ASSERT(warmup >= 0 && (warmup == 0 || static_cast<std::size_t>(warmup) < ends.size()));
  if (warmup > 1) {
    std::vector<Tick> sorted = ends;
    std::sort(sorted.begin(), sorted.end());
    const int counted = static_cast<int>(sorted.size()) - warmup;
    const Tick last_end = sorted.back();
    const Tick per_iteration = (last_end - sorted[static_cast<std::size_t>(warmup - 1)]) / counted;
    return {last_end - per_iteration * counted, last_end, per_iteration, counted};
  }
  if (ends.size() < 2) return {0, result.makespan, result.makespan, 1};
  // The span of the iteration ends: in an imported schedule iteration 1 may end before
  // iteration 0, and last minus first would be a negative time.
  const auto [first_end, last_end] = std::minmax_element(ends.begin(), ends.end());
  const int counted = static_cast<int>(ends.size() - 1);
  const Tick per_iteration = (*last_end - *first_end) / counted;
  return {*last_end - per_iteration * counted, *last_end, per_iteration, counted};
}

double weight_share(const Metrics& m) {
  std::int32_t copies = 0;
  for (const DeviceMetrics& d : m.per_device) copies = std::max(copies, d.peak_weight_versions);
  return static_cast<double>(copies) / m.chunks_per_device;
}

std::string weight_share_text(const Metrics& m) {
  const double share = weight_share(m);
  char text[32];
  std::snprintf(text, sizeof text, share == std::floor(share) ? "%.0fx" : "%.1fx", share);
  return text;
}

Metrics summarize(const Schedule& schedule, const SimResult& result, int warmup) {
  Metrics m;
  m.schedule = schedule.name;
  m.devices = schedule.num_devices;
  m.stages = schedule.num_stages;
  m.microbatches = schedule.microbatches;
  m.iterations = schedule.iterations;
  m.ops = schedule.total_ops();
  m.chunks_per_device = std::max(1, schedule.chunks_per_device());
  m.makespan = result.makespan;
  for (int d = 0; d < schedule.num_devices; ++d) {
    const DeviceStats& s = result.devices[static_cast<std::size_t>(d)];
    DeviceMetrics dm{d, s.busy, result.makespan - s.busy, s.peak_activations, s.peak_activation_bytes,
                     s.peak_weight_versions};
    m.busy += dm.busy;
    m.idle += dm.idle;
    m.per_device.push_back(dm);
  }
  const double capacity = static_cast<double>(m.devices) * static_cast<double>(m.makespan);
  m.bubble_ratio = capacity > 0 ? static_cast<double>(m.idle) / capacity : 0.0;
  m.bubble_ratio_megatron = m.busy > 0 ? static_cast<double>(m.idle) / static_cast<double>(m.busy) : 0.0;
  m.time_per_iteration = iteration_window(result, warmup).per_iteration;
  if (m.time_per_iteration > 0)
    // A split micro-batch (Chimera halving) is 1/microbatch_split of a full one.
    m.throughput_mb_per_s = static_cast<double>(m.microbatches) / schedule.microbatch_split /
                            ticks_to_seconds(m.time_per_iteration);
  m.staleness = summarize_staleness(result.staleness);
  for (const OpRef& ref : result.critical_path)
    m.critical_path.push_back(to_string(schedule.ops[static_cast<std::size_t>(ref.device)][static_cast<std::size_t>(ref.index)]) +
                              "@" + std::to_string(ref.device));
  return m;
}

}  // namespace pipesim
