#pragma once
// Metrics for people (aligned tables with units) and for programs (JSON).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/metrics.hpp"

namespace pipesim {

// `j` as the text --json prints (2-space indent). Strings from the user's input that are not
// UTF-8 (a file name) are written with U+FFFD instead of failing.
std::string json_text(const nlohmann::ordered_json& j);

// The --json object of `simulate` (one schedule); `compare` prints a list of them.
nlohmann::ordered_json metrics_json(const Metrics& m);
// {max_mismatch, mean_mismatch, mismatched_fraction, max_delay, mean_delay, per_stage: [...]}
nlohmann::ordered_json staleness_json(const Staleness& s);

std::string summary_text(const Metrics& m);       // settings and headline numbers
std::string device_table(const Metrics& m);       // one row per device
std::string compare_table(const std::vector<Metrics>& all);  // one row per schedule
// Under a table: which runs are one iteration of a schedule whose iterations overlap
// (GeneratorInfo::overlaps_iterations), so show neither the steady state nor the staleness
// across steps; "" if none.
std::string one_iteration_note(const std::vector<Metrics>& runs);

}  // namespace pipesim
