#include "sim/breakdown.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace pipesim {
namespace {

using Span = BreakdownRecorder::Span;

TimeCategory own_work(OpKind kind) {
  switch (kind) {
    case OpKind::F: return TimeCategory::Forward;
    case OpKind::B: return TimeCategory::Backward;
    case OpKind::I: return TimeCategory::InputGrad;
    case OpKind::W: return TimeCategory::WeightGrad;
    case OpKind::OptStep: return TimeCategory::Optimizer;
    default: PIPESIM_ASSERT(!"a compute op");
  }
  return TimeCategory::Idle;
}

// An op's time cut into its categories, in the order they are counted at an edge of the
// window: its own work, then its parts (ComputeParts), then contention. `duration` is how long
// it ran, `alone` its cost model's duration (the two differ only on shared hardware,
// sim/resources.hpp). The one rule for both of BreakdownRecorder's ways.
using Segments = std::array<std::pair<TimeCategory, Tick>, 6>;
Segments split_op(OpKind kind, Tick duration, Tick alone, ComputeParts parts) {
  // Shared hardware can make an op take longer than its cost model's duration (contention)
  // or, with an interference factor below 1, shorter: then its parts shrink with it.
  const Tick contention = std::max<Tick>(0, duration - alone);
  if (duration < alone && alone > 0) {
    const auto shrink = [&](Tick& t) {
      t = static_cast<Tick>(static_cast<long double>(t) * static_cast<long double>(duration) / static_cast<long double>(alone));
    };
    shrink(parts.recompute), shrink(parts.tp_comm), shrink(parts.p2p), shrink(parts.grad_sync);
  }
  const Tick own = duration - contention - parts.total();
  PIPESIM_ASSERT(own >= 0 && parts.recompute >= 0 && parts.tp_comm >= 0 && parts.p2p >= 0 && parts.grad_sync >= 0);
  return {{{own_work(kind), own},
           {TimeCategory::Recompute, parts.recompute},
           {TimeCategory::TpComm, parts.tp_comm},
           {TimeCategory::Pipeline, parts.p2p},
           {TimeCategory::DpSync, parts.grad_sync},
           {TimeCategory::Contention, contention}}};
}

// What fills part of a device's time between its ops: a GradSync collective (DP sync) or its
// thread's host work.
struct Mark {
  Tick start, end;
  TimeCategory category;
};

// One device's time in the window, added up interval by interval in time order.
class DeviceAccount {
 public:
  DeviceAccount(const IterationWindow& window, const std::vector<Mark>& marks, Tick first, Tick last)
      : window_(window), marks_(marks), first_(first), last_(last) {}

  // [a, b) of `category`, clipped to the window.
  void add(TimeCategory category, Tick a, Tick b) {
    a = std::max(a, window_.start);
    b = std::min(b, window_.end);
    if (a < b) out_[category] += b - a;
  }

  // `ticks` (>= 0) of `category` that lie wholly inside the window: add() without clipping.
  void add_inside(TimeCategory category, Tick ticks) { out_[category] += ticks; }

  // [a, b) in which the device computes nothing: a mark's category while it lasts (host work,
  // DP sync while one of its collectives runs), idle outside [first op's start, last op's
  // end), pipeline wait in between.
  void add_gap(Tick a, Tick b) {
    a = std::max(a, window_.start);
    b = std::min(b, window_.end);
    while (a < b) {
      while (next_mark_ < marks_.size() && marks_[next_mark_].end <= a) ++next_mark_;
      Tick until = b;
      TimeCategory category = TimeCategory::Pipeline;
      if (next_mark_ < marks_.size() && marks_[next_mark_].start <= a) {
        category = marks_[next_mark_].category;
        until = std::min(b, marks_[next_mark_].end);
      } else {
        if (next_mark_ < marks_.size()) until = std::min(b, marks_[next_mark_].start);
        if (a < first_) {
          category = TimeCategory::Idle;
          until = std::min(until, first_);
        } else if (a >= last_) {
          category = TimeCategory::Idle;
        } else {
          until = std::min(until, last_);
        }
      }
      out_[category] += until - a;
      a = until;
    }
  }

  // For a device without marks, after its ops: the not-busy time at once (add_gap per gap
  // gives the same): idle before its first op and after its last, and the rest of the
  // window, between its ops, pipeline wait.
  void add_gaps_without_marks() {
    PIPESIM_ASSERT(marks_.empty() && first_ <= last_);
    const Tick idle = std::max<Tick>(0, std::min(window_.end, first_) - window_.start) +
                      std::max<Tick>(0, window_.end - std::max(window_.start, last_));
    out_[TimeCategory::Idle] += idle;
    out_[TimeCategory::Pipeline] += (window_.end - window_.start) - out_.total();
  }

