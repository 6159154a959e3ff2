#pragma once
// walk_dependencies: the dependency rules of the spec (§3), in one place. build_dependencies
// (schedules/dependencies.hpp, the graph the validator and the executor use) and the
// engine (sim/event_loop.hpp, which builds its per-op slots straight from the walk) both take
// their edges from here.
//
//   F(c,k,s)   needs F(c,k,s-1)                     (a transfer if on another device)
//   B/I(c,k,s) needs F(c,k,s) and B/I(c,k,s+1)      (the last stage: only its own F)
//   W(c,k,s)   needs I(c,k,s)
//   With communication ops, each hop F(c,k,s-1) -> F(c,k,s) may pass through SEND_F(c,k,s-1)
//   (on the sender) and RECV_F(c,k,s) (on the receiver): the consumer needs the receive if
//   the schedule has it, else the send, else the F; a receive needs its send (a receive
//   without its send is a missing producer); a send needs its F. Likewise backward:
//   B/I(c,k,s+1) -> SEND_B(c,k,s+1) -> RECV_B(c,k,s) -> B/I(c,k,s).
//   GradSync   the n-th GradSync of stage s in every pipeline form one collective
//   OptStep    the n-th OptStep(c,s) needs the n-th GradSync(c,s), if the schedule has one
//   and every device runs its list in order (device-order edges are implicit here).
//
// The walk tells a Sink, with ids of the given OpNumbering's type (GraphId, or the engine's SlotId):
//   op(id, device, index, op)   every op, in id order, before any call names it
//   begin(id)                   every op, in id order, before its edges
//   edge(consumer, producer)    consumer needs producer. A B's or I's first edge comes
//                               from its forward, a W's only edge from its I.
//   edge(consumer, producer, data), if the sink has it, instead: data says whether the
//                               consumer takes the producer's output (a message when they
//                               sit on different devices): the hops above (F <- F, B/I <-
//                               B/I, send <- its F or B/I, receive <- send, consumer <-
//                               receive), at most one per op. The other edges (a B's or
//                               I's own forward, W <- I, OptStep <- GradSync) only order
//                               ops of one replica, so they never leave its device.
//   collective(id, c)           GradSync `id` takes part in collective c
// Performance: op() runs just ahead of begin(), as far as the producers named so far
// reach, so that a sink writing per-op state finds it still in cache for the edges. A
// walk in interleaved order should be given the ops in id order (`ops_by_id`,
// OpNumbering::copy_in_id_order) rather than read every list in step.
// Problems with single ops (out-of-range stage or pipeline, an op on a device that does
// not hold its stage, duplicates, missing producers, unmatched collectives) are appended
// to `problems`, and the offending op or edge is left out. Which of two duplicates is
// "first" follows the id order. Returns each collective's members, in pipeline order.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "schedules/op_index.hpp"
#include "schedules/op_numbering.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

struct DependencyProblem {
  int device = 0;
  int index = 0;
  std::string message;  // "2B0 needs 2F0, which no device runs"
};

// Throws InputError if the schedule's shape is inconsistent (op lists vs devices, too many
// ops to number, placement size, devices out of range). Call before numbering the ops.
void check_schedule_shape(const Schedule& schedule);

namespace walk_detail {

// Can `op` run on device d? (Its pipeline and stage exist and are placed on d.)
inline bool well_placed(const Schedule& s, const Op& op, int d) {
  return op.pipeline >= 0 && op.pipeline < s.num_pipelines && op.stage >= 0 && op.stage < s.num_stages &&
         !(has_microbatch(op.kind) && op.microbatch < 0) && s.device_of(op) == d;
}

// The reports, out of line so that the walk's loops stay small.
void report_misplaced(std::vector<DependencyProblem>& problems, const Schedule& s, const Op& op, int d, std::uint32_t i);
// `op` at (d, i) is also at (other_device, other_index), which came first.
void report_duplicate(std::vector<DependencyProblem>& problems, const Op& op, int d, std::uint32_t i, int other_device,
                      std::uint32_t other_index);
template <class Id>
[[gnu::noinline]] void report_duplicate(std::vector<DependencyProblem>& problems, const OpNumbering<Id>& ids,
                                        const Op& op, int d, std::uint32_t i, Id first) {
  const int other = ids.device_of(first);
  report_duplicate(problems, op, d, i, other, ids.index_of(first, other));
}
void report_missing(std::vector<DependencyProblem>& problems, const Op& op, int d, std::uint32_t i, const Op& producer,
                    const char* what);
void report_comm_end(std::vector<DependencyProblem>& problems, const Op& op, int d, std::uint32_t i, const char* why);
// The GradSync at (d, i), the first of its collective, has `participants` of them, not one
// per pipeline.
void report_participants(std::vector<DependencyProblem>& problems, const Schedule& s, int d, std::uint32_t i,
                         std::int32_t occurrence, std::size_t participants);

// GradSyncs grouped by (stage, occurrence) while walking.
template <class Id>
struct CollectiveMember {
  std::int32_t pipeline = 0;
  Id id{};
};
template <class Id>
struct Collectives {
  std::map<std::pair<int, int>, std::int32_t> index;      // (stage, occurrence) -> collective
  std::vector<std::vector<CollectiveMember<Id>>> members;  // per collective
  std::vector<std::int32_t> occurrence;                    // per collective
  std::int32_t add(const Op& op, std::int32_t occ, Id id) {
    auto [it, inserted] = index.emplace(std::pair{op.stage, occ}, static_cast<std::int32_t>(members.size()));
    if (inserted) {
      members.emplace_back();
      occurrence.push_back(occ);
    }
    members[static_cast<std::size_t>(it->second)].push_back({op.pipeline, id});
    return it->second;
  }
  // Sorts each collective's members by pipeline, reports collectives that lack a
  // pipeline, and returns the members' ids.
  std::vector<std::vector<Id>> finish(const Schedule& s, const OpNumbering<Id>& ids,
                                      std::vector<DependencyProblem>& problems) {
    std::vector<std::vector<Id>> out(members.size());
    for (std::size_t c = 0; c < members.size(); ++c) {
      auto& group = members[c];
      std::sort(group.begin(), group.end(), [](const auto& a, const auto& b) { return a.pipeline < b.pipeline; });
      // A collective must have one participant per pipeline holding the stage.
      if (static_cast<int>(group.size()) != s.num_pipelines) {
        const int d = ids.device_of(group.front().id);
        report_participants(problems, s, d, ids.index_of(group.front().id, d), occurrence[c], group.size());
      }
      for (const CollectiveMember<Id>& m : group) out[c].push_back(m.id);
    }
    return out;
  }
};

}  // namespace walk_detail

