// A schedule the event loop cannot run (sim/event_loop.hpp), said in one InputError: the
// dependency problems the walk found while filling the slots (missing producers,
// duplicates), or, when the loop ran dry before every op had run, the deadlock: which device
// waits at which op for which others. Both are explained from the dependency graph
// (schedules/dependencies.hpp), which is built only here.
#include "sim/event_loop.hpp"

#include <string>

#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

std::string describe_problems(const std::vector<DependencyProblem>& problems) {
  std::string msg = "schedule is not runnable: ";
  for (std::size_t i = 0; i < problems.size() && i < 5; ++i)
    msg += (i ? "; " : "") + std::string("device ") + std::to_string(problems[i].device) + " op " +
           std::to_string(problems[i].index) + ": " + problems[i].message;
  if (problems.size() > 5) msg += "; and " + std::to_string(problems.size() - 5) + " more";
  return msg;
}

DependencyGraph dependencies(const Schedule& schedule) {
  std::vector<DependencyProblem> problems;
  DependencyGraph g = build_dependencies(schedule, problems);
  if (!problems.empty()) throw InputError(describe_problems(problems));
  return g;
}

}  // namespace

// Everything ran, or the schedule deadlocked: then say who waits on whom.
void EventLoop::check_complete() const {
  for (const DeviceState& dev : dev_)
    if (dev.next < dev.size || (dev.held & kBlocked)) explain_deadlock();
}

void EventLoop::explain_deadlock() const {
  const DependencyGraph g = dependencies(s_);
  const auto op_at = [&](GraphId id) -> const Op& {
    return s_.ops[static_cast<std::size_t>(g.device_of(id))][static_cast<std::size_t>(g.index_of(id))];
  };
  // The op's slot: where an op goes from the graph's numbering to the engine's, through its
  // (device, index).
  const auto slot_of = [&](GraphId id) { return layout_.id(g.device_of(id), static_cast<std::uint32_t>(g.index_of(id))); };
  // Has the op with graph id `id` started? Each device starts its ops in list order.
  const auto started = [&](GraphId id) {
    return static_cast<std::uint32_t>(g.index_of(id)) < dev_[static_cast<std::size_t>(g.device_of(id))].next;
  };
  std::string waits;
  int stuck = 0;
  for (int d = 0; d < s_.num_devices; ++d) {
    const DeviceState& dev = dev_[static_cast<std::size_t>(d)];
    const auto& list = s_.ops[static_cast<std::size_t>(d)];
    if (dev.next >= list.size() && !(dev.held & kBlocked)) continue;
    if (++stuck > 8) continue;
    const std::size_t index = (dev.held & kBlocked) ? dev.next - 1 : dev.next;
    const GraphId id = g.id_of(d, static_cast<int>(index));
    waits += (waits.empty() ? "" : "; ") + std::string("device ") + std::to_string(d) + " waits at " +
             to_string(list[index]) + " for ";
    std::string on;
    const auto named = [&](GraphId p) { return to_string(op_at(p)) + " (device " + std::to_string(g.device_of(p)) + ")"; };
    const auto waiting_on = [&](GraphId p) { on += (on.empty() ? "" : ", ") + named(p); };
    if (g.collective_of[at(id)] >= 0) {
      for (GraphId m : g.collectives[static_cast<std::size_t>(g.collective_of[at(id)])])
        if (!started(m)) waiting_on(m);
    }
    for (const GraphId p : g.preds_of(id)) {
      if (!started(p)) {
        waiting_on(p);
      } else if (is_recv(op_at(p).kind) && slots_[slot_of(p)].pending > 0) {
        // Posted, but its message never came: say what it waits for.
        waiting_on(p);
        for (const GraphId q : g.preds_of(p))
          if (!started(q)) on += " which waits for " + named(q);
      }
    }
    waits += on.empty() ? "an op that never finishes" : on;
  }
  PIPESIM_ASSERT(stuck > 0);
  throw InputError("deadlock: " + std::to_string(stuck) + " device(s) cannot go on: " + waits +
                   (stuck > 8 ? "; ..." : ""));
}

// The walk found problems: report them as build_dependencies orders them (graph order,
// which decides which of two duplicates is named first).
void EventLoop::throw_problems() const {
  dependencies(s_);
  assert_fail("build_dependencies finds the problems the walk found", __FILE__, __LINE__);
}

}  // namespace pipesim
