#pragma once
// The report's look in one place: the colour of each kind of work, the legend, the colours
// of per-device series and the page's CSS. Colours are the Okabe-Ito palette, chosen to
// stay distinguishable with the common colour-vision deficiencies.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/op.hpp"
#include "sim/breakdown.hpp"

namespace pipesim {

// What a Gantt chart colours: the compute kinds, plus point-to-point transfers
// ("communication") and gradient-sync collectives ("sync").
enum class WorkKind : std::uint8_t { Forward, Backward, InputGrad, WeightGrad, Optimizer, Comm, Sync };
inline constexpr int kNumWorkKinds = 7;

WorkKind work_kind(OpKind kind);              // GradSync -> Sync
std::string_view work_class(WorkKind kind);   // CSS class of its shapes: "kF", "kB", ...
std::string_view work_name(WorkKind kind);    // "forward", "input gradient", ...
std::string_view work_colour(WorkKind kind);  // "#56B4E9", ...
// True where a dark label is hard to read on the colour (labels are then white).
bool work_light_text(WorkKind kind);

// The time breakdown's categories (sim/breakdown.hpp): CSS class ("tF", ...) and colour.
// The kinds of work share the Gantt chart's colours; idle is the lane's grey.
std::string_view time_category_class(TimeCategory c);
std::string_view time_category_colour(TimeCategory c);

// A row of swatches for the kinds shown, plus "idle" (the lane's background).
std::string legend_html(const std::vector<WorkKind>& shown);

// Colour of series `index` of `count` (memory lines per device): distinct categorical
// colours up to 8 series, a dark-to-light ramp beyond (so neighbours look alike).
std::string series_colour(int index, int count);

// The whole <style> content of the page.
std::string report_css();

}  // namespace pipesim
