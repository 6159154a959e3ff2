#include "sim/sharing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/error.hpp"

namespace pipesim {
namespace {

// now + `ns` (the work left times its factor), rounded up to the nanosecond: sub-nanosecond
// rounding of the products is not a nanosecond of work.
Tick end_after(Tick now, double ns) {
  const double left = std::ceil(ns - 1e-6);
  if (!(left < 9.2e18)) throw InputError("simulated time overflows 2^63 ns (292 years): the durations are too large");
  return now + static_cast<Tick>(std::max(0.0, left));
}

// Processor sharing: each of `busy` members of `pool` at min(1, cores / busy) of its speed.
double processor_share_factor(const ComputePool& pool, std::size_t busy) {
  return pool.cores > 0 ? std::max(1.0, static_cast<double>(busy) / pool.cores) : 1.0;
}

}  // namespace

Sharing::Sharing(const SharedHardware& hardware, int devices)
    : hw_(hardware), pool_of_(static_cast<std::size_t>(devices), -1), members_(hardware.pools.size()), queued_(hardware.pools.size()),
      computing_(static_cast<std::size_t>(devices), -1), wires_(static_cast<std::size_t>(devices)),
      overlap_(hardware.overlap_slowdown > 1) {
  hw_.check(devices);
  nodes_ = static_cast<int>(std::set<int>(hw_.node_of_device.begin(), hw_.node_of_device.end()).size());
  for (std::size_t p = 0; p < hw_.pools.size(); ++p)
    for (int d : hw_.pools[p].devices) pool_of_[static_cast<std::size_t>(d)] = static_cast<int>(p);
  lazy_.resize(hw_.pools.size());
  for (const ComputePool& pool : hw_.pools) {
    bool one_factor = !pool.queue && !overlap_;
    for (const auto& curve : pool.slowdown) one_factor = one_factor && curve.empty();
    is_lazy_.push_back(one_factor);
  }
}

double Sharing::pool_factor(int pool) const {
  return processor_share_factor(hw_.pools[static_cast<std::size_t>(pool)], members_[static_cast<std::size_t>(pool)].size());
}

// A member joins or leaves a lazy pool now: the clock advances at the old factor, the member
// is added to (or taken from) the ends, and the earliest member's finish is pushed again at
// the new factor (an earlier head's event goes stale).
void Sharing::lazy_change(int pool, Tick now, std::uint32_t id, bool joins) {
  LazyPool& l = lazy_[static_cast<std::size_t>(pool)];
  auto& members = members_[static_cast<std::size_t>(pool)];
  if (!members.empty()) l.clock += static_cast<double>(now - l.since) / pool_factor(pool);
  l.since = now;
  Activity& a = acts_[id];
  if (joins) {
    a.remaining = l.clock + a.remaining;  // a lazy member keeps its end on the clock
    members.push_back(id);
    l.ends.emplace(a.remaining, id);
  } else {
    members.erase(std::find(members.begin(), members.end(), id));
    l.ends.erase({a.remaining, id});
  }
  if (l.head != ~0u && (l.ends.empty() || l.ends.begin()->second != l.head)) ++acts_[l.head].generation;
  if (l.ends.empty()) {
    l.head = ~0u;
    return;
  }
  const auto [end, head] = *l.ends.begin();
  l.head = head;
  Activity& h = acts_[head];
  ++h.generation;
  changes_.push_back(Finish{head, h.generation, end_after(now, (end - l.clock) * pool_factor(pool))});
}

bool Sharing::shares_compute(int device) const {
  const auto d = static_cast<std::size_t>(device);
  return overlap_ || pool_of_[d] >= 0 || (!hw_.device_slowdown.empty() && hw_.device_slowdown[d] != 1);
}

bool Sharing::crosses_nodes(int src, int dst) const {
  const auto& node = hw_.node_of_device;
  return !node.empty() && node[static_cast<std::size_t>(src)] != node[static_cast<std::size_t>(dst)];
}

bool Sharing::shares_link(int src, int dst) const { return overlap_ || crosses_nodes(src, dst); }

std::uint32_t Sharing::add(Activity a) {
  a.active = true;
  std::uint32_t id = 0;
  if (free_.empty()) {
    id = static_cast<std::uint32_t>(acts_.size());
    acts_.push_back(a);
    nic_share_.push_back(1);
  } else {
    id = free_.back();
    free_.pop_back();
    a.generation = acts_[id].generation;  // generations never repeat for an id: old events stay stale
    acts_[id] = a;
  }
  return id;
}

std::uint32_t Sharing::start_compute(int device, OpKind kind, Tick work, Tick now, std::uint32_t payload) {
  PIPESIM_ASSERT(shares_compute(device) && computing_[static_cast<std::size_t>(device)] < 0);
  Activity a;
  a.pool = pool_of_[static_cast<std::size_t>(device)];
  // On a slower core, or a core that alternates between devices, the op's own work takes
  // longer; sharing rates apply to that.
  a.remaining = static_cast<double>(work) *
                (hw_.device_slowdown.empty() ? 1.0 : hw_.device_slowdown[static_cast<std::size_t>(device)]);
  if (a.pool >= 0)
    if (const ComputePool& pool = hw_.pools[static_cast<std::size_t>(a.pool)]; pool.takes_turns())
      a.remaining *= pool.turn_slowdown[static_cast<std::size_t>(kind)];
  a.since = now;
  a.kind = Kind::Compute;
  a.op_kind = kind;
  a.device = device;
  a.payload = payload;
  a.running_since = now;
  const std::uint32_t id = add(a);
  computing_[static_cast<std::size_t>(device)] = static_cast<std::int32_t>(id);
  if (a.pool >= 0) {
    const ComputePool& pool = hw_.pools[static_cast<std::size_t>(a.pool)];
    auto& running = members_[static_cast<std::size_t>(a.pool)];
    if (pool.queue && pool.cores > 0 && static_cast<double>(running.size()) + 1 > std::max(1.0, std::floor(pool.cores))) {
      acts_[id].queued = true;  // every core is taken: it waits, and nothing changes yet
      queued_[static_cast<std::size_t>(a.pool)].push_back(id);
      return id;
    }
    if (is_lazy_[static_cast<std::size_t>(a.pool)]) {
      lazy_change(a.pool, now, id, true);
      return id;
    }
    running.push_back(id);
  }
  affected_.assign(1, id);
  affected_by(acts_[id], id);
  rerate(now);
  return id;
}

std::uint32_t Sharing::start_transfer(int src, int dst, Tick work, Tick now, std::uint32_t payload) {
  PIPESIM_ASSERT(shares_link(src, dst));
  Activity a;
  a.remaining = static_cast<double>(work);
  a.since = now;
  a.kind = Kind::Transfer;
  a.device = src;
  a.peer = dst;
  a.payload = payload;
  if (crosses_nodes(src, dst))
    a.nics = {2 * hw_.node_of_device[static_cast<std::size_t>(src)], 2 * hw_.node_of_device[static_cast<std::size_t>(dst)] + 1};
  const bool flow = !a.nics.empty();
  const std::uint32_t id = add(std::move(a));
  if (flow) flows_.push_back(id);
  wires_[static_cast<std::size_t>(src)].push_back(id);
  if (dst != src) wires_[static_cast<std::size_t>(dst)].push_back(id);
  affected_.assign(1, id);
  affected_by(acts_[id], id);
  rerate(now);
  return id;
}

std::uint32_t Sharing::start_collective(const std::vector<int>& devices, Tick work, Tick now, std::uint32_t payload) {
  PIPESIM_ASSERT(shares_collectives());
  Activity a;
  a.remaining = static_cast<double>(work);
  a.since = a.running_since = now;
  a.kind = Kind::Collective;
  a.members = devices;
  a.payload = payload;
  if (nodes_ > 1) {
    std::set<int> spanned;
    for (int d : devices) spanned.insert(hw_.node_of_device[static_cast<std::size_t>(d)]);
    if (spanned.size() > 1)
      for (int n : spanned) a.nics.push_back(2 * n), a.nics.push_back(2 * n + 1);
  }
  const bool flow = !a.nics.empty();
  const std::uint32_t id = add(std::move(a));
  if (flow) flows_.push_back(id);
  for (int d : acts_[id].members) wires_[static_cast<std::size_t>(d)].push_back(id);
  affected_.assign(1, id);
  affected_by(acts_[id], id);
  rerate(now);
  return id;
}

void Sharing::finish(std::uint32_t id, Tick now) {
  Activity& a = acts_[id];
  PIPESIM_ASSERT(a.active);
  a.active = false;
  auto drop = [id](std::vector<std::uint32_t>& list) { list.erase(std::find(list.begin(), list.end(), id)); };
  std::uint32_t next = ~0u;
  if (a.kind == Kind::Compute && a.pool >= 0 && is_lazy_[static_cast<std::size_t>(a.pool)]) {
    computing_[static_cast<std::size_t>(a.device)] = -1;
    lazy_change(a.pool, now, id, false);
    free_.push_back(id);
    return;
  }
  if (a.kind == Kind::Compute) {
    computing_[static_cast<std::size_t>(a.device)] = -1;
    if (a.pool >= 0) {
      drop(members_[static_cast<std::size_t>(a.pool)]);
      // Its core goes to the op that has waited longest.
      if (auto& waiting = queued_[static_cast<std::size_t>(a.pool)]; !waiting.empty()) {
        next = waiting.front();
        waiting.erase(waiting.begin());
        Activity& b = acts_[next];
        b.queued = false;
        b.since = b.running_since = now;
        b.core_from = a.payload;
        members_[static_cast<std::size_t>(a.pool)].push_back(next);
      }
    }
  } else if (a.kind == Kind::Collective) {
    if (!a.nics.empty()) drop(flows_);
    for (int d : a.members) drop(wires_[static_cast<std::size_t>(d)]);
  } else {
    if (!a.nics.empty()) drop(flows_);
    drop(wires_[static_cast<std::size_t>(a.device)]);
    if (a.peer != a.device) drop(wires_[static_cast<std::size_t>(a.peer)]);
  }
  free_.push_back(id);
  affected_.clear();
  if (next != ~0u) affected_.push_back(next);
  affected_by(a, id);
  rerate(now);
}

bool Sharing::current(std::uint32_t activity, std::uint32_t generation) const {
  const Activity& a = acts_[activity];
  return a.active && a.generation == generation;
}

// What a start or finish of `a` can change the rate of: its pool's members and the
// transfers on its device (compute), or the NIC flows and the compute of its devices (a
// transfer or a collective). Not `a` itself (a start adds it first; a finish has removed it).
void Sharing::affected_by(const Activity& a, std::uint32_t self) {
  auto add = [&](std::uint32_t other) {
    if (other != self && !acts_[other].queued) affected_.push_back(other);
  };
  if (a.kind == Kind::Compute) {
    if (a.pool >= 0)
      for (std::uint32_t m : members_[static_cast<std::size_t>(a.pool)]) add(m);
    if (overlap_)
      for (std::uint32_t w : wires_[static_cast<std::size_t>(a.device)]) add(w);
    return;
  }
  if (!a.nics.empty())
    for (std::uint32_t f : flows_) add(f);
  auto add_compute = [&](int d) {
    if (const std::int32_t c = computing_[static_cast<std::size_t>(d)]; c >= 0) add(static_cast<std::uint32_t>(c));
  };
  if (overlap_ && a.kind == Kind::Transfer) add_compute(a.device), add_compute(a.peer);
  if (overlap_ && a.kind == Kind::Collective)
    for (int d : a.members) add_compute(d);
}

// Time per unit of work of `a` at today's rates (the table in sim/sharing.hpp).
// Inlined into rerate, its one caller (out of line it cost 5 % more instructions per op).
[[gnu::always_inline]] inline double Sharing::factor_of(std::uint32_t id) const {
  const Activity& a = acts_[id];
  auto computes = [&](int d) {
    const std::int32_t c = computing_[static_cast<std::size_t>(d)];
    return c >= 0 && !acts_[static_cast<std::size_t>(c)].queued;
  };
  const double overlap = overlap_ ? hw_.overlap_slowdown : 1.0;
  const double nic = a.nics.empty() ? 1.0 : 1 / nic_share_[id];
  if (a.kind == Kind::Transfer) return nic * (computes(a.device) || computes(a.peer) ? overlap : 1.0);
  if (a.kind == Kind::Collective) return nic * (std::any_of(a.members.begin(), a.members.end(), computes) ? overlap : 1.0);
  double factor = 1;
  if (a.pool >= 0) {
    const ComputePool& pool = hw_.pools[static_cast<std::size_t>(a.pool)];
    const auto busy = members_[static_cast<std::size_t>(a.pool)].size();
    if (!pool.queue) factor = processor_share_factor(pool, busy);
    if (const auto& curve = pool.slowdown[static_cast<std::size_t>(a.op_kind)]; !curve.empty())
      factor *= slowdown_at(curve, busy - 1);
  }
  return overlap_ && !wires_[static_cast<std::size_t>(a.device)].empty() ? factor * overlap : factor;
}

// Max-min fair shares of the NICs by progressive filling: every flow's share rises until
// one of its NIC resources (a node's egress or ingress, nics_per_node flows' worth) is full
// or it reaches one NIC's rate; flows on a full resource keep their share.
void Sharing::share_nics() {
  if (flows_.empty()) return;
  int resources = 0;
  for (std::uint32_t f : flows_)
    for (int r : acts_[f].nics) resources = std::max(resources, r + 1);
  std::vector<double> left(static_cast<std::size_t>(resources), hw_.nics_per_node);
  std::vector<int> open(static_cast<std::size_t>(resources), 0);
  std::vector<std::uint32_t> unfrozen = flows_;
  for (std::uint32_t f : unfrozen)
    for (int r : acts_[f].nics) ++open[static_cast<std::size_t>(r)];
  while (!unfrozen.empty()) {
    double level = 1;
    for (int r = 0; r < resources; ++r)
      if (open[static_cast<std::size_t>(r)] > 0) level = std::min(level, left[static_cast<std::size_t>(r)] / open[static_cast<std::size_t>(r)]);
    auto full = [&](int r) { return left[static_cast<std::size_t>(r)] / open[static_cast<std::size_t>(r)] <= level * (1 + 1e-12); };
    std::vector<std::uint32_t> rest;
    std::vector<std::uint32_t> frozen;
    for (std::uint32_t f : unfrozen) {
      const std::vector<int>& nics = acts_[f].nics;
      if (level >= 1 || std::any_of(nics.begin(), nics.end(), full))
        frozen.push_back(f);
      else
        rest.push_back(f);
    }
    PIPESIM_ASSERT(!frozen.empty());
    for (std::uint32_t f : frozen) {
      nic_share_[f] = level;
      for (int r : acts_[f].nics) {
        left[static_cast<std::size_t>(r)] -= level;
        --open[static_cast<std::size_t>(r)];
      }
    }
    unfrozen.swap(rest);
  }
}

// Brings the affected activities up to date and gives each whose factor changed a new
// finish time (a new activity: its first).
void Sharing::rerate(Tick now) {
  std::sort(affected_.begin(), affected_.end());
  affected_.erase(std::unique(affected_.begin(), affected_.end()), affected_.end());
  if (!flows_.empty() && std::any_of(affected_.begin(), affected_.end(), [&](std::uint32_t id) { return !acts_[id].nics.empty(); }))
    share_nics();
  for (std::uint32_t id : affected_) {
    Activity& a = acts_[id];
    PIPESIM_ASSERT(a.active);
    const double factor = factor_of(id);
    if (a.factor > 0) {
      a.remaining = std::max(0.0, a.remaining - static_cast<double>(now - a.since) / a.factor);
      a.since = now;
      if (factor == a.factor) continue;
    }
    a.factor = factor;
    ++a.generation;
    changes_.push_back(Finish{id, a.generation, end_after(now, a.remaining * factor)});
  }
}

}  // namespace pipesim
