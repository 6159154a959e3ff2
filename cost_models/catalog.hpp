#pragma once
// Catalogs of real models, GPUs and link classes. The built-in one is compiled from
// cost_models/catalogs/{models,gpus,links}.json into the library, so `pipesim` works from
// any directory; user files have the same schema (docs/catalogs.md).
//
// A catalog file is one JSON object with any of the arrays "models", "gpus", "links".
// Quantities are strings with units ("989.4TFLOP/s", "3.35TB/s", "80GiB", "3.4us",
// "400Gb/s", "4.10USD"), shape numbers are JSON integers. Every problem is an InputError of
// one line naming the file and the JSON path: "gpus.json: /gpus/2/hbm_bandwidth: ...".
#include <string>
#include <string_view>
#include <vector>

#include "cost_models/hardware_spec.hpp"
#include "cost_models/model_spec.hpp"

namespace pipesim {

struct Catalog {
  std::vector<ModelSpec> models;
  std::vector<GpuSpec> gpus;
  std::vector<LinkSpec> links;
};

// The built-in catalog, parsed and validated on first use.
const Catalog& builtin_catalog();

// Validates everything: units of the right kind, positive finite values, no unknown
// fields, unique names per kind, GPU links that exist (in this file or built in).
// `source` names the text in errors.
Catalog parse_catalog(std::string_view json_text, std::string_view source);
Catalog read_catalog_file(const std::string& path);

// `catalog` as a catalog file (its non-empty arrays, or three empty ones; two-space
// indented, ending in a newline) that parse_catalog reads back into exactly the same values: each quantity is the
// shortest text with a unit that parses back to the same number ("989.4TFLOP/s", "80GiB").
std::string catalog_file_json(const Catalog& catalog);
// The catalog file holding `gpu` alone ({"gpus": [...]}).
std::string gpu_catalog_json(const GpuSpec& gpu);

// A price per GPU-hour in US dollars: "2.99USD" or "2.99 USD", or "2.99" unless
// `unit_required`; positive and finite. InputError naming `what` otherwise.
double parse_price(std::string_view text, std::string_view what, bool unit_required = true);

// What a model, GPU or link argument may be:
//   "h100-sxm"           a built-in name
//   "my.json"            a catalog file holding exactly one entry of that kind
//   "my.json:my-gpu"     the entry of that name in a catalog file
// Unknown names are InputErrors that list the known ones.
ModelSpec find_model(std::string_view name_or_file);
// The file such an argument reads ("my.json" for "my.json:my-gpu"); empty for a built-in name.
std::string catalog_file_of(std::string_view name_or_file);
GpuSpec find_gpu(std::string_view name_or_file);
LinkSpec find_link(std::string_view name_or_file);

// nodes x gpus_per_node GPUs of one kind. An empty `intra` / `inter` takes the GPU's
// default link class (looked up in the GPU's own file first, then built in).
ClusterSpec make_cluster(std::string_view gpu, int nodes, int gpus_per_node, std::string_view intra = "",
                         std::string_view inter = "");

}  // namespace pipesim
