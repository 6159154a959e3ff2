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
//                            (without it, with --cost: the profile's curve and turns)
//   --nics-per-node N        transfers between nodes share N NICs per node, max-min
//   --devices-per-node N     the nodes, for a model that does not place devices itself
//   --overlap-slowdown X     a device computing while a transfer of its own is on the wire:
//                            both take X times as long
#include <optional>
#include <string>
#include <vector>

#include "cost_models/profiled.hpp"
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

// Whether the description takes its interference from a measured profile (--cost): devices
// sharing cores (--share-cores) without a curve of the flags' own (--interference).
bool profile_interference(const SharingOptions& options, const ProfiledCostModel* measured);
// With profile_interference(): every pool of `hardware` gets the profile's interference curve
// and shared-core turns where they stand out of its noise, as `validate` predicts
// (executor/shared_layout.hpp's profile_slowdowns).
void apply_profile_interference(SharedHardware& hardware, const SharingOptions& options,
                                const ProfiledCostModel* measured);

// What the flags share, for people (the line `simulate` prints as "shared", compare above its
// table, and both as --json's "shared_hardware"): "each host's devices share 2 cores
// (time-sliced); interference x1,1.1 with 0, 1, ... neighbours busy". Empty: nothing.
// `measured`: the profile of --cost, whose interference profile_interference() may take.
std::string sharing_summary(const SharingOptions& options, const ProfiledCostModel* measured = nullptr);

}  // namespace pipesim
