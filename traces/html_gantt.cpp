#include "traces/html_gantt.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

enum class Lane : std::uint8_t { Compute, Comm, Sync };

Lane lane_of(WorkKind kind) {
  if (kind == WorkKind::Comm) return Lane::Comm;
  if (kind == WorkKind::Sync) return Lane::Sync;
  return Lane::Compute;
}

// One shape to draw, pointing back at its record for the tooltip.
enum class Source : std::uint8_t { Op, Transfer, Collective };
struct Interval {
  int device = 0;
  WorkKind kind = WorkKind::Forward;
  Tick start = 0;  // clipped to the range
  Tick end = 0;
  Source source = Source::Op;
  std::size_t record = 0;
};

// Vertical layout: rows get thinner as devices get more numerous, so p = 64 still fits a
// screen or two; labels only where a lane is tall enough to hold them.
struct Layout {
  double top = 8;
  double lane = 22;  // compute lane height
  double thin = 0;   // communication / sync lane height (0 when absent)
  bool comm = false;
  bool sync = false;
  double gap = 5;  // between device rows

  double row() const { return lane + (comm ? thin + 1 : 0) + (sync ? thin + 1 : 0) + gap; }
  double y(int device) const { return top + device * row(); }
  double lane_y(int device, Lane l) const {
    double y0 = y(device);
    if (l == Lane::Compute) return y0;
    y0 += lane + 1;
    if (l == Lane::Sync && comm) y0 += thin + 1;
    return y0;
  }
  double lane_h(Lane l) const { return l == Lane::Compute ? lane : thin; }
  double bottom(int devices) const { return y(devices) - gap; }
};

Layout make_layout(int devices, bool comm, bool sync, bool caption) {
  Layout l;
  l.top = caption ? 24 : 8;
  l.lane = devices <= 16 ? 22 : devices <= 32 ? 14 : 9;
  l.gap = devices <= 16 ? 5 : 2;
  l.comm = comm;
  l.sync = sync;
  l.thin = comm || sync ? std::max(4.0, std::round(l.lane / 3)) : 0;
  return l;
}

std::string span_text(Tick start, Tick end) {
  return format_duration(start) + " to " + format_duration(end) + " (" + format_duration(end - start) + ")";
}

class GanttBuilder {
 public:
  GanttBuilder(const Schedule& s, const Timeline& t, const GanttOptions& o)
      : s_(s), t_(t), opt_(o), frame_(make_time_frame(o.range, t, o.width)) {
    with_stage_ = !s.placement.empty() && s.chunks_per_device() > 1;
  }

  GanttChart build();

 private:
  const Op& op_at(const OpRef& ref) const {
    PIPESIM_ASSERT(ref.device >= 0 && ref.device < s_.num_devices);
    const auto& list = s_.ops[static_cast<std::size_t>(ref.device)];
    PIPESIM_ASSERT(ref.index >= 0 && ref.index < static_cast<int>(list.size()));
    return list[static_cast<std::size_t>(ref.index)];
  }
  void add(int device, WorkKind kind, Tick start, Tick end, Source source, std::size_t record) {
    PIPESIM_ASSERT(device >= 0 && device < s_.num_devices);
    const Tick a = std::max(start, frame_.range.begin), b = std::min(end, frame_.range.end);
    if (b <= a) return;  // zero-length or outside the range: nothing to see
    items_.push_back({device, kind, a, b, source, record});
  }
  void collect();
  std::string title(const Interval& it) const;
  std::string label(const Op& op, double width) const;
  void draw_detailed(SvgWriter& svg) const;
  void draw_aggregated(SvgWriter& svg) const;

  const Schedule& s_;
  const Timeline& t_;
  const GanttOptions& opt_;
  TimeFrame frame_;
  Layout layout_;
  bool with_stage_ = false;
  std::vector<Interval> items_;
  std::array<bool, kNumWorkKinds> present_{};
};

void GanttBuilder::collect() {
  for (std::size_t i = 0; i < t_.ops.size(); ++i) {
    const OpRecord& r = t_.ops[i];
    // GradSync op records are the device's view of a collective; the collective draws them.
    if (!is_compute(r.op.kind)) continue;
    add(r.ref.device, work_kind(r.op.kind), r.start, r.end, Source::Op, i);
  }
  for (std::size_t i = 0; i < t_.transfers.size(); ++i) {
    const TransferRecord& r = t_.transfers[i];
    add(r.from.device, WorkKind::Comm, r.link_start, r.arrival, Source::Transfer, i);
  }
  for (std::size_t i = 0; i < t_.collectives.size(); ++i)
    for (const OpRef& p : t_.collectives[i].participants)
      add(p.device, WorkKind::Sync, t_.collectives[i].start, t_.collectives[i].end, Source::Collective, i);
  // Row by row, lane by lane, left to right: a stable, readable document order.
  std::stable_sort(items_.begin(), items_.end(), [](const Interval& a, const Interval& b) {
    return std::make_tuple(a.device, lane_of(a.kind), a.start) < std::make_tuple(b.device, lane_of(b.kind), b.start);
  });
  for (const Interval& it : items_) present_[static_cast<std::size_t>(it.kind)] = true;
}

