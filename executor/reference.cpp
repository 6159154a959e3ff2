#include "executor/reference.hpp"

#include <algorithm>
#include <tuple>

#include "executor/training_data.hpp"

namespace pipesim {
namespace {

ModelSetup whole_model_setup(const ModelSpec& model, const RunOptions& o, int microbatch_split) {
  ModelSetup s;
  s.model = model;
  s.micro_batch_size = o.micro_batch_size;
  s.microbatch_split = microbatch_split;
  s.seed = o.seed;
  s.optimizer = o.optimizer;
  s.corpus = o.data;
  return s;
}

ReplicaSpec whole_model_replica(const ModelSpec& model) { return ReplicaSpec{0, 0, stage_layout(model.layers, 0, 1)}; }

}  // namespace

Validator::Validator(const ModelSpec& model, const RunOptions& options, int microbatch_split)
    : backend_(whole_model_setup(model, options, microbatch_split)) {
  const ModelSetup setup = whole_model_setup(model, options, microbatch_split);
  backend_.create_replica(whole_model_replica(model));
  batches_ = validation_batches(setup, options.validation_sequences, executor_block_config(setup).batch);
}

double Validator::loss(const std::vector<float>& whole_model) {
  backend_.load_weights(0, 0, whole_model);
  double sum = 0;
  for (const MicrobatchData& b : batches_) sum += backend_.evaluate(0, 0, b);
  return sum / static_cast<double>(batches_.size());
}

ReferenceRun train_sequential(const Schedule& schedule, const ModelSpec& model, const RunOptions& options) {
  check_run(schedule, model, options);
  const ModelSetup setup = whole_model_setup(model, options, schedule.microbatch_split);
  CpuBackend backend(setup);
  backend.create_replica(whole_model_replica(model));
  // The micro-batch ops: (iteration, micro-batch, pipeline) of every last-stage forward.
  std::vector<std::tuple<int, int, int>> work;
  for (const auto& list : schedule.ops)
    for (const Op& op : list)
      if (op.kind == OpKind::F && op.stage == schedule.num_stages - 1)
        work.emplace_back(schedule.iteration_of(op.microbatch), op.microbatch, op.pipeline);
  std::sort(work.begin(), work.end());
  Validator validator(model, options, schedule.microbatch_split);
  ReferenceRun out;
  const auto validate = [&](int iteration) {
    if (options.validate_every > 0 && iteration % options.validate_every == 0)
      out.validation.push_back(ValidationPoint{iteration, validator.loss(backend.flat_weights(0, 0)), 0});
  };
  validate(0);
  int steps = 0;
  for (std::size_t k = 0; k < work.size();) {
    const int iteration = std::get<0>(work[k]);
    for (; k < work.size() && std::get<0>(work[k]) == iteration; ++k) {
      const auto [t, mb, pipeline] = work[k];
      double loss = 0;
      backend.forward(OpArgs{Op{OpKind::F, 0, mb, 0}, steps}, nullptr, &loss);
      backend.backward(OpArgs{Op{OpKind::B, 0, mb, 0}, steps}, nullptr);
      out.losses.push_back(LossRecord{mb, pipeline, t, loss, 0});
    }
    backend.optimizer_step(0, 0);
    validate(++steps);
  }
  out.iteration_loss = iteration_means(out.losses);
  out.final_weights = backend.flat_weights(0, 0);
  return out;
}

}  // namespace pipesim
