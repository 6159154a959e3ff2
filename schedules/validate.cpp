#include "schedules/validate.hpp"

#include <algorithm>
#include <array>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <limits>
#include <utility>

#include "core/error.hpp"
#include "schedules/dependencies.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

// Vertices 0..n-1 are ops (their GraphId); n + c is the completion of collective c. A compressed
// sparse row graph: two flat arrays, built once from the edge list (a counting sort that
// keeps each vertex's out-edges in insertion order, so the search below visits them in the
// order they were added).
using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                                 boost::no_property, std::uint32_t, std::uint32_t>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

// Thrown by the visitor to stop the search at the first cycle.
struct CycleFound {
  std::vector<Vertex> vertices;  // in edge (producer -> consumer) direction
};

// One depth-first search does both jobs: on the first back edge u -> v, the tree path
// v ~> u plus that edge is a cycle (a deadlock); without one, the finish order reversed is
// a topological order (for the critical path).
class SearchVisitor : public boost::default_dfs_visitor {
 public:
  SearchVisitor(std::vector<Vertex>& parent, std::vector<Vertex>* finished) : parent_(parent), finished_(finished) {}
  void tree_edge(boost::graph_traits<Graph>::edge_descriptor e, const Graph& g) {
    parent_[boost::target(e, g)] = boost::source(e, g);
  }
  void back_edge(boost::graph_traits<Graph>::edge_descriptor e, const Graph& g) {
    const Vertex u = boost::source(e, g), v = boost::target(e, g);
    CycleFound found;
    for (Vertex x = u; x != v; x = parent_[x]) found.vertices.push_back(x);
    found.vertices.push_back(v);
    std::reverse(found.vertices.begin(), found.vertices.end());  // v -> ... -> u (-> v)
    throw found;
  }
  void finish_vertex(Vertex v, const Graph&) {
    if (finished_) finished_->push_back(v);
  }

 private:
  std::vector<Vertex>& parent_;
  std::vector<Vertex>* finished_;
};

std::string where(int device, int index) {
  return "device " + std::to_string(device) + " op " + std::to_string(index) + ": ";
}

bool in_range(const Schedule& s, const Op& op) {
  return op.pipeline >= 0 && op.pipeline < s.num_pipelines && op.stage >= 0 && op.stage < s.num_stages;
}

// Dense numbering of the micro-batch ids that the ops use: an offset when they span a range
// not much larger than their count (every generated schedule), else their rank among the
// distinct ids (a file with ids far apart).
class MicrobatchIndex {
 public:
  explicit MicrobatchIndex(const Schedule& s) {
    std::size_t count = 0;
    for (const auto& list : s.ops)
      for (const Op& op : list)
        if (is_microbatch_op(op.kind) && in_range(s, op)) {
          lo_ = std::min(lo_, std::int64_t{op.microbatch});
          hi_ = std::max(hi_, std::int64_t{op.microbatch});
          ++count;
        }
    if (count == 0) return;
    if (static_cast<std::size_t>(hi_ - lo_) < 2 * count + 64) {
      size_ = static_cast<std::size_t>(hi_ - lo_ + 1);
      return;
    }
    for (const auto& list : s.ops)
      for (const Op& op : list)
        if (is_microbatch_op(op.kind) && in_range(s, op)) distinct_.push_back(op.microbatch);
    std::sort(distinct_.begin(), distinct_.end());
    distinct_.erase(std::unique(distinct_.begin(), distinct_.end()), distinct_.end());
    size_ = distinct_.size();
  }
  std::size_t size() const { return size_; }
  std::size_t operator()(std::int32_t mb) const {
    if (distinct_.empty()) return static_cast<std::size_t>(mb - lo_);
    return static_cast<std::size_t>(std::lower_bound(distinct_.begin(), distinct_.end(), mb) - distinct_.begin());
  }

 private:
  std::int64_t lo_ = std::numeric_limits<std::int64_t>::max(), hi_ = std::numeric_limits<std::int64_t>::min();
  std::size_t size_ = 0;
  std::vector<std::int32_t> distinct_;  // empty: offset numbering
};

