#include "schedules/dependencies.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
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

// Where each op is, by Key. Performance: this used to be one unordered_map over all ops,
// and on large schedules its look-ups (about four per op, each a cache miss into a node
// allocated per op) were most of build_dependencies' time. Micro-batch ops (F, B, I, W)
// now go into a flat table indexed by (kind, pipeline, stage, micro-batch), an array read,
// whenever the micro-batch ids are dense enough that the table is at most kMaxSlotsPerOp
// slots per op (every generated schedule: ids 0 .. iterations*m-1, table <= 2 slots per
// op). Sparse ids (an imported schedule numbering micro-batches 0, 1000, 2000, ...) and
// the few stage-level ops stay in the hash map. Both give the same answers.
class OpIndex {
 public:
  static constexpr std::uint64_t kMaxSlotsPerOp = 8;
  static constexpr OpId kEmpty = std::numeric_limits<OpId>::max();

  explicit OpIndex(const Schedule& s) : pipelines_(s.num_pipelines), stages_(s.num_stages) {
    std::uint64_t ops = 0;
    for (const auto& list : s.ops) ops += list.size();
    // The ids a schedule declares (0 .. iterations x micro-batches - 1: every generator);
    // performance: no pass over the ops for their largest id. An op with a larger id goes
    // to the map, so an undeclared or wrong count costs only speed. Without a count, the
    // ops are scanned.
    std::int64_t max_microbatch = static_cast<std::int64_t>(s.microbatches) * std::max(1, s.iterations) - 1;
    if (s.microbatches <= 0)
      for (const auto& list : s.ops)
        for (const Op& op : list)
          if (is_microbatch_op(op.kind)) max_microbatch = std::max<std::int64_t>(max_microbatch, op.microbatch);
    // kinds F, B, I, W (OpKind 0..3) x pipelines x stages x micro-batches; check_shape has
    // made sure pipelines x stages placement entries exist, so that product is small.
    const std::uint64_t per_microbatch = 4 * static_cast<std::uint64_t>(pipelines_) * static_cast<std::uint64_t>(stages_);
    const auto microbatches = static_cast<std::uint64_t>(max_microbatch + 1);
    if (microbatches <= (kMaxSlotsPerOp * ops + 64) / per_microbatch) {
      microbatches_ = static_cast<std::int64_t>(microbatches);
      table_.assign(per_microbatch * microbatches, kEmpty);
    } else {
      map_.reserve(ops);
    }
  }

  // Records `key` at `id`; if the key is already taken, returns the id holding it.
  std::optional<OpId> insert(const Key& key, OpId id) {
    if (const std::size_t i = slot_of(key.op); i != kNoSlot) {
      if (table_[i] != kEmpty) return table_[i];
      table_[i] = id;
      return std::nullopt;
    }
    auto [it, inserted] = map_.emplace(key, id);
    if (inserted) return std::nullopt;
    return it->second;
  }

  // The op id holding `key`, or -1.
  std::int64_t find(const Key& key) const {
    if (const std::size_t i = slot_of(key.op); i != kNoSlot) return table_[i] == kEmpty ? -1 : std::int64_t{table_[i]};
    auto it = map_.find(key);
    return it == map_.end() ? -1 : static_cast<std::int64_t>(it->second);
  }

 private:
  static constexpr std::size_t kNoSlot = std::numeric_limits<std::size_t>::max();

  // The table slot of a micro-batch op, or kNoSlot if it belongs in the map. Ops reach
  // here with pipeline and stage in range (misplaced ops are never recorded or looked up).
  std::size_t slot_of(const Op& op) const {
    if (table_.empty() || !is_microbatch_op(op.kind) || op.microbatch < 0 || op.microbatch >= microbatches_)
      return kNoSlot;
    const auto kind = static_cast<std::size_t>(op.kind);
    const std::size_t replica = (kind * static_cast<std::size_t>(pipelines_) + static_cast<std::size_t>(op.pipeline)) *
                                    static_cast<std::size_t>(stages_) +
                                static_cast<std::size_t>(op.stage);
    return replica * static_cast<std::size_t>(microbatches_) + static_cast<std::size_t>(op.microbatch);
  }

