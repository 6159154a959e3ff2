#include "schedules/dependencies.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

std::string str(long long v) { return std::to_string(v); }

// Why an op cannot run on device d, or nullopt if it can.
std::optional<std::string> misplaced(const Schedule& s, const Op& op, int d) {
  if (op.pipeline < 0 || op.pipeline >= s.num_pipelines)
    return "pipeline " + str(op.pipeline) + " outside [0, " + str(s.num_pipelines) + ")";
  if (op.stage < 0 || op.stage >= s.num_stages) return "stage " + str(op.stage) + " outside [0, " + str(s.num_stages) + ")";
  if (has_microbatch(op.kind) && op.microbatch < 0) return "negative micro-batch id";
  const int holder = s.device_of(op);
  if (holder != d)
    return "runs on device " + str(d) + ", but pipeline " + str(op.pipeline) + " stage " + str(op.stage) +
           " is placed on device " + str(holder);
  return std::nullopt;
}

}  // namespace

// The schedule's shape must be consistent before any op can be looked at.
void check_schedule_shape(const Schedule& s) {
  if (s.num_devices <= 0 || s.num_stages <= 0 || s.num_pipelines <= 0)
    throw InputError("schedule: devices (" + str(s.num_devices) + "), stages (" + str(s.num_stages) +
                     ") and pipelines (" + str(s.num_pipelines) + ") must all be positive");
  if (static_cast<int>(s.ops.size()) != s.num_devices)
    throw InputError("schedule: " + str(static_cast<long long>(s.ops.size())) + " op lists for " + str(s.num_devices) +
                     " devices");
  // Op ids are 32 bits, and the largest one marks "none" (schedules/op_numbering.hpp).
  if (s.total_ops() >= kMaxOpIds)
    throw InputError("schedule: " + str(static_cast<long long>(s.total_ops())) + " ops; at most " +
                     str(kMaxOpIds - 1LL) + " can be numbered");
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

namespace walk_detail {

void report_misplaced(std::vector<DependencyProblem>& problems, const Schedule& s, const Op& op, int d, std::uint32_t i) {
  const std::optional<std::string> why = misplaced(s, op, d);
  PIPESIM_ASSERT(why.has_value());
  problems.push_back({d, static_cast<int>(i), to_string(op) + ": " + *why});
}

void report_duplicate(std::vector<DependencyProblem>& problems, const Op& op, int d, std::uint32_t i, int other_device,
                      std::uint32_t other_index) {
  problems.push_back({d, static_cast<int>(i),
                      "duplicate op " + to_string(op) + " (also at device " + std::to_string(other_device) + " position " +
                          std::to_string(other_index) + ")"});
}

void report_missing(std::vector<DependencyProblem>& problems, const Op& op, int d, std::uint32_t i, const Op& producer,
                    const char* what) {
  problems.push_back({d, static_cast<int>(i), to_string(op) + " needs " + what + " " + to_string(producer) + ", which no device runs"});
}

void report_comm_end(std::vector<DependencyProblem>& problems, const Op& op, int d, std::uint32_t i, const char* why) {
  problems.push_back({d, static_cast<int>(i), to_string(op) + ": " + why});
}

void report_participants(std::vector<DependencyProblem>& problems, const Schedule& s, int d, std::uint32_t i,
                         std::int32_t occurrence, std::size_t participants) {
  problems.push_back({d, static_cast<int>(i),
                      to_string(s.ops[static_cast<std::size_t>(d)][i]) + " occurrence " + std::to_string(occurrence) +
                          " has " + std::to_string(participants) + " participant(s), expected one per pipeline (" +
                          std::to_string(s.num_pipelines) + ")"});
}

}  // namespace walk_detail

namespace {

// Collects the walk into predecessor lists, by graph id.
struct GraphSink {
  DependencyGraph& g;
  void op(GraphId, int, std::uint32_t, const Op&) {}
  void begin(GraphId) { g.pred_begin.push_back(static_cast<std::uint32_t>(g.preds.size())); }
  void edge(GraphId consumer, GraphId producer, bool data) {
    g.preds.push_back(producer);
    if (data) {
      PIPESIM_ASSERT(g.data_input[at(consumer)] == DependencyGraph::kNoDataInput);  // one data input per op
      g.data_input[at(consumer)] = producer;
    }
  }
  void collective(GraphId id, std::int32_t c) { g.collective_of[at(id)] = c; }
};

// Counts each op's data edges to ops on other devices.
struct CrossingSink {
  const GraphNumbering& ids;
  std::vector<std::uint8_t>& out;
  void op(GraphId, int, std::uint32_t, const Op&) {}
  void begin(GraphId) {}
  void edge(GraphId consumer, GraphId producer, bool data) {
    if (data && ids.device_of(consumer) != ids.device_of(producer) && out[at(producer)] < 255) ++out[at(producer)];
  }
  void collective(GraphId, std::int32_t) {}
};

}  // namespace

DependencyGraph build_dependencies(const Schedule& schedule, std::vector<DependencyProblem>& problems) {
  check_schedule_shape(schedule);
  DependencyGraph g;
  g.ids = GraphNumbering(schedule);
  const std::size_t n = g.ids.size();
  g.pred_begin.reserve(n + 1);
  g.preds.reserve(n * 2);
  g.collective_of.assign(n, -1);
  g.data_input.assign(n, DependencyGraph::kNoDataInput);
  GraphSink sink{g};
  g.collectives = walk_dependencies(schedule, g.ids, problems, sink);
  g.pred_begin.push_back(static_cast<std::uint32_t>(g.preds.size()));
  return g;
}

std::vector<std::uint8_t> cross_device_outputs(const Schedule& schedule) {
  check_schedule_shape(schedule);
  const GraphNumbering ids(schedule);
  std::vector<std::uint8_t> out(ids.size(), 0);
  std::vector<DependencyProblem> problems;
  CrossingSink sink{ids, out};
  (void)walk_dependencies(schedule, ids, problems, sink);
  return out;
}

}  // namespace pipesim
