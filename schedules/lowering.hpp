#pragma once
// Lowering passes: pure functions Schedule -> Schedule that add the ops PyTorch pipelining's
// runtime adds to a compute-only schedule (torch/distributed/pipelining/schedules.py).
//
//   add_send_recv    SEND_F / RECV_F / SEND_B / RECV_B where a result crosses devices, placed
//                    like PyTorch's _add_send_recv: the ranks take turns, each appending its
//                    next compute op once its input has arrived (a receive, or the producer,
//                    already in its list); a compute op whose result leaves the device is
//                    followed by its send, and the matching receive goes to the end of the
//                    receiving device's list at that moment.
//   add_reduce_grad  a GradSync (PyTorch's REDUCE_GRAD) right after each stage replica's last
//                    backward-like op (B or W) of each iteration, as _add_reduce_grad does
//                    (it counts them to m), for a schedule without GradSyncs.
//
// Both keep every other op and its order; the result has no CellLayout.
#include "schedules/schedule.hpp"

namespace pipesim {

// Throws InputError if the schedule already has communication ops, or if no device can
// go on (a compute op whose input no list provides in any order), naming the stuck ops.
Schedule add_send_recv(const Schedule& schedule);

// Throws InputError if the schedule has GradSync ops already.
Schedule add_reduce_grad(const Schedule& schedule);

}  // namespace pipesim
