#pragma once
// The report's tables as HTML (traces/html_report.hpp): the numbers of sim/metrics.hpp
// with units, formatted the same way as the CLI's text tables.
#include <string>
#include <vector>

#include "sim/metrics.hpp"

namespace pipesim {

// "12.34 %": a fraction as a percentage with two decimals.
std::string report_percent(double fraction);

// One row of a key/value table, "<tr><td>key</td><td>value</td></tr>", both escaped.
std::string html_row(const std::string& key, const std::string& value);
// "<td>text</td>", escaped; with `css`, "<td class=\"css\">" (the report's "best", "fit", ...).
std::string html_cell(const std::string& text, const char* css = nullptr);
// html_cell's class for a ranked column: "best" where `best`, else none.
const char* best_class(bool best);

// The headline numbers of one run: two key/value tables side by side, after `more` (another
// table, e.g. html_model.hpp's, which comes first).
std::string metrics_summary_html(const Metrics& m, const std::string& more = {});

// One row per run. `anchors[i]` (may be empty) links row i's name to its section; with
// `rank`, the best value of the time, throughput, bubble and memory columns is bold where
// there are several runs (false: runs that do not compete, validate's predicted and measured).
std::string compare_summary_html(const std::vector<const Metrics*>& runs, const std::vector<std::string>& anchors,
                                 bool rank = true);

// One row per device: busy, idle, idle share, peak activations and memory, weight copies.
std::string device_table_html(const Metrics& m);

}  // namespace pipesim
