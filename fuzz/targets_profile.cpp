// Fuzz target for profile files (`pipesim profile` output, read by `--cost`): the reader,
// then every question the engine asks the profiled cost model.
#include <algorithm>
#include <optional>
#include <string>

#include "cost_models/profile.hpp"
#include "cost_models/profiled.hpp"
#include "fuzz/check.hpp"

namespace pipesim::fuzz {

void profile(std::string_view bytes) {
  Profile p;
  if (!parses([&] { p = parse_profile(std::string(bytes), "fuzz.json"); }, "parse_profile")) return;
  require(!p.micro_batches.empty(), "parse_profile: no micro-batch sizes");
  for (const char* optimizer : {"adam", "sgd"}) {
    ProfiledCostConfig c;
    c.profile = p;
    c.source = "fuzz.json";
    c.micro_batch_size = p.micro_batches.front().size;
    c.optimizer = optimizer;
    std::optional<ProfiledCostModel> model;
    if (!parses([&] { model.emplace(c); }, "ProfiledCostModel")) continue;
    const int max_stages = std::min(p.model.layers, 3);
    for (int stages = 1; stages <= max_stages; ++stages) {
      for (int split : {1, 2}) {
        const OpScale scale{1, split, stages};
        for (int stage = 0; stage < stages; ++stage) {
          for (OpKind kind : {OpKind::F, OpKind::B, OpKind::I, OpKind::W, OpKind::OptStep}) {
            const Op op = make_op(kind, stage, 0, 0);
            Tick t = 0;
            if (!parses([&] { t = model->compute_time(op, scale); }, "compute_time")) continue;
            require(t >= 0, "compute_time < 0 for " + std::string(op_kind_name(kind)));
            if (kind == OpKind::OptStep) continue;
            ActivationCost a;
            if (!parses([&] { a = model->activation(op, scale); }, "activation")) continue;
            require(a.bytes >= 0 && a.freed_by_input_grad >= 0 && a.freed_by_input_grad <= a.bytes,
                    "activation bytes out of range");
            std::int64_t message = 0;
            if (!parses([&] { message = model->message_bytes(op, scale); }, "message_bytes")) continue;
            require(message >= 0, "message_bytes < 0");
            TransferCost tc;
            if (!parses([&] { tc = model->transfer(0, 1, message); }, "transfer")) continue;
            require(tc.occupancy >= 0 && tc.latency >= 0, "transfer < 0");
          }
          const Op sync = make_op(OpKind::GradSync, stage, 0, 0);
          std::int64_t grads = 0;
          if (!parses([&] { grads = model->grad_bytes(sync, scale); }, "grad_bytes")) continue;
          require(grads >= 0, "grad_bytes < 0");
          Tick t = 0;
          if (parses([&] { t = model->allreduce_time(2, grads); }, "allreduce_time")) require(t >= 0, "allreduce < 0");
        }
      }
    }
  }
}

}  // namespace pipesim::fuzz
