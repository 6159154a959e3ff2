#include "schedules/lowering.hpp"

#include <deque>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

// The send an op's result needs, and the device that receives it; nullopt if it stays.
struct Hop {
  Op send, recv;
  int to = 0;
};

std::optional<Hop> hop_of(const Schedule& s, const Op& op) {
  const int here = s.device_of(op);
  if (op.kind == OpKind::F && op.stage + 1 < s.num_stages) {
    const int to = s.device_of(op.pipeline, op.stage + 1);
    if (to != here)
      return Hop{make_op(OpKind::SendF, op.stage, op.microbatch, op.pipeline),
                 make_op(OpKind::RecvF, op.stage + 1, op.microbatch, op.pipeline), to};
  }
  if (is_backward_input(op.kind) && op.stage > 0) {
    const int to = s.device_of(op.pipeline, op.stage - 1);
    if (to != here)
      return Hop{make_op(OpKind::SendB, op.stage, op.microbatch, op.pipeline),
                 make_op(OpKind::RecvB, op.stage - 1, op.microbatch, op.pipeline), to};
  }
  return std::nullopt;
}

// PyTorch's _ready_to_schedule: the op's input is in the device's list already, as the
// receive or (same device) as the producer itself.
bool ready(const Schedule& s, const Op& op, const std::unordered_set<Op, OpHash>& listed) {
  const auto has = [&](OpKind kind, int stage) {
    return listed.count(make_op(kind, stage, op.microbatch, op.pipeline)) > 0;
  };
  if (op.kind == OpKind::F && op.stage > 0) return has(OpKind::RecvF, op.stage) || has(OpKind::F, op.stage - 1);
  if (is_backward_input(op.kind) && op.stage + 1 < s.num_stages)
    return has(OpKind::RecvB, op.stage) || has(OpKind::I, op.stage + 1) || has(OpKind::B, op.stage + 1);
  return true;
}

}  // namespace

Schedule add_send_recv(const Schedule& schedule) {
  Schedule out = schedule;
  out.cells = CellLayout{};
  const auto devices = static_cast<std::size_t>(schedule.num_devices);
  std::vector<std::deque<Op>> todo(devices);
  for (std::size_t d = 0; d < devices; ++d) {
    for (const Op& op : schedule.ops[d])
      if (is_comm(op.kind))
        throw InputError("add_send_recv: the schedule has communication ops already (" + to_string(op) + " on device " +
                         std::to_string(d) + ")");
    todo[d].assign(schedule.ops[d].begin(), schedule.ops[d].end());
    out.ops[d].clear();
    out.ops[d].reserve(schedule.ops[d].size() * 3);
  }
  std::vector<std::unordered_set<Op, OpHash>> listed(devices);
  const auto append = [&](std::size_t d, const Op& op) {
    out.ops[d].push_back(op);
    if (!is_stage_op(op.kind)) listed[d].insert(op);
  };
  for (bool left = true; left;) {
    left = false;
    bool progress = false;
    for (std::size_t d = 0; d < devices; ++d) {  // one op per device per round, in device order
      if (todo[d].empty()) continue;
      left = true;
      const Op op = todo[d].front();
      if (!ready(schedule, op, listed[d])) continue;
      todo[d].pop_front();
      progress = true;
      append(d, op);
      if (const auto hop = hop_of(schedule, op)) {
        append(d, hop->send);
        append(static_cast<std::size_t>(hop->to), hop->recv);
      }
    }
    if (left && !progress) {
      std::string stuck;
      for (std::size_t d = 0; d < devices && stuck.size() < 400; ++d)
        if (!todo[d].empty())
          stuck += (stuck.empty() ? "" : ", ") + to_string(todo[d].front()) + " (device " + std::to_string(d) + ")";
      throw InputError("add_send_recv: no device can go on; each waits for an input no list provides first: " + stuck);
    }
  }
  return out;
}

Schedule add_reduce_grad(const Schedule& schedule) {
  Schedule out = schedule;
  out.cells = CellLayout{};
  const auto key_of = [&](const Op& op) { return std::int64_t{op.pipeline} * schedule.num_stages + op.stage; };
  for (std::size_t d = 0; d < schedule.ops.size(); ++d) {
    // Backward-like ops (B, W) per stage replica and iteration: PyTorch counts to m.
    std::unordered_map<std::int64_t, int> per_iteration, count;
    for (const Op& op : schedule.ops[d]) {
      if (op.kind == OpKind::GradSync)
        throw InputError("add_reduce_grad: the schedule has GradSync ops already (" + to_string(op) + " on device " +
                         std::to_string(d) + ")");
      if (op.kind == OpKind::B || op.kind == OpKind::W) ++per_iteration[key_of(op)];
    }
    for (auto& [key, n] : per_iteration) n /= std::max(1, schedule.iterations);
    std::vector<Op>& list = out.ops[d];
    list.clear();
    for (const Op& op : schedule.ops[d]) {
      list.push_back(op);
      if (op.kind != OpKind::B && op.kind != OpKind::W) continue;
      int& n = count[key_of(op)];
      if (++n < per_iteration[key_of(op)]) continue;
      n = 0;
      list.push_back(grad_sync(op.stage, op.pipeline));
    }
  }
  return out;
}

}  // namespace pipesim
