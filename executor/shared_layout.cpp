#include "executor/shared_layout.hpp"

#include <algorithm>
#include <cmath>

#include "core/cpu_affinity.hpp"
#include "core/error.hpp"
#include "cost_models/sampled.hpp"
#include "executor/backend_factory.hpp"

namespace pipesim {

std::vector<double> device_slowdowns(int devices, const std::vector<double>& core_slowdown) {
  PIPESIM_ASSERT(!core_slowdown.empty());
  const auto cores = static_cast<int>(core_slowdown.size());
  std::vector<double> out;
  double mean = 0;
  for (double s : core_slowdown) mean += s / cores;
  for (int d = 0; d < devices; ++d)
    out.push_back(devices <= cores ? core_slowdown[static_cast<std::size_t>(d % cores)] : mean);
  return out;
}

Tick kernel_time_slice(int cores) {
  int log2 = 0;
  for (int c = std::min(std::max(cores, 1), 8); c > 1; c /= 2) ++log2;
  return 750'000 * (1 + log2);
}

ExecutorLayout executor_layout(const std::string& backend, int devices, const std::string& sm_partition,
                               Tick typical_op) {
  ExecutorLayout layout;
  layout.backend = backend;
  layout.devices = devices;
  if (backend == "cpu") {
    layout.cores = usable_cores();
    layout.time_sliced = typical_op > 4 * kernel_time_slice(layout.cores);
  } else {
    layout.devices_per_gpu = devices_per_gpu(backend, devices);
    layout.own_sms = sm_partition != "off";
  }
  return layout;
}

SlowdownCurves beyond_noise(SlowdownCurves curves, double noise) {
  for (auto& curve : curves)
    for (double& s : curve)
      if (std::abs(s - 1) <= noise) s = 1;
  return curves;
}

KindFactors beyond_noise(KindFactors turns, const KindFactors& evidence) {
  for (std::size_t k = 0; k < turns.size(); ++k)
    if (!(evidence[k] > 2) || turns[k] < 1) turns[k] = 1;
  return turns;
}

ProfileSlowdowns profile_slowdowns(const ProfiledCostModel& costs) {
  const Profile& profile = costs.config().profile;
  ProfileSlowdowns out{beyond_noise(costs.slowdowns(), repeat_spread(profile)),
                       beyond_noise(costs.turn_slowdowns(), costs.turn_evidence())};
  if (const int cores = profile.shared_core.cores; cores > 1)
    for (std::size_t k = 0; k < out.turns.size(); ++k)
      if (const std::vector<double>& curve = out.curves[k]; !curve.empty() && out.turns[k] > 1)
        out.turns[k] = std::max(1.0, out.turns[k] / slowdown_at(curve, static_cast<std::size_t>(cores - 1)));
  return out;
}

SharedHardware shared_hardware(const ExecutorLayout& layout, const SlowdownCurves& curves, const KindFactors& turns) {
  SharedHardware hw;
  const int per_pool = layout.backend == "cpu" ? std::max(1, layout.devices) : std::max(1, layout.devices_per_gpu);
  ComputePool each;
  each.cores = layout.backend == "cpu" ? layout.cores : layout.own_sms ? 0 : 1;
  each.queue = layout.backend == "cpu" && !layout.time_sliced;
  each.slowdown = curves;
  if (layout.backend == "cpu") each.turn_slowdown = turns;  // a GPU's partitions: the curve says it all
  for (ComputePool& pool : consecutive_pools(layout.devices, per_pool, each))
    if (pool.devices.size() >= 2) hw.pools.push_back(std::move(pool));  // alone on its cores or GPU: nothing shared
  return hw;
}

}  // namespace pipesim
