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

std::vector<std::vector<std::size_t>> footprint_groups(const ModelSpec& model, const std::vector<Schedule>& schedules) {
  std::vector<std::vector<std::size_t>> groups;
  std::vector<int> blocks;  // each group's
  for (std::size_t i = 0; i < schedules.size(); ++i) {
    const int held = device_blocks(model, schedules[i]);
    const auto at = std::find(blocks.begin(), blocks.end(), held);
    if (at == blocks.end()) {
      blocks.push_back(held);
      groups.push_back({i});
    } else {
      groups[static_cast<std::size_t>(at - blocks.begin())].push_back(i);
    }
  }
  return groups;
}

std::string footprint_warning(const ModelSpec& model, const Schedule& s, int profiled) {
  const int held = device_blocks(model, s);
  if (profiled <= 0 || held == profiled) return "";
  return one_line(s.name) + "'s devices hold " + std::to_string(held) + " blocks each (all their stages'), the profile " +
         "timed the block within " + std::to_string(profiled) + ": its ops may run " +
         (held > profiled ? "longer" : "shorter") + " than predicted (profile with --stage-blocks " +
         std::to_string(held) + " for it, or leave out --cost: validate then profiles each footprint)";
}

}  // namespace pipesim
