#include "traces/ascii_timeline.hpp"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <tuple>

#include "core/units.hpp"
#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {

namespace {

char kind_letter(OpKind kind) {
  switch (kind) {
    case OpKind::F: return 'F';
    case OpKind::B: return 'B';
    case OpKind::I: return 'I';
    case OpKind::W: return 'W';
    case OpKind::GradSync: return 'G';
    case OpKind::OptStep: return 'O';
    case OpKind::SendF:
    case OpKind::SendB: return 'S';
    case OpKind::RecvF:
    case OpKind::RecvB: return 'R';
  }
  return '?';
}

std::string_view kind_description(OpKind kind) {
  switch (kind) {
    case OpKind::F: return "forward";
    case OpKind::B: return "backward";
    case OpKind::I: return "backward-input";
    case OpKind::W: return "backward-weight";
    case OpKind::GradSync: return "grad-sync";
    case OpKind::OptStep: return "optimizer";
    case OpKind::SendF: return "send activation";
    case OpKind::RecvF: return "receive activation";
    case OpKind::SendB: return "send gradient";
    case OpKind::RecvB: return "receive gradient";
  }
  return "?";
}

// Labels from most to least informative; the widest that fits the block is drawn. The
// stage is part of the label only where a device holds several (interleaved, ZB-V):
// otherwise the row already says which stage it is.
struct Labeler {
  bool with_stage = false;

  std::string core(const Op& op) const {
    std::string text = with_stage ? std::to_string(op.stage) : std::string();
    text += kind_letter(op.kind);
    if (has_microbatch(op.kind)) text += std::to_string(op.microbatch);
    return text;
  }
  std::string full(const Op& op) const {
    return op.pipeline != 0 ? std::to_string(op.pipeline) + ":" + core(op) : core(op);
  }
  std::string fitting(const Op& op, std::size_t width) const {
    for (std::string text : {full(op), core(op), Labeler{}.core(op)})
      if (text.size() <= width) return text;
    return std::string(1, kind_letter(op.kind));
  }
};

std::string device_name(int device) { return "dev" + std::to_string(device); }

// Maps times to columns: col(t) = round(t * per_unit / unit). Unscaled, every op boundary
// is a multiple of `unit`, so this is exact.
struct Scale {
  Tick unit = 1;
  std::int64_t per_unit = 1;  // columns per time unit
  bool scaled = false;        // unit was chosen to fit max_width, boundaries are rounded

  std::int64_t col(Tick t) const { return (2 * t * per_unit + unit) / (2 * unit); }
};

// Smallest "nice" duration (1, 2, 2.5, 5 times a power of ten ns) of at least `needed`,
// so a scaled-down ruler still counts in round numbers.
Tick nice_at_least(Tick needed) {
  for (Tick power = 1;; power *= 10)
    for (Tick tenths : {10, 20, 25, 50})
      if (tenths * power / 10 >= needed) return tenths * power / 10;
}

// The ruler: time-unit numbers at nice steps (1, 2, 5, 10, 20, ...) at least 10 columns
// apart, each written from its column; the total at the closing frame if there is room.
std::string ruler(const Scale& scale, std::int64_t units_total, std::int64_t columns) {
  static constexpr std::int64_t kMantissa[] = {1, 2, 5};
  std::int64_t step = 1;
  std::int64_t power = 1;
  for (int i = 1; step * scale.per_unit < 10 && step < units_total; ++i) {
    if (i % 3 == 0) power *= 10;
    step = kMantissa[i % 3] * power;
  }
  std::string line;
  for (std::int64_t u = 0; u <= units_total; u += step) {
    const auto c = static_cast<std::size_t>(u * scale.per_unit);
    if (!line.empty() && line.size() >= c) continue;  // would touch the previous label
    line.resize(c, ' ');
    line += std::to_string(u);
  }
  const auto end = static_cast<std::size_t>(columns);
  if (units_total % step != 0 && line.size() < end) {
    line.resize(end, ' ');
    line += std::to_string(units_total);
  }
  return line;
}

std::string legend_lines(const bool (&kinds_seen)[kNumOpKinds], const Labeler& labeler,
                         bool pipelines, const Scale& scale, std::int64_t max_width) {
  std::string out;
  for (int k = 0; k < kNumOpKinds; ++k) {
    if (!kinds_seen[k]) continue;
    const auto kind = static_cast<OpKind>(k);
    out += std::string(out.empty() ? "" : ", ") + kind_letter(kind) + " " + std::string(kind_description(kind));
  }
  if (!out.empty()) out += "; ";
  out += std::string("label = ") + (pipelines ? "pipeline: + " : "") + (labeler.with_stage ? "stage + " : "") +
         "kind + micro-batch (" + (pipelines ? "1:" : "") + (labeler.with_stage ? "2" : "") +
         "F3), lower case continues an op, '.' idle\n";
  out += "time: 1 unit = " + format_duration(scale.unit) + ", " + std::to_string(scale.per_unit) +
         (scale.per_unit == 1 ? " column" : " columns") + " per unit";
  if (scale.scaled)
    out += " (scaled down to fit " + std::to_string(max_width) +
           " columns: times rounded to the nearest column, short ops may be hidden)";
  return out + "\n";
}

}  // namespace

