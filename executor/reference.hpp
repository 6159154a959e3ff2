#pragma once
// The sequential reference trainer: the same model, seed, data and optimizer as a run of a
// schedule, trained with no pipeline at all. One CpuBackend replica holds the whole model;
// iteration t runs, for each micro-batch op of t in (micro-batch, pipeline) order, its
// forward and its backward on the current weights, then one optimizer step averaging the
// gradient over the iteration's micro-batch ops:
//
//   w(t+1) = opt(w(t), (1/n) sum_k grad loss_k(w(t)))     (n micro-batch ops of iteration t)
//
// which is what every synchronous schedule computes, however it orders and places its ops.
// A run of such a schedule must reproduce its losses: bit for bit where each stage sums its
// micro-batches' gradients in the same order (one pipeline running its backwards in
// micro-batch order), within float rounding where the order differs (two pipelines or
// directions summed by GradSync). Any wrong weight version or lost gradient shows.
//
// Validator: the validation loss of a whole model (the stages' flat weights concatenated
// in stage order, CpuBackend::flat_weights' layout) on the data's validation set
// (executor/training_data.hpp), the number MeasuredRun::validation and the reference's
// validation both report.
#include <vector>

#include "executor/cpu_backend.hpp"
#include "executor/executor.hpp"

namespace pipesim {

class Validator {
 public:
  // The model and data of a run of `options`, micro-batches split in `microbatch_split`.
  Validator(const ModelSpec& model, const RunOptions& options, int microbatch_split);
  double loss(const std::vector<float>& whole_model);

 private:
  CpuBackend backend_;
  std::vector<MicrobatchData> batches_;
};

struct ReferenceRun {
  std::vector<LossRecord> losses;          // by (micro-batch, pipeline), as MeasuredRun's
  std::vector<double> iteration_loss;      // mean over each iteration's micro-batch ops
  std::vector<ValidationPoint> validation; // with options.validate_every (times 0)
  std::vector<float> final_weights;        // the whole model after the last step
};

// Trains `model` as above on the micro-batch ops of `schedule`'s last stage.
ReferenceRun train_sequential(const Schedule& schedule, const ModelSpec& model, const RunOptions& options);

}  // namespace pipesim
