// The device worker: one thread running one device's op list in order (executor.hpp).
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/thread_cpu_clock.hpp"
#include "executor/run_state.hpp"
#include "sim/versions.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

// Weight versions of one replica as the executor drives them: which version each op
// uses (weight_version_used, sim/versions.hpp: the engine's rule) and which older versions
// the backend must keep a real copy of, because ops still to run will use them.
//   Current  every op uses the current version; nothing is kept
//   Stash    F uses the current version and pins it until the micro-batch's weight
//            gradient (B or W) is done; I/W/B use their forward's version
//   TwoBW    every op of batch t uses version max(0, t-1); a version is pinned while ops
//            of its batch are still to run on this replica (counted from the op list)
struct ReplicaVersions {
  std::int32_t current = 0;
  std::map<std::int32_t, int> uses_left;  // pins per version
  std::set<std::int32_t> kept;            // versions the backend holds a copy of
  std::unordered_map<std::int32_t, std::int32_t> forward_version;  // micro-batch -> version its F used
};

class Worker {
 public:
  Worker(RunState& s, int device, ComputeBackend& backend, WorkerStatus& status, DeviceLog& log)
      : s_(s), d_(device), backend_(backend), status_(status), log_(log),
        list_(s.schedule.ops[static_cast<std::size_t>(device)]), done_(list_.size(), false),
        mailbox_(static_cast<std::size_t>(s.schedule.num_devices)) {
    for (const auto& [pipeline, stage] : s.schedule.replicas_on(device)) {
      ReplicaVersions& v = versions_[{pipeline, stage}];
      if (s.schedule.weight_policy != WeightPolicy::TwoBW) continue;
      for (const Op& op : list_)
        if (is_microbatch_op(op.kind) && op.pipeline == pipeline && op.stage == stage)
          ++v.uses_left[two_bw_version(s.schedule, op)];
    }
    log_.peak_weight_versions = backend.versions_held();
    for (const auto& [pipeline, stage] : s.schedule.replicas_on(device)) snapshot(pipeline, stage, 0, 0);
  }

  void run() {
    const double cpu = thread_cpu_seconds();
    for (std::size_t i = 0; i < list_.size(); ++i) {
      if (s_.stop.load()) throw ChannelAborted();  // torn down: start nothing new
      status_.index.store(static_cast<int>(i));
      status_.phase.store(static_cast<int>(Phase::Running));
      run_op(static_cast<int>(i));
      s_.progress.fetch_add(1);
    }
    log_.cpu.total_s = thread_cpu_seconds() - cpu;
    status_.phase.store(static_cast<int>(Phase::Done));
  }

 private:
  GraphId id_of(int index) const { return s_.graph.id_of(d_, index); }

  void run_op(int index) {
    const GraphId id = id_of(index);
    const Op& op = list_[static_cast<std::size_t>(index)];
    // Inputs produced on this device ran earlier in the list, or the schedule is wrong.
    for (const GraphId p : s_.graph.preds_of(id)) {
      if (s_.graph.device_of(p) == d_ && !done_[static_cast<std::size_t>(s_.graph.index_of(p))])
        throw InputError("needs " + to_string(s_.op_of(p)) + ", which comes later on the same device");
    }
    std::unique_ptr<Payload> input;
    if (const GraphId p = s_.data_pred[at(id)]; p != kNoOp) input = s_.graph.device_of(p) == d_ ? take_local(id) : receive(p);
    if (is_comm(op.kind)) {
      pass_on(id, index, op, std::move(input));
    } else if (op.kind == OpKind::GradSync) {
      grad_sync(id, op);
    } else if (op.kind == OpKind::OptStep) {
      optimizer_step(id, index, op);
    } else {
      microbatch_op(id, index, op, input.get());
    }
    done_[static_cast<std::size_t>(index)] = true;
  }

  std::unique_ptr<Payload> take_local(GraphId id) {
    auto it = local_.find(id);
    PIPESIM_ASSERT(it != local_.end());
    std::unique_ptr<Payload> p = std::move(it->second);
    local_.erase(it);
    return p;
  }

