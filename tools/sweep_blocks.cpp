#include "tools/sweep_blocks.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <ostream>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_input.hpp"
#include "core/units.hpp"
#include "tools/sweep_grid.hpp"
#include "tools/table.hpp"

namespace pipesim {
namespace {

using Json = nlohmann::ordered_json;

int block_gpus(const SweepBlock& b) { return b.settings.hardware.nodes * b.settings.hardware.gpus_per_node; }

std::string hardware_text(const SweepGrid& g) {
  std::string out;
  for (const std::string& h : g.hardware) out += (out.empty() ? "" : ",") + h;
  return out;
}

// The JSON object `j` with "block": `name` in front.
Json with_block(const std::string& name, const Json& j) {
  Json out;
  out["block"] = name;
  for (const auto& item : j.items()) out[item.key()] = item.value();
  return out;
}

}  // namespace

std::vector<int> parse_gpus_list(const std::string& text) {
  std::vector<int> out;
  for (const std::string& item : parse_name_grid(text, "--gpus")) {
    int value = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc() || ptr != item.data() + item.size())
      throw InputError("--gpus: expected GPU counts, comma-separated, e.g. 32,64; got " + quote(item));
    out.push_back(value);  // sweep_cluster_shape checks the value
  }
  return out;
}

std::vector<nlohmann::json> read_grid_file(const std::string& path) {
  const nlohmann::json root = parse_json_input(read_input_file(path, kConfigFileInput), path);
  const std::string form = "expected {\"blocks\": [{\"model\": ..., \"gpus\": ..., ...}, ...]}";
  if (!root.is_object()) throw InputError(path + ": " + form + ", got " + root.type_name());
  for (const auto& item : root.items())
    if (item.key() != "blocks") throw InputError(path + ": /" + item.key() + ": unknown key; " + form);
  if (!root.contains("blocks")) throw InputError(path + ": no \"blocks\"; " + form);
  const nlohmann::json& blocks = root["blocks"];
  if (!blocks.is_array() || blocks.empty())
    throw InputError(path + ": /blocks: expected a non-empty array of objects, got " +
                     (blocks.is_array() ? std::string("an empty array") : std::string(blocks.type_name())));
  std::vector<nlohmann::json> out;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const nlohmann::json& b = blocks[k];
    const std::string at = path + ": /blocks/" + std::to_string(k);
    if (!b.is_object()) throw InputError(at + ": expected an object of settings, got " + b.type_name());
    if (b.contains("name")) {
      const nlohmann::json& n = b["name"];
      if (!n.is_string() || n.get<std::string>().empty() ||
          n.get<std::string>().find_first_of("\n\r") != std::string::npos)
        throw InputError(at + "/name: expected a non-empty one-line string");
      for (std::size_t e = 0; e < k; ++e)
        if (blocks[e].is_object() && blocks[e].contains("name") && blocks[e]["name"] == n)
          throw InputError(at + "/name: " + quote(n.get<std::string>()) + " is the name of /blocks/" +
                           std::to_string(e) + " too");
    }
    out.push_back(b);
  }
  return out;
}

void name_blocks(std::vector<SweepBlock>& blocks, const std::vector<std::string>& given) {
  PIPESIM_ASSERT(given.size() == blocks.size());
  bool model = false, gpus = false, hardware = false;
  for (const SweepBlock& b : blocks) {
    model = model || b.settings.hardware.model != blocks.front().settings.hardware.model;
    gpus = gpus || block_gpus(b) != block_gpus(blocks.front());
    hardware = hardware || b.grid.hardware != blocks.front().grid.hardware;
  }
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    SweepBlock& b = blocks[k];
    if (!given[k].empty()) {
      b.name = given[k];
      continue;
    }
    std::string name;
    auto part = [&name](bool varies, const std::string& text) {
      if (varies) name += (name.empty() ? "" : "/") + text;
    };
    part(model, b.settings.hardware.model);
    part(gpus, std::to_string(block_gpus(b)));
    part(hardware, hardware_text(b.grid));
    b.name = name;
  }
  std::map<std::string, int> count;
  for (const SweepBlock& b : blocks) ++count[b.name];
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    std::string& name = blocks[k].name;
    if (name.empty() || count[name] > 1) name = (name.empty() ? "block " : name + " #") + std::to_string(k + 1);
  }
}

std::vector<AcrossBlocks> across_blocks(const std::vector<SweepBlock>& blocks, const std::vector<BlockResult>& results) {
  std::vector<AcrossBlocks> out;
  std::vector<std::string> models;
  for (const SweepBlock& b : blocks)
    if (std::find(models.begin(), models.end(), b.settings.hardware.model) == models.end())
      models.push_back(b.settings.hardware.model);
  for (const std::string& model : models) {
    std::map<long long, AcrossBlocks> by_batch;
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      if (blocks[k].settings.hardware.model != model || !blocks[k].grid.by_global_batch()) continue;
      for (const BatchSelection& s : results[k].selection.batches)
        if (!s.best.empty()) {
          AcrossBlocks& a = by_batch[s.global_batch];
          a.model = model;
          a.global_batch = s.global_batch;
          a.best.emplace_back(k, s.best.front());
        }
    }
    for (auto& [batch, a] : by_batch) {
      if (a.best.size() < 2) continue;  // nothing to compare
      std::stable_sort(a.best.begin(), a.best.end(), [&](const auto& x, const auto& y) {
        return results[x.first].result.rows[x.second].tokens_per_s > results[y.first].result.rows[y.second].tokens_per_s;
      });
      out.push_back(std::move(a));
    }
  }
  return out;
}

