#pragma once
// Sharing: the activities that share hardware (sim/resources.hpp) and the rates they run
// at. The engine (sim/event_loop_shared.cpp) hands it a compute op or a transfer when it starts, with
// its work (its duration alone, from the cost model) and asks for the finish events to
// push; every start and finish changes the rates of the activities it shares something
// with, and Sharing says which of them now end at another time.
//
//   start(a)                    a compute op's work: its duration alone x its device's
//                               slowdown x its pool's turn slowdown (more members than cores)
//   start(a) / finish(a)        the affected activities: those in a's pool, the transfers
//     |                         touching a's device (overlap), every NIC flow (max-min)
//     v
//   advance each to now         remaining work -= elapsed / old factor
//   new factor                  max(1, k / cores) x slowdown[kind][k-1] x overlap   (compute;
//                               a queued pool: 1 x ..., and an op waits for a core)
//                               1 / max-min share of the NICs x overlap            (transfer)
//                               1 / max-min share of the NICs (across nodes)
//                                 x overlap if a member computes                   (collective)
//   changed? generation + 1 and a new finish time, now + ceil(remaining x factor)
//
// The engine pushes each new finish as an event stamped with the generation; an event whose
// generation is no longer the activity's is stale and dropped at its handler (the queue
// cancels nothing, so ties stay FIFO). Time per unit of work is kept as a factor >= 1, not a
// rate: k equal ops on C < k cores end at exactly ceil(work x k / C).
//
// A pool whose members all run at one factor (processor sharing without interference
// curves or overlap: --share-cores alone) is kept lazily, as SimGrid does: a virtual clock
// of the work each member has done, each member's end on it, and one finish event, the
// earliest member's. A start or finish there costs O(log k), not O(k) new events.
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "schedules/op.hpp"
#include "sim/resources.hpp"

namespace pipesim {

class Sharing {
 public:
  enum class Kind : std::uint8_t { Compute, Transfer, Collective };
  // A finish time the engine must (re)schedule.
  struct Finish {
    std::uint32_t activity;
    std::uint32_t generation;
    Tick at;
  };

  // `hardware` checked (SharedHardware::check) for `devices` devices.
  Sharing(const SharedHardware& hardware, int devices);

  // Whether the engine gives device d's compute ops, or link (src, dst)'s transfers, to
  // Sharing; otherwise they take their cost model duration, as without a description.
  bool shares_compute(int device) const;
  bool shares_link(int src, int dst) const;
  // Whether GradSync collectives are activities too: they overlap compute (overlap_slowdown),
  // or the devices sit on several nodes, where a collective spanning nodes is a flow on each
  // of their NICs, sharing them max-min with the transfers and other collectives there.
  bool shares_collectives() const { return overlap_ || nodes_ > 1; }

  // A compute op of `kind` on `device`, or a transfer src -> dst, starts now with `work` ns
  // of work at full speed; `payload` is the engine's (a slot, a transfer). Returns its id.
  std::uint32_t start_compute(int device, OpKind kind, Tick work, Tick now, std::uint32_t payload);
  std::uint32_t start_transfer(int src, int dst, Tick work, Tick now, std::uint32_t payload);
  // A collective over `devices` (shares_collectives()).
  std::uint32_t start_collective(const std::vector<int>& devices, Tick work, Tick now, std::uint32_t payload);
  // The activity has ended (its current finish event came): it leaves what it shares.
  void finish(std::uint32_t activity, Tick now);

  bool current(std::uint32_t activity, std::uint32_t generation) const;
  // When the activity began to run: its start, or when a queued op got its core.
  Tick running_since(std::uint32_t activity) const { return acts_[activity].running_since; }
  // A queued op that waited for a core: the payload of the compute op whose end gave it the
  // core (what it waited for last), else ~0u.
  std::uint32_t core_from(std::uint32_t activity) const { return acts_[activity].core_from; }
  Kind kind(std::uint32_t activity) const { return acts_[activity].kind; }
  std::uint32_t payload(std::uint32_t activity) const { return acts_[activity].payload; }

  // The finish times changed by the last start or finish, in activity order; the engine
  // pushes them and calls clear_changes().
  const std::vector<Finish>& changes() const { return changes_; }
  void clear_changes() { changes_.clear(); }

 private:
  struct Activity {
    double remaining = 0;  // ns of work at full speed
    double factor = 0;     // ns per ns of work at today's rates (>= 1); 0: not yet rated
    Tick since = 0;        // when remaining was last brought up to date
    Tick running_since = 0;
    bool queued = false;   // waiting for a core (ComputePool::queue)
    std::uint32_t core_from = ~0u;  // the payload of the op whose end gave it its core
    std::uint32_t generation = 0;
    Kind kind = Kind::Compute;
    OpKind op_kind = OpKind::F;
    bool active = false;
    int pool = -1;         // compute: the device's pool, or -1
    int device = -1;       // compute: its device; transfer: the sender
    int peer = -1;         // transfer: the receiver
    std::vector<int> members;  // collective: its devices
    // Between nodes: the NIC resources it takes one flow's worth of (a node's egress 2 n,
    // its ingress 2 n + 1): a transfer's sender egress and receiver ingress; a collective's
    // egress and ingress of every node it spans (a ring sends and receives on each). Empty:
    // inside one node.
    std::vector<int> nics;
    std::uint32_t payload = 0;
  };

  std::uint32_t add(Activity a);
  // The lazy pools (see above): the clock, the members' ends on it, the one pushed.
  struct LazyPool {
    double clock = 0;  // work each member has done since the pool began
    Tick since = 0;    // when `clock` was last brought up to date
    std::set<std::pair<double, std::uint32_t>> ends;  // (clock at its end, activity)
    std::uint32_t head = ~0u;                          // whose finish event is pushed
  };
  double pool_factor(int pool) const;
  void lazy_change(int pool, Tick now, std::uint32_t id, bool joins);
  void affected_by(const Activity& a, std::uint32_t self);
  void rerate(Tick now);
  double factor_of(std::uint32_t activity) const;
  bool crosses_nodes(int src, int dst) const;
  void share_nics();

  SharedHardware hw_;
  std::vector<int> pool_of_;                         // per device, -1: own compute
  std::vector<std::vector<std::uint32_t>> members_;  // per pool: running compute activities
  std::vector<std::vector<std::uint32_t>> queued_;   // per pool: ops waiting for a core, oldest first
  std::vector<LazyPool> lazy_;                       // per pool
  std::vector<char> is_lazy_;                        // per pool: kept lazily
  std::vector<std::int32_t> computing_;              // per device: its compute activity, or -1
  std::vector<std::vector<std::uint32_t>> wires_;    // per device: transfers it sends or receives, its collectives
  std::vector<std::uint32_t> flows_;                 // transfers and collectives between nodes, by start
  std::vector<double> nic_share_;                    // per activity: its max-min share (flows)
  std::vector<Activity> acts_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> affected_;
  std::vector<Finish> changes_;
  bool overlap_ = false;
  int nodes_ = 0;  // distinct nodes of node_of_device (0: no node table)
};

}  // namespace pipesim
