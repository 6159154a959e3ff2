#include "executor/measure.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "sim/versions.hpp"

namespace pipesim {
namespace {

std::uint64_t edge_key(GraphId from, GraphId to) { return (std::uint64_t{at(from)} << 32) | at(to); }

// The staleness VersionTracker derives from the measured order, checking on the way that
// its versions are the ones the backend used.
std::vector<StageStaleness> replay_versions(const Schedule& s, const std::vector<std::vector<OpRecord>>& all) {
  // GradSync changes no version (and ends with its collective, after later ops started).
  std::vector<std::vector<OpRecord>> per_device(all.size());
  for (std::size_t d = 0; d < all.size(); ++d)
    for (const OpRecord& r : all[d])
      if (r.op.kind != OpKind::GradSync) per_device[d].push_back(r);
  VersionTracker tracker(s);
  std::map<std::tuple<int, int, int>, std::int32_t> forward_version;  // (pipeline, stage, mb)
  struct Cursor {
    std::size_t op = 0;
    bool started = false;  // the op's start has been replayed, its end not yet
  };
  std::vector<Cursor> at(per_device.size());
  auto next_time = [&](std::size_t d) {
    const OpRecord& r = per_device[d][at[d].op];
    return at[d].started ? r.end : r.start;
  };
  using Entry = std::pair<Tick, std::size_t>;  // (time, device): ties go to the lower device
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  for (std::size_t d = 0; d < per_device.size(); ++d)
    if (!per_device[d].empty()) queue.push({next_time(d), d});
  while (!queue.empty()) {
    const std::size_t d = queue.top().second;
    queue.pop();
    Cursor& c = at[d];
    const OpRecord& r = per_device[d][c.op];
    const Op& op = r.op;
    const auto key = std::tuple{op.pipeline, op.stage, op.microbatch};
    const bool micro = is_microbatch_op(op.kind);
    if (!c.started) {
      if (micro) {
        auto f = forward_version.find(key);
        const std::int32_t v = tracker.start(op, f == forward_version.end() ? -1 : f->second);
        PIPESIM_ASSERT(v == r.weight_version);  // the rules and the backend agree
        if (op.kind == OpKind::F) forward_version[key] = v;
      }
      c.started = true;
    } else {
      if (micro || op.kind == OpKind::OptStep) {
        auto f = forward_version.find(key);
        tracker.end(op, r.weight_version, f == forward_version.end() ? r.weight_version : f->second, static_cast<int>(d));
      }
      c.started = false;
      ++c.op;
    }
    if (c.op < per_device[d].size()) queue.push({next_time(d), d});
  }
  return tracker.staleness();
}

}  // namespace

void assemble_measurement(const Schedule& s, const DependencyGraph& g, std::vector<DeviceLog>& logs,
                          const std::vector<std::unique_ptr<Collective>>& collectives, Timeline& timeline,
                          SimResult& result) {
  const std::size_t devices = logs.size();
  // Every finished op by device in list order, GradSync included: from before the member
  // copied its gradient out to after it copied the sum back in (the collective's end, or
  // later: the copy in is at its OptStep), the work the engine's allreduce stands for.
  std::vector<std::vector<OpRecord>> per_device(devices);
  for (std::size_t d = 0; d < devices; ++d) per_device[d] = logs[d].ops;
  for (const auto& c : collectives) {
    if (!c->done) continue;
    CollectiveRecord cr;
    cr.start = c->start;
    cr.end = c->end;
    cr.bytes = c->bytes;
    for (std::size_t k = 0; k < c->members.size(); ++k) {
      const GraphId m = c->members[k];
      const OpRef ref{g.device_of(m), g.index_of(m)};
      cr.participants.push_back(ref);
      const Op& op = s.ops[static_cast<std::size_t>(ref.device)][static_cast<std::size_t>(ref.index)];
      per_device[static_cast<std::size_t>(ref.device)].push_back(
          OpRecord{ref, op, c->began[k], std::max(c->end, c->finished[k]), -1});
    }
    timeline.collectives.push_back(std::move(cr));
  }
  for (auto& list : per_device)
    std::sort(list.begin(), list.end(), [](const OpRecord& a, const OpRecord& b) { return a.ref.index < b.ref.index; });

  // The timeline, sorted like the engine emits it.
  for (const auto& list : per_device) timeline.ops.insert(timeline.ops.end(), list.begin(), list.end());
  std::stable_sort(timeline.ops.begin(), timeline.ops.end(), [](const OpRecord& a, const OpRecord& b) {
    return std::tie(a.end, a.ref.device, a.ref.index) < std::tie(b.end, b.ref.device, b.ref.index);
  });
  for (auto& log : logs) {
    timeline.transfers.insert(timeline.transfers.end(), log.transfers.begin(), log.transfers.end());
    timeline.memory.insert(timeline.memory.end(), log.memory.begin(), log.memory.end());
  }
  std::stable_sort(timeline.transfers.begin(), timeline.transfers.end(),
                   [](const TransferRecord& a, const TransferRecord& b) { return a.arrival < b.arrival; });
  std::stable_sort(timeline.memory.begin(), timeline.memory.end(),
                   [](const MemoryRecord& a, const MemoryRecord& b) { return a.time < b.time; });
  std::stable_sort(timeline.collectives.begin(), timeline.collectives.end(),
                   [](const CollectiveRecord& a, const CollectiveRecord& b) { return a.end < b.end; });

  // Per-device statistics.
  result.devices.assign(devices, DeviceStats{});
  result.iteration_end.assign(static_cast<std::size_t>(std::max(1, s.iterations)), 0);
  for (std::size_t d = 0; d < devices; ++d) {
    DeviceStats& st = result.devices[d];
    bool first = true;
    for (const OpRecord& r : per_device[d]) {
      result.makespan = std::max(result.makespan, r.end);
      if (!is_compute(r.op.kind)) continue;
      st.busy += r.end - r.start;
      if (first) st.first_start = r.start;
      first = false;
      st.last_end = std::max(st.last_end, r.end);
      if (is_microbatch_op(r.op.kind)) {
        const auto t = static_cast<std::size_t>(s.iteration_of(r.op.microbatch));
        if (t >= result.iteration_end.size()) result.iteration_end.resize(t + 1, 0);
        result.iteration_end[t] = std::max(result.iteration_end[t], r.end);
      }
    }
    for (const MemoryRecord& m : logs[d].memory) {
      st.peak_activations = std::max(st.peak_activations, m.activations);
      st.peak_activation_bytes = std::max(st.peak_activation_bytes, m.bytes);
    }
    st.final_activation_bytes = logs[d].memory.empty() ? 0 : logs[d].memory.back().bytes;
    st.peak_weight_versions = logs[d].peak_weight_versions;
  }
  for (const auto& c : timeline.collectives) result.makespan = std::max(result.makespan, c.end);

  // Critical path.
  const std::size_t n = g.size();
  std::vector<const OpRecord*> rec(n, nullptr);
  for (const auto& list : per_device)
    for (const OpRecord& r : list) rec[at(g.id_of(r.ref.device, r.ref.index))] = &r;
  std::unordered_map<std::uint64_t, Tick> arrival;
  for (const auto& t : timeline.transfers)
    arrival[edge_key(g.id_of(t.from.device, t.from.index), g.id_of(t.to.device, t.to.index))] = t.arrival;
  std::vector<GraphId> prev_compute(n, kNoOp);  // the device's compute op before each op
  for (const auto& list : per_device) {
    GraphId prev = kNoOp;
    for (const OpRecord& r : list) {
      const GraphId id = g.id_of(r.ref.device, r.ref.index);
      prev_compute[at(id)] = prev;
      if (is_compute(r.op.kind)) prev = id;
    }
  }
  auto cause_of = [&](GraphId id) -> GraphId {
    const OpRecord& r = *rec[at(id)];
    const GraphId prev = prev_compute[at(id)];
    if (r.op.kind == OpKind::GradSync) {
      const auto c = static_cast<std::size_t>(g.collective_of[at(id)]);
      GraphId last = id;
      for (GraphId m : g.collectives[c])
        if (rec[at(m)] && rec[at(m)]->start > rec[at(last)]->start) last = m;
      return last == id ? prev : last;
    }
    GraphId best = kNoOp;
    Tick best_at = -1;
    for (const GraphId p : g.preds_of(id)) {
      if (!rec[at(p)]) continue;
      Tick ready = rec[at(p)]->end;
      if (auto it = arrival.find(edge_key(p, id)); it != arrival.end()) ready = it->second;
      if (ready > best_at) {
        best_at = ready;
        best = p;
      }
    }
    if (prev != kNoOp && (best == kNoOp || rec[at(prev)]->end >= best_at)) return prev;
    return best;
  };
  GraphId last = kNoOp;
  for (const auto& list : per_device)
    for (const OpRecord& r : list)
      if (is_compute(r.op.kind) && (last == kNoOp || r.end > rec[at(last)]->end)) last = g.id_of(r.ref.device, r.ref.index);
  for (GraphId id = last; id != kNoOp && result.critical_path.size() <= n; id = cause_of(id))
    result.critical_path.push_back(OpRef{g.device_of(id), g.index_of(id)});
  std::reverse(result.critical_path.begin(), result.critical_path.end());

  result.staleness = replay_versions(s, per_device);
}

}  // namespace pipesim
