#pragma once
// The analytical cost model as an AssessmentSource: its catalog model and GPU, the cluster,
// tp and dp of its config, and the memory model (cost_models/memory_model.hpp).
#include "assess/assessment.hpp"
#include "cost_models/analytical.hpp"

namespace pipesim {

class AnalyticalSource final : public AssessmentSource {
 public:
  explicit AnalyticalSource(const AnalyticalCostModel& model) : model_(model) {}  // kept by reference
  Deployment deployment() const override;
  DeviceMemory device_memory(const Schedule& schedule, int device, const DeviceStats& stats) const override;

 private:
  const AnalyticalCostModel& model_;
};

// FLOPs of one sequence through the whole model, forward and backward, no recomputation.
double model_flops_per_sequence(const ModelSpec& model);

}  // namespace pipesim