  // The message `producer` sent to this device: from the mailbox, or from the link's
  // channel (keeping whatever else arrives first for later ops).
  std::unique_ptr<Payload> receive(GraphId producer) {
    const int src = s_.graph.device_of(producer);
    auto& box = mailbox_[static_cast<std::size_t>(src)];
    if (auto it = box.find(producer); it != box.end()) {
      std::unique_ptr<Payload> p = std::move(it->second);
      box.erase(it);
      return p;
    }
    status_.waiting_on.store(producer);
    status_.phase.store(static_cast<int>(Phase::WaitInput));
    Channel<Message>& channel = s_.channel(src, d_);
    for (;;) {
      std::optional<Message> m = channel.pop();
      if (!m) throw ChannelAborted();
      s_.progress.fetch_add(1);
      if (m->from == producer) {
        status_.phase.store(static_cast<int>(Phase::Running));
        return std::move(m->payload);
      }
      box.emplace(m->from, std::move(m->payload));
    }
  }

  ReplicaVersions& versions(const Op& op) {
    auto it = versions_.find({op.pipeline, op.stage});
    PIPESIM_ASSERT(it != versions_.end());
    return it->second;
  }

  // The version `op` uses: sim/versions.hpp's rule, with its forward's version from here.
  std::int32_t version_for(const Op& op, ReplicaVersions& v) const {
    std::int32_t forward = -1;
    if (s_.schedule.weight_policy == WeightPolicy::Stash && op.kind != OpKind::F) {
      auto it = v.forward_version.find(op.microbatch);
      if (it == v.forward_version.end()) throw InputError("runs before its forward");
      forward = it->second;
    }
    return weight_version_used(s_.schedule, op, v.current, forward);
  }

  void release(const Op& op, ReplicaVersions& v, std::int32_t version) {
    auto it = v.uses_left.find(version);
    PIPESIM_ASSERT(it != v.uses_left.end() && it->second > 0);
    if (--it->second > 0) return;
    v.uses_left.erase(it);
    if (v.kept.erase(version)) backend_.drop_version(op.pipeline, op.stage, version);
  }

  void microbatch_op(GraphId id, int index, const Op& op, const Payload* input) {
    ReplicaVersions& v = versions(op);
    const OpArgs args{op, version_for(op, v)};
    double loss = 0;
    bool has_loss = false;
    const double cpu = thread_cpu_seconds();
    const Tick start = s_.now();
    std::unique_ptr<Payload> out;
    switch (op.kind) {
      case OpKind::F:
        out = backend_.forward(args, input, &loss);
        has_loss = op.stage == s_.schedule.num_stages - 1;
        break;
      case OpKind::I: out = backend_.backward_input(args, input); break;
      case OpKind::W: backend_.backward_weight(args); break;
      case OpKind::B: out = backend_.backward(args, input); break;
      default: PIPESIM_ASSERT(false);
    }
    const Tick end = s_.now();
    log_.cpu.ops_s += thread_cpu_seconds() - cpu;
    // Versions: pin what later ops of this micro-batch need, release what they no longer do.
    const WeightPolicy policy = s_.schedule.weight_policy;
    if (policy == WeightPolicy::Stash) {
      if (op.kind == OpKind::F) {
        v.forward_version[op.microbatch] = args.version;
        ++v.uses_left[args.version];
      } else if (computes_weight_gradient(op.kind)) {
        v.forward_version.erase(op.microbatch);
        release(op, v, args.version);
      }
    } else if (policy == WeightPolicy::TwoBW) {
      release(op, v, args.version);
    }
    log_.ops.push_back(OpRecord{OpRef{d_, index}, op, start, end, args.version});
    if (has_loss)
      log_.losses.push_back(LossRecord{op.microbatch, op.pipeline, s_.schedule.iteration_of(op.microbatch), loss, end});
    record_memory(end);
    send(id, end, std::move(out));
  }

  // A send hands the message on to the receiving device when the worker reaches it; a
  // receive has waited for it above (run_op's receive), and hands it to its consumer here.
  void pass_on(GraphId id, int index, const Op& op, std::unique_ptr<Payload> message) {
    const Tick at = s_.now();
    log_.ops.push_back(OpRecord{OpRef{d_, index}, op, at, at, -1});
    send(id, at, std::move(message));
  }

  void record_memory(Tick at) {
    const std::int64_t bytes = backend_.activation_bytes();
    const int count = backend_.activations_held();
    if (bytes == last_bytes_ && count == last_count_) return;
    last_bytes_ = bytes;
    last_count_ = count;
    log_.memory.push_back(MemoryRecord{d_, at, bytes, count});
  }

