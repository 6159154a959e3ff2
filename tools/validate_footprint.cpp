#include "tools/validate_footprint.hpp"

#include <algorithm>

#include "cost_models/stage_layout.hpp"
#include "kernels/profiler.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {

int device_blocks(const ModelSpec& model, const Schedule& s) {
  int most = 1;
  for (int d = 0; d < s.num_devices; ++d) {
    int blocks = 0;
    for (const auto& [pipeline, stage] : s.replicas_on(d)) blocks += stage_layout(model.layers, stage, s.num_stages).blocks;
    most = std::max(most, blocks);
  }
  return std::min(most, default_stage_blocks(model, 1));
}

std::string footprint_warning(const ModelSpec& model, const Schedule& s, int profiled) {
  const int held = device_blocks(model, s);
  if (profiled <= 0 || held == profiled) return "";
  return one_line(s.name) + "'s devices hold " + std::to_string(held) + " blocks each (all their stages'), the profile " +
         "timed the block within " + std::to_string(profiled) + ": its ops may run " +
         (held > profiled ? "longer" : "shorter") + " than predicted (validate it on its own, or profile with " +
         "--stage-blocks " + std::to_string(held) + " and pass --cost)";
}

}  // namespace pipesim
