#include "traces/html_validation.hpp"

#include <algorithm>
#include <cmath>

#include "schedules/op_text.hpp"
#include "traces/html_tables.hpp"
#include "traces/svg.hpp"

namespace pipesim {
namespace {

std::string td(const std::string& text, const char* cls = nullptr) {
  return std::string(cls ? "<td class=\"" + std::string(cls) + "\">" : "<td>") + xml_escape(text) + "</td>";
}

std::string signed_percent(double fraction) { return (fraction >= 0 ? "+" : "") + report_percent(fraction); }

std::string relative_cell(double predicted, double measured) {
  if (measured == 0) return td("-");
  return td(signed_percent((predicted - measured) / measured));
}

std::string row(const std::string& name, const std::string& predicted, const std::string& measured,
                const std::string& error_cell) {
  return "<tr>" + td(name) + td(predicted) + td(measured) + error_cell + "</tr>\n";
}

}  // namespace

std::string validation_html(const PredictionReport& r, const std::string& title, const std::string& anchor) {
  const Metrics& p = r.predicted;
  const Metrics& m = r.measured;
  std::string out = "<section id=\"" + xml_escape(anchor) + "\">\n<h2>" + xml_escape(title) + "</h2>\n";
  out += r.versions_match()
             ? "<p class=\"note\">Weight versions: all " + std::to_string(r.versions_compared) +
                   " forward and backward ops used the same version in the simulation and in the run.</p>\n"
             : "<p class=\"warn\">Weight versions differ in " + std::to_string(r.version_mismatch_count) + " of " +
                   std::to_string(r.versions_compared) + " ops (first: " +
                   xml_escape(to_string(r.version_mismatches.front().op)) + " on device " +
                   std::to_string(r.version_mismatches.front().ref.device) + ", predicted " +
                   std::to_string(r.version_mismatches.front().predicted) + ", measured " +
                   std::to_string(r.version_mismatches.front().measured) + ").</p>\n";
  if (r.unmatched_ops > 0)
    out += "<p class=\"warn\">" + std::to_string(r.unmatched_ops) +
           " ops ran in only one of the two timelines (a partial run).</p>\n";
  out += "<table>\n<tr><th>quantity</th><th>predicted</th><th>measured</th><th>error</th></tr>\n";
  out += row("time per iteration", format_duration(p.time_per_iteration), format_duration(m.time_per_iteration),
             td(signed_percent(r.time_per_iteration_error)));
  out += row("makespan", format_duration(p.makespan), format_duration(m.makespan), td(signed_percent(r.makespan_error)));
  out += row("bubble (idle / devices x makespan)", report_percent(p.bubble_ratio), report_percent(m.bubble_ratio),
             td(format_fixed_number((p.bubble_ratio - m.bubble_ratio) * 100, 2) + " points"));
  out += row("peak activation memory (max device)", format_bytes(static_cast<double>(max_peak_activation_bytes(p))),
             format_bytes(static_cast<double>(max_peak_activation_bytes(m))),
             relative_cell(static_cast<double>(max_peak_activation_bytes(p)), static_cast<double>(max_peak_activation_bytes(m))));
  out += row("max weight mismatch", std::to_string(p.staleness.max_mismatch), std::to_string(m.staleness.max_mismatch),
             td(p.staleness.max_mismatch == m.staleness.max_mismatch ? "equal" : "differs"));
  out += "</table>\n";
  out += "<h3>Op durations</h3>\n<table>\n<tr><th>kind</th><th>ops</th><th>predicted (mean)</th>"
         "<th>measured (mean)</th><th>|error| median</th><th>|error| p90</th><th>bias (signed median)</th></tr>\n";
  for (const DurationError& e : r.per_kind)
    out += "<tr>" + td(std::string(op_kind_name(e.kind))) + td(std::to_string(e.ops)) +
           td(format_duration(e.predicted_mean)) + td(format_duration(e.measured_mean)) + td(report_percent(e.median)) +
           td(report_percent(e.p90)) + td(signed_percent(e.signed_median)) + "</tr>\n";
  out += "</table>\n<p class=\"note\">error = (predicted - measured) / measured; a positive bias means the simulator "
         "expects ops to take longer than they did. The timelines below share one time axis.</p>\n</section>\n";
  return out;
}

}  // namespace pipesim
