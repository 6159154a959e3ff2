#pragma once
// An assessment (assess/assessment.hpp) for people and programs: its --json fields, the
// aligned table of compare and simulate, and what the HTML report shows of it.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "assess/assessment.hpp"
#include "sim/metrics.hpp"
#include "traces/report_assessment.hpp"

namespace pipesim {

// The --json object of one schedule on a model: `run`, the fields of every run
// (metrics_json, tools/report.hpp, and time_breakdown), then the assessment's (docs/json.md).
nlohmann::ordered_json assessment_json(const Assessment& a, nlohmann::ordered_json run);
std::string assessment_table(const std::vector<std::pair<Assessment, Metrics>>& rows);
// What the HTML report shows of it (traces/report_assessment.hpp).
ReportAssessment report_assessment(const Assessment& a);

}  // namespace pipesim
