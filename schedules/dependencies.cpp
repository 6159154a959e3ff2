#include "schedules/dependencies.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "schedules/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

// Micro-batch ops are unique by value; stage-level ops (GradSync, OptStep) repeat once per
// iteration, so they are told apart by occurrence: the n-th one of (kind, pipeline, stage).
struct Key {
  Op op;
  std::int32_t occurrence;
  friend bool operator==(const Key&, const Key&) = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept { return OpHash{}(k.op) * 31 + static_cast<std::size_t>(k.occurrence); }
};

std::string str(long long v) { return std::to_string(v); }

// The schedule's shape must be consistent before any op can be looked at.
void check_shape(const Schedule& s) {
  if (s.num_devices <= 0 || s.num_stages <= 0 || s.num_pipelines <= 0)
    throw InputError("schedule: devices (" + str(s.num_devices) + "), stages (" + str(s.num_stages) +
                     ") and pipelines (" + str(s.num_pipelines) + ") must all be positive");
  if (static_cast<int>(s.ops.size()) != s.num_devices)
    throw InputError("schedule: " + str(static_cast<long long>(s.ops.size())) + " op lists for " + str(s.num_devices) +
                     " devices");
  if (static_cast<int>(s.placement.size()) != s.num_pipelines)
    throw InputError("schedule: placement has " + str(static_cast<long long>(s.placement.size())) +
                     " pipelines, expected " + str(s.num_pipelines));
  for (std::size_t c = 0; c < s.placement.size(); ++c) {
    if (static_cast<int>(s.placement[c].size()) != s.num_stages)
      throw InputError("schedule: placement of pipeline " + str(static_cast<long long>(c)) + " has " +
                       str(static_cast<long long>(s.placement[c].size())) + " stages, expected " + str(s.num_stages));
    for (std::size_t st = 0; st < s.placement[c].size(); ++st)
      if (s.placement[c][st] < 0 || s.placement[c][st] >= s.num_devices)
        throw InputError("schedule: pipeline " + str(static_cast<long long>(c)) + " stage " +
                         str(static_cast<long long>(st)) + " is placed on device " + str(s.placement[c][st]) +
                         ", outside [0, " + str(s.num_devices) + ")");
  }
}

// Why an op cannot run on device d, or nullopt if it can.
std::optional<std::string> misplaced(const Schedule& s, const Op& op, int d) {
  if (op.pipeline < 0 || op.pipeline >= s.num_pipelines)
    return "pipeline " + str(op.pipeline) + " outside [0, " + str(s.num_pipelines) + ")";
  if (op.stage < 0 || op.stage >= s.num_stages) return "stage " + str(op.stage) + " outside [0, " + str(s.num_stages) + ")";
  if (is_microbatch_op(op.kind) && op.microbatch < 0) return "negative micro-batch id";
  const int holder = s.device_of(op);
  if (holder != d)
    return "runs on device " + str(d) + ", but pipeline " + str(op.pipeline) + " stage " + str(op.stage) +
           " is placed on device " + str(holder);
  return std::nullopt;
}

}  // namespace

int DependencyGraph::device_of(OpId id) const {
  auto it = std::upper_bound(device_offset.begin(), device_offset.end(), id);
  return static_cast<int>(it - device_offset.begin()) - 1;
}

