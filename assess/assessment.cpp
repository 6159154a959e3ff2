#include "assess/assessment.hpp"

#include <algorithm>

#include "core/units.hpp"

namespace pipesim {

long long sequences_per_iteration(const Schedule& schedule, int micro_batch_size, int dp) {
  return static_cast<long long>(schedule.microbatches) / schedule.microbatch_split * micro_batch_size * dp;
}

int optimizer_steps_per_iteration(const Schedule& schedule) {
  long long steps = 0;
  for (const std::vector<Op>& ops : schedule.ops)
    for (const Op& op : ops) steps += op.kind == OpKind::OptStep && op.stage == 0 && op.pipeline == 0;
  const long long iterations = std::max(1, schedule.iterations);
  return static_cast<int>(std::max(1LL, (steps + iterations - 1) / iterations));
}

Assessment assess(const AssessmentSource& source, const Schedule& schedule, const SimResult& result,
                  const Metrics& metrics) {
  const Deployment d = source.deployment();
  Assessment a;
  a.model = d.model;
  a.hardware = d.hardware;
  a.nodes = d.nodes;
  a.gpus_per_node = d.gpus_per_node;
  a.gpus = d.nodes * d.gpus_per_node;
  a.tp = d.tp;
  a.pp = schedule.num_devices;
  a.dp = d.dp;
  a.global_batch = static_cast<double>(sequences_per_iteration(schedule, d.micro_batch_size, d.dp));
  a.optimizer_steps = optimizer_steps_per_iteration(schedule);
  a.tokens_per_iteration = a.global_batch * d.seq_len;
  a.price_per_hour = d.price_per_hour;
  a.price_source = d.price_source;
  a.price_assumed = d.price_assumed;
  const double seconds = ticks_to_seconds(metrics.time_per_iteration);
  if (seconds > 0) {
    a.tokens_per_s = a.tokens_per_iteration / seconds;
    a.mfu = a.global_batch * d.flops_per_sequence / (seconds * a.gpus * d.peak_flops);
    if (a.price_per_hour) a.cost_per_million_tokens = *a.price_per_hour * a.gpus / 3600.0 / a.tokens_per_s * 1e6;
  }
  for (int device = 0; device < schedule.num_devices; ++device) {
    a.memory.push_back(source.device_memory(schedule, device, result.devices[static_cast<std::size_t>(device)]));
    if (a.memory.back().total > a.peak_memory) {
      a.peak_memory = a.memory.back().total;
      a.peak_device = device;
    }
  }
  a.capacity = d.capacity;
  a.fits = a.peak_memory <= a.capacity;
  a.overshoot = a.fits ? 0 : a.peak_memory - a.capacity;
  return a;
}

std::vector<std::int64_t> static_memory(const AssessmentSource& source, const Schedule& schedule,
                                        const SimResult& result) {
  std::vector<std::int64_t> bytes;
  for (int device = 0; device < schedule.num_devices; ++device) {
    const DeviceMemory m = source.device_memory(schedule, device, result.devices[static_cast<std::size_t>(device)]);
    bytes.push_back(m.total - m.activations);
  }
  return bytes;
}

AssessedRun assess_configuration(Simulator& simulator, const Schedule& schedule, const CostModel& model,
                                 const AssessmentSource& source, SimObserver* observer,
                                 const SharedHardware* hardware) {
  AssessedRun out;
  out.result = simulator.run(schedule, model, observer, nullptr, hardware);
  out.metrics = summarize(schedule, out.result);
  out.assessment = assess(source, schedule, out.result, out.metrics);
  return out;
}

std::vector<std::size_t> closest_to_fitting(const std::vector<Assessment>& assessed, std::size_t k) {
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < assessed.size(); ++i) {
    if (assessed[i].fits) return {};
    all.push_back(i);
  }
  return closest_to_fitting(std::move(all), [&](std::size_t i) { return assessed[i].overshoot; }, k);
}

}  // namespace pipesim
