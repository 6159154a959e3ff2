#pragma once
// validate's error split: the simulator replayed on the run's own times. The prediction
// misses the run for two reasons, and a user acts differently on each: the cost model's op
// and link times differ from the run's (re-profile, on a quieter machine), or the simulator
// misses how the run went with those times (its dependencies, the sharing of cores, work
// the run did outside its ops). The replay (cost_models/replayed.hpp) takes every compute op
// at its measured time (a stage op, the same Op in every iteration, at the mean of the
// counted iterations'), every link at the median of its measured hand-offs and every
// GradSync at the counted iterations' mean for its size (from the last member's arrival to
// the last member's having the sum back, less its copy in, where each member's OptStep
// follows right after it, else to the sum's end) and each member's own copies (out and in,
// MeasuredRun::sync_work) at their mean, as its GradSync's work, on the same shared hardware as the prediction less what the
// measured times hold already (each core's speed, the interference curves, a time-sliced
// core's sharing; a queue's wait for a core is not in them and stays); then
//
//   error = (predicted - measured) / measured
//         = (predicted - replayed) / measured    the cost model's part
//         + (replayed - measured) / measured     the simulator's part
//
// and the cost model's part splits again, at a replay with the run's compute ops but the
// cost model's messages and collectives (ops_only):
//
//   (predicted - replayed) / measured = (predicted - ops_only) / measured    its op times (and
//                                                                            GradSync's copies)
//                                     + (ops_only - replayed) / measured     its links and collectives
//
// A message's hand-off is seen where its consumer waited for it: the consumer's device had
// ended its op before the message was sent, and no input of the consumer came later; from
// the producer's end to the consumer's start. Where devices outnumber the cores they share
// (a pool) a hand-off cannot be told from the wait for a core, so links between two of them
// keep the cost model's time.
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "cost_models/cost_model.hpp"
#include "executor/executor.hpp"
#include "schedules/schedule.hpp"
#include "sim/metrics.hpp"
#include "sim/resources.hpp"
#include "sim/timeline.hpp"

namespace pipesim {

struct Replay {
  Tick time_per_iteration = 0;  // the simulator on the run's own times, the same window
  double simulator_part = 0;    // (replayed - measured) / measured
  double cost_part = 0;         // (predicted - replayed) / measured
  // cost_part = cost_ops_part + cost_comm_part: the replay with the run's compute ops and the
  // cost model's messages and collectives (ops_only) in between.
  double cost_ops_part = 0;     // (predicted - ops_only) / measured: the profile's op times
  double cost_comm_part = 0;    // (ops_only - replayed) / measured: its links and collectives
  int hand_offs = 0;            // messages of the counted iterations whose hand-off was seen
  Tick hand_off_median = 0;     // their median (a link's is what the replay takes), 0 without any
  Tick hand_off_mean = 0;       // their mean: above the median by the hand-offs the host stalled
  // GradSync members of the counted iterations that copied out and back in (sync_work), and
  // the mean of a member's copies: the cost model's (grad_sync_work) and the run's.
  int sync_members = 0;
  Tick sync_work_predicted = 0, sync_work_measured = 0;
};

// Each seen hand-off of `measured` as ((source device, destination device), time), links
// between two devices of a pool of `hardware` with more devices than cores left out, and
// those of messages to an op of the first `warmup` iterations (the first messages of a run
// wait for its threads to start and for fresh pages: 1-10 ms on the 2-vCPU VM).
std::vector<std::pair<std::pair<int, int>, Tick>> measured_hand_offs(const Schedule& schedule,
                                                                     const Timeline& measured,
                                                                     const SharedHardware& hardware, int warmup = 0);

// The replay of `schedule` on `measured` (a run of it) over `costs`, on `hardware` without its
// device speeds, interference curves and time-slicing; `warmup` iterations left out as for
// `predicted` and `measured_time`; `sync_work`: the run's GradSync copies (none: the cost
// model's).
Replay replay_on_measured(const Schedule& schedule, const CostModel& costs, const Timeline& measured,
                          const SharedHardware& hardware, int warmup, Tick predicted_time, Tick measured_time,
                          const std::vector<SyncWork>& sync_work = {});

}  // namespace pipesim
