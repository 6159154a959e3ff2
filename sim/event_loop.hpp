#pragma once
// EventLoop: one run of the engine's event loop (sim/engine.hpp has the rules it keeps), for
// every schedule the ready pass (sim/ready_pass.hpp) does not take. The class and its state
// are here; its member functions are defined one concept per file, so that an op is found by
// the file named after what it does:
//
//   sim/event_loop.cpp              the run: setup, the loop, compute ops start and finish
//                                   (try_start, start_ops, handle(OpFinish)), the results
//   sim/event_loop_transfers.cpp    an op's end releasing its successors, messages on links
//                                   (send, handle(TransferArrive)), SEND/RECV ops (run_comm)
//   sim/event_loop_collectives.cpp  GradSync: a member's own work (start_sync_work,
//                                   handle(SyncWorkFinish)), collectives (arrive_collective,
//                                   handle(CollectiveFinish)), the members' sums at a tick's
//                                   end (handle(TickEnd), end_tick)
//   sim/event_loop_shared.cpp       shared hardware (sim/resources.hpp): compute and transfers
//                                   as Sharing activities (handle(ActivityFinish))
//   sim/event_loop_problems.cpp     a schedule that cannot run: its dependency problems, or
//                                   the deadlock, said in one InputError
//
// All per-op state lives in a SlotTable (sim/slots.hpp), filled straight from the
// dependency rules; the dependency graph (build_dependencies) is built only to explain a
// broken schedule or a deadlock.
//
// Performance: the hot path of a run without sharing (the loop, handle(OpFinish) and
// start_ops; release_successors and send; handle(TransferArrive)) is in the first two files,
// with the functions that must be inlined declared `inline` here and defined in the one file
// that calls them. Calls across the files are to functions that were out of line before
// (docs/performance.md).
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "schedules/dependencies.hpp"
#include "schedules/op_numbering.hpp"
#include "schedules/schedule.hpp"
#include "sim/activation_account.hpp"
#include "sim/buffer.hpp"
#include "sim/engine.hpp"
#include "sim/event_queue.hpp"
#include "sim/events.hpp"
#include "sim/observer.hpp"
#include "sim/resources.hpp"
#include "sim/sharing.hpp"
#include "sim/slots.hpp"
#include "sim/versions.hpp"

namespace pipesim {

// What a Simulator keeps between runs of the event loop: the slots, and the schedule's ops
// in slot order. With reuse_walks, also the last schedule it walked, its slots as the walk
// filled them and the walk's links: a run of an equal schedule starts from copies of those.
struct EventLoopBuffers {
  Buffer<Slot> slots;
  Buffer<Op> ops;
  bool reuse_walks = false;
  std::optional<Schedule> walked;
  std::vector<Slot> filled;
  SlotTable::Links links;
};

class EventLoop {
 public:
  EventLoop(const Schedule& schedule, const CostModel& costs, SimObserver* observer, const SimProgress* progress,
            const SharedHardware* hardware, EventLoopBuffers& buffers);

  // The event loop: each event (sim/events.hpp) goes to its handler, handle(), at its time.
  SimResult run();

 private:
  // Per device: where it is in its list, and its statistics (copied to SimResult at the end).
  struct DeviceState {
    std::uint32_t next = 0;      // index of the next op to start
    std::uint32_t size = 0;      // ops in its list
    SlotId base = kNoSlot;       // its first op's slot (slot_at)
    bool busy = false;           // a compute op is running
    // What holds it from starting its next op, besides a running one: kBlocked, waiting on a
    // blocking collective; kPaused (CollectiveStyle::MemberThreads), it reached a collective at
    // this tick and starts nothing before the tick's end (end_tick), where the collectives that
    // all their members reached are summed. One byte, so that try_start tests one field.
    std::uint8_t held = 0;
    bool started = false;
    Tick free_at = 0;            // end of the last compute op
    SlotId last_compute = kNoSlot;  // for the critical path
    Tick comm_free_at = 0;       // the communication stream (collectives)
    bool comm_busy = false;      // shared hardware with overlap: a collective runs on it
    ActivationAccount memory;
    Tick busy_time = 0, first_start = 0, last_end = 0;
    Tick host_work = 0;          // its thread's own work after the op that just ended (start_host_work)
    Tick host_since = 0;         // when the work that holds it now began (HostWorkRecord)
    // CostModel::CollectiveStyle::MemberThreads: the collective whose sum its thread makes as
    // its host work now (start_member_sum); -1: none.
    std::int32_t summing = -1;
    // MemberThreads: its thread sleeps until the sum wakes it (the hand-off link's latency, on
    // no core), then copies the sum in (finish_host_work).
    bool waking = false;
  };
  static constexpr std::uint8_t kBlocked = 1, kPaused = 2;  // DeviceState::held
  struct CollectiveState {
    int arrived = 0;
    Tick start = 0;
    SlotId last_arrival = kNoSlot;
  };
  // A transfer on a shared link (Sharing::shares_link): FIFO behind the link's earlier
  // transfers, then on the wire as an activity whose rate the NICs it crosses (and the
  // compute it overlaps) decide; its latency follows once its last byte is out.
  struct WireTransfer {
    SlotId from, to;
    int src, dst;
    Tick ready, link_start;
    Tick occupancy, latency;
    std::int64_t bytes;
  };
  struct SharedLink {
    bool busy = false;
    std::deque<std::uint32_t> waiting;  // indices into wire_
  };

