#pragma once
// The flags a run does not use: those of the cost models it does not run on
// (tools/cost_model_registry.hpp) and the generators' settings its schedules do not read.
#include <string>
#include <vector>

#include "tools/cost_model_registry.hpp"

namespace pipesim {

// Flags a run does not use, by the cost model it runs on (`chosen`; null: none, as converge
// without one, which measures its time per iteration on the proxy run) and where its
// schedules come from (a file, or these `generators`). `reject`: giving one is an InputError with
// `why` (a flag the run would silently ignore); every group's defaults are left out of
// --save-config.
struct UnusedFlags {
  std::vector<std::string> flags;
  std::string why;
  bool reject;
};
std::vector<UnusedFlags> unused_flags(const CostModelInfo* chosen, bool schedule_file,
                                      const std::vector<std::string>& generators);

}  // namespace pipesim