// Forward/backward pairing and order checks that need the whole schedule. Ops whose stage or
// pipeline is out of range are left to the dependency builder, which reports them.
void check_pairs(const Schedule& s, std::vector<std::string>& errors) {
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  struct At {
    std::uint32_t device = kNone, index = kNone;
    bool found() const { return device != kNone; }
  };
  // Per (pipeline, stage, micro-batch), in that order: where its F, B, I and W stand.
  const MicrobatchIndex mb_index(s);
  const std::size_t per_stage = mb_index.size(), stages = static_cast<std::size_t>(s.num_stages);
  std::vector<std::array<At, 4>> seen(static_cast<std::size_t>(s.num_pipelines) * stages * per_stage);
  std::vector<std::int32_t> mb_of(per_stage);  // the micro-batch id of each dense index
  for (int d = 0; d < s.num_devices; ++d) {
    const auto& list = s.ops[static_cast<std::size_t>(d)];
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Op& op = list[i];
      if (!is_microbatch_op(op.kind) || !in_range(s, op)) continue;
      const std::size_t k = mb_index(op.microbatch);
      mb_of[k] = op.microbatch;
      seen[(static_cast<std::size_t>(op.pipeline) * stages + static_cast<std::size_t>(op.stage)) * per_stage + k]
          [static_cast<std::size_t>(op.kind)] = {static_cast<std::uint32_t>(d), static_cast<std::uint32_t>(i)};
    }
  }
  auto at = [](At a) { return where(static_cast<int>(a.device), static_cast<int>(a.index)); };
  for (std::size_t key = 0; key < seen.size(); ++key) {
    const auto& [f, b, in, w] = seen[key];
    if (!f.found()) continue;  // no forward: reported by the dependency builder as a missing producer
    const int c = static_cast<int>(key / (stages * per_stage)), st = static_cast<int>(key / per_stage % stages);
    const std::int32_t mb = mb_of[key % per_stage];
    const std::string name = to_string(make_op(OpKind::F, st, mb, c));
    if (!b.found() && !in.found()) errors.push_back(at(f) + name + " has no backward (neither B nor I)");
    if (b.found() && in.found())
      errors.push_back(at(b) + to_string(make_op(OpKind::B, st, mb, c)) + " and " +
                       to_string(make_op(OpKind::I, st, mb, c)) + " both run: use B, or I then W");
    if (in.found() && !w.found())
      errors.push_back(at(in) + to_string(make_op(OpKind::I, st, mb, c)) + " has no weight-gradient W");
    for (At back : {b, in})
      if (back.found() && back.device == f.device && back.index < f.index)
        errors.push_back(at(back) + "backward of " + name + " is listed before its forward (op " +
                         std::to_string(f.index) + ")");
  }
}

// A GradSync or OPT with nothing to do: the same op of its (pipeline, stage) ran before,
// and no weight gradient (B or W) of that stage was made in between. A stage's ops live on
// one device, so list order is run order. (AMP's local updates and one step per iteration
// each follow new gradients; a doubled line in a hand-written file does not.)
void check_stage_op_duplicates(const Schedule& s, std::vector<std::string>& errors) {
  struct Last {
    int at = -1;                  // position of the previous op of this kind, -1: none yet
    bool gradient_since = false;  // a B or W of the stage since then
  };
  // Per (pipeline, stage): the last GradSync and the last OPT.
  std::vector<std::array<Last, 2>> last(static_cast<std::size_t>(s.num_pipelines) * static_cast<std::size_t>(s.num_stages));
  for (int d = 0; d < s.num_devices; ++d) {
    const auto& list = s.ops[static_cast<std::size_t>(d)];
    for (int i = 0; i < static_cast<int>(list.size()); ++i) {
      const Op& op = list[static_cast<std::size_t>(i)];
      const bool gradient = op.kind == OpKind::B || op.kind == OpKind::W;
      if ((!gradient && !is_stage_op(op.kind)) || !in_range(s, op)) continue;
      auto& stage = last[static_cast<std::size_t>(op.pipeline) * static_cast<std::size_t>(s.num_stages) +
                         static_cast<std::size_t>(op.stage)];
      if (gradient) {
        for (Last& l : stage) l.gradient_since = true;
        continue;
      }
      Last& l = stage[op.kind == OpKind::GradSync ? 0 : 1];
      if (l.at >= 0 && !l.gradient_since)
        errors.push_back(where(d, i) + "duplicate " + to_string(op) + ": the one at op " + std::to_string(l.at) +
                         " came after the same gradients (no B or W of its stage in between)");
      l = {i, false};
    }
  }
}

// The header's counts against the ops: `microbatches` x `iterations` distinct micro-batches
// run a forward (every generator's schedule; a file that says otherwise would scale the
// throughput by its word), and the split divides the micro-batches.
void check_counts(const Schedule& s, std::vector<std::string>& errors) {
  std::vector<std::int32_t> ids;
  for (const auto& list : s.ops)
    for (const Op& op : list)
      if (op.kind == OpKind::F && in_range(s, op)) ids.push_back(op.microbatch);
  std::sort(ids.begin(), ids.end());
  const auto distinct = static_cast<std::int64_t>(std::unique(ids.begin(), ids.end()) - ids.begin());
  const std::int64_t declared = std::int64_t{s.microbatches} * s.iterations;
  if (distinct != declared)
    errors.push_back("the forwards cover " + std::to_string(distinct) + " distinct micro-batch ids, but microbatches " +
                     std::to_string(s.microbatches) + " x iterations " + std::to_string(s.iterations) + " says " +
                     std::to_string(declared));
  if (s.microbatch_split > 1 && s.microbatches % s.microbatch_split != 0)
    errors.push_back("microbatch_split " + std::to_string(s.microbatch_split) + " does not divide microbatches " +
                     std::to_string(s.microbatches) + " (each op is 1/split of a micro-batch)");
}

}  // namespace

