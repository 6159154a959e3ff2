#include "traces/html_style.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "traces/svg.hpp"

namespace pipesim {
namespace {

struct Style {
  std::string_view css_class;
  std::string_view name;
  std::string_view colour;
  bool light_text;
};

// Indexed by WorkKind. Backward-family kinds get warm/green hues, forward the light blue
// everyone expects; the optimizer's vermillion stands out because it is rare.
constexpr std::array<Style, kNumWorkKinds> kStyles = {{
    {"kF", "forward (F)", "#56B4E9", false},
    {"kB", "backward (B)", "#009E73", false},
    {"kI", "input gradient (I)", "#E69F00", false},
    {"kW", "weight gradient (W)", "#F0E442", false},
    {"kO", "optimizer (OPT)", "#D55E00", true},
    {"kC", "communication (send)", "#CC79A7", false},
    {"kS", "sync (grad all-reduce)", "#0072B2", true},
}};

const Style& style(WorkKind kind) { return kStyles[static_cast<std::size_t>(kind)]; }

}  // namespace

WorkKind work_kind(OpKind kind) {
  switch (kind) {
    case OpKind::F: return WorkKind::Forward;
    case OpKind::B: return WorkKind::Backward;
    case OpKind::I: return WorkKind::InputGrad;
    case OpKind::W: return WorkKind::WeightGrad;
    case OpKind::GradSync: return WorkKind::Sync;
    case OpKind::OptStep: return WorkKind::Optimizer;
    case OpKind::SendF:
    case OpKind::RecvF:
    case OpKind::SendB:
    case OpKind::RecvB: return WorkKind::Sync;  // zero-length marks of the communication ops
  }
  return WorkKind::Forward;
}

std::string_view work_class(WorkKind kind) { return style(kind).css_class; }
std::string_view work_name(WorkKind kind) { return style(kind).name; }
std::string_view work_colour(WorkKind kind) { return style(kind).colour; }
bool work_light_text(WorkKind kind) { return style(kind).light_text; }

std::string_view time_category_class(TimeCategory c) {
  static constexpr std::array<std::string_view, kNumTimeCategories> kClasses = {"tF", "tB", "tI", "tW", "tR", "tT",
                                                                                "tP", "tD", "tO", "tC", "tH", "tX"};
  return kClasses[static_cast<std::size_t>(c)];
}

std::string_view time_category_colour(TimeCategory c) {
  switch (c) {
    case TimeCategory::Forward: return work_colour(WorkKind::Forward);
    case TimeCategory::Backward: return work_colour(WorkKind::Backward);
    case TimeCategory::InputGrad: return work_colour(WorkKind::InputGrad);
    case TimeCategory::WeightGrad: return work_colour(WorkKind::WeightGrad);
    case TimeCategory::Recompute: return "#9FD3F0";  // a paler forward: the forward again
    case TimeCategory::TpComm: return "#882255";
    case TimeCategory::Pipeline: return work_colour(WorkKind::Comm);
    case TimeCategory::DpSync: return work_colour(WorkKind::Sync);
    case TimeCategory::Optimizer: return work_colour(WorkKind::Optimizer);
    case TimeCategory::Contention: return "#E8A33D";  // amber: waiting on a shared core or link
    case TimeCategory::Host: return "#7F6A93";        // muted violet: the device thread's own work
    case TimeCategory::Idle: return "#D4D4DC";
  }
  return "#000000";
}

std::string legend_html(const std::vector<WorkKind>& shown) {
  std::string out = "<div class=\"legend\">";
  for (WorkKind k : shown)
    out += "<span><i class=\"sw " + std::string(work_class(k)) + "\"></i>" + xml_escape(work_name(k)) + "</span>";
  out += "<span><i class=\"sw idle\"></i>idle (bubble)</span></div>\n";
  return out;
}

std::string series_colour(int index, int count) {
  // Okabe-Ito without yellow (too pale for a 1.5 px line on white), then black and grey.
  static constexpr std::array<std::string_view, 8> kCategorical = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                                   "#56B4E9", "#D55E00", "#000000", "#999999"};
  if (count <= static_cast<int>(kCategorical.size()))
    return std::string(kCategorical[static_cast<std::size_t>(std::clamp(index, 0, 7))]);
  // Viridis from dark purple to green, stopping before its pale yellow end.
  static constexpr std::array<std::array<double, 3>, 5> kRamp = {
      {{68, 1, 84}, {65, 68, 135}, {42, 120, 142}, {34, 168, 132}, {122, 209, 81}}};
  const double t = count > 1 ? static_cast<double>(index) / (count - 1) * (kRamp.size() - 1) : 0.0;
  const auto lo = static_cast<std::size_t>(std::clamp(std::floor(t), 0.0, static_cast<double>(kRamp.size() - 2)));
  const double f = t - static_cast<double>(lo);
  char buf[8];
  int rgb[3];
  for (std::size_t c = 0; c < 3; ++c)
    rgb[c] = static_cast<int>(std::lround(kRamp[lo][c] + (kRamp[lo + 1][c] - kRamp[lo][c]) * f));
  std::snprintf(buf, sizeof buf, "#%02X%02X%02X", rgb[0], rgb[1], rgb[2]);
  return buf;
}

