// `pipesim catalog [models|gpus|links]`: the built-in (or a user's) models, GPUs and links,
// as aligned tables with units, or as a catalog file (--json) that --file reads back.
#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdio>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cost_models/catalog.hpp"
#include "cost_models/transformer.hpp"
#include "tools/commands.hpp"
#include "tools/table.hpp"

namespace pipesim {
namespace {

// "989.4 TFLOP/s", "3.35 TB/s": decimal prefixes as datasheets print them; five significant
// digits keep every catalog value exact (362.05, 1978.9).
std::string si(double value, const char* unit) {
  static constexpr const char* kPrefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  std::size_t p = 0;
  while (p + 1 < std::size(kPrefixes) && std::fabs(value) >= 1000.0) {
    value /= 1000.0;
    ++p;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.5g %s%s", value, kPrefixes[p], unit);
  return buf;
}

// "6.738B", "174.6B", "1.008T": parameter counts as papers name models.
std::string count(double n) {
  static constexpr struct {
    double scale;
    const char* suffix;
  } kScales[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}, {1, ""}};
  const auto* s = std::begin(kScales);
  while (s->scale > 1 && n < s->scale) ++s;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g%s", n / s->scale, s->suffix);
  return buf;
}

std::string peak(const GpuSpec& g, const char* dtype) {
  const auto it = g.peak_flops.find(dtype);
  return it == g.peak_flops.end() ? "-" : si(it->second, "FLOP/s");
}

std::string models_table(const std::vector<ModelSpec>& models) {
  Table t;
  t.add_column("model", Table::Align::Left);
  t.add_column("family", Table::Align::Left);
  for (const char* c : {"params", "layers", "hidden", "heads", "kv heads", "ffn", "seq", "vocab"}) t.add_column(c);
  t.add_column("mlp", Table::Align::Left);
  t.add_column("embeddings", Table::Align::Left);
  t.add_column("norm", Table::Align::Left);
  for (const ModelSpec& m : models)
    t.add_row({m.name, m.family, count(static_cast<double>(total_parameters(m))), std::to_string(m.layers),
               std::to_string(m.hidden), std::to_string(m.heads), std::to_string(m.kv_heads),
               std::to_string(m.ffn_hidden), std::to_string(m.seq_len), std::to_string(m.vocab),
               m.mlp == MlpKind::SwiGlu ? "swiglu" : "gelu",
               std::string(m.tied_embeddings ? "tied" : "untied") + (m.learned_positions ? ", learned pos" : ", rope"),
               m.rms_norm ? "rmsnorm" : "layernorm"});
  return t.render();
}

std::string gpus_table(const std::vector<GpuSpec>& gpus) {
  Table t;
  t.add_column("gpu", Table::Align::Left);
  for (const char* c : {"bf16 dense", "fp8 dense", "fp32", "memory bw", "memory"}) t.add_column(c);
  t.add_column("intra-node", Table::Align::Left);
  t.add_column("inter-node", Table::Align::Left);
  t.add_column("price");
  t.add_column("price basis", Table::Align::Left);
  for (const GpuSpec& g : gpus)
    t.add_row({g.name, peak(g, "bf16"), peak(g, "fp8"), peak(g, "fp32"), si(g.hbm_bandwidth, "B/s"),
               format_bytes(static_cast<double>(g.memory_bytes)), g.intra_node_link, g.inter_node_link,
               g.price_per_hour ? "$" + format_fixed(*g.price_per_hour, 2) + "/h" : "-",
               !g.price_per_hour ? "-" : g.price_assumed ? "assumed" : g.price_source.empty() ? "given" : "list"});
  return t.render();
}

std::string links_table(const std::vector<LinkSpec>& links) {
  Table t;
  t.add_column("link", Table::Align::Left);
  t.add_column("bandwidth/dir");
  t.add_column("(bits)");
  t.add_column("latency");
  for (const LinkSpec& l : links)
    t.add_row({l.name, si(l.bandwidth, "B/s"), si(l.bandwidth * 8, "b/s"), format_duration(l.latency)});
  return t.render();
}

// The entries `wants` picks, as a catalog file: GPUs bring the links of their file that they
// name and that are not built in, so the file reads back on its own.
Catalog selected(const Catalog& c, const std::function<bool(const char*)>& wants) {
  Catalog out;
  if (wants("models")) out.models = c.models;
  if (wants("gpus")) out.gpus = c.gpus;
  if (wants("links")) {
    out.links = c.links;
    return out;
  }
  if (&c == &builtin_catalog()) return out;  // the links of built-in GPUs are built in
  const auto named = [](const std::vector<LinkSpec>& links, const std::string& name) {
    return std::find_if(links.begin(), links.end(), [&](const LinkSpec& l) { return l.name == name; });
  };
  for (const GpuSpec& g : out.gpus)
    for (const std::string& name : {g.intra_node_link, g.inter_node_link})
      if (const auto own = named(c.links, name); own != c.links.end() && named(out.links, name) == out.links.end())
        out.links.push_back(*own);
  return out;
}

}  // namespace

void add_catalog_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("catalog", "List the built-in models, GPUs and links (docs/catalogs.md)");
  auto kind = std::make_shared<std::string>();
  auto file = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("kind", *kind, "models, gpus or links [default: all three]")
      ->check(CLI::IsMember({"models", "gpus", "links"}));
  cmd->add_option("--file", *file, "Show (and validate) this catalog file instead of the built-in catalog");
  cmd->add_flag("--json", *json,
                "Print the entries as a catalog file (docs/catalogs.md), with their sources; --file reads it back");
  cmd->callback([=] {
    const Catalog user = file->empty() ? Catalog{} : read_catalog_file(*file);
    const Catalog& c = file->empty() ? builtin_catalog() : user;
    const bool all = kind->empty();
    const auto wants = [&](const char* k) { return all || *kind == k; };
    if (*json) {
      std::cout << catalog_file_json(selected(c, wants));
      return;
    }
    std::string out;
    const auto section = [&](const char* title, std::size_t n, const std::string& table) {
      if (!all) {
        out += table;
        return;
      }
      out += (out.empty() ? "" : "\n") + std::string(title) + " (" + std::to_string(n) + ")\n" + (n ? table : "");
    };
    if (wants("models")) section("models", c.models.size(), models_table(c.models));
    if (wants("gpus")) section("gpus", c.gpus.size(), gpus_table(c.gpus));
    if (wants("links")) section("links", c.links.size(), links_table(c.links));
    std::cout << out
              << "\npeaks are dense (no 2:4 sparsity), bandwidths per direction; price basis: list = a cited list price,\n"
                 "assumed = an assumption (override with --price-per-hour); every source: --json\n";
  });
}

}  // namespace pipesim