  const CategoryTicks& result() const { return out_; }

 private:
  const IterationWindow& window_;
  const std::vector<Mark>& marks_;  // sorted, disjoint
  Tick first_, last_;
  std::size_t next_mark_ = 0;
  CategoryTicks out_;
};

// The device's collectives in time order, overlapping ones merged.
std::vector<Span> merged(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  std::vector<Span> out;
  for (const Span& s : spans) {
    if (s.end <= s.start) continue;
    if (!out.empty() && s.start <= out.back().end)
      out.back().end = std::max(out.back().end, s.end);
    else
      out.push_back(s);
  }
  return out;
}

// A device's marks in time order: its host work (disjoint, in time order: one thread), and
// its collectives where no host work runs (the thread's own work counts first; the
// collective runs on the communication stream beside it).
std::vector<Mark> marks_of(const std::vector<Span>& collectives, const std::vector<Span>& host) {
  std::vector<Mark> out;
  out.reserve(host.size() + collectives.size());
  for (const Span& h : host) out.push_back({h.start, h.end, TimeCategory::Host});
  std::size_t next = 0;  // the first host work that ends after the piece's start
  for (Span s : merged(collectives)) {
    while (s.start < s.end) {
      while (next < host.size() && host[next].end <= s.start) ++next;
      if (next == host.size() || host[next].start >= s.end) {
        out.push_back({s.start, s.end, TimeCategory::DpSync});
        break;
      }
      if (host[next].start > s.start) out.push_back({s.start, host[next].start, TimeCategory::DpSync});
      s.start = host[next].end;
    }
  }
  std::sort(out.begin(), out.end(), [](const Mark& a, const Mark& b) { return a.start < b.start; });
  return out;
}

}  // namespace

namespace {

// Indexed by TimeCategory: the JSON key and the label of tables and charts.
struct CategoryNames {
  std::string_view key, label;
};
constexpr std::array<CategoryNames, kNumTimeCategories> kNames = {{{"forward", "F"},
                                                                   {"backward", "B"},
                                                                   {"input_grad", "I"},
                                                                   {"weight_grad", "W"},
                                                                   {"recompute", "recompute"},
                                                                   {"tp_comm", "TP comm"},
                                                                   {"pipeline", "pipeline"},
                                                                   {"dp_sync", "DP sync"},
                                                                   {"optimizer", "optimizer"},
                                                                   {"contention", "contention"},
                                                                   {"host", "host"},
                                                                   {"idle", "idle"}}};

}  // namespace

std::string_view time_category_key(TimeCategory c) { return kNames[static_cast<std::size_t>(c)].key; }
std::string_view time_category_label(TimeCategory c) { return kNames[static_cast<std::size_t>(c)].label; }

Tick CategoryTicks::total() const {
  Tick sum = 0;
  for (Tick t : ticks) sum += t;
  return sum;
}

double TimeBreakdown::per_iteration_s(int device, TimeCategory c) const {
  return ticks_to_seconds(per_device[static_cast<std::size_t>(device)][c]) / window.counted;
}

double TimeBreakdown::mean_per_iteration_s(TimeCategory c) const {
  if (per_device.empty()) return 0;
  Tick sum = 0;
  for (const CategoryTicks& d : per_device) sum += d[c];
  return ticks_to_seconds(sum) / static_cast<double>(per_device.size()) / window.counted;
}

double TimeBreakdown::share(int device, TimeCategory c) const {
  const Tick span = window_ticks();
  return span > 0 ? static_cast<double>(per_device[static_cast<std::size_t>(device)][c]) / static_cast<double>(span) : 0.0;
}

double TimeBreakdown::busy_share(int device) const {
  const Tick span = window_ticks();
  return span > 0 ? static_cast<double>(busy[static_cast<std::size_t>(device)]) / static_cast<double>(span) : 0.0;
}

double TimeBreakdown::mean_share(TimeCategory c) const {
  const Tick span = window_ticks();
  if (span <= 0 || per_device.empty()) return 0;
  Tick sum = 0;
  for (const CategoryTicks& d : per_device) sum += d[c];
  return static_cast<double>(sum) / static_cast<double>(span) / static_cast<double>(per_device.size());
}