template <class Id, class Sink>
std::vector<std::vector<Id>> walk_dependencies(const Schedule& schedule, const OpNumbering<Id>& ids,
                                               std::vector<DependencyProblem>& problems, Sink& sink,
                                               const Op* ops_by_id = nullptr) {
  using namespace walk_detail;
  OpIndex where(schedule, ids.interleaved() ? OpIndex::Layout::MicrobatchMajor : OpIndex::Layout::ReplicaMajor);
  // Occurrences so far of the stage-level ops, by (kind GradSync / OptStep, pipeline, stage):
  // the n-th occurrence (0 for micro-batch and communication ops), counted in list order over the well-placed
  // ops. A (pipeline, stage) lives on one device, so both passes count alike in any id order.
  const std::size_t replicas = static_cast<std::size_t>(schedule.num_pipelines) * static_cast<std::size_t>(schedule.num_stages);
  std::vector<std::int32_t> seen_stage_ops(2 * replicas, 0);
  const auto next_occurrence = [&](const Op& op) -> std::int32_t {
    if (!is_stage_op(op.kind)) return 0;
    const std::size_t kind = op.kind == OpKind::GradSync ? 0 : 1;
    return seen_stage_ops[kind * replicas + static_cast<std::size_t>(op.pipeline) * static_cast<std::size_t>(schedule.num_stages) +
                          static_cast<std::size_t>(op.stage)]++;
  };

  const auto op_at = [&](int d, std::uint32_t i, Id id) -> const Op& {
    return ops_by_id ? ops_by_id[at(id)] : schedule.ops[static_cast<std::size_t>(d)][i];
  };

  // Pass 1: index every op; duplicates are reported and the first one wins.
  // Performance: only a schedule with communication ops looks them up in pass 2.
  bool has_comms = false;
  ids.for_each([&](int d, std::uint32_t i, Id id) {
    const Op& op = op_at(d, i, id);
    if (!well_placed(schedule, op, d)) return report_misplaced(problems, schedule, op, d, i);
    has_comms |= is_comm(op.kind);
    if (const std::optional<std::uint32_t> first = where.insert(op, next_occurrence(op), static_cast<std::uint32_t>(id)))
      report_duplicate(problems, ids, op, d, i, Id{*first});
  });

  // Pass 2: each op's producers. `told`: the ops told to the sink so far.
  std::fill(seen_stage_ops.begin(), seen_stage_ops.end(), 0);
  Collectives<Id> collectives;
  const int last = schedule.num_stages - 1;
  typename OpNumbering<Id>::Cursor told(ids);
  const auto tell_until = [&](Id id) __attribute__((always_inline)) {
    for (; !told.done() && told.id() <= id; told.advance())
      sink.op(told.id(), told.device(), told.index(), op_at(told.device(), told.index(), told.id()));
  };
  ids.for_each([&](int d, std::uint32_t i, Id id) {
    const Op& op = op_at(d, i, id);
    tell_until(id);
    sink.begin(id);
    if (!well_placed(schedule, op, d)) return;
    const std::int32_t occurrence = next_occurrence(op);
    const auto edge = [&](Id producer, bool data) {
      tell_until(producer);
      if constexpr (requires { sink.edge(id, producer, data); })
        sink.edge(id, producer, data);
      else
        sink.edge(id, producer);
    };
    // `producer` was found at p >= 0 (OpIndex's raw id), or is missing.
    const auto need = [&](const Op& producer, std::int64_t p, const char* what, bool data) {
      if (p >= 0)
        edge(Id{static_cast<std::uint32_t>(p)}, data);
      else
        report_missing(problems, op, d, i, producer, what);
    };
    // The producer of op's input that crosses from the stage of `compute` (the forward or
    // the backward hop) and where it is: the receive at `to_stage`, else the send at
    // compute's stage, else `compute` itself (for a backward hop its I when there is no B).
    // Performance: out of line, looking up through find_cold, and only for a schedule with
    // communication ops, so that every other schedule's walk is the code of before (with
    // more call sites GCC stopped inlining need() and OpIndex::find: +5 % instructions).
    const auto hop = [&](Op compute, OpKind send, OpKind recv, int to_stage) __attribute__((noinline)) {
      if (recv != op.kind) {
        const Op r = make_op(recv, to_stage, op.microbatch, op.pipeline);
        if (const std::int64_t p = where.find_cold(r); p >= 0) return std::pair{r, p};
      }
      if (send != op.kind) {
        const Op sp = make_op(send, compute.stage, op.microbatch, op.pipeline);
        if (const std::int64_t p = where.find_cold(sp); p >= 0) return std::pair{sp, p};
      }
      std::int64_t p = where.find_cold(compute);
      if (p < 0 && compute.kind == OpKind::B) {
        compute.kind = OpKind::I;
        p = where.find_cold(compute);
      }
      return std::pair{compute, p};
    };
    // The input every kind but GradSync / OptStep takes across a stage or from its own
    // stage's earlier op: found in the switch, needed after it.
    Op producer;
    std::int64_t at = -1;
    const char* what = nullptr;
    bool data = true;  // the input found in the switch carries data (all but W's)
    switch (op.kind) {
      case OpKind::F:
        if (op.stage > 0) {
          producer = make_op(OpKind::F, op.stage - 1, op.microbatch, op.pipeline);
          what = "the forward";
          if (has_comms) [[unlikely]]
            std::tie(producer, at) = hop(producer, OpKind::SendF, OpKind::RecvF, op.stage);
          else
            at = where.find(producer);
        }
        break;
      case OpKind::B:
      case OpKind::I: {
        const Op forward = make_op(OpKind::F, op.stage, op.microbatch, op.pipeline);
        need(forward, where.find(forward), "its forward", false);
        if (op.stage < last) {
          producer = make_op(OpKind::B, op.stage + 1, op.microbatch, op.pipeline);
          what = "the backward";
          if (has_comms) [[unlikely]] {
            std::tie(producer, at) = hop(producer, OpKind::SendB, OpKind::RecvB, op.stage);
          } else {
            at = where.find(producer);
            if (at < 0) {
              producer.kind = OpKind::I;
              at = where.find(producer);
            }
          }
        }
        break;
      }
      case OpKind::SendF:
      case OpKind::SendB:
      case OpKind::RecvF:
      case OpKind::RecvB: {
        const bool fwd = is_forward_comm(op.kind), send = is_send(op.kind);
        if (const char* why = fwd ? (send ? (op.stage == last ? "the last stage has no next stage" : nullptr)
                                          : (op.stage == 0 ? "stage 0 receives no activation" : nullptr))
                                  : (send ? (op.stage == 0 ? "stage 0 has no previous stage" : nullptr)
                                          : (op.stage == last ? "the last stage receives no gradient" : nullptr))) {
          report_comm_end(problems, op, d, i, why);
          break;
        }
        // A send's input is its own stage's F or B (else I); a receive's the neighbour's
        // send, never the compute op itself.
        const Op input = send ? make_op(fwd ? OpKind::F : OpKind::B, op.stage, op.microbatch, op.pipeline)
                              : make_op(fwd ? OpKind::SendF : OpKind::SendB, fwd ? op.stage - 1 : op.stage + 1,
                                        op.microbatch, op.pipeline);
        std::tie(producer, at) = hop(input, op.kind, op.kind, op.stage);
        what = send ? (fwd ? "the forward it sends" : "the backward it sends") : "its send";
        break;
      }
      case OpKind::W:
        producer = make_op(OpKind::I, op.stage, op.microbatch, op.pipeline);
        at = where.find(producer);
        what = "its input-gradient backward";
        data = false;
        break;
      case OpKind::GradSync:
        sink.collective(id, collectives.add(op, occurrence, id));
        break;
      case OpKind::OptStep: {
        const std::int64_t sync = where.find(grad_sync(op.stage, op.pipeline), occurrence);
        if (sync >= 0) edge(Id{static_cast<std::uint32_t>(sync)}, false);  // an OptStep without a GradSync needs none
        break;
      }
    }
    if (what) need(producer, at, what, data);
  });
  return collectives.finish(schedule, ids, problems);
}

}  // namespace pipesim
