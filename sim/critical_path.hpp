#pragma once
// The critical path, one rule for both of the engine's paths (sim/event_loop.cpp and
// sim/ready_pass.cpp): it ends at the compute op that ends last (the first device's of
// equals) and goes back through each op's cause (what let it start last: its device's
// previous op or the input that arrived last) to an op without one; listed first to last.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/error.hpp"
#include "core/units.hpp"
#include "sim/engine.hpp"

namespace pipesim {

// `devices`: each device's last compute op (`last(dev)`, `none` if it ran none) and its end
// (`end(dev)`); `cause(id)`: the op that let `id` start, or `none`; `ref(id)`: where the op
// is in the schedule. `ops`: how many ops ran (a longer path is a cycle: an engine bug).
template <class Id, class Devices, class Last, class End, class Cause, class Ref>
std::vector<OpRef> critical_path(const Devices& devices, Id none, Last last, End end, Cause cause, Ref ref,
                                 std::size_t ops) {
  Id at = none;
  Tick best = -1;
  for (const auto& dev : devices) {
    if (last(dev) != none && end(dev) > best) {
      best = end(dev);
      at = last(dev);
    }
  }
  std::vector<OpRef> path;
  for (; at != none; at = cause(at)) {
    path.push_back(ref(at));
    PIPESIM_ASSERT(path.size() <= ops);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace pipesim
