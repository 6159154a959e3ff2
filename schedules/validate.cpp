#include "schedules/validate.hpp"

#include <algorithm>
#include <array>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/topological_sort.hpp>
#include <map>
#include <tuple>

#include "schedules/dependencies.hpp"
#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

// Vertices 0..n-1 are ops (OpId); n + c is the completion of collective c.
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

// Thrown by the visitor to stop the search at the first cycle.
struct CycleFound {
  std::vector<Vertex> vertices;  // in edge (producer -> consumer) direction
};

// DFS visitor: on the first back edge u -> v, the tree path v ~> u plus that edge is a cycle.
class CycleVisitor : public boost::default_dfs_visitor {
 public:
  explicit CycleVisitor(std::vector<Vertex>& parent) : parent_(parent) {}
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

 private:
  std::vector<Vertex>& parent_;
};

std::string where(int device, int index) {
  return "device " + std::to_string(device) + " op " + std::to_string(index) + ": ";
}

// Forward/backward pairing and order checks that need the whole schedule.
void check_pairs(const Schedule& s, std::vector<std::string>& errors) {
  // (pipeline, stage, micro-batch) -> position of each kind, -1 if absent.
  struct Seen { std::array<std::pair<int, int>, 4> at{{{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}}}; };
  std::map<std::tuple<int, int, int>, Seen> seen;
  for (int d = 0; d < s.num_devices; ++d)
    for (int i = 0; i < static_cast<int>(s.ops[static_cast<std::size_t>(d)].size()); ++i) {
      const Op& op = s.ops[static_cast<std::size_t>(d)][static_cast<std::size_t>(i)];
      if (is_microbatch_op(op.kind)) seen[{op.pipeline, op.stage, op.microbatch}].at[static_cast<std::size_t>(op.kind)] = {d, i};
    }
  for (const auto& [key, v] : seen) {
    const auto [c, st, mb] = key;
    const auto f = v.at[0], b = v.at[1], in = v.at[2], w = v.at[3];
    const Op fwd = make_op(OpKind::F, st, mb, c);
    const std::string name = to_string(fwd);
    if (f.first < 0) continue;  // reported by the dependency builder as a missing producer
    if (b.first < 0 && in.first < 0)
      errors.push_back(where(f.first, f.second) + name + " has no backward (neither B nor I)");
    if (b.first >= 0 && in.first >= 0)
      errors.push_back(where(b.first, b.second) + to_string(make_op(OpKind::B, st, mb, c)) + " and " +
                       to_string(make_op(OpKind::I, st, mb, c)) + " both run: use B, or I then W");
    if (in.first >= 0 && w.first < 0)
      errors.push_back(where(in.first, in.second) + to_string(make_op(OpKind::I, st, mb, c)) +
                       " has no weight-gradient W");
    for (auto back : {b, in})
      if (back.first == f.first && back.second < f.second)
        errors.push_back(where(back.first, back.second) + "backward of " + name + " is listed before its forward (op " +
                         std::to_string(f.second) + ")");
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
  std::map<std::tuple<int, int, int>, Last> last;  // (kind, pipeline, stage)
  for (int d = 0; d < s.num_devices; ++d) {
    const auto& list = s.ops[static_cast<std::size_t>(d)];
    for (int i = 0; i < static_cast<int>(list.size()); ++i) {
      const Op& op = list[static_cast<std::size_t>(i)];
      if (op.kind == OpKind::B || op.kind == OpKind::W) {
        for (OpKind k : {OpKind::GradSync, OpKind::OptStep})
          if (auto it = last.find({static_cast<int>(k), op.pipeline, op.stage}); it != last.end())
            it->second.gradient_since = true;
        continue;
      }
      if (op.kind != OpKind::GradSync && op.kind != OpKind::OptStep) continue;
      Last& l = last[{static_cast<int>(op.kind), op.pipeline, op.stage}];
      if (l.at >= 0 && !l.gradient_since)
        errors.push_back(where(d, i) + "duplicate " + to_string(op) + ": the one at op " + std::to_string(l.at) +
                         " came after the same gradients (no B or W of its stage in between)");
      l = {i, false};
    }
  }
}

}  // namespace

