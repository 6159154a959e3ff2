#include "traces/html_intervals.hpp"

#include <algorithm>

#include "traces/html_tables.hpp"
#include "traces/svg.hpp"

namespace pipesim {

std::string intervals_html(const std::vector<ReportInterval>& rows, int samples, std::uint64_t seed) {
  const auto td = [](const std::string& text) { return "<td>" + xml_escape(text) + "</td>"; };
  const bool calibrated =
      std::any_of(rows.begin(), rows.end(), [](const ReportInterval& r) { return !r.calibrated.empty(); });
  std::string out = "<section id=\"intervals\">\n<h2>Prediction intervals</h2>\n<p class=\"note\">" +
                    std::to_string(samples) + " simulations, each op's duration drawn from its measured distribution " +
                    "(seed " + std::to_string(seed) + "). " + kIntervalsAboveThePlainPrediction +
                    (calibrated ? " The calibrated range is [p5, p95] widened by how far past validations of this "
                                  "machine fell outside theirs (validate --calibration)."
                                : "") +
                    "</p>\n<table>\n<tr><th>schedule</th>" +
                    "<th>time/iter p10</th><th>p50</th><th>p90</th>" +
                    (calibrated ? "<th>calibrated p5 .. p95</th>" : "") +
                    "<th>bubble p10</th><th>p50</th><th>p90</th></tr>\n";
  for (const ReportInterval& r : rows)
    out += "<tr>" + td(r.schedule) + td(format_duration(r.time_p10)) + td(format_duration(r.time_p50)) +
           td(format_duration(r.time_p90)) + (calibrated ? td(r.calibrated.empty() ? "-" : r.calibrated) : "") +
           td(report_percent(r.bubble_p10)) + td(report_percent(r.bubble_p50)) +
           td(report_percent(r.bubble_p90)) + "</tr>\n";
  return out + "</table>\n</section>\n";
}

}  // namespace pipesim
