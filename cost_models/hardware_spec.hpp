#pragma once
// Hardware as the catalogs list it: GPUs, link classes, and a cluster built from them.
#include <map>
#include <optional>
#include <string>

#include "core/units.hpp"

namespace pipesim {

// How close a GPU's kernels come to its peaks: catalog data per GPU (gpus.json "efficiency";
// docs/cost-model.md, "GEMM efficiency as a function of shape"). The defaults are the A100
// values of the built-in catalog, fitted to Megatron-LM's SC'21 runs
// (docs/validation/analytical.md).
struct Efficiency {
  // GEMMs (cost_models/gemm_model.hpp): efficiency(M, N, K) = gemm x tile padding x wave
  // quantisation x K / (K + gemm_k_overhead), x misaligned when a row of N or K elements is
  // not a multiple of 16 bytes.
  double gemm = 0.786;            // share of dense peak a large, well-shaped GEMM reaches in training
  double gemm_k_overhead = 370;   // K0: a tile's fixed cost (prologue, epilogue), in steps of K
  int tile_m = 128;               // output tile of the GEMM kernels, M x N elements
  int tile_n = 256;
  double wave_smoothing = 0.5;    // q in (0, 1]: a last wave (or tile) filled to f costs min(1, f/q)
  double misaligned = 0.33;       // factor on a GEMM with rows not 16-byte aligned
  double attention = 0.55;        // fused (flash) attention kernels: share of dense peak
  double memory = 0.85;           // share of HBM bandwidth element-wise kernels reach
  double network = 0.80;          // share of link bandwidth NCCL collectives and p2p reach
  std::string source;             // where the values come from
};

struct GpuSpec {
  std::string name;                          // catalog key, e.g. "h100-sxm"
  int sms = 0;                               // streaming multiprocessors; 0: unknown (no wave quantisation)
  Efficiency efficiency;                     // kernel efficiencies (catalog "efficiency")
  std::map<std::string, double> peak_flops;  // dense peak FLOP/s per dtype: "fp32", "tf32", "bf16", "fp16", "fp8"
  double hbm_bandwidth = 0;                  // bytes/s
  std::int64_t memory_bytes = 0;             // HBM capacity
  std::optional<double> price_per_hour;      // USD per GPU-hour, if known
  std::string price_source;                  // where the price comes from (a list price), or what it assumes
  bool price_assumed = false;                // true: an assumption, not a price anyone lists
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
