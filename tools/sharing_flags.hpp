#pragma once
// What-if contention for simulate and compare (sim/resources.hpp, docs/shared-hardware.md):
// devices on fewer cores than devices, an interference curve, NICs shared between nodes,
// compute slowed by communication beside it. Without these flags nothing is shared and the
// engine runs its fast path.
//
//   --share-cores C          the devices of a host share C cores (or processors)
//   --devices-per-host N     hosts of N devices each (default: all on one)
//   --core-sharing slice|queue   time-sliced (processor sharing, default) or queued
//   --interference 1,1.1,1.2 slowdown of an op with 0, 1, 2, ... other devices of its host busy
//   --nics-per-node N        transfers between nodes share N NICs per node, max-min
//   --devices-per-node N     the nodes, for a model that does not place devices itself
//   --overlap-slowdown X     a device computing while a transfer of its own is on the wire:
//                            both take X times as long
#include <optional>
#include <string>
#include <vector>

#include "sim/resources.hpp"
#include "tools/cli_app.hpp"

namespace pipesim {

struct SharingOptions {
  double share_cores = 0;
  int devices_per_host = 0;
  std::string core_sharing = "slice";
  std::string interference;
  int nics_per_node = 0;
  int devices_per_node = 0;
  double overlap_slowdown = 1;
};

void add_sharing_flags(CLI::App& app, SharingOptions& options);

// The description for a schedule of `devices` devices, or nullopt when the flags share
// nothing. `model_nodes`: the node of each device as the cost model places them (the
// analytical model: --gpus-per-node and --tp), empty when it places none. InputError naming
// the flag: an interference curve that is not numbers >= 0.1 starting at 1, --nics-per-node
// without nodes, --devices-per-node beside a model that places devices itself.
std::optional<SharedHardware> shared_hardware_from_flags(const SharingOptions& options, int devices,
                                                         const std::vector<int>& model_nodes);

// What the flags share, for people (the line `simulate` prints as "shared", compare above its
// table, and both as --json's "shared_hardware"): "each host's devices share 2 cores
// (time-sliced); interference x1,1.1 with 0, 1, ... neighbours busy". Empty: nothing.
std::string sharing_summary(const SharingOptions& options);

}  // namespace pipesim