std::string GanttBuilder::title(const Interval& it) const {
  switch (it.source) {
    case Source::Op: {
      const OpRecord& r = t_.ops[it.record];
      std::string out =
          to_string(r.op) + " on device " + std::to_string(r.ref.device) + ": " + span_text(r.start, r.end);
      if (r.weight_version >= 0) out += ", weights v" + std::to_string(r.weight_version);
      return out;
    }
    case Source::Transfer: {
      const TransferRecord& r = t_.transfers[it.record];
      return "send " + to_string(op_at(r.from)) + " -> " + to_string(op_at(r.to)) + " (device " +
             std::to_string(r.from.device) + " -> " + std::to_string(r.to.device) + "), " +
             format_bytes(static_cast<double>(r.bytes)) + ": ready " + format_duration(r.ready) + ", on the link " +
             format_duration(r.link_start) + " to " + format_duration(r.link_end) + ", arrives " +
             format_duration(r.arrival);
    }
    case Source::Collective: {
      const CollectiveRecord& r = t_.collectives[it.record];
      std::string out = "gradient sync";
      if (!r.participants.empty()) out += " " + to_string(op_at(r.participants.front()));
      return out + " over " + std::to_string(r.participants.size()) + " devices, " +
             format_bytes(static_cast<double>(r.bytes)) + ": " + span_text(r.start, r.end);
    }
  }
  return {};
}

// The most informative label that fits `width` px (system-ui at 10 px: under 6 px per
// character for digits and capitals).
std::string GanttBuilder::label(const Op& op, double width) const {
  std::string kind = op.kind == OpKind::OptStep ? "OPT" : std::string(op_kind_name(op.kind));
  std::string mb = has_microbatch(op.kind) ? std::to_string(op.microbatch) : std::string();
  std::string core = kind + mb;
  std::string staged = with_stage_ ? std::to_string(op.stage) + core : core;
  std::string full = op.pipeline != 0 ? std::to_string(op.pipeline) + ":" + staged : staged;
  for (const std::string& text : {full, staged, core, mb.empty() ? std::string("O") : mb})
    if (static_cast<double>(text.size()) * 5.8 + 3 <= width) return text;
  return {};
}

void GanttBuilder::draw_detailed(SvgWriter& svg) const {
  svg.open_group("ops");
  for (const Interval& it : items_) {
    const Lane l = lane_of(it.kind);
    const double x0 = frame_.x(it.start), x1 = frame_.x(it.end);
    svg.rect(x0, layout_.lane_y(it.device, l), std::max(x1 - x0, 0.5), layout_.lane_h(l), work_class(it.kind),
             title(it));
  }
  svg.close_group();
  if (layout_.lane < 14) return;  // too thin for text
  svg.open_group("lbls");
  for (const Interval& it : items_) {
    if (it.source != Source::Op) continue;
    const double x0 = frame_.x(it.start), x1 = frame_.x(it.end);
    const std::string text = label(t_.ops[it.record].op, x1 - x0);
    if (text.empty()) continue;
    svg.text((x0 + x1) / 2, layout_.lane_y(it.device, Lane::Compute) + layout_.lane / 2 + 3.5, text,
             work_light_text(it.kind) ? "lbl w" : "lbl", "middle");
  }
  svg.close_group();
}

