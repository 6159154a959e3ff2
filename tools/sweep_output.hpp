#pragma once
// What `pipesim sweep` writes: the CSV (one row per evaluated configuration, columns in
// docs/sweep.md), the JSON document, the text tables, and the HTML page's input. All are
// pure functions of the result, so runs with any --jobs give identical bytes.
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tools/sweep.hpp"
#include "traces/html_sweep.hpp"

namespace pipesim {

// The configurations a sweep points out (positions in SweepResult::rows), among those of one
// global batch: a sweep compares configurations of equal batch. Without --global-batch-size
// there is one selection over every row (global_batch 0), and the rows differ in batch.
struct BatchSelection {
  long long global_batch = 0;
  std::vector<std::size_t> best, memory_front, staleness_front;
  std::vector<std::size_t> closest;         // when none fits: the closest (closest_rows)
  std::vector<std::vector<FitChange>> advice;  // for each of `closest`: sweep_fit_changes
};
struct SweepSelection {
  std::vector<BatchSelection> batches;
};
// The selections of each global batch; where none fits, the three closest with the changes
// that would make them fit (re-evaluated, so this simulates again).
SweepSelection select_rows(const SweepSettings& settings, const SweepGrid& grid, const SweepResult& result,
                           std::size_t top);

// `block` (a sweep of several blocks, tools/sweep_blocks.hpp): a leading "block" column with
// this value; `header`: whether to write the line of column names.
void write_sweep_csv(std::ostream& out, const SweepGrid& grid, const SweepResult& result, std::string_view block = {},
                     bool header = true);
// One configuration in the CSV's column order; the CSV is written from these objects, so
// the CSV and the JSON cannot disagree.
nlohmann::ordered_json sweep_row_json(const SweepGrid& grid, const SweepRow& row);
// {settings, combinations, evaluated, fits, skipped, configurations, selections}; each
// selection is {global_batch, best, pareto_memory, pareto_staleness} of combination indices.
nlohmann::ordered_json sweep_json(const SweepSettings& settings, const SweepGrid& grid, const SweepResult& result,
                                  const SweepSelection& selection);

// One line naming the model, cluster and grid.
std::string sweep_settings_line(const SweepSettings& settings, const SweepGrid& grid);
// Counts, skipped combinations by reason, the best-K table and both fronts.
std::string sweep_text(const SweepSettings& settings, const SweepGrid& grid, const SweepResult& result,
                       const SweepSelection& selection);

// A table as text: aligned columns under a rule (tools/table.hpp).
std::string render_text(const SweepTable& table);
SweepPage sweep_page(const SweepSettings& settings, const SweepGrid& grid, const SweepResult& result,
                     const SweepSelection& selection);

}  // namespace pipesim
