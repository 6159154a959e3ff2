#include "schedules/schedule_reading.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim::schedule_reading {
namespace {

std::string op_ref(const Op& op) {
  return "pipeline " + std::to_string(op.pipeline) + " stage " + std::to_string(op.stage);
}

// Every op's pipeline / stage must lie inside the placement's num_pipelines x num_stages.
void check_op_ranges(const Schedule& s, const OpSource& src, std::int64_t pipelines, std::int64_t stages) {
  for (std::size_t d = 0; d < s.ops.size(); ++d)
    for (std::size_t i = 0; i < s.ops[d].size(); ++i) {
      const Op& op = s.ops[d][i];
      const std::string text = "'" + to_string(op) + "': ";
      if (op.pipeline >= pipelines)
        fail(src.at(d, i), text + "pipeline " + std::to_string(op.pipeline) + " out of range [0, " +
                               std::to_string(pipelines) + ") (num_pipelines)");
      if (op.stage >= stages)
        fail(src.at(d, i), text + "stage " + std::to_string(op.stage) + " out of range [0, " +
                               std::to_string(stages) + ") (num_stages)");
      if (has_microbatch(op.kind) && op.microbatch < 0) fail(src.at(d, i), text + "negative micro-batch id");
    }
}

// Placement from the ops: each (pipeline, stage) lives where its ops run. Stages and
// pipelines must be numbered densely from 0, and a stage may not appear on two devices.
void infer_placement(Schedule& s, const OpSource& src, const Explicit& given) {
  std::int64_t max_pipeline = -1, max_stage = -1;
  for (const auto& list : s.ops)
    for (const Op& op : list) {
      max_pipeline = std::max<std::int64_t>(max_pipeline, op.pipeline);
      max_stage = std::max<std::int64_t>(max_stage, op.stage);
    }
  const std::int64_t pipelines = given.num_pipelines ? *given.num_pipelines : max_pipeline + 1;
  const std::int64_t stages = given.num_stages ? *given.num_stages : max_stage + 1;
  check_op_ranges(s, src, pipelines, stages);
  std::map<std::pair<int, int>, std::pair<std::size_t, std::size_t>> first;  // -> (device, index)
  for (std::size_t d = 0; d < s.ops.size(); ++d)
    for (std::size_t i = 0; i < s.ops[d].size(); ++i) {
      const Op& op = s.ops[d][i];
      const auto [it, inserted] = first.try_emplace({op.pipeline, op.stage}, d, i);
      if (!inserted && it->second.first != d)
        fail(src.at(d, i), "'" + to_string(op) + "': " + op_ref(op) + " appears on device " + std::to_string(d) +
                               " and on device " + std::to_string(it->second.first) + " (" +
                               src.ref(it->second.first, it->second.second) + "); a stage lives on one device");
    }
  // Checked before allocating: "999999F0" must be an error, not a 4 GB placement table.
  if (static_cast<std::int64_t>(first.size()) != pipelines * stages) {
    std::int64_t expect = 0;  // walk (pipeline, stage) in order to find the first gap
    for (const auto& [key, where] : first) {
      if (key.first * stages + key.second != expect) break;
      ++expect;
    }
    fail(src.source, "pipeline " + std::to_string(expect / stages) + " stage " + std::to_string(expect % stages) +
                         " appears on no device (stages 0.." + std::to_string(stages - 1) + " of pipelines 0.." +
                         std::to_string(pipelines - 1) + " must all have ops)");
  }
  s.num_pipelines = static_cast<int>(pipelines);
  s.num_stages = static_cast<int>(stages);
  s.placement.assign(static_cast<std::size_t>(pipelines), std::vector<int>(static_cast<std::size_t>(stages)));
  for (const auto& [key, where] : first)
    s.placement[static_cast<std::size_t>(key.first)][static_cast<std::size_t>(key.second)] =
        static_cast<int>(where.first);
}

}  // namespace

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view strip_bom(std::string_view s) {
  return s.substr(0, 3) == "\xEF\xBB\xBF" ? s.substr(3) : s;
}

std::string stem(std::string_view path) {
  const std::size_t slash = path.find_last_of("/\\");
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  const std::size_t dot = path.rfind('.');
  if (dot != std::string_view::npos && dot > 0) path = path.substr(0, dot);
  // A file name may hold anything but '/'; the schedule's name is printed, so it is escaped.
  return one_line(path.substr(0, 200));
}