std::string report_css() {
  std::string css =
      R"(body{margin:0;background:#f6f6f8;color:#1d1d24;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1240px;margin:0 auto;padding:12px 24px 48px}
h1{font-size:24px;margin:10px 0 2px}
h2{font-size:20px;margin:40px 0 6px;padding-top:14px;border-top:2px solid #d8d8e0}
h3{font-size:15px;margin:22px 0 6px}
a{color:#0b5cad}
nav{font-size:13px;margin:6px 0}
nav a{margin-right:12px}
.settings,.note{color:#50505a;font-size:13px;max-width:90em;margin:4px 0}
.warn{color:#b3261e;font-weight:600}
table{border-collapse:collapse;background:#fff;font-variant-numeric:tabular-nums;font-size:13px;margin:4px 0}
th,td{padding:4px 10px;border-bottom:1px solid #e4e4ea;text-align:right;white-space:nowrap}
th{background:#ececf2;font-weight:600;white-space:normal;vertical-align:bottom}
td:first-child,th:first-child{text-align:left}
table.kv td{text-align:left}
table.kv td:first-child{color:#50505a;padding-right:24px}
.wide{overflow-x:auto}
.cols{display:flex;flex-wrap:wrap;gap:8px 24px;align-items:flex-start}
.best{font-weight:700}
details{margin:8px 0}
summary{cursor:pointer;font-weight:600;font-size:14px}
.legend{display:flex;flex-wrap:wrap;gap:4px 18px;font-size:13px;margin:6px 0}
.sw{display:inline-block;width:14px;height:14px;border-radius:3px;vertical-align:-2px;margin-right:6px;border:1px solid rgba(0,0,0,.2)}
.sw.line{height:3px;vertical-align:3px;border:0}
svg{display:block;background:#fff;border:1px solid #e4e4ea;border-radius:4px;max-width:100%;height:auto;margin:4px 0}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;pointer-events:none}
.lane,.sw.idle{fill:#e6e6ec;background:#e6e6ec}
.lane.thin{fill:#f0f0f4}
.ops rect{stroke:#fff;stroke-width:.6}
.lbl{font-size:10px;fill:#15151a}
.lbl.w{fill:#fff}
.rowlbl{font-size:12px;fill:#33333b}
.caption{font-size:13px;font-weight:600;fill:#1d1d24}
.grid{stroke:#dcdce3;stroke-width:1}
.base{stroke:#8a8a94;stroke-width:1}
.tick{font-size:11px;fill:#50505a}
.atitle{font-size:12px;fill:#33333b}
.mem{fill:none;stroke-width:1.6;stroke-linejoin:round}
.cap{stroke:#b3261e;stroke-width:1.5;stroke-dasharray:6 4}
.caplbl{font-size:11px;fill:#b3261e}
.mw{fill:#0072B2;background:#0072B2}.mg{fill:#56B4E9;background:#56B4E9}.mo{fill:#009E73;background:#009E73}
.mb{fill:#999999;background:#999999}.ma{fill:#E69F00;background:#E69F00}
.membars rect{stroke:#fff;stroke-width:.6}
.over{fill:#b3261e;font-weight:600}
tr.nofit td{color:#7a1c16;background:#fbeceb}
tr.nofit td.fit{font-weight:700}
.badge{display:inline-block;font-size:13px;font-weight:600;color:#fff;background:#b3261e;border-radius:4px;padding:1px 8px;margin-left:10px;vertical-align:3px}
.verdict{font-size:15px;margin:10px 0;padding:8px 12px;background:#fff;border-left:4px solid #009E73}
.verdict.none{border-left-color:#b3261e}
.bmax{fill:#0072B2}.bmean{fill:#56B4E9}.bdelay{fill:#E69F00}
.sw.bmax{background:#0072B2}.sw.bmean{background:#56B4E9}.sw.bdelay{background:#E69F00}
)";
  for (int k = 0; k < kNumWorkKinds; ++k) {
    const Style& s = kStyles[static_cast<std::size_t>(k)];
    css += "." + std::string(s.css_class) + "{fill:" + std::string(s.colour) + ";background:" + std::string(s.colour) +
           "}\n";
  }
  for (TimeCategory c : kTimeCategories)
    css += "." + std::string(time_category_class(c)) + "{fill:" + std::string(time_category_colour(c)) +
           ";background:" + std::string(time_category_colour(c)) + "}\n";
  return css;
}

}  // namespace pipesim
