#pragma once
// A tiny SVG/HTML writer for the HTML report (traces/html_report.hpp): escaped text,
// locale-independent fixed-format numbers and "nice" axis ticks, so the same input always
// gives byte-identical markup. No DOM is built: elements are appended to a string.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"

namespace pipesim {

// `value` with exactly `decimals` decimals ("12.5", "-0" never appears: it prints "0").
// Uses std::to_chars, so a global locale cannot change the decimal point.
std::string format_fixed_number(double value, int decimals);

// Escapes & < > " ' for text content and attribute values.
std::string xml_escape(std::string_view text);

// Appends SVG elements to one string. Coordinates are written with one decimal.
class SvgWriter {
 public:
  // Opens <svg> with a viewBox of width x height; `label` becomes aria-label and the
  // accessible name of the picture.
  SvgWriter(double width, double height, std::string_view css_class, std::string_view label);

  // <rect>; an empty `title` omits the hover tooltip (<title> child).
  void rect(double x, double y, double w, double h, std::string_view css_class, std::string_view title = {});
  void line(double x1, double y1, double x2, double y2, std::string_view css_class);
  // `anchor`: "start", "middle" or "end".
  void text(double x, double y, std::string_view content, std::string_view css_class,
            std::string_view anchor = "start");
  // <path d=...> with an optional inline stroke colour (per-series colours).
  void path(std::string_view d, std::string_view css_class, std::string_view stroke = {}, std::string_view title = {});
  void open_group(std::string_view css_class);
  void close_group();
  // Appends `markup` unchanged (it must be well-formed).
  void raw(std::string_view markup);
  // Closes </svg> and returns the markup; the writer is empty afterwards.
  std::string finish();

 private:
  std::string out_;
};

// One decimal, as SvgWriter writes coordinates (for building path data).
std::string svg_coord(double value);

// The smallest of 1, 2, 5 x 10^k that splits [0, span] into at most `max_ticks`
// intervals, so axes count in round numbers. span > 0, max_ticks >= 1.
double nice_step(double span, int max_ticks);
Tick nice_step_ticks(Tick span, int max_ticks);  // same on integers, at least 1 ns

// A time axis in one unit chosen from the range end: the unit's name ("ms") and its size.
struct TimeUnit {
  std::string_view name;
  Tick ns = 1;
};
TimeUnit time_unit_for(Tick range_end);
// `value` in `unit`, with as many decimals as `step` needs (step 250 us in ms: "0.25").
std::string format_time_tick(Tick value, Tick step, TimeUnit unit);

// A byte axis in one binary unit chosen from the maximum: name ("MiB") and size.
struct ByteUnit {
  std::string_view name;
  double bytes = 1;
};
ByteUnit byte_unit_for(double max_bytes);

}  // namespace pipesim