  // Hands the op's output to its consumers: moved within the device, copied across.
  void send(GraphId id, Tick ready, std::unique_ptr<Payload> out) {
    const auto& consumers = s_.data_succ[at(id)];
    if (consumers.empty()) return;
    if (!out) throw InputError("produced no output for " + to_string(s_.op_of(consumers.front())));
    for (std::size_t k = 0; k < consumers.size(); ++k) {
      const GraphId to = consumers[k];
      const int dst = s_.graph.device_of(to);
      const bool last = k + 1 == consumers.size();
      if (dst == d_) {
        local_[to] = last ? std::move(out) : backend_.copy_for_send(*out);
        continue;
      }
      TransferRecord r;
      r.from = s_.ref_of(id);
      r.to = s_.ref_of(to);
      r.ready = ready;
      r.link_start = s_.now();
      Message m{id, to, backend_.copy_for_send(*out)};
      r.bytes = m.payload->bytes();
      r.link_end = s_.now();
      status_.send_to.store(dst);
      status_.phase.store(static_cast<int>(Phase::Sending));
      s_.channel(d_, dst).push(std::move(m), [&] { r.arrival = s_.now(); });
      status_.phase.store(static_cast<int>(Phase::Running));
      s_.progress.fetch_add(1);
      log_.transfers.push_back(r);
    }
  }

  // A copy of this replica's gradient goes to the collective; the last participant to
  // arrive sums the copies in member order (on its backend: the device's memory). Waits for
  // the result only if the schedule says the sync blocks.
  void grad_sync(GraphId id, const Op& op) {
    Collective& c = *s_.collectives[static_cast<std::size_t>(s_.graph.collective_of[at(id)])];
    const std::size_t pos = c.position(id);
    const Tick began = s_.now();
    const double cpu = thread_cpu_seconds();
    std::unique_ptr<GradientBuffer> mine = backend_.export_gradients(op.pipeline, op.stage);
    const Tick exported = s_.now();
    log_.cpu.copies_s += thread_cpu_seconds() - cpu;
    {
      std::unique_lock lock(c.mutex);
      c.began[pos] = began;
      c.copied_out[pos] = exported - began;
      c.parts[pos] = std::move(mine);
      if (++c.arrived == static_cast<int>(c.members.size())) {
        c.start = s_.now();
        std::unique_ptr<GradientBuffer> sum = std::move(c.parts.front());
        for (std::size_t k = 1; k < c.parts.size(); ++k) {
          const GradientBuffer& part = *c.parts[k];
          if (part.size() != sum->size())
            throw InputError("GradSync: the replicas' gradients differ in size (" + std::to_string(part.size()) +
                             " vs " + std::to_string(sum->size()) + " numbers)");
          backend_.add_gradients(*sum, part);
          sum->contributions += part.contributions;
          c.parts[k].reset();  // the copies are not needed any more
        }
        c.bytes = sum->size() * 4;
        c.reduced = std::move(sum);
        c.end = s_.now();
        c.done = true;
        lock.unlock();
        c.cv.notify_all();
      }
    }
    if (s_.schedule.blocking_grad_sync) wait_collective(id, c);
  }

  void wait_collective(GraphId sync, Collective& c) {
    status_.waiting_on.store(sync);
    status_.phase.store(static_cast<int>(Phase::WaitCollective));
    std::unique_lock lock(c.mutex);
    c.cv.wait(lock, [&] { return c.done || s_.stop.load(); });
    if (!c.done) throw ChannelAborted();
    status_.phase.store(static_cast<int>(Phase::Running));
  }

