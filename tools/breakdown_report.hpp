#pragma once
// Where the time goes (sim/breakdown.hpp) for people and programs: the `--breakdown` tables
// of simulate and compare, and the `time_breakdown` object of `--json` (docs/breakdown.md,
// docs/json.md).
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/breakdown.hpp"

namespace pipesim {

// {window_start_ns, window_end_ns, iterations_counted, time_per_iteration_s, critical_device,
//  pipeline_s: {forward, ...}, pipeline_share: {...}, per_device: [{device, per_iteration_s,
//  share, window_ns}]}
nlohmann::ordered_json breakdown_json(const TimeBreakdown& b);

// One row per device and one for their mean: each category per iteration with its share of
// the iteration. Categories that are zero on every row are left out and named below.
std::string breakdown_table(const TimeBreakdown& b);
// One row per run (the mean over its devices): `rows` are (schedule name, breakdown).
std::string breakdown_compare_table(const std::vector<std::pair<std::string, const TimeBreakdown*>>& rows);

}  // namespace pipesim
