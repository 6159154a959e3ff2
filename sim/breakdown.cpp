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

// One device's time in the window, added up interval by interval in time order.
class DeviceAccount {
 public:
  DeviceAccount(const IterationWindow& window, const std::vector<Span>& syncs, Tick first, Tick last)
      : window_(window), syncs_(syncs), first_(first), last_(last) {}

  // [a, b) of `category`, clipped to the window.
  void add(TimeCategory category, Tick a, Tick b) {
    a = std::max(a, window_.start);
    b = std::min(b, window_.end);
    if (a < b) out_[category] += b - a;
  }

  // `ticks` (>= 0) of `category` that lie wholly inside the window: add() without clipping.
  void add_inside(TimeCategory category, Tick ticks) { out_[category] += ticks; }

  // [a, b) in which the device computes nothing: DP sync while one of its collectives runs,
  // idle outside [first op's start, last op's end), pipeline wait in between.
  void add_gap(Tick a, Tick b) {
    a = std::max(a, window_.start);
    b = std::min(b, window_.end);
    while (a < b) {
      while (next_sync_ < syncs_.size() && syncs_[next_sync_].end <= a) ++next_sync_;
      Tick until = b;
      TimeCategory category = TimeCategory::Pipeline;
      if (next_sync_ < syncs_.size() && syncs_[next_sync_].start <= a) {
        category = TimeCategory::DpSync;
        until = std::min(b, syncs_[next_sync_].end);
      } else {
        if (next_sync_ < syncs_.size()) until = std::min(b, syncs_[next_sync_].start);
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

  // For a device without collectives, after its ops: the not-busy time at once (add_gap
  // per gap gives the same): idle before its first op and after its last, and the rest of
  // the window, between its ops, pipeline wait.
  void add_gaps_without_syncs() {
    PIPESIM_ASSERT(syncs_.empty() && first_ <= last_);
    const Tick idle = std::max<Tick>(0, std::min(window_.end, first_) - window_.start) +
                      std::max<Tick>(0, window_.end - std::max(window_.start, last_));
    out_[TimeCategory::Idle] += idle;
    out_[TimeCategory::Pipeline] += (window_.end - window_.start) - out_.total();
  }

  const CategoryTicks& result() const { return out_; }

 private:
  const IterationWindow& window_;
  const std::vector<Span>& syncs_;  // sorted, disjoint
  Tick first_, last_;
  std::size_t next_sync_ = 0;
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

namespace {

// Whether the breakdown of a run of `s` under `costs` can be added up as its ops end
// (BreakdownRecorder's totals mode): the window is the whole run (one iteration, so no
// micro-batch id at or past the schedule's count), there are no collectives (no GradSync),
// and the model's answers are the same for every micro-batch (so an op's duration alone is
// asked once per (pipeline, stage, kind), and never again for a model that draws durations).
// Counts each device's compute ops on the way (`compute_ops`).
bool totals_fit(const Schedule& s, const CostModel& costs, std::vector<std::size_t>& compute_ops) {
  if (s.iterations > 1 || !costs.same_for_every_microbatch()) return false;
  for (std::size_t d = 0; d < s.ops.size(); ++d) {
    std::size_t n = 0;
    for (const Op& op : s.ops[d]) {
      if (op.kind == OpKind::GradSync || (has_microbatch(op.kind) && op.microbatch >= s.microbatches)) return false;
      n += is_compute(op.kind);
    }
    compute_ops[d] = n;
  }
  return true;
}

}  // namespace

BreakdownRecorder::BreakdownRecorder(const Schedule& schedule, const CostModel& costs, bool keep_spans)
    : costs_(costs), scale_(scale_of(schedule)), stages_(std::max(0, schedule.num_stages)),
      dev_(static_cast<std::size_t>(std::max(0, schedule.num_devices))), syncs_(dev_.size()) {
  std::vector<std::size_t> compute_ops(dev_.size());
  totals_mode_ = !keep_spans && schedule.ops.size() == dev_.size() && totals_fit(schedule, costs, compute_ops);
  if (totals_mode_) {
    for (std::size_t d = 0; d < dev_.size(); ++d) dev_[d].size = compute_ops[d];  // what count must reach
    answers_.resize(static_cast<std::size_t>(std::max(0, schedule.num_pipelines)) * static_cast<std::size_t>(stages_) *
                    kNumOpKinds);
    return;
  }
  std::size_t total = 0;
  for (std::size_t d = 0; d < dev_.size(); ++d) {
    dev_[d].begin = total;
    dev_[d].size = d < schedule.ops.size() ? schedule.ops[d].size() : 0;
    total += dev_[d].size;
  }
  spans_ = buffer_.get(total);
}

void BreakdownRecorder::restart() {
  for (Device& dev : dev_) {
    dev.count = 0;
    dev.first_start = dev.last_end = dev.busy = 0;
    dev.ticks = {};
  }
  for (auto& s : syncs_) s.clear();
}

// Performance: inline in on_op, the cost model asked and the op split (split_op) out of line,
// so that an op of plain own work costs a look-up and two additions.
[[gnu::always_inline]] inline void BreakdownRecorder::add_to_totals(Device& dev, const OpRecord& r) {
  const Op& op = r.op;
  PIPESIM_ASSERT(dev.count <= dev.size);
  const std::size_t key =
      (static_cast<std::size_t>(op.pipeline) * static_cast<std::size_t>(stages_) + static_cast<std::size_t>(op.stage)) *
          kNumOpKinds + static_cast<std::size_t>(op.kind);
  PIPESIM_ASSERT(key < answers_.size());
  const Answer& a = answers_[key];
  const Tick duration = r.end - r.start;
  dev.busy += duration;
  if (duration == a.alone && a.plain) [[likely]] {  // all of it the op's own work (most ops)
    dev.ticks[a.own] += duration;
    return;
  }
  add_parts(dev, op, duration, answers_[key]);
}

void BreakdownRecorder::add_parts(Device& dev, const Op& op, Tick duration, Answer& a) {
  if (a.alone < 0) a = answer(op);
  for (const auto& [category, ticks] : split_op(op.kind, duration, a.alone, a.parts)) dev.ticks[category] += ticks;
}

// The model's answers for op's (pipeline, stage, kind), asked the first time.
BreakdownRecorder::Answer& BreakdownRecorder::answer(const Op& op) {
  const std::size_t key =
      (static_cast<std::size_t>(op.pipeline) * static_cast<std::size_t>(stages_) + static_cast<std::size_t>(op.stage)) *
          kNumOpKinds + static_cast<std::size_t>(op.kind);
  PIPESIM_ASSERT(key < answers_.size());
  Answer& a = answers_[key];
  if (a.alone < 0) {
    a.alone = costs_.compute_time(op, scale_);
    a.parts = costs_.compute_parts(op, scale_);
    a.own = own_work(op.kind);
    a.plain = a.parts.total() == 0;
  }
  return a;
}

void BreakdownRecorder::on_op_totals(const OpTotals& t) {
  PIPESIM_ASSERT(totals_mode_ && t.devices.size() == dev_.size());
  for (const OpTotals::Group& g : t.groups) {
    PIPESIM_ASSERT(is_compute(g.kind) && g.device >= 0 && static_cast<std::size_t>(g.device) < dev_.size());
    Device& dev = dev_[static_cast<std::size_t>(g.device)];
    const Answer& a = answer(make_op(g.kind, g.stage, 0, g.pipeline));
    const auto ops = static_cast<Tick>(g.ops);
    dev.busy += ops * g.duration;
    for (const auto& [category, ticks] : split_op(g.kind, g.duration, a.alone, a.parts)) dev.ticks[category] += ops * ticks;
  }
  for (std::size_t d = 0; d < dev_.size(); ++d) {
    const OpTotals::Device& from = t.devices[d];
    Device& dev = dev_[d];
    PIPESIM_ASSERT(dev.count == 0);  // totals in place of every record
    dev.count = from.ops;
    if (from.ops > 0) dev.first_start = from.first_start, dev.last_end = from.last_end;
  }
}

void BreakdownRecorder::on_op(const OpRecord& r) {
  if (!is_compute(r.op.kind)) return;  // a GradSync's time is its collective's; comms take none
  const auto d = static_cast<std::size_t>(r.ref.device);
  PIPESIM_ASSERT(d < dev_.size());
  Device& dev = dev_[d];
  PIPESIM_ASSERT(dev.last_end <= r.start);  // one compute op at a time, in order
  if (dev.count++ == 0) dev.first_start = r.start;
  dev.last_end = r.end;
  if (totals_mode_) return add_to_totals(dev, r);
  const auto at = static_cast<std::size_t>(r.ref.index);
  PIPESIM_ASSERT(at < dev.size);  // a record of an op of the schedule
  spans_[dev.begin + at] = Span{r.start, r.end};
}

void BreakdownRecorder::on_collective(const CollectiveRecord& r) {
  PIPESIM_ASSERT(!totals_mode_);  // totals mode is for schedules without GradSync
  for (const OpRef& p : r.participants) syncs_[static_cast<std::size_t>(p.device)].push_back({r.start, r.end});
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
  Tick most_busy = -1;
  if (recorder.keeps_totals()) {  // every op lay in the window [0, makespan]: only the not-busy time is left
    PIPESIM_ASSERT(out.window.start == 0 && out.window.end == result.makespan);
    const std::vector<Span> no_syncs;
    for (int d = 0; d < schedule.num_devices; ++d) {
      PIPESIM_ASSERT(recorder.all_recorded(d));  // every compute op ran, once
      DeviceAccount account(out.window, no_syncs, recorder.first_start(d), recorder.last_end(d));
      const CategoryTicks& ticks = recorder.totals(d);
      PIPESIM_ASSERT(result.shared || ticks[TimeCategory::Contention] == 0);  // alone, an op takes its model's time
      for (TimeCategory c : kTimeCategories) account.add_inside(c, ticks[c]);
      account.add_gaps_without_syncs();
      add_device(out, d, account.result(), recorder.busy(d), most_busy);
    }
    return out;
  }
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
  for (int d = 0; d < schedule.num_devices; ++d) {
    const std::span<const Span> times = recorder.ops(d);
    const std::vector<Op>& list = schedule.ops[static_cast<std::size_t>(d)];
    PIPESIM_ASSERT(times.size() == list.size());
    // The device's first and last compute ops: its busy time lies between them.
    std::size_t first_op = 0, end_op = list.size(), compute_ops = 0;
    while (first_op < end_op && !is_compute(list[first_op].kind)) ++first_op;
    while (end_op > first_op && !is_compute(list[end_op - 1].kind)) --end_op;
    const bool any = first_op < end_op;
    const Tick first = any ? times[first_op].start : 0, last = any ? times[end_op - 1].end : 0;
    const std::vector<Span> syncs = merged(recorder.syncs()[static_cast<std::size_t>(d)]);
    DeviceAccount account(out.window, syncs, first, last);
    const bool gaps_at_end = syncs.empty();  // most devices: add_gaps_without_syncs()
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
      account.add_gaps_without_syncs();
    else
      account.add_gap(cursor, out.window.end);
    PIPESIM_ASSERT(compute_ops == recorder.recorded(d));  // every compute op ran, once
    add_device(out, d, account.result(), busy, most_busy);
  }
  return out;
}

}  // namespace pipesim
