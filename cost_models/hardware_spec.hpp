#pragma once
// Hardware as the catalogs list it: GPUs, link classes, and a cluster built from them.
#include <map>
#include <optional>
#include <string>

#include "cost_models/units.hpp"

namespace pipesim {

struct GpuSpec {
  std::string name;                          // catalog key, e.g. "h100-sxm"
  std::map<std::string, double> peak_flops;  // dense peak FLOP/s per dtype: "fp32", "tf32", "bf16", "fp16", "fp8"
  double hbm_bandwidth = 0;                  // bytes/s
  std::int64_t memory_bytes = 0;             // HBM capacity
  std::optional<double> price_per_hour;      // USD per GPU-hour, if known
  std::string intra_node_link;               // default link class inside a node, e.g. "nvlink4"
  std::string inter_node_link;               // default link class between nodes, e.g. "ib-ndr"
  std::string source;                        // spec sheet the numbers come from
};

struct LinkSpec {
  std::string name;      // catalog key, e.g. "nvlink4"
  Tick latency = 0;      // one message, ns
  double bandwidth = 0;  // bytes/s per direction available to one GPU
  std::string source;
};

// nodes x gpus_per_node GPUs; devices are numbered node-major (device d is on node
// d / gpus_per_node).
struct ClusterSpec {
  GpuSpec gpu;
  int nodes = 1;
  int gpus_per_node = 8;
  LinkSpec intra;
  LinkSpec inter;
  int total_gpus() const { return nodes * gpus_per_node; }
};

}  // namespace pipesim
