#pragma once
// The dependency rules of the spec (§3), in one place, for the validator and the engine.
//
//   F(c,k,s)   needs F(c,k,s-1)                     (a transfer if on another device)
//   B/I(c,k,s) needs F(c,k,s) and B/I(c,k,s+1)      (the last stage: only its own F)
//   W(c,k,s)   needs I(c,k,s)
//   GradSync   the n-th GradSync of stage s in every pipeline form one collective
//   OptStep    the n-th OptStep(c,s) needs the n-th GradSync(c,s), if the schedule has one
//   and every device runs its list in order (device-order edges are implicit here).
//
// Ops are numbered densely: id = device_offset[device] + index in that device's list.
#include <cstdint>
#include <string>
#include <vector>

#include "schedules/schedule.hpp"

namespace pipesim {

using OpId = std::uint32_t;

struct DependencyGraph {
  std::vector<OpId> device_offset;  // size num_devices + 1
  // Data predecessors of op id: preds[pred_begin[id] .. pred_begin[id+1]).
  std::vector<OpId> pred_begin;
  std::vector<OpId> preds;
  // GradSync collectives: the op ids taking part in each one, in pipeline order.
  std::vector<std::vector<OpId>> collectives;
  std::vector<std::int32_t> collective_of;  // per op: collective index or -1

  std::size_t size() const { return pred_begin.empty() ? 0 : pred_begin.size() - 1; }
  int device_of(OpId id) const;
  int index_of(OpId id) const { return static_cast<int>(id - device_offset[static_cast<std::size_t>(device_of(id))]); }
  OpId id_of(int device, int index) const { return device_offset[static_cast<std::size_t>(device)] + static_cast<OpId>(index); }
};

struct DependencyProblem {
  int device = 0;
  int index = 0;
  std::string message;  // "2B0 needs 2F0, which no device runs"
};

// Builds the graph. Throws InputError if the schedule's shape is inconsistent (op lists vs
// devices, placement size, devices out of range). Problems with single ops (out-of-range
// stage or pipeline, op on a device that does not hold its stage, duplicates, missing
// producers, unmatched collectives) are appended to `problems`, and the offending op or
// edge is left out.
DependencyGraph build_dependencies(const Schedule& schedule, std::vector<DependencyProblem>& problems);

}  // namespace pipesim
