#include "tools/unused_flags.hpp"

#include <algorithm>
#include <string_view>

#include "schedules/generator.hpp"
#include "tools/cli_options.hpp"

namespace pipesim {

std::vector<UnusedFlags> unused_flags(const CostModelInfo* chosen, bool schedule_file,
                                      const std::vector<std::string>& generators) {
  const std::vector<std::string>& uniform = find_cost_model("uniform").flags;
  const std::vector<std::string>& gpu = find_cost_model("analytical").flags;
  const bool none = chosen == nullptr;
  const bool cost = !none && chosen->name == "profiled", uniform_costs = !none && chosen->name == "uniform";
  std::vector<UnusedFlags> out;
  if (none)
    out.push_back({uniform, "used only with --cost-model uniform (the costs of a simulated iteration)", true});
  else if (!uniform_costs)
    out.push_back({uniform,
                   cost ? "not used with --cost (the profile gives every duration and size)"
                        : "not used with --model (the analytical model gives every duration and size)",
                   true});
  if (cost) out.push_back({gpu, "not used with --cost (the profile measured its own machine)", true});
  if (uniform_costs || none) {
    out.push_back({gpu, "used only with --model (the GPU settings of the analytical model)", true});
    out.push_back({{"--micro-batch-size", "--global-batch-size"}, "used only with --model or --cost", true});
  }
  if (!cost) out.push_back({find_cost_model("profiled").flags, "used only with --cost", true});
  if (schedule_file) {  // checked against the file where the schedule is made (check_schedule_file_flags)
    UnusedFlags generator{shape_flags(), "", false};
    for (const std::string& f : generator_only_flags()) generator.flags.push_back(f);
    generator.flags.emplace_back("--schedule");
    out.push_back(generator);
  } else {  // settings that none of the generators reads (check_generator_flags refuses them)
    UnusedFlags settings{{}, "", false};
    for (const std::string& flag : generator_setting_flags()) {
      bool read = false;
      for (const std::string& name : generators) read = read || find_generator(name).reads(std::string_view(flag).substr(2));
      if (!read) settings.flags.push_back(flag);
    }
    out.push_back(settings);
  }
  return out;
}

}  // namespace pipesim