  int pipelines_, stages_;
  std::int64_t microbatches_ = 0;
  std::vector<OpId> table_;                        // dense micro-batch ops; empty if sparse
  std::unordered_map<Key, OpId, KeyHash> map_;     // everything else
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
  // Op ids are 32 bits, and the largest one marks "none" in the engine.
  if (s.total_ops() >= std::numeric_limits<OpId>::max())
    throw InputError("schedule: " + str(static_cast<long long>(s.total_ops())) + " ops; at most " +
                     str(std::numeric_limits<OpId>::max() - 1LL) + " can be numbered");
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

// The common case of misplaced() without building its answer (it is asked for every op).
bool well_placed(const Schedule& s, const Op& op, int d) {
  return op.pipeline >= 0 && op.pipeline < s.num_pipelines && op.stage >= 0 && op.stage < s.num_stages &&
         !(is_microbatch_op(op.kind) && op.microbatch < 0) && s.device_of(op) == d;
}

// Out of line, so that the loop over ops stays small: the op at (d, i) needs `producer`,
// which no device runs.
[[gnu::noinline]] void report_missing(std::vector<DependencyProblem>& problems, std::size_t d, std::size_t i, const Op& op,
                                      const Op& producer, const char* what) {
  problems.push_back({static_cast<int>(d), static_cast<int>(i),
                      to_string(op) + " needs " + what + " " + to_string(producer) + ", which no device runs"});
}

}  // namespace