  int device_of(SlotId slot) const { return layout_.device_of(slot); }
  // The directed link (src, dst) as an index: link_free_'s, and the shared links' key.
  std::size_t link_index(int src, int dst) const {
    return static_cast<std::size_t>(src) * static_cast<std::size_t>(s_.num_devices) + static_cast<std::size_t>(dst);
  }
  OpRef ref_of(SlotId slot) const {
    const int d = device_of(slot);
    return OpRef{d, static_cast<int>(layout_.index_of(slot, d))};
  }
  // The slot of op `index` of the device whose first op is `base`.
  SlotId slot_at(SlotId base, std::uint32_t index) const { return layout_.id_from(base, index); }
  const Op& op_of(SlotId slot) const { return ops_[at(slot)]; }
  const Op* in_id_order(Op* ops) const {
    layout_.copy_in_id_order(s_, ops);
    return ops;
  }
  void init_state();

  // ---- compute ops: start and finish (sim/event_loop.cpp) --------------------------------
  // Starts as many ops on device d as its order and dependencies allow at time now_.
  // Performance: about half the calls find the device busy or its next op waiting; that
  // test is inline, the loop is not.
  void try_start(int d, Tick now) {
    const DeviceState& dev = dev_[static_cast<std::size_t>(d)];
    if (dev.busy || dev.held || dev.next >= dev.size) return;
    if (const Slot& next = slots_[slot_at(dev.base, dev.next)]; next.pending > 0 && !is_recv(next.kind)) return;
    start_ops(d, now);
  }
  void start_ops(int d, Tick now);
  inline void change_memory(int d, const Op& op, Tick now);
  inline void handle(const OpFinish& e);
  void finish_compute(SlotId id);  // handle(OpFinish), out of line, for the shared path
  void report_progress();
  std::vector<OpRef> critical_path() const;

  // ---- an op's end and messages between devices (sim/event_loop_transfers.cpp) -----------
  void release_successors(SlotId id, int d);
  // One input of `to` has arrived, from `from`, at `when`.
  void satisfy(SlotId to, SlotId from, Tick when) {
    Slot& st = slots_[to];
    PIPESIM_ASSERT(st.pending > 0);
    --st.pending;
    if (st.cause == kNoSlot || when > st.released) {
      st.released = when;
      st.cause = from;
    }
  }
  inline void send(SlotId from, SlotId to, int src, int dst, const Op& producer);
  // A hand-off between threads (TransferCost::hand_off): adds the sender's part to device
  // src's host_work and returns the latency the message takes to `to` on device dst.
  Tick hand_off(int src, int dst, SlotId to, const TransferCost& cost);
  // Device d's thread does its own work before its next op (dev.host_work: its hand-offs'
  // sender parts, and the executor's work between two ops, CostModel::between_ops): busy that
  // long, on its pool's cores where it has one, as no op's busy time (handle(HostWorkFinish)).
  void start_host_work(int d);
  // Host work's activity on shared hardware carries this bit and its device as its payload
  // (slots are fewer than 2^31).
  static constexpr std::uint32_t kHostWorkPayload = 0x80000000u;
  void handle(const HostWorkFinish& e);
  void finish_host_work(int d);
  std::uint32_t keep_record(const TransferRecord& r);
  void handle(const TransferArrive& e);
  void run_comm(SlotId id, int d);
  void offer_to_recv(SlotId from, SlotId to, int src, int dst);
  void start_transfer(SlotId from, SlotId to, int src, int dst);