ValidationReport validate(const Schedule& schedule, const DurationFn& duration) {
  ValidationReport report;
  std::vector<DependencyProblem> problems;
  const DependencyGraph deps = build_dependencies(schedule, problems);
  for (const auto& p : problems) report.errors.push_back(where(p.device, p.index) + p.message);
  check_pairs(schedule, report.errors);
  check_stage_op_duplicates(schedule, report.errors);

  const std::size_t n = deps.size();
  Graph g(n + deps.collectives.size());
  auto op_at = [&](Vertex v) -> const Op& {
    return schedule.ops[static_cast<std::size_t>(deps.device_of(static_cast<OpId>(v)))]
                       [static_cast<std::size_t>(deps.index_of(static_cast<OpId>(v)))];
  };
  // The vertex whose completion a successor waits for: a GradSync completes with its collective.
  auto done = [&](OpId id) -> Vertex {
    return deps.collective_of[id] >= 0 ? n + static_cast<Vertex>(deps.collective_of[id]) : id;
  };
  for (OpId id = 0; id < n; ++id) {
    for (OpId k = deps.pred_begin[id]; k < deps.pred_begin[id + 1]; ++k) boost::add_edge(done(deps.preds[k]), id, g);
    if (deps.collective_of[id] >= 0) boost::add_edge(id, done(id), g);
  }
  // A receive does not stop its device (sim/engine.hpp): the ops after it wait for the op
  // before it, not for its message.
  for (int d = 0; d < schedule.num_devices; ++d) {
    const auto& list = schedule.ops[static_cast<std::size_t>(d)];
    int before = -1;  // the latest op that is no receive
    for (int i = 0; i < static_cast<int>(list.size()); ++i) {
      if (before >= 0) {
        const OpId prev = deps.id_of(d, before);
        boost::add_edge(schedule.blocking_grad_sync ? done(prev) : prev, deps.id_of(d, i), g);
      }
      if (!is_recv(list[static_cast<std::size_t>(i)].kind)) before = i;
    }
  }

  auto describe = [&](Vertex v) {
    if (v < n) return to_string(op_at(v)) + " (device " + std::to_string(deps.device_of(static_cast<OpId>(v))) + ")";
    const OpId first = deps.collectives[v - n].front();
    return "the " + to_string(op_at(first)) + " collective";
  };
  std::vector<Vertex> parent(boost::num_vertices(g));
  try {
    boost::depth_first_search(g, boost::visitor(CycleVisitor(parent)));
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
    std::vector<Vertex> order;
    boost::topological_sort(g, std::back_inserter(order));  // reverse topological order
    const Vertex none = boost::num_vertices(g);
    std::vector<std::int64_t> start(none, 0), finish(none, 0);
    std::vector<Vertex> from(none, none);  // the predecessor that set the start
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Vertex v = *it;
      // Sends and receives take no device time; a GradSync's time is its collective's.
      const std::int64_t cost = v < n ? (is_compute(op_at(v).kind) ? duration(op_at(v)) : 0)
                                      : duration(op_at(deps.collectives[v - n].front()));
      if (__builtin_add_overflow(start[v], cost, &finish[v]))
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
    for (Vertex v = 0; v < boost::num_vertices(g); ++v)
      if (finish[v] > finish[last]) last = v;
    report.critical_path = none ? finish[last] : 0;
    for (Vertex v = last; v != none; v = from[v]) report.critical_path_ops.push_back(describe(v));
    std::reverse(report.critical_path_ops.begin(), report.critical_path_ops.end());
  }
  return report;
}

}  // namespace pipesim