std::string OpSource::ref(std::size_t d, std::size_t i) const {
  if (json) return "/ops/" + std::to_string(d) + "/" + std::to_string(i);
  return "line " + std::to_string(d + 1) + ", cell " + std::to_string(cells[d][i]);
}

std::string OpSource::at(std::size_t d, std::size_t i) const {
  if (json) return source + ": " + ref(d, i);
  return source + ":" + std::to_string(d + 1) + ": cell " + std::to_string(cells[d][i]);
}

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw InputError(where + ": " + what); }

void finish(Schedule& s, const OpSource& src, const Explicit& given) {
  if (s.total_ops() == 0) fail(src.source, "no ops at all (an empty schedule)");
  if (!given.placement) {
    infer_placement(s, src, given);
  } else {
    check_op_ranges(s, src, s.num_pipelines, s.num_stages);
    for (std::size_t d = 0; d < s.ops.size(); ++d)
      for (std::size_t i = 0; i < s.ops[d].size(); ++i) {
        const Op& op = s.ops[d][i];
        if (s.device_of(op) != static_cast<int>(d))
          fail(src.at(d, i), "'" + to_string(op) + "' is listed on device " + std::to_string(d) +
                                 ", but placement puts " + op_ref(op) + " on device " +
                                 std::to_string(s.device_of(op)));
      }
  }
  // Schedule::chunks_per_device() needs every device of pipeline 0 to hold equally many
  // chunks; rejecting it here keeps a bad file from tripping an assertion later.
  const std::set<int> spanned(s.placement[0].begin(), s.placement[0].end());
  if (s.num_stages % static_cast<int>(spanned.size()) != 0)
    fail(given.placement ? src.source + ": " + given.placement_path : src.source,
         "pipeline 0 spans " + std::to_string(spanned.size()) + " devices, but num_stages (" +
             std::to_string(s.num_stages) + ") is not a multiple of that");
  // Iterations: one OptStep per stage replica per iteration. Micro-batches: distinct ids
  // in the whole schedule per iteration (ids are global across pipelines, spec §2).
  std::map<std::pair<int, int>, int> opt_steps;
  std::set<int> ids;
  for (const auto& list : s.ops)
    for (const Op& op : list) {
      if (op.kind == OpKind::OptStep) ++opt_steps[{op.pipeline, op.stage}];
      if (is_microbatch_op(op.kind)) ids.insert(op.microbatch);
    }
  const std::size_t most_microbatches = ids.size();
  int iterations = 1;
  for (const auto& [key, count] : opt_steps) iterations = std::max(iterations, count);
  s.iterations = given.iterations ? *given.iterations : iterations;
  // The engine keeps a table per iteration: an iteration count the ops cannot fill is a typo.
  if (static_cast<std::size_t>(s.iterations) > s.total_ops())
    fail(src.source + ": /iterations", "iterations (" + std::to_string(s.iterations) + ") is more than the " +
                                           std::to_string(s.total_ops()) + " ops of the schedule");
  const auto per_iteration = static_cast<std::size_t>(s.iterations);
  // At least 1: a schedule of stage ops only still has a (positive) micro-batch count.
  s.microbatches = given.microbatches ? *given.microbatches
                                      : std::max(1, static_cast<int>((most_microbatches + per_iteration - 1) / per_iteration));
  // Iteration t owns ids t*m .. t*m+m-1: an id past m x iterations belongs to no iteration
  // (and "0F2000000000" alone would make the engine size its per-iteration table by it).
  const std::int64_t ids_end = std::int64_t{s.microbatches} * s.iterations;
  for (std::size_t d = 0; d < s.ops.size(); ++d)
    for (std::size_t i = 0; i < s.ops[d].size(); ++i) {
      const Op& op = s.ops[d][i];
      if (has_microbatch(op.kind) && op.microbatch >= ids_end)
        fail(src.at(d, i), "'" + to_string(op) + "': micro-batch id " + std::to_string(op.microbatch) +
                               " is not below micro-batches x iterations (" + std::to_string(s.microbatches) + " x " +
                               std::to_string(s.iterations) + "); number them from 0, iteration t using t*m .. t*m+m-1");
    }
}

}  // namespace pipesim::schedule_reading