BreakdownRecorder::BreakdownRecorder(const Schedule& schedule, bool keep_spans)
    : schedule_(schedule), takes_totals_(!keep_spans && schedule.iterations <= 1),
      begin_(static_cast<std::size_t>(std::max(0, schedule.num_devices))), size_(begin_.size()),
      count_(begin_.size()), last_end_(begin_.size()), syncs_(begin_.size()), host_work_(begin_.size()) {}

void BreakdownRecorder::restart() {
  std::fill(count_.begin(), count_.end(), 0);
  std::fill(last_end_.begin(), last_end_.end(), 0);
  for (auto& s : syncs_) s.clear();
  for (auto& h : host_work_) h.clear();
  totals_.reset();
}

void BreakdownRecorder::on_op(const OpRecord& r) {
  if (!is_compute(r.op.kind)) return;  // a GradSync's time is its collective's; comms take none
  if (!spans_) [[unlikely]] {           // the first record: every list gets its place
    std::size_t total = 0;
    for (std::size_t d = 0; d < begin_.size(); ++d) {
      begin_[d] = total;
      size_[d] = d < schedule_.ops.size() ? schedule_.ops[d].size() : 0;
      total += size_[d];
    }
    spans_ = buffer_.get(std::max<std::size_t>(1, total));
  }
  const auto d = static_cast<std::size_t>(r.ref.device);
  const auto at = static_cast<std::size_t>(r.ref.index);
  PIPESIM_ASSERT(d < begin_.size() && at < size_[d]);  // a record of an op of the schedule
  PIPESIM_ASSERT(last_end_[d] <= r.start);              // one compute op at a time, in order
  spans_[begin_[d] + at] = Span{r.start, r.end};
  last_end_[d] = r.end;
  ++count_[d];
}

void BreakdownRecorder::on_op_totals(const OpTotals& t) {
  PIPESIM_ASSERT(takes_totals_ && !totals_);
  totals_ = t;
}

void BreakdownRecorder::on_collective(const CollectiveRecord& r) {
  for (const OpRef& p : r.participants) syncs_[static_cast<std::size_t>(p.device)].push_back({r.start, r.end});
}

void BreakdownRecorder::on_host_work(const HostWorkRecord& r) {
  const auto d = static_cast<std::size_t>(r.device);
  PIPESIM_ASSERT(d < host_work_.size() && r.start < r.end);
  PIPESIM_ASSERT(host_work_[d].empty() || host_work_[d].back().end <= r.start);  // one thread, in time order
  host_work_[d].push_back({r.start, r.end});
}

namespace {

// Adds device d's results to `out`, keeping the device that computes longest.
void add_device(TimeBreakdown& out, int d, const CategoryTicks& ticks, Tick busy, Tick& most_busy) {
  out.per_device.push_back(ticks);
  out.busy.push_back(busy);
  PIPESIM_ASSERT(ticks.total() == out.window_ticks());
  if (busy > most_busy) {
    most_busy = busy;
    out.critical_device = d;
  }
}

}  // namespace