  void optimizer_step(GraphId id, int index, const Op& op) {
    // The GradSync this OptStep follows, if any (dependencies.hpp lists it as the pred).
    Collective* sync = nullptr;
    GraphId sync_id = kNoOp;
    for (const GraphId p : s_.graph.preds_of(id)) {
      if (s_.op_of(p).kind == OpKind::GradSync) {
        sync_id = p;
        sync = s_.collectives[static_cast<std::size_t>(s_.graph.collective_of[at(p)])].get();
      }
    }
    if (sync) wait_collective(sync_id, *sync);
    ReplicaVersions& v = versions(op);
    if (sync) {  // the sum copied in: the end of this member's GradSync
      const Tick importing = s_.now();
      const double copy_cpu = thread_cpu_seconds();
      backend_.import_gradients(op.pipeline, op.stage, *sync->reduced);  // read-only once done
      const Tick copied = s_.now();
      log_.cpu.copies_s += thread_cpu_seconds() - copy_cpu;
      std::lock_guard lock(sync->mutex);
      sync->finished[sync->position(sync_id)] = copied;
      sync->copied_in[sync->position(sync_id)] = copied - importing;
      if (++sync->imported == static_cast<int>(sync->members.size())) sync->reduced.reset();
    }
    const double cpu = thread_cpu_seconds();
    const Tick start = s_.now();
    if (v.uses_left.count(v.current)) {
      backend_.keep_version(op.pipeline, op.stage);
      v.kept.insert(v.current);
    }
    backend_.optimizer_step(op.pipeline, op.stage);
    ++v.current;
    const Tick end = s_.now();
    log_.cpu.ops_s += thread_cpu_seconds() - cpu;
    log_.peak_weight_versions = std::max(log_.peak_weight_versions, static_cast<std::int32_t>(backend_.versions_held()));
    log_.ops.push_back(OpRecord{OpRef{d_, index}, op, start, end, -1});
    snapshot(op.pipeline, op.stage, v.current, end);
  }

  // Pipeline 0's weights at a validation point (every validate_every iterations' steps),
  // copied for evaluation after the run.
  void snapshot(int pipeline, int stage, std::int32_t version, Tick at) {
    if (s_.options.validate_every <= 0 || pipeline != 0) return;
    const int steps = s_.steps_per_iteration[static_cast<std::size_t>(stage)];
    if (version % (steps * s_.options.validate_every) != 0) return;
    log_.snapshots.push_back(WeightSnapshot{stage, version / steps, at, backend_.flat_weights(pipeline, stage)});
  }

  RunState& s_;
  const int d_;
  ComputeBackend& backend_;
  WorkerStatus& status_;
  DeviceLog& log_;
  const std::vector<Op>& list_;
  std::vector<bool> done_;
  std::vector<std::map<GraphId, std::unique_ptr<Payload>>> mailbox_;  // by source device
  std::unordered_map<GraphId, std::unique_ptr<Payload>> local_;        // by consuming op
  std::map<std::pair<int, int>, ReplicaVersions> versions_;
  std::int64_t last_bytes_ = 0;
  int last_count_ = 0;
};

}  // namespace

void RunState::report_fault(Fault f) {
  {
    std::lock_guard lock(mutex);
    if (!fault) fault = std::move(f);
  }
  cv.notify_all();
}

void RunState::abort_all() {
  stop.store(true);
  for (auto& c : channels)
    if (c) c->abort();
  for (auto& c : collectives) {
    { std::lock_guard lock(c->mutex); }  // a waiter either sees stop or is already waiting
    c->cv.notify_all();
  }
}

void run_worker(RunState& state, int device, ComputeBackend& backend, WorkerStatus& status, DeviceLog& log) {
  const auto& list = state.schedule.ops[static_cast<std::size_t>(device)];
  {
    std::lock_guard lock(state.mutex);
    ++state.started;
  }
  state.cv.notify_all();
  try {
    Worker(state, device, backend, status, log).run();
  } catch (const ChannelAborted&) {
    status.phase.store(static_cast<int>(Phase::Failed));  // torn down because of a fault elsewhere
  } catch (const std::exception& e) {
    status.phase.store(static_cast<int>(Phase::Failed));
    const int index = status.index.load();
    const std::string op = index >= 0 && static_cast<std::size_t>(index) < list.size()
                               ? to_string(list[static_cast<std::size_t>(index)])
                               : std::string("?");
    state.report_fault(Fault{device, index, "device " + std::to_string(device) + " op " + std::to_string(index) + " (" +
                                                op + "): " + e.what()});
  } catch (...) {
    status.phase.store(static_cast<int>(Phase::Failed));
    state.report_fault(Fault{device, status.index.load(),
                             "device " + std::to_string(device) + " op " + std::to_string(status.index.load()) +
                                 ": unknown exception"});
  }
  {
    std::lock_guard lock(state.mutex);
    ++state.finished;
  }
  state.cv.notify_all();
}

}  // namespace pipesim