// Busy intervals of one (device, kind) merged at pixel resolution: columns [c0, c1) touched
// by any interval, runs that touch or overlap joined. All runs of one (device, kind) go
// into one <path> of relative moves with one tooltip, so the size stays bounded by the
// pixels, not the ops: at most one run per two columns per strip.
void GanttBuilder::draw_aggregated(SvgWriter& svg) const {
  struct Run {
    long long c0, c1;
  };
  // Compute lane: one strip per compute kind present, in WorkKind order.
  std::array<int, kNumWorkKinds> strip{};
  int strips = 0;
  for (int k = 0; k < kNumWorkKinds; ++k)
    if (present_[static_cast<std::size_t>(k)] && lane_of(static_cast<WorkKind>(k)) == Lane::Compute)
      strip[static_cast<std::size_t>(k)] = strips++;
  const double scale = frame_.scale();
  auto column = [&](Tick t) { return static_cast<double>(t - frame_.range.begin) * scale; };
  svg.open_group("agg");
  std::size_t i = 0;
  while (i < items_.size()) {
    const int device = items_[i].device;
    const Lane l = lane_of(items_[i].kind);
    std::size_t j = i;
    while (j < items_.size() && items_[j].device == device && lane_of(items_[j].kind) == l) ++j;
    for (int k = 0; k < kNumWorkKinds; ++k) {
      const auto kind = static_cast<WorkKind>(k);
      std::vector<Run> runs;
      std::size_t count = 0;
      Tick busy = 0, first = frame_.range.end, last = frame_.range.begin;
      for (std::size_t n = i; n < j; ++n) {
        const Interval& it = items_[n];
        if (it.kind != kind) continue;
        const auto c0 = static_cast<long long>(std::floor(column(it.start)));
        const auto c1 = std::max(c0 + 1, static_cast<long long>(std::ceil(column(it.end))));
        runs.push_back({c0, c1});
        ++count;
        busy += it.end - it.start;  // may double-count overlapping transfers: "link time"
        first = std::min(first, it.start);
        last = std::max(last, it.end);
      }
      if (runs.empty()) continue;
      std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.c0 < b.c0; });
      std::vector<Run> merged;
      for (const Run& r : runs) {
        if (!merged.empty() && r.c0 <= merged.back().c1) {
          merged.back().c1 = std::max(merged.back().c1, r.c1);
        } else {
          merged.push_back(r);
        }
      }
      double y = layout_.lane_y(device, l), h = layout_.lane_h(l);
      if (l == Lane::Compute && strips > 1) {
        h = layout_.lane / strips;
        y += h * strip[static_cast<std::size_t>(k)];
      }
      // "M x y h w v h h -w z", then "m dx 0 ..." from the previous run's start.
      const std::string down = "v" + svg_coord(h);
      std::string d = "M" + svg_coord(frame_.left + static_cast<double>(merged.front().c0)) + " " + svg_coord(y);
      long long at = merged.front().c0;
      for (const Run& r : merged) {
        if (&r != &merged.front()) d += "m" + std::to_string(r.c0 - at) + " 0";
        const std::string w = std::to_string(r.c1 - r.c0);
        d += "h" + w + down + "h-" + w + "z";
        at = r.c0;
      }
      svg.path(d, work_class(kind), {},
               "device " + std::to_string(device) + ", " + std::string(work_name(kind)) + ": " + std::to_string(count) +
                   (count == 1 ? " interval, " : " intervals, ") + format_duration(busy) + " in all, between " +
                   format_duration(first) + " and " + format_duration(last) + "; " + std::to_string(merged.size()) +
                   " merged " + (merged.size() == 1 ? "run" : "runs"));
    }
    i = j;
  }
  svg.close_group();
}

GanttChart GanttBuilder::build() {
  collect();
  GanttChart chart;
  chart.shapes = items_.size();
  chart.aggregated = items_.size() > opt_.max_shapes;
  chart.ns_per_px = frame_.ns_per_px();
  for (int k = 0; k < kNumWorkKinds; ++k)
    if (present_[static_cast<std::size_t>(k)]) chart.kinds.push_back(static_cast<WorkKind>(k));

  const int n = s_.num_devices;
  layout_ = make_layout(n, present_[static_cast<std::size_t>(WorkKind::Comm)],
                        present_[static_cast<std::size_t>(WorkKind::Sync)], !opt_.caption.empty());
  const double plot_bottom = layout_.bottom(n) + 4;
  SvgWriter svg(frame_.width, plot_bottom + kTimeAxisHeight + 2, "gantt",
                "timeline of " + s_.name + (opt_.caption.empty() ? "" : " (" + opt_.caption + ")"));
  if (!opt_.caption.empty()) svg.text(frame_.left, 16, opt_.caption, "caption");

  // Lane backgrounds first: whatever stays grey is idle time.
  const double label_every = std::ceil(12.0 / layout_.row());  // keep row labels 12 px apart
  for (int d = 0; d < n; ++d) {
    svg.rect(frame_.left, layout_.lane_y(d, Lane::Compute), frame_.plot_width(), layout_.lane, "lane");
    if (layout_.comm)
      svg.rect(frame_.left, layout_.lane_y(d, Lane::Comm), frame_.plot_width(), layout_.thin, "lane thin");
    if (layout_.sync)
      svg.rect(frame_.left, layout_.lane_y(d, Lane::Sync), frame_.plot_width(), layout_.thin, "lane thin");
    if (d % static_cast<int>(label_every) == 0)
      svg.text(frame_.left - 8, layout_.lane_y(d, Lane::Compute) + std::min(layout_.lane, 22.0) / 2 + 4,
               "dev " + std::to_string(d), "rowlbl", "end");
  }
  draw_time_axis(svg, frame_, layout_.top - 4, plot_bottom);
  if (chart.aggregated) {
    draw_aggregated(svg);
  } else {
    draw_detailed(svg);
  }
  chart.svg = svg.finish();
  return chart;
}

}  // namespace

GanttChart render_gantt(const Schedule& schedule, const Timeline& timeline, const GanttOptions& options) {
  return GanttBuilder(schedule, timeline, options).build();
}

}  // namespace pipesim
