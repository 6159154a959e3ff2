#pragma once
// Sweeps of several blocks (docs/sweep.md#blocks): `--model a,b --gpus 32,64` or a grid file
// {"blocks": [{...}, ...]}. A block is one grid as `pipesim sweep` runs it alone (one model,
// one cluster size, its GPU types as a grid dimension); the blocks run one after another and
// their outputs go into one set of files, each row and selection saying its block. A sweep of
// one block writes exactly what it wrote before blocks existed.
//
// What is compared: within a block, configurations of equal global batch (tools/sweep_output.hpp);
// across blocks, only the best of each block at equal global batch and the same model.
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/sweep.hpp"
#include "tools/sweep_output.hpp"

namespace pipesim {

struct SweepBlock {
  std::string name;  // what tells it apart: "gpt3-13b/64"; empty in a sweep of one block
  SweepSettings settings;
  SweepGrid grid;
  std::string origin;  // where a grid file's block is, "g.json: /blocks/2": what its errors name; empty: flags
};

// One block's outcome.
struct BlockResult {
  SweepResult result;
  SweepSelection selection;
};

// --gpus: cluster sizes, comma-separated, in the order given; InputError naming the flag for
// an item that is not a positive integer or one given twice.
std::vector<int> parse_gpus_list(const std::string& text);

// The blocks of a grid file: {"blocks": [{settings}, ...]}, at least one, each an object of
// `pipesim sweep` settings (the keys of --config) and an optional "name". InputError naming
// the file and the JSON path for anything else.
std::vector<nlohmann::json> read_grid_file(const std::string& path);

// Names the blocks after what differs between them (model, GPUs, hardware), joined by "/":
// "gpt3-13b/64". `given`: a name from the grid file, or empty. A name that is not unique, or
// empty, gets the block's number: "gpt3-13b #2", "block 3".
void name_blocks(std::vector<SweepBlock>& blocks, const std::vector<std::string>& given);

// The outputs of a sweep of several blocks: the CSV with a leading "block" column; the JSON
// with "blocks" (each one's settings and counts), "configurations" and "selections" (each
// with its "block") and "across_blocks"; the text: each block's tables, then the comparison
// across blocks.
void write_blocks_csv(std::ostream& out, const std::vector<SweepBlock>& blocks, const std::vector<BlockResult>& results);
nlohmann::ordered_json blocks_json(const std::vector<SweepBlock>& blocks, const std::vector<BlockResult>& results);
std::string blocks_text(const std::vector<SweepBlock>& blocks, const std::vector<BlockResult>& results);

// The comparisons across blocks: for each model and global batch that two or more blocks
// share (with --global-batch-size), the best configuration of each of those blocks, fastest
// first (ties in block order). Rows differing in model or global batch are never compared.
struct AcrossBlocks {
  std::string model;
  long long global_batch = 0;
  std::vector<std::pair<std::size_t, std::size_t>> best;  // (block, position in its rows)
};
std::vector<AcrossBlocks> across_blocks(const std::vector<SweepBlock>& blocks, const std::vector<BlockResult>& results);

// The HTML page of a sweep of several blocks (--report): each block's page (sweep_page) in a
// section of its own, then the comparisons across blocks, the tables of the text's.
SweepBlocksPage blocks_page(const std::vector<SweepBlock>& blocks, const std::vector<BlockResult>& results);

}  // namespace pipesim