DependencyGraph build_dependencies(const Schedule& schedule, std::vector<DependencyProblem>& problems) {
  check_shape(schedule);
  DependencyGraph g;
  const auto num_devices = static_cast<std::size_t>(schedule.num_devices);
  g.device_offset.resize(num_devices + 1, 0);
  for (std::size_t d = 0; d < num_devices; ++d)
    g.device_offset[d + 1] = g.device_offset[d] + static_cast<OpId>(schedule.ops[d].size());
  const std::size_t n = g.device_offset[num_devices];

  // Index every op; duplicates are reported and the first one wins.
  std::unordered_map<Key, OpId, KeyHash> where;
  where.reserve(n);
  std::map<std::tuple<int, int, int>, std::int32_t> seen_stage_ops;  // (kind, pipeline, stage) -> count
  std::vector<std::int32_t> occurrence(n, 0);
  std::vector<bool> valid(n, true);
  for (std::size_t d = 0; d < num_devices; ++d) {
    for (std::size_t i = 0; i < schedule.ops[d].size(); ++i) {
      const Op& op = schedule.ops[d][i];
      const OpId id = g.device_offset[d] + static_cast<OpId>(i);
      if (auto why = misplaced(schedule, op, static_cast<int>(d))) {
        problems.push_back({static_cast<int>(d), static_cast<int>(i), to_string(op) + ": " + *why});
        valid[id] = false;
        continue;
      }
      if (!is_microbatch_op(op.kind))
        occurrence[id] = seen_stage_ops[{static_cast<int>(op.kind), op.pipeline, op.stage}]++;
      auto [it, inserted] = where.emplace(Key{op, occurrence[id]}, id);
      if (!inserted) {
        const int other = g.device_of(it->second);
        problems.push_back({static_cast<int>(d), static_cast<int>(i),
                            "duplicate op " + to_string(op) + " (also at device " + std::to_string(other) +
                                " position " + std::to_string(g.index_of(it->second)) + ")"});
      }
    }
  }
  auto find = [&](const Op& op, std::int32_t occ = 0) -> std::int64_t {
    auto it = where.find(Key{op, occ});
    return it == where.end() ? -1 : static_cast<std::int64_t>(it->second);
  };

  g.pred_begin.reserve(n + 1);
  g.preds.reserve(n * 2);
  g.collective_of.assign(n, -1);
  std::map<std::pair<int, int>, std::int32_t> collective_index;  // (stage, occurrence) -> collective
  for (std::size_t d = 0; d < num_devices; ++d) {
    for (std::size_t i = 0; i < schedule.ops[d].size(); ++i) {
      const Op& op = schedule.ops[d][i];
      const OpId id = g.device_offset[d] + static_cast<OpId>(i);
      g.pred_begin.push_back(static_cast<OpId>(g.preds.size()));
      if (!valid[id]) continue;
      auto need = [&](const Op& producer, std::int32_t occ, const char* what) {
        const std::int64_t p = find(producer, occ);
        if (p < 0)
          problems.push_back({static_cast<int>(d), static_cast<int>(i),
                              to_string(op) + " needs " + what + " " + to_string(producer) + ", which no device runs"});
        else
          g.preds.push_back(static_cast<OpId>(p));
      };
      const int last = schedule.num_stages - 1;
      switch (op.kind) {
        case OpKind::F:
          if (op.stage > 0) need(make_op(OpKind::F, op.stage - 1, op.microbatch, op.pipeline), 0, "the forward");
          break;
        case OpKind::B:
        case OpKind::I: {
          need(make_op(OpKind::F, op.stage, op.microbatch, op.pipeline), 0, "its forward");
          if (op.stage < last) {
            Op next = make_op(OpKind::B, op.stage + 1, op.microbatch, op.pipeline);
            if (find(next) < 0) next.kind = OpKind::I;
            need(next, 0, "the backward");
          }
          break;
        }
        case OpKind::W:
          need(make_op(OpKind::I, op.stage, op.microbatch, op.pipeline), 0, "its input-gradient backward");
          break;
        case OpKind::GradSync: {
          auto [it, inserted] = collective_index.emplace(std::pair{op.stage, occurrence[id]},
                                                         static_cast<std::int32_t>(g.collectives.size()));
          if (inserted) g.collectives.emplace_back();
          g.collectives[static_cast<std::size_t>(it->second)].push_back(id);
          g.collective_of[id] = it->second;
          break;
        }
        case OpKind::OptStep: {
          const std::int64_t sync = find(grad_sync(op.stage, op.pipeline), occurrence[id]);
          if (sync >= 0) g.preds.push_back(static_cast<OpId>(sync));
          break;
        }
      }
    }
  }
  g.pred_begin.push_back(static_cast<OpId>(g.preds.size()));

  // A collective must have one participant per pipeline holding the stage.
  for (auto& members : g.collectives) {
    std::sort(members.begin(), members.end(), [&](OpId a, OpId b) {
      const Op& x = schedule.ops[static_cast<std::size_t>(g.device_of(a))][static_cast<std::size_t>(g.index_of(a))];
      const Op& y = schedule.ops[static_cast<std::size_t>(g.device_of(b))][static_cast<std::size_t>(g.index_of(b))];
      return x.pipeline < y.pipeline;
    });
    if (static_cast<int>(members.size()) != schedule.num_pipelines) {
      const OpId first = members.front();
      const Op& op = schedule.ops[static_cast<std::size_t>(g.device_of(first))][static_cast<std::size_t>(g.index_of(first))];
      problems.push_back({g.device_of(first), g.index_of(first),
                          to_string(op) + " occurrence " + std::to_string(occurrence[first]) + " has " +
                              std::to_string(members.size()) + " participant(s), expected one per pipeline (" +
                              std::to_string(schedule.num_pipelines) + ")"});
    }
  }
  return g;
}

}  // namespace pipesim
