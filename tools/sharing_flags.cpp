#include "tools/sharing_flags.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "executor/shared_layout.hpp"
#include "tools/cli_checks.hpp"
#include "tools/cli_options.hpp"
#include "tools/table.hpp"

namespace pipesim {

void add_sharing_flags(CLI::App& app, SharingOptions& o) {
  require_above_zero(*app.add_option("--share-cores", o.share_cores,
                                      "What-if: the devices of a host share this many cores or processors "
                                      "(docs/shared-hardware.md)"),
                     "a number of cores");
  require_above_zero(*app.add_option("--devices-per-host", o.devices_per_host,
                                      "With --share-cores or --interference: hosts of this many devices "
                                      "[default: all on one]"),
                     "a number of devices");
  app.add_option("--core-sharing", o.core_sharing,
                 "With --share-cores: slice (time-sliced, processor sharing) or queue (an op waits for a core of its own)")
      ->capture_default_str();
  app.add_option("--interference", o.interference,
                 "What-if: an op's slowdown with 0, 1, 2, ... other devices of its host busy, e.g. 1,1.1,1.25");
  require_above_zero(*app.add_option("--nics-per-node", o.nics_per_node,
                                      "What-if: transfers between nodes share this many NICs per node (max-min fair)"),
                     "a number of NICs");
  require_above_zero(*app.add_option("--devices-per-node", o.devices_per_node,
                                      "With --nics-per-node and uniform or profiled costs: nodes of this many devices"),
                     "a number of devices");
  app.add_option("--overlap-slowdown", o.overlap_slowdown,
                 "What-if: compute and a transfer beside it on the same device both take this many times as long")
      ->capture_default_str();
}

namespace {

std::vector<double> interference_curve(const std::string& text) {
  std::vector<double> curve;
  for (const std::string& item : split_list(text)) {
    double value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc() || end != item.data() + item.size() || !(value >= 0.1) || value > 1000)
      throw InputError("--interference: expected slowdown factors between 0.1 and 1000, comma-separated, got " + quote(item));
    curve.push_back(value);
  }
  if (curve.empty()) throw InputError("--interference: expected slowdown factors, e.g. 1,1.1,1.25, got " + quote(text));
  if (curve.front() != 1)
    throw InputError("--interference: the first factor is an op's with no neighbour busy and must be 1, got " + quote(text));
  return curve;
}

}  // namespace

bool profile_interference(const SharingOptions& o, const ProfiledCostModel* measured) {
  return measured && o.share_cores > 0 && o.interference.empty();
}

void apply_profile_interference(SharedHardware& hardware, const SharingOptions& o, const ProfiledCostModel* measured) {
  if (!profile_interference(o, measured)) return;
  const ProfileSlowdowns slowdowns = profile_slowdowns(*measured);
  for (ComputePool& pool : hardware.pools) {
    pool.slowdown = slowdowns.curves;
    pool.turn_slowdown = slowdowns.turns;
  }
}

std::string sharing_summary(const SharingOptions& o, const ProfiledCostModel* measured) {
  std::vector<std::string> parts;
  const std::string host = o.devices_per_host > 0 ? "each host of " + std::to_string(o.devices_per_host) + " devices"
                                                  : "the devices";
  if (o.share_cores > 0)
    parts.push_back(host + " share " + format_fixed(o.share_cores, o.share_cores == std::floor(o.share_cores) ? 0 : 2) +
                    " cores (" + (o.core_sharing == "queue" ? "queued" : "time-sliced") + ")");
  if (!o.interference.empty())
    parts.push_back("interference x" + o.interference + " with 0, 1, ... neighbours busy" +
                    (o.share_cores > 0 ? "" : " (" + host + ")"));
  if (profile_interference(o, measured))
    parts.push_back("the profile's interference curve and shared-core turns, where beyond its noise");
  if (o.nics_per_node > 0)
    parts.push_back("transfers between nodes share " + std::to_string(o.nics_per_node) + " NIC(s) per node" +
                    (o.devices_per_node > 0 ? " (nodes of " + std::to_string(o.devices_per_node) + " devices)" : ""));
  if (o.overlap_slowdown > 1) parts.push_back("compute beside communication x" + format_fixed(o.overlap_slowdown, 2));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::optional<SharedHardware> shared_hardware_from_flags(const SharingOptions& o, int devices,
                                                         const std::vector<int>& model_nodes) {
  if (o.core_sharing != "slice" && o.core_sharing != "queue")
    throw InputError("--core-sharing: expected slice or queue, got " + quote(o.core_sharing));
  // Given, these four flags are above 0 (their above_zero checks, --config files included).
  if (o.share_cores > 1e6)
    throw InputError("--share-cores: expected a number of cores above 0, at most 1000000; got " +
                     format_fixed(o.share_cores, 2));
  if (!(o.overlap_slowdown >= 1) || o.overlap_slowdown > 1000)
    throw InputError("--overlap-slowdown: expected a factor between 1 and 1000, got " + std::to_string(o.overlap_slowdown));
  if (o.devices_per_host > 0 && o.share_cores == 0 && o.interference.empty())
    throw InputError("--devices-per-host: needs --share-cores or --interference (what the devices of a host share)");
  if (o.devices_per_node > 0 && !model_nodes.empty())
    throw InputError("--devices-per-node: the analytical model places devices on nodes by --gpus-per-node and --tp");
  if (o.devices_per_node > 0 && o.nics_per_node == 0)
    throw InputError("--devices-per-node: needs --nics-per-node (what the devices of a node share)");

  SharedHardware hw;
  if (o.share_cores > 0 || !o.interference.empty()) {
    const std::vector<double> curve = o.interference.empty() ? std::vector<double>{} : interference_curve(o.interference);
    ComputePool each;
    each.cores = o.share_cores;
    each.queue = o.core_sharing == "queue";
    for (int k = 0; k < kNumOpKinds; ++k)
      if (is_compute(static_cast<OpKind>(k))) each.slowdown[static_cast<std::size_t>(k)] = curve;
    hw.pools = consecutive_pools(devices, o.devices_per_host > 0 ? o.devices_per_host : std::max(1, devices), each);
  }
  if (o.nics_per_node > 0) {
    if (!model_nodes.empty()) {
      hw.node_of_device = model_nodes;
    } else if (o.devices_per_node > 0) {
      for (int d = 0; d < devices; ++d) hw.node_of_device.push_back(d / o.devices_per_node);
    } else {
      throw InputError("--nics-per-node: the nodes are not known: give --devices-per-node, or --model with --nodes");
    }
    hw.nics_per_node = o.nics_per_node;
  }
  hw.overlap_slowdown = o.overlap_slowdown;
  if (hw.shares_nothing()) return std::nullopt;
  hw.check(devices);
  return hw;
}

}  // namespace pipesim