// Performance: the engine asks this several times per op. Guess from the average list
// length first, which is exact when every device runs equally many ops (every generator),
// and binary-search only when the guess is wrong (a branchy search over the offsets was
// about a quarter of simulate()'s instructions).
int DependencyGraph::device_of(OpId id) const {
  const std::size_t devices = device_offset.size() - 1;
  if (device_offset.size() >= 2 && device_offset.back() > 0) {
    const std::size_t guess = std::min<std::size_t>(
        devices, static_cast<std::size_t>(std::uint64_t{id} * devices / device_offset.back()));
    if (device_offset[guess] <= id && (guess == devices || id < device_offset[guess + 1])) return static_cast<int>(guess);
  }
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
  OpIndex where(schedule);
  // Occurrences so far of the stage-level ops, by (kind GradSync / OptStep, pipeline, stage).
  const std::size_t replicas = static_cast<std::size_t>(schedule.num_pipelines) * static_cast<std::size_t>(schedule.num_stages);
  std::vector<std::int32_t> seen_stage_ops(2 * replicas, 0);
  // The n-th occurrence of a stage-level op (0 for micro-batch ops), counted in list order
  // over the well-placed ops; both passes below count it the same way.
  const auto next_occurrence = [&](const Op& op) -> std::int32_t {
    if (is_microbatch_op(op.kind)) return 0;
    const std::size_t kind = op.kind == OpKind::GradSync ? 0 : 1;
    return seen_stage_ops[kind * replicas + static_cast<std::size_t>(op.pipeline) * static_cast<std::size_t>(schedule.num_stages) +
                          static_cast<std::size_t>(op.stage)]++;
  };
  std::vector<bool> valid(n, true);
  for (std::size_t d = 0; d < num_devices; ++d) {
    for (std::size_t i = 0; i < schedule.ops[d].size(); ++i) {
      const Op& op = schedule.ops[d][i];
      const OpId id = g.device_offset[d] + static_cast<OpId>(i);
      if (!well_placed(schedule, op, static_cast<int>(d))) {
        const std::optional<std::string> why = misplaced(schedule, op, static_cast<int>(d));
        PIPESIM_ASSERT(why.has_value());
        problems.push_back({static_cast<int>(d), static_cast<int>(i), to_string(op) + ": " + *why});
        valid[id] = false;
        continue;
      }
      if (const std::optional<OpId> first = where.insert(Key{op, next_occurrence(op)}, id)) {
        const int other = g.device_of(*first);
        problems.push_back({static_cast<int>(d), static_cast<int>(i),
                            "duplicate op " + to_string(op) + " (also at device " + std::to_string(other) +
                                " position " + std::to_string(g.index_of(*first)) + ")"});
      }
    }
  }
  auto find = [&](const Op& op, std::int32_t occ = 0) -> std::int64_t { return where.find(Key{op, occ}); };

  g.pred_begin.reserve(n + 1);
  g.preds.reserve(n * 2);
  g.collective_of.assign(n, -1);
  std::map<std::pair<int, int>, std::int32_t> collective_index;  // (stage, occurrence) -> collective
  std::vector<std::int32_t> collective_occurrence;                // per collective
  std::fill(seen_stage_ops.begin(), seen_stage_ops.end(), 0);
  for (std::size_t d = 0; d < num_devices; ++d) {
    for (std::size_t i = 0; i < schedule.ops[d].size(); ++i) {
      const Op& op = schedule.ops[d][i];
      const OpId id = g.device_offset[d] + static_cast<OpId>(i);
      g.pred_begin.push_back(static_cast<OpId>(g.preds.size()));
      if (!valid[id]) continue;
      const std::int32_t occurrence = next_occurrence(op);
      // `producer` was found at id p >= 0, or is missing.
      auto need = [&](const Op& producer, std::int64_t p, const char* what) {
        if (p >= 0)
          g.preds.push_back(static_cast<OpId>(p));
        else
          report_missing(problems, d, i, op, producer, what);
      };
      auto need_op = [&](const Op& producer, const char* what) { need(producer, find(producer), what); };
      const int last = schedule.num_stages - 1;
      switch (op.kind) {
        case OpKind::F:
          if (op.stage > 0) need_op(make_op(OpKind::F, op.stage - 1, op.microbatch, op.pipeline), "the forward");
          break;
        case OpKind::B:
        case OpKind::I: {
          need_op(make_op(OpKind::F, op.stage, op.microbatch, op.pipeline), "its forward");
          if (op.stage < last) {
            Op next = make_op(OpKind::B, op.stage + 1, op.microbatch, op.pipeline);
            std::int64_t p = find(next);
            if (p < 0) {
              next.kind = OpKind::I;
              p = find(next);
            }
            need(next, p, "the backward");
          }
          break;
        }
        case OpKind::W:
          need_op(make_op(OpKind::I, op.stage, op.microbatch, op.pipeline), "its input-gradient backward");
          break;
        case OpKind::GradSync: {
          auto [it, inserted] = collective_index.emplace(std::pair{op.stage, occurrence},
                                                         static_cast<std::int32_t>(g.collectives.size()));
          if (inserted) {
            g.collectives.emplace_back();
            collective_occurrence.push_back(occurrence);
          }
          g.collectives[static_cast<std::size_t>(it->second)].push_back(id);
          g.collective_of[id] = it->second;
          break;
        }
        case OpKind::OptStep: {
          const std::int64_t sync = find(grad_sync(op.stage, op.pipeline), occurrence);
          if (sync >= 0) g.preds.push_back(static_cast<OpId>(sync));
          break;
        }
      }
    }
  }
  g.pred_begin.push_back(static_cast<OpId>(g.preds.size()));

  // A collective must have one participant per pipeline holding the stage.
  for (std::size_t c = 0; c < g.collectives.size(); ++c) {
    auto& members = g.collectives[c];
    std::sort(members.begin(), members.end(), [&](OpId a, OpId b) {
      const Op& x = schedule.ops[static_cast<std::size_t>(g.device_of(a))][static_cast<std::size_t>(g.index_of(a))];
      const Op& y = schedule.ops[static_cast<std::size_t>(g.device_of(b))][static_cast<std::size_t>(g.index_of(b))];
      return x.pipeline < y.pipeline;
    });
    if (static_cast<int>(members.size()) != schedule.num_pipelines) {
      const OpId first = members.front();
      const Op& op = schedule.ops[static_cast<std::size_t>(g.device_of(first))][static_cast<std::size_t>(g.index_of(first))];
      problems.push_back({g.device_of(first), g.index_of(first),
                          to_string(op) + " occurrence " + std::to_string(collective_occurrence[c]) + " has " +
                              std::to_string(members.size()) + " participant(s), expected one per pipeline (" +
                              std::to_string(schedule.num_pipelines) + ")"});
    }
  }
  return g;
}

}  // namespace pipesim
