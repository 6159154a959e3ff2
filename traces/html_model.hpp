#pragma once
// The report's parts for runs on a real model and GPU (traces/report_assessment.hpp): what
// was run on what, which configuration to pick, and the money and memory of each. A
// configuration that does not fit in its GPU's memory is marked as such everywhere and is
// never highlighted as the best of anything.
#include <string>
#include <vector>

#include "sim/metrics.hpp"
#include "traces/report_assessment.hpp"

namespace pipesim {

// One run as these tables see it.
struct ModelRow {
  const Metrics* metrics = nullptr;
  const ReportAssessment* assessment = nullptr;
  std::string anchor;  // links the name to the run's section; may be empty
};

// "over by 6.5 GiB" or "fits (24.4 GiB free)".
std::string fit_text(const ReportAssessment& a);

// Model, GPU(s) with memory and price, cluster, tp / pp / dp and global batch: a key/value
// table for the top of the page. Values that differ between runs are listed.
std::string experiment_facts_html(const std::vector<ModelRow>& rows);

// One line naming the configuration with the most tokens/s among those that fit (and the
// cheapest, where that is another), and the faster ones that do not fit; or, when none
// fits, the one closest to fitting.
std::string verdict_html(const std::vector<ModelRow>& rows);

// One row per run: time, tokens/s, MFU, $/M tokens, bubble, peak memory against capacity,
// fits, weight copies and staleness. Bold marks the best of a column among the rows that
// fit (nothing is bold where they are all equal); rows that do not fit are class "nofit".
std::string model_compare_summary_html(const std::vector<ModelRow>& rows);

// A run's model numbers as a key/value table, beside metrics_summary_html's.
std::string model_summary_html(const ReportAssessment& a);

// Per device: each part of the memory at the device's peak, the total and its share of the
// capacity.
std::string device_memory_table_html(const ReportAssessment& a);

// 65536 -> "65,536": whole numbers with thousands separators.
std::string grouped_number(double value);

}  // namespace pipesim