ValidationReport validate(const Schedule& schedule, const DurationFn& duration) {
  ValidationReport report;
  std::vector<DependencyProblem> problems;
  const DependencyGraph deps = build_dependencies(schedule, problems);
  for (const auto& p : problems) report.errors.push_back(where(p.device, p.index) + p.message);
  check_pairs(schedule, report.errors);
  check_stage_op_duplicates(schedule, report.errors);
  if (report.errors.empty()) check_counts(schedule, report.errors);  // a missing forward is reported as such

  const std::size_t n = deps.size();
  const std::size_t vertices = n + deps.collectives.size();
  PIPESIM_ASSERT(vertices < std::numeric_limits<Vertex>::max());
  // An op's vertex, and the op of a vertex below n: the same number.
  const auto vertex = [](GraphId id) { return static_cast<Vertex>(at(id)); };
  const auto op_id = [](Vertex v) { return GraphId{v}; };
  auto op_at = [&](GraphId id) -> const Op& {
    return schedule.ops[static_cast<std::size_t>(deps.device_of(id))][static_cast<std::size_t>(deps.index_of(id))];
  };
  // The vertex whose completion a successor waits for: a GradSync completes with its collective.
  auto done = [&](GraphId id) -> Vertex {
    const std::int32_t c = deps.collective_of[at(id)];
    return c >= 0 ? static_cast<Vertex>(n + static_cast<std::size_t>(c)) : vertex(id);
  };
  std::vector<std::pair<Vertex, Vertex>> edges;
  edges.reserve(deps.preds.size() + 2 * n);
  for (const GraphId id : deps.all()) {
    for (const GraphId p : deps.preds_of(id)) edges.emplace_back(done(p), vertex(id));
    if (deps.collective_of[at(id)] >= 0) edges.emplace_back(vertex(id), done(id));
  }
  // A receive does not stop its device (sim/engine.hpp): the ops after it wait for the op
  // before it, not for its message.
  for (int d = 0; d < schedule.num_devices; ++d) {
    const auto& list = schedule.ops[static_cast<std::size_t>(d)];
    int before = -1;  // the latest op that is no receive
    for (int i = 0; i < static_cast<int>(list.size()); ++i) {
      if (before >= 0) {
        const GraphId prev = deps.id_of(d, before);
        edges.emplace_back(schedule.blocking_grad_sync ? done(prev) : vertex(prev), vertex(deps.id_of(d, i)));
      }
      if (!is_recv(list[static_cast<std::size_t>(i)].kind)) before = i;
    }
  }
  const Graph g(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), static_cast<Vertex>(vertices));
  edges = {};

  auto describe = [&](Vertex v) {
    if (v < n) return to_string(op_at(op_id(v))) + " (device " + std::to_string(deps.device_of(op_id(v))) + ")";
    const GraphId first = deps.collectives[v - n].front();
    return "the " + to_string(op_at(first)) + " collective";
  };
  std::vector<Vertex> parent(vertices);
  std::vector<Vertex> finished;  // reverse topological order, when the critical path is asked for
  if (duration) finished.reserve(vertices);
  try {
    boost::depth_first_search(g, boost::visitor(SearchVisitor(parent, duration ? &finished : nullptr)));
  } catch (const CycleFound& found) {
    // Edges point from producer to consumer; a reader wants "X waits for Y".
    std::string chain;
    for (auto it = found.vertices.rbegin(); it != found.vertices.rend(); ++it) {
      report.cycle.push_back(describe(*it));
      chain += describe(*it) + " waits for ";
    }
    chain += describe(found.vertices.back());
    report.errors.push_back("deadlock: " + chain);
    return report;
  }

  if (duration) {
    const Vertex none = static_cast<Vertex>(vertices);
    // finish[v] holds v's duration until v's turn comes: sends and receives take no device
    // time, and a GradSync's time is its collective's (asked once per collective).
    std::vector<std::int64_t> start(vertices, 0), finish(vertices, 0);
    for (int d = 0; d < schedule.num_devices; ++d) {
      const auto& list = schedule.ops[static_cast<std::size_t>(d)];
      for (std::size_t i = 0; i < list.size(); ++i)
        if (is_compute(list[i].kind)) finish[vertex(deps.id_of(d, static_cast<int>(i)))] = duration(list[i]);
    }
    for (std::size_t c = 0; c < deps.collectives.size(); ++c) finish[n + c] = duration(op_at(deps.collectives[c].front()));
    std::vector<Vertex> from(vertices, none);  // the predecessor that set the start
    for (auto it = finished.rbegin(); it != finished.rend(); ++it) {
      const Vertex v = *it;
      if (__builtin_add_overflow(start[v], finish[v], &finish[v]))
        throw InputError("critical path overflows 2^63 ns (292 years): the durations are too large");
      for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
        const Vertex t = boost::target(*e, g);
        if (from[t] == none || finish[v] > start[t]) {
          start[t] = std::max(start[t], finish[v]);
          from[t] = v;
        }
      }
    }
    Vertex last = 0;
    for (Vertex v = 0; v < none; ++v)
      if (finish[v] > finish[last]) last = v;
    report.critical_path = none ? finish[last] : 0;
    for (Vertex v = last; v != none; v = from[v]) report.critical_path_ops.push_back(describe(v));
    std::reverse(report.critical_path_ops.begin(), report.critical_path_ops.end());
  }
  return report;
}

}  // namespace pipesim
