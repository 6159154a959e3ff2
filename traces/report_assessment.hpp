#pragma once
// What the HTML report (traces/html_report.hpp) knows about a run on a real model and GPU
// (`--model`): the numbers of assess/assessment.hpp's Assessment, as plain data, so that
// traces/ depends on no cost model or command-line code. The tools side fills it in.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipesim {

// What one GPU of a pipeline device holds at that device's peak (cost_models/memory_model.hpp).
struct ReportDeviceMemory {
  std::int64_t weights = 0;      // working weights, times the copies held
  std::int64_t gradients = 0;
  std::int64_t optimizer = 0;    // master weights and optimizer state
  std::int64_t buffers = 0;      // recomputation workspace and p2p communication buffers
  std::int64_t activations = 0;  // the peak the engine measured
  int weight_copies = 1;
  // What the GPU holds whatever the moment: everything but the activations.
  std::int64_t static_bytes() const { return weights + gradients + optimizer + buffers; }
  std::int64_t total() const { return static_bytes() + activations; }
};

struct ReportAssessment {
  std::string model;     // catalog names
  std::string hardware;
  int nodes = 1, gpus_per_node = 1;
  int tp = 1, pp = 1, dp = 1;
  double global_batch = 0;  // sequences per iteration (Assessment::global_batch)
  int optimizer_steps = 1;  // per iteration at each stage (Assessment::optimizer_steps)
  double tokens_per_iteration = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  std::optional<double> price_per_hour;  // USD per GPU-hour
  std::string price_source;
  bool price_assumed = false;
  std::optional<double> cost_per_million_tokens;  // USD
  std::int64_t capacity = 0;                      // bytes of one GPU
  std::vector<ReportDeviceMemory> memory;         // per pipeline device
  int gpus() const { return nodes * gpus_per_node; }
  std::int64_t peak_memory() const;  // the fullest device's total
  int peak_device() const;           // the first device holding it
  bool fits() const { return peak_memory() <= capacity; }
};

}  // namespace pipesim