  // ---- GradSync collectives (sim/event_loop_collectives.cpp) ------------------------------
  // A GradSync member's own work (CostModel::grad_sync_work) on its device, then the
  // collective; join_collective: the member arrives (and blocks, if the schedule says so).
  void start_sync_work(SlotId id, int d, Tick work, Tick now);
  void handle(const SyncWorkFinish& e);
  void finish_sync_work(SlotId id, int d);
  void join_collective(SlotId id, int d, Tick now);
  void arrive_collective(SlotId id, Tick now);
  // MemberThreads: the last member to arrive sums the copies on its device, as host work.
  void start_member_sum(std::uint32_t c);
  // MemberThreads, once every event of this tick is handled: the collectives whose members all
  // arrived are summed (in collective order), then the devices that arrived start again (in
  // device order). Which member sums, and what each device does next, then depends on the
  // tick's events and not on the order the queue gave them (a shared pool's finishes come in
  // another order than the fast path's).
  void end_tick();
  void handle(const TickEnd&);
  void copy_sums_in(std::uint32_t c);
  void start_ready_collectives();
  void handle(const CollectiveFinish& e);

  // ---- shared hardware (sim/event_loop_shared.cpp) ----------------------------------------
  void send_shared(const WireTransfer& t, std::size_t pair);
  void put_on_wire(std::uint32_t index);
  void push_changes();
  void handle(const ActivityFinish& e);

  // ---- a schedule that cannot run (sim/event_loop_problems.cpp) ---------------------------
  void check_complete() const;
  [[noreturn]] void explain_deadlock() const;
  [[noreturn]] void throw_problems() const;

  const Schedule& s_;
  const CostModel& costs_;
  SimObserver* observer_;
  const std::uint8_t wants_;  // the records observer_ reads (SimObserver::wants); 0 without one
  // Ops ended (on_op's count) and when to call progress_ next (never without one).
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  const SimProgress* progress_;
  std::uint64_t ops_done_ = 0;
  std::uint64_t next_report_;
  const OpScale scale_;
  const Tick between_ops_;  // CostModel::between_ops, asked once
  const bool member_sums_;  // CostModel::collective_style() is MemberThreads, asked once
  const SlotNumbering layout_;  // op -> slot
  const bool walked_;           // the Simulator's last walk was of an equal schedule: copied
  const Op* const ops_;         // the schedule's ops, by slot
  VersionTracker versions_;
  std::vector<DependencyProblem> problems_;  // found while filling the slots: not runnable
  SlotTable slots_;
  std::vector<DeviceState> dev_;
  // Free time of each directed link: a dense devices x devices table up to
  // kDenseLinkDevices devices (32 MiB); beyond, a map of the pairs that talk (a file with
  // 100000 device rows must not ask for 80 GB).
  static constexpr int kDenseLinkDevices = 2048;
  std::vector<Tick> link_free_;
  std::unordered_map<std::size_t, Tick> sparse_link_free_;
  std::vector<CollectiveState> collectives_;
  // Shared hardware (sim/resources.hpp), when something is shared: the activities, the
  // transfers on shared links and the links' FIFOs.
  std::optional<Sharing> sharing_;
  std::vector<WireTransfer> wire_;
  std::vector<std::uint32_t> free_wire_;
  std::unordered_map<std::size_t, SharedLink> shared_links_;
  std::vector<std::uint32_t> ready_collectives_;  // all arrived, waiting for comm streams
  // MemberThreads: the devices that arrived at a collective this tick, the collectives that
  // all their members reached (end_tick), and the paused devices end_tick starts again.
  std::vector<int> paused_, restart_;
  std::vector<std::uint32_t> completed_;
  // Records of transfers in flight, for the observer (TransferArrive::record); free ones.
  std::vector<TransferRecord> in_flight_;
  std::vector<std::uint32_t> free_records_;
  EventQueue queue_;
  Tick now_ = 0;
  SimResult result_;
};

}  // namespace pipesim