std::string render_ascii_timeline(const Schedule& schedule, const Timeline& timeline,
                                  const AsciiTimelineOptions& options) {
  const int devices = std::max(schedule.num_devices, static_cast<int>(schedule.ops.size()));
  Tick gcd = 0;
  Tick makespan = 0;
  std::vector<const OpRecord*> drawn;
  drawn.reserve(timeline.ops.size());
  std::vector<std::int64_t> ops_on(static_cast<std::size_t>(devices), 0);
  std::vector<Tick> last_start(static_cast<std::size_t>(devices), 0);
  bool by_start = true;  // each device's ops come by start time
  for (const OpRecord& r : timeline.ops) {
    PIPESIM_ASSERT(r.ref.device >= 0 && r.ref.device < devices && r.end >= r.start && r.start >= 0);
    if (!is_compute(r.op.kind) || r.end == r.start) continue;
    const auto d = static_cast<std::size_t>(r.ref.device);
    by_start = by_start && r.start >= last_start[d];
    last_start[d] = r.start;
    ++ops_on[d];
    drawn.push_back(&r);
    makespan = std::max(makespan, r.end);
  }
  // Later (by start) ops overwrite earlier ones where rounding makes them share a column;
  // rows are independent, so only each device's order matters. A device's compute ops run
  // one at a time, so in completion order they already are by start (and are drawn in
  // memory order); sorted only if not.
  if (!by_start)
    std::stable_sort(drawn.begin(), drawn.end(), [](const OpRecord* a, const OpRecord* b) {
      return std::tie(a->ref.device, a->start) < std::tie(b->ref.device, b->start);
    });
  const std::int64_t max_width = std::max(1, options.max_width);
  // The time unit: the gcd of all op boundaries, unless the chart must be scaled down anyway.
  // A device with more ops than columns has makespan >= ops x gcd > max_width x gcd, so
  // the gcd would be overruled: millions of ops are not walked for it.
  if (devices > 0 && *std::max_element(ops_on.begin(), ops_on.end()) <= max_width)
    for (const OpRecord* r : drawn) gcd = std::gcd(gcd, std::gcd(r->start, r->end));
  Labeler labeler;
  labeler.with_stage = !schedule.placement.empty() && schedule.chunks_per_device() > 1;

  Scale scale;
  scale.unit = gcd == 0 ? 1 : gcd;
  if (makespan / scale.unit > max_width) {
    scale.unit = nice_at_least((makespan + max_width - 1) / max_width);
    scale.scaled = true;
  } else {
    // Zoom in until the widest label fits the shortest op, if the width allows.
    std::int64_t shortest = makespan / scale.unit;
    std::size_t widest = 1;
    for (const OpRecord* r : drawn) {
      shortest = std::min(shortest, (r->end - r->start) / scale.unit);
      widest = std::max(widest, labeler.full(r->op).size());
    }
    const auto wanted = static_cast<std::int64_t>(widest);
    scale.per_unit = std::max<std::int64_t>(1, (wanted + shortest - 1) / std::max<std::int64_t>(1, shortest));
    if (makespan > 0) scale.per_unit = std::min(scale.per_unit, std::max<std::int64_t>(1, max_width / (makespan / scale.unit)));
  }
  const std::int64_t units_total = (makespan + scale.unit - 1) / scale.unit;
  const std::int64_t columns = units_total * scale.per_unit;

  std::vector<std::string> rows(static_cast<std::size_t>(devices), std::string(static_cast<std::size_t>(columns), '.'));
  bool kinds_seen[kNumOpKinds] = {};
  bool pipelines = false;
  for (const OpRecord* r : drawn) {
    kinds_seen[static_cast<int>(r->op.kind)] = true;
    pipelines = pipelines || r->op.pipeline != 0;
    const std::int64_t c0 = std::min(scale.col(r->start), columns - 1);
    const std::int64_t c1 = std::min(std::max(scale.col(r->end), c0 + 1), columns);
    const auto width = static_cast<std::size_t>(c1 - c0);
    char* cell = rows[static_cast<std::size_t>(r->ref.device)].data() + c0;
    if (width == 1) {  // no label is narrower than its kind letter (a scaled-down chart: most ops)
      *cell = kind_letter(r->op.kind);
      continue;
    }
    const std::string label = labeler.fitting(r->op, width);
    std::fill(std::copy(label.begin(), label.end(), cell), cell + width,
              static_cast<char>(kind_letter(r->op.kind) - 'A' + 'a'));
  }

  std::size_t name_width = 0;
  for (int d = 0; d < devices; ++d) name_width = std::max(name_width, device_name(d).size());
  std::string out = std::string(name_width + 2, ' ') + ruler(scale, units_total, columns) + "\n";
  for (int d = 0; d < devices; ++d) {
    std::string name = device_name(d);
    name.resize(name_width, ' ');
    out += name + " |" + rows[static_cast<std::size_t>(d)] + "|\n";
  }
  if (options.legend) out += legend_lines(kinds_seen, labeler, pipelines, scale, max_width);
  return out;
}

std::string render_ascii_order(const Schedule& schedule) {
  std::size_t name_width = 0;
  for (std::size_t d = 0; d < schedule.ops.size(); ++d)
    name_width = std::max(name_width, device_name(static_cast<int>(d)).size());
  std::string out;
  for (std::size_t d = 0; d < schedule.ops.size(); ++d) {
    std::string line = device_name(static_cast<int>(d)) + ":";
    if (!schedule.ops[d].empty()) line.resize(name_width + 1, ' ');  // align the op columns
    for (const Op& op : schedule.ops[d]) {
      line += ' ';
      append_op_text(line, op);
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace pipesim
