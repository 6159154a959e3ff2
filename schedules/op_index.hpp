#pragma once
// OpIndex: where each op of a schedule is, by value (schedules/dependency_walk.hpp looks the
// producers of every op up here). It keeps the ids of whichever numbering the walk uses
// as raw numbers (schedules/op_numbering.hpp); the walk makes them ids of its type again.
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include "schedules/schedule.hpp"

namespace pipesim {

// An op by value. Micro-batch ops are unique by value; stage-level ops (GradSync, OptStep) repeat once per
// iteration, so they are told apart by occurrence: the n-th one of (kind, pipeline, stage).
struct OpKey {
  Op op;
  std::int32_t occurrence;
  friend bool operator==(const OpKey&, const OpKey&) = default;
};
struct OpKeyHash {
  std::size_t operator()(const OpKey& k) const noexcept { return OpHash{}(k.op) * 31 + static_cast<std::size_t>(k.occurrence); }
};

// Where each op is, by OpKey. Performance: this used to be one unordered_map over all ops,
// and on large schedules its look-ups (about four per op, each a cache miss into a node
// allocated per op) were most of build_dependencies' time. Micro-batch ops (F, B, I, W)
// now go into flat tables, one per kind (made when the first op of that kind arrives: a
// schedule without split backwards never makes the I and W ones), indexed by (pipeline,
// stage, micro-batch), an array read, whenever the micro-batch ids are dense enough that
// the tables are at most kMaxEntriesPerOp entries per op (every generated schedule: ids 0 ..
// iterations*m-1, one entry per op). Sparse ids (an imported schedule numbering
// micro-batches 0, 1000, 2000, ...) and the few stage-level ops stay in the hash map. Both
// give the same answers.
//
// A table is laid out in the order the ops will be looked up: a walk device by device
// asks for a few (kind, pipeline, stage) rows micro-batch after micro-batch, so each row
// is contiguous (ReplicaMajor); a walk index by index (every device's i-th op, then the
// (i+1)-th) asks for nearby micro-batches of every stage at once, so all entries of one
// micro-batch are contiguous (MicrobatchMajor). Either way the look-ups stay within a few
// cache lines' reach instead of one miss each once the table outgrows the caches.
class OpIndex {
 public:
  static constexpr std::uint64_t kMaxEntriesPerOp = 8;
  static constexpr std::uint32_t kEmpty = std::numeric_limits<std::uint32_t>::max();
  enum class Layout { ReplicaMajor, MicrobatchMajor };

  OpIndex(const Schedule& s, Layout layout) : pipelines_(s.num_pipelines), stages_(s.num_stages) {
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
    // Per kind F, B, I, W (OpKind 0..3): pipelines x stages x micro-batches; check_shape
    // has made sure pipelines x stages placement entries exist, so that product is small.
    const std::uint64_t per_microbatch = 4 * static_cast<std::uint64_t>(pipelines_) * static_cast<std::uint64_t>(stages_);
    const auto microbatches = static_cast<std::uint64_t>(max_microbatch + 1);
    if (microbatches <= (kMaxEntriesPerOp * ops + 64) / per_microbatch) {
      microbatches_ = static_cast<std::int64_t>(microbatches);
      const std::size_t replicas = per_microbatch / 4;
      table_size_ = replicas * microbatches;
      if (layout == Layout::ReplicaMajor) {
        microbatch_stride_ = 1;
        replica_stride_ = microbatches;
      } else {
        replica_stride_ = 1;
        microbatch_stride_ = replicas;
      }
    } else {
      map_.reserve(ops);
    }
  }

  // Records the op (its n-th occurrence, for stage-level ops) at `id`; if that is already
  // taken, returns the id holding it.
  std::optional<std::uint32_t> insert(const Op& op, std::int32_t occurrence, std::uint32_t id) {
    if (const std::size_t i = position_of(op); i != kNoPosition) {
      std::vector<std::uint32_t>& table = tables_[static_cast<std::size_t>(op.kind)];
      if (table.empty()) table.assign(table_size_, kEmpty);
      if (table[i] != kEmpty) return table[i];
      table[i] = id;
      return std::nullopt;
    }
    return insert_in_map(OpKey{op, occurrence}, id);
  }

  // The op id holding the op (its n-th occurrence), or -1.
  // Performance: the op is passed as is, never packed into an OpKey on the table's path:
  // building one on the stack and reading it back whole stalled store forwarding on every
  // look-up (a sixth of the walk's time).
  // find() for cold paths (the walk's communication ops), so that its hot call sites stay inlined.
  [[gnu::noinline]] std::int64_t find_cold(const Op& op) const { return find(op); }

  // Always inlined: whether GCC inlines it into the walk otherwise depends on the size of the
  // unit the walk is instantiated in (the engine's, sim/event_loop.cpp, then sim/engine.cpp:
  // +2.5 % instructions when it did not).
  [[gnu::always_inline]] std::int64_t find(const Op& op, std::int32_t occurrence = 0) const {
    if (const std::size_t i = position_of(op); i != kNoPosition) {
      const std::vector<std::uint32_t>& table = tables_[static_cast<std::size_t>(op.kind)];
      return table.empty() || table[i] == kEmpty ? -1 : std::int64_t{table[i]};
    }
    return find_in_map(OpKey{op, occurrence});
  }

 private:
  static constexpr std::size_t kNoPosition = std::numeric_limits<std::size_t>::max();

  [[gnu::noinline]] std::optional<std::uint32_t> insert_in_map(const OpKey& key, std::uint32_t id) {
    auto [it, inserted] = map_.emplace(key, id);
    if (inserted) return std::nullopt;
    return it->second;
  }
  [[gnu::noinline]] std::int64_t find_in_map(const OpKey& key) const {
    auto it = map_.find(key);
    return it == map_.end() ? -1 : static_cast<std::int64_t>(it->second);
  }

  // The position of a micro-batch op in its kind's table, or kNoPosition if it belongs in the
  // map. Ops reach here with pipeline and stage in range (misplaced ops are never recorded
  // or looked up).
  std::size_t position_of(const Op& op) const {
    if (table_size_ == 0 || !is_microbatch_op(op.kind) || op.microbatch < 0 || op.microbatch >= microbatches_)
      return kNoPosition;
    const std::size_t replica = static_cast<std::size_t>(op.pipeline) * static_cast<std::size_t>(stages_) +
                                static_cast<std::size_t>(op.stage);
    return replica * replica_stride_ + static_cast<std::size_t>(op.microbatch) * microbatch_stride_;
  }

  int pipelines_, stages_;
  std::int64_t microbatches_ = 0;
  std::size_t table_size_ = 0;  // entries per kind; 0 if the ids are sparse (all in the map)
  std::size_t replica_stride_ = 0, microbatch_stride_ = 0;  // positions in a table
  std::array<std::vector<std::uint32_t>, 4> tables_;          // F, B, I, W; each made on its first op
  std::unordered_map<OpKey, std::uint32_t, OpKeyHash> map_;   // everything else
};

}  // namespace pipesim
