#pragma once
// The HTML page of `pipesim sweep --report`: the best configurations as a table and the two
// Pareto fronts (throughput against peak memory, with each GPU's capacity, and against
// staleness) as SVG scatter plots with their tables. Self-contained like the run report
// (traces/html_report.hpp): inline CSS and SVG, no scripts; tooltips are <title> elements.
//
// The page knows nothing about how a sweep runs: the caller passes the points and tables,
// formatted. Deterministic: the same input gives a byte-identical page.
//
// Large sweeps stay small: points that land on the same pixel with the same look are drawn
// once, their tooltip counting the others.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace pipesim {

// One evaluated configuration as the plots see it.
struct SweepPoint {
  std::string label;  // tooltip, e.g. "#12 1f1b tp=2 pp=4 m=64 b=1 on h100-sxm"
  double tokens_per_s = 0;
  std::int64_t peak_memory_bytes = 0;
  std::int32_t max_mismatch = 0;
  bool fits = false;
};

// A table of preformatted cells ("1.234 s", "80.0 GiB").
struct SweepTable {
  std::vector<std::string> headers;
  std::vector<bool> left;  // per column: text (left-aligned) rather than a number
  std::vector<std::vector<std::string>> rows;
};

// A vertical line on the memory plot.
struct SweepCapacity {
  std::string label;  // e.g. "h100-sxm"
  std::int64_t bytes = 0;
};

struct SweepPage {
  std::string title = "pipesim sweep";
  std::vector<std::pair<std::string, std::string>> settings;  // shown under the title
  std::vector<std::string> summary;                           // lines: counts, skipped combinations
  std::vector<SweepPoint> points;
  std::vector<std::size_t> memory_front, staleness_front;  // positions in `points`, in front order
  std::vector<SweepCapacity> capacities;
  std::string best_title = "Best configurations";
  SweepTable best, memory_table, staleness_table;
  int width = 1190;                   // px of each plot
  std::string generator = "pipesim";  // footer; never a date
};

void write_html_sweep(std::ostream& out, const SweepPage& page);

// A sweep of several blocks (docs/sweep.md#blocks) on one page: links to each block, each
// block's page as a section of its own (ids "block-K-best", ...), then the comparisons across
// blocks as tables.
struct SweepBlocksPage {
  struct Block {
    std::string name;  // the link's text
    SweepPage page;    // its title heads its section; its generator is not shown
  };
  std::string title = "pipesim sweep";
  std::vector<Block> blocks;
  std::string across_note;                                 // what is compared across blocks, or why nothing is
  std::vector<std::pair<std::string, SweepTable>> across;  // a title and a table per comparison
  std::string generator = "pipesim";
};

void write_html_sweep_blocks(std::ostream& out, const SweepBlocksPage& page);

}  // namespace pipesim