void write_blocks_csv(std::ostream& out, const std::vector<SweepBlock>& blocks, const std::vector<BlockResult>& results) {
  for (std::size_t k = 0; k < blocks.size(); ++k)
    write_sweep_csv(out, blocks[k].grid, results[k].result, blocks[k].name, k == 0);
}

Json blocks_json(const std::vector<SweepBlock>& blocks, const std::vector<BlockResult>& results) {
  Json j;
  Json& list = j["blocks"] = Json::array();
  Json configurations = Json::array(), selections = Json::array();
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const SweepBlock& b = blocks[k];
    const Json one = sweep_json(b.settings, b.grid, results[k].result, results[k].selection);
    Json summary;
    summary["block"] = b.name;
    for (const char* key : {"settings", "combinations", "evaluated", "fits", "skipped"}) summary[key] = one[key];
    list.push_back(std::move(summary));
    for (const Json& row : one["configurations"]) configurations.push_back(with_block(b.name, row));
    for (const Json& s : one["selections"]) selections.push_back(with_block(b.name, s));
  }
  j["configurations"] = std::move(configurations);
  j["selections"] = std::move(selections);
  Json& across = j["across_blocks"] = Json::array();
  for (const AcrossBlocks& a : across_blocks(blocks, results)) {
    Json best = Json::array();
    for (const auto& [k, pos] : a.best)
      best.push_back({{"block", blocks[k].name}, {"index", results[k].result.rows[pos].index}});
    across.push_back({{"model", a.model}, {"global_batch", a.global_batch}, {"best", std::move(best)}});
  }
  return j;
}

namespace {

std::string across_title(const AcrossBlocks& a) {
  return "The best of each block: " + a.model + " at global batch " + std::to_string(a.global_batch);
}

std::string across_note(const std::vector<SweepBlock>& blocks, const std::vector<AcrossBlocks>& across) {
  if (!across.empty())
    return "Blocks are compared only at equal global batch and the same model: the best of each block, fastest first.";
  return "(no comparison: blocks are compared only at equal global batch and the same model, and no two blocks "
         "share both" + std::string(blocks.front().grid.by_global_batch() ? "" : "; pass --global-batch-size") + ")";
}

SweepTable across_table(const std::vector<SweepBlock>& blocks, const std::vector<BlockResult>& results,
                        const AcrossBlocks& a) {
  SweepTable t;
  for (const char* c : {"#", "block", "config", "hardware", "schedule", "gpus", "tp", "pp", "dp", "m", "b", "time/iter",
                        "tokens/s", "MFU", "peak memory", "$/M tokens"}) {
    t.headers.emplace_back(c);
    const std::string_view name = c;
    t.left.push_back(name == "block" || name == "hardware" || name == "schedule");
  }
  for (std::size_t i = 0; i < a.best.size(); ++i) {
    const auto [k, pos] = a.best[i];
    const SweepGrid& g = blocks[k].grid;
    const SweepRow& r = results[k].result.rows[pos];
    t.rows.push_back({std::to_string(i + 1), blocks[k].name, std::to_string(r.index), g.hardware[r.point.hardware],
                      g.variants[r.point.variant].label, std::to_string(r.gpus), std::to_string(r.tp),
                      std::to_string(r.pp), std::to_string(r.dp), std::to_string(r.microbatches),
                      std::to_string(r.micro_batch_size), format_duration(r.time_per_iteration),
                      format_fixed(r.tokens_per_s, 0), format_percent(r.mfu),
                      format_bytes(static_cast<double>(r.peak_memory)),
                      r.cost_per_million_tokens ? "$" + format_fixed(*r.cost_per_million_tokens, 3) : "-"});
  }
  return t;
}

}  // namespace

SweepBlocksPage blocks_page(const std::vector<SweepBlock>& blocks, const std::vector<BlockResult>& results) {
  SweepBlocksPage page;
  page.title = "pipesim sweep: " + std::to_string(blocks.size()) + " blocks";
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const SweepBlock& b = blocks[k];
    SweepPage one = sweep_page(b.settings, b.grid, results[k].result, results[k].selection);
    one.title = "Block " + b.name + " (" + std::to_string(k + 1) + " of " + std::to_string(blocks.size()) + ")";
    page.generator = one.generator;
    page.blocks.push_back({b.name, std::move(one)});
  }
  const std::vector<AcrossBlocks> across = across_blocks(blocks, results);
  page.across_note = across_note(blocks, across);
  for (const AcrossBlocks& a : across) page.across.emplace_back(across_title(a), across_table(blocks, results, a));
  return page;
}

std::string blocks_text(const std::vector<SweepBlock>& blocks, const std::vector<BlockResult>& results) {
  std::string out;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const SweepBlock& b = blocks[k];
    out += (k == 0 ? "" : "\n") + std::string("=== block ") + b.name + " (" + std::to_string(k + 1) + " of " +
           std::to_string(blocks.size()) + ") ===\n";
    out += sweep_text(b.settings, b.grid, results[k].result, results[k].selection);
  }
  const std::vector<AcrossBlocks> across = across_blocks(blocks, results);
  out += "\n=== across blocks ===\n";
  if (across.empty()) out += across_note(blocks, across) + "\n";
  for (const AcrossBlocks& a : across)
    out += "\n" + across_title(a) + "\n" + render_text(across_table(blocks, results, a));
  return out;
}

}  // namespace pipesim