TimeBreakdown time_breakdown(const Schedule& schedule, const SimResult& result, const CostModel& costs,
                             const BreakdownRecorder& recorder) {
  PIPESIM_ASSERT(recorder.devices() == schedule.num_devices);
  TimeBreakdown out;
  out.window = iteration_window(result);
  const OpScale scale = scale_of(schedule);
  // An op's parts, asked once per (kind, pipeline, stage) when the model's answers are the
  // same for every micro-batch (CostModel::same_for_every_microbatch), else for each op.
  const bool shared_answers = costs.same_for_every_microbatch();
  std::vector<ComputeParts> known;  // recompute -1: not asked yet
  if (shared_answers)
    known.assign(static_cast<std::size_t>(std::max(0, schedule.num_pipelines)) *
                     static_cast<std::size_t>(std::max(0, schedule.num_stages)) * kNumOpKinds,
                 ComputeParts{-1, 0, 0, 0});
  const auto parts_of = [&](const Op& op) {
    if (!shared_answers) return costs.compute_parts(op, scale);
    ComputeParts& p = known[(static_cast<std::size_t>(op.pipeline) * static_cast<std::size_t>(schedule.num_stages) +
                             static_cast<std::size_t>(op.stage)) * kNumOpKinds + static_cast<std::size_t>(op.kind)];
    if (p.recompute < 0) p = costs.compute_parts(op, scale);
    return p;
  };
  Tick most_busy = -1;
  if (const std::optional<OpTotals>& totals = recorder.totals()) {
    // The ready pass's totals: every op of a group took its duration, alone on its device,
    // inside the window [0, makespan]; only the not-busy time is left, between the first op
    // and the last.
    PIPESIM_ASSERT(out.window.start == 0 && out.window.end == result.makespan && !result.shared && shared_answers);
    for (const std::vector<Span>& h : recorder.host_work()) PIPESIM_ASSERT(h.empty());  // the ready pass has none
    std::vector<CategoryTicks> ticks(static_cast<std::size_t>(schedule.num_devices));
    std::vector<Tick> busy(ticks.size());
    std::vector<std::uint64_t> ops(ticks.size());
    for (const OpTotals::Group& g : totals->groups) {
      const auto d = static_cast<std::size_t>(g.device);
      PIPESIM_ASSERT(d < ticks.size());
      const auto n = static_cast<Tick>(g.ops);
      ops[d] += g.ops;
      busy[d] += n * g.duration;
      for (const auto& [category, t] : split_op(g.kind, g.duration, g.duration, parts_of(make_op(g.kind, g.stage, 0, g.pipeline))))
        ticks[d][category] += n * t;
    }
    const std::vector<Mark> no_marks;
    for (int d = 0; d < schedule.num_devices; ++d) {
      const auto i = static_cast<std::size_t>(d);
      const DeviceStats& dev = result.devices[i];
      PIPESIM_ASSERT(ops[i] == schedule.ops[i].size() && busy[i] == dev.busy);  // every op ran, once
      DeviceAccount account(out.window, no_marks, dev.first_start, dev.last_end);
      for (TimeCategory c : kTimeCategories) account.add_inside(c, ticks[i][c]);
      account.add_gaps_without_marks();
      add_device(out, d, account.result(), busy[i], most_busy);
    }
    return out;
  }
  for (int d = 0; d < schedule.num_devices; ++d) {
    const std::span<const Span> times = recorder.ops(d);
    const std::vector<Op>& list = schedule.ops[static_cast<std::size_t>(d)];
    // The device's first and last compute ops: its busy time lies between them.
    std::size_t first_op = 0, end_op = list.size(), compute_ops = 0;
    while (first_op < end_op && !is_compute(list[first_op].kind)) ++first_op;
    while (end_op > first_op && !is_compute(list[end_op - 1].kind)) --end_op;
    const bool any = first_op < end_op;
    // Spans for this schedule's lists, or none where no compute op ran anywhere.
    PIPESIM_ASSERT(times.size() == list.size() || (times.empty() && !any));
    const Tick first = any ? times[first_op].start : 0, last = any ? times[end_op - 1].end : 0;
    const std::vector<Mark> marks = marks_of(recorder.syncs()[static_cast<std::size_t>(d)],
                                             recorder.host_work()[static_cast<std::size_t>(d)]);
    DeviceAccount account(out.window, marks, first, last);
    const bool gaps_at_end = marks.empty();  // most devices: add_gaps_without_marks()
    Tick cursor = out.window.start, busy = 0;
    for (std::size_t i = first_op; i < end_op; ++i) {
      const Op& op = list[i];
      if (!is_compute(op.kind)) continue;
      ++compute_ops;
      const Span& s = times[i];
      if (!gaps_at_end) account.add_gap(cursor, s.start);
      cursor = s.end;
      if (s.end <= out.window.start || s.start >= out.window.end) continue;
      busy += std::min(s.end, out.window.end) - std::max(s.start, out.window.start);
      // Without sharing an op takes exactly its cost model's time: not asked again (a model
      // that draws durations would answer differently).
      const Tick duration = s.end - s.start, alone = result.shared ? costs.compute_time(op, scale) : duration;
      const Segments segments = split_op(op.kind, duration, alone, parts_of(op));
      if (s.start >= out.window.start && s.end <= out.window.end) {
        // Wholly inside the window (all but the ops at its two edges): nothing to clip.
        for (const auto& [category, ticks] : segments) account.add_inside(category, ticks);
        continue;
      }
      Tick at = s.start;
      for (const auto& [category, ticks] : segments) {
        account.add(category, at, at + ticks);
        at += ticks;
      }
    }
    if (gaps_at_end)
      account.add_gaps_without_marks();
    else
      account.add_gap(cursor, out.window.end);
    PIPESIM_ASSERT(compute_ops == recorder.recorded(d));  // every compute op ran, once
    add_device(out, d, account.result(), busy, most_busy);
  }
  return out;
}

}  // namespace pipesim
