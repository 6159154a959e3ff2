#pragma once
// The dependency graph of a schedule, for the validator and the executor: every op's data
// predecessors, and the GradSync collectives. The rules themselves (spec §3) are in
// schedules/dependency_walk.hpp; every device also runs its list in order (device-order
// edges are implicit here).
//
// Ops are numbered densely, device by device: id = first id of the device + index in that
// device's list (GraphId, the device-major GraphNumbering of schedules/op_numbering.hpp).
// Per-op arrays are indexed by at(id).
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "schedules/dependency_walk.hpp"
#include "schedules/op_numbering.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

struct DependencyGraph {
  GraphNumbering ids;
  // Data predecessors of op id: preds[pred_begin[at(id)] .. pred_begin[at(id) + 1]), positions
  // in preds (preds_of).
  std::vector<std::uint32_t> pred_begin;
  std::vector<GraphId> preds;
  // The data edges among them (dependency_walk.hpp): the op whose output op id takes, or
  // kNoDataInput. Every other predecessor only orders ops on the same device.
  static constexpr GraphId kNoDataInput = kNoGraphId;
  std::vector<GraphId> data_input;
  // GradSync collectives: the op ids taking part in each one, in pipeline order.
  std::vector<std::vector<GraphId>> collectives;
  std::vector<std::int32_t> collective_of;  // per op: collective index or -1

  std::size_t size() const { return pred_begin.empty() ? 0 : pred_begin.size() - 1; }
  IdRange<GraphId> all() const { return ids_below<GraphId>(size()); }  // every op's id, in order
  std::span<const GraphId> preds_of(GraphId id) const {
    return {preds.data() + pred_begin[at(id)], preds.data() + pred_begin[at(id) + 1]};
  }
  int device_of(GraphId id) const { return ids.device_of(id); }
  int index_of(GraphId id) const { return static_cast<int>(ids.index_of(id, device_of(id))); }
  GraphId id_of(int device, int index) const { return ids.id(device, static_cast<std::uint32_t>(index)); }
};

// Builds the graph. Throws InputError if the schedule's shape is inconsistent (op lists vs
// devices, placement size, devices out of range). Problems with single ops (out-of-range
// stage or pipeline, op on a device that does not hold its stage, duplicates, missing
// producers, unmatched collectives) are appended to `problems`, and the offending op or
// edge is left out.
DependencyGraph build_dependencies(const Schedule& schedule, std::vector<DependencyProblem>& problems);

// Per op (by at(GraphId)): how many ops on other devices
// take its output (the walk's data edges that cross devices), i.e. the messages it sends;
// at most 255. One byte per op: what a trace written while the engine runs keeps to know
// which ops' transfers are still to come (traces/chrome_trace_stream.hpp). Edges of ops
// with problems are left out, as above; InputError as above.
std::vector<std::uint8_t> cross_device_outputs(const Schedule& schedule);

}  // namespace pipesim
