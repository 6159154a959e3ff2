#include "traces/svg.hpp"

#include <charconv>
#include <cmath>

#include "core/error.hpp"

namespace pipesim {

std::string format_fixed_number(double value, int decimals) {
  PIPESIM_ASSERT(decimals >= 0 && decimals <= 12);
  if (!std::isfinite(value)) return value != value ? "nan" : (value > 0 ? "inf" : "-inf");
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, decimals);
  if (res.ec != std::errc()) return "overflow";
  std::string out(buf, res.ptr);
  // A value that rounds to zero prints without a sign: "-0.0" would read like a bug.
  if (out.front() == '-' && out.find_first_not_of("-0.") == std::string::npos) out.erase(0, 1);
  return out;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string svg_coord(double value) { return format_fixed_number(value, 1); }

SvgWriter::SvgWriter(double width, double height, std::string_view css_class, std::string_view label) {
  out_ += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"";
  out_ += xml_escape(css_class);
  out_ += "\" width=\"" + svg_coord(width) + "\" height=\"" + svg_coord(height) + "\" viewBox=\"0 0 " +
          svg_coord(width) + " " + svg_coord(height) + "\" role=\"img\" aria-label=\"" + xml_escape(label) + "\">";
}

void SvgWriter::rect(double x, double y, double w, double h, std::string_view css_class, std::string_view title) {
  out_ += "<rect x=\"" + svg_coord(x) + "\" y=\"" + svg_coord(y) + "\" width=\"" + svg_coord(w) + "\" height=\"" +
          svg_coord(h) + "\"";
  if (!css_class.empty()) out_ += " class=\"" + std::string(css_class) + "\"";
  if (title.empty()) {
    out_ += "/>";
  } else {
    out_ += "><title>" + xml_escape(title) + "</title></rect>";
  }
}

void SvgWriter::line(double x1, double y1, double x2, double y2, std::string_view css_class) {
  out_ += "<line x1=\"" + svg_coord(x1) + "\" y1=\"" + svg_coord(y1) + "\" x2=\"" + svg_coord(x2) + "\" y2=\"" +
          svg_coord(y2) + "\" class=\"" + std::string(css_class) + "\"/>";
}

void SvgWriter::text(double x, double y, std::string_view content, std::string_view css_class,
                     std::string_view anchor) {
  out_ += "<text x=\"" + svg_coord(x) + "\" y=\"" + svg_coord(y) + "\"";
  if (!css_class.empty()) out_ += " class=\"" + std::string(css_class) + "\"";
  if (anchor != "start") out_ += " text-anchor=\"" + std::string(anchor) + "\"";
  out_ += ">" + xml_escape(content) + "</text>";
}

void SvgWriter::path(std::string_view d, std::string_view css_class, std::string_view stroke, std::string_view title) {
  out_ += "<path d=\"" + std::string(d) + "\" class=\"" + std::string(css_class) + "\"";
  if (!stroke.empty()) out_ += " stroke=\"" + std::string(stroke) + "\"";
  if (title.empty()) {
    out_ += "/>";
  } else {
    out_ += "><title>" + xml_escape(title) + "</title></path>";
  }
}

void SvgWriter::open_group(std::string_view css_class) { out_ += "<g class=\"" + std::string(css_class) + "\">"; }
void SvgWriter::close_group() { out_ += "</g>"; }
void SvgWriter::raw(std::string_view markup) { out_ += markup; }

std::string SvgWriter::finish() {
  out_ += "</svg>";
  return std::move(out_);
}

double nice_step(double span, int max_ticks) {
  PIPESIM_ASSERT(span > 0 && max_ticks >= 1);
  const double raw = span / max_ticks;
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (;; power *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if (m * power >= raw * (1 - 1e-12)) return m * power;
}

Tick nice_step_ticks(Tick span, int max_ticks) {
  PIPESIM_ASSERT(span > 0 && max_ticks >= 1);
  const Tick raw = (span + max_ticks - 1) / max_ticks;  // ceil: at most max_ticks intervals
  for (Tick power = 1;; power *= 10)
    for (Tick m : {1, 2, 5})
      if (m * power >= raw) return m * power;
}

TimeUnit time_unit_for(Tick range_end) {
  if (range_end >= kNsPerS) return {"s", kNsPerS};
  if (range_end >= kNsPerMs) return {"ms", kNsPerMs};
  if (range_end >= kNsPerUs) return {"us", kNsPerUs};
  return {"ns", 1};
}

std::string format_time_tick(Tick value, Tick step, TimeUnit unit) {
  int decimals = 0;
  for (Tick scale = unit.ns; decimals < 9 && step % scale != 0; scale /= 10) ++decimals;
  return format_fixed_number(static_cast<double>(value) / static_cast<double>(unit.ns), decimals);
}

ByteUnit byte_unit_for(double max_bytes) {
  static constexpr std::string_view kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double size = 1;
  int unit = 0;
  while (unit < 4 && max_bytes >= size * 1024) {
    size *= 1024;
    ++unit;
  }
  return {kNames[unit], size};
}

}  // namespace pipesim
