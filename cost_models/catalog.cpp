// Looking things up in catalogs: built-in names, catalog files, clusters.
#include "cost_models/catalog.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/suggest.hpp"

namespace pipesim {
namespace {

// Where one kind of entry lives in a Catalog, and what messages call it.
template <typename Spec>
struct Kind {
  std::vector<Spec> Catalog::*entries;
  const char* singular;
  const char* plural;
};
constexpr Kind<ModelSpec> kModels{&Catalog::models, "model", "models"};
constexpr Kind<GpuSpec> kGpus{&Catalog::gpus, "gpu", "gpus"};
constexpr Kind<LinkSpec> kLinks{&Catalog::links, "link", "links"};

template <typename Spec>
std::string names_of(const std::vector<Spec>& entries) {
  std::string out;
  for (const Spec& s : entries) out += (out.empty() ? "" : ", ") + s.name;
  return out.empty() ? "none" : out;
}

template <typename Spec>
std::vector<std::string> name_list(const std::vector<Spec>& entries) {
  std::vector<std::string> out;
  for (const Spec& s : entries) out.push_back(s.name);
  return out;
}

template <typename Spec>
const Spec* named(const std::vector<Spec>& entries, std::string_view name) {
  for (const Spec& s : entries)
    if (s.name == name) return &s;
  return nullptr;
}

// An entry and the user file it came from, so that a GPU's default links are looked up
// next to it first.
template <typename Spec>
struct Located {
  Spec spec;
  std::optional<Catalog> file;  // empty: built in
};

template <typename Spec>
Located<Spec> locate(std::string_view query, const Kind<Spec>& kind) {
  const std::string q(query);
  const std::string path = catalog_file_of(q);
  const std::size_t ext = path.size() - 5;  // ".json" ends the path
  if (path.empty()) {
    const Catalog& builtin = builtin_catalog();
    if (const Spec* s = named(builtin.*kind.entries, q)) return {*s, std::nullopt};
    throw InputError(std::string("unknown ") + kind.singular + " " + quote(q) + " (" +
                     did_you_mean(q, name_list(builtin.*kind.entries)) + "known: " + names_of(builtin.*kind.entries) +
                     "; or a catalog file, see docs/catalogs.md)");
  }
  Catalog file = read_catalog_file(path);
  const auto& entries = file.*kind.entries;
  if (ext + 5 < q.size()) {
    const std::string name = q.substr(ext + 6);
    const Spec* s = named(entries, name);
    if (!s)
      throw InputError(path + ": no " + kind.singular + " named " + quote(name) + " (" +
                       did_you_mean(name, name_list(entries)) + kind.plural + " in it: " + names_of(entries) + ")");
    Spec spec = *s;
    return {std::move(spec), std::move(file)};
  }
  if (entries.size() != 1)
    throw InputError(path + ": expected exactly one " + kind.singular + ", found " + std::to_string(entries.size()) +
                     " (" + names_of(entries) + "); pick one as " + path + ":NAME");
  Spec spec = entries.front();
  return {std::move(spec), std::move(file)};
}

// A GPU's default link: parse_catalog checked that it exists in its file or built in.
LinkSpec default_link(const std::string& name, const std::optional<Catalog>& file) {
  if (const LinkSpec* l = file ? named(file->links, name) : nullptr) return *l;
  const LinkSpec* l = named(builtin_catalog().links, name);
  PIPESIM_ASSERT(l != nullptr);
  return *l;
}

}  // namespace

std::string catalog_file_of(std::string_view query) {
  // "file.json" or "file.json:name"; anything else is a built-in name.
  const std::size_t ext = query.rfind(".json");
  const bool is_file = ext != std::string_view::npos && (ext + 5 == query.size() || query[ext + 5] == ':');
  return is_file ? std::string(query.substr(0, ext + 5)) : std::string();
}

Catalog read_catalog_file(const std::string& path) {
  return parse_catalog(read_input_file(path, kCatalogFileInput), path);
}

ModelSpec find_model(std::string_view name_or_file) { return locate(name_or_file, kModels).spec; }
GpuSpec find_gpu(std::string_view name_or_file) { return locate(name_or_file, kGpus).spec; }
LinkSpec find_link(std::string_view name_or_file) { return locate(name_or_file, kLinks).spec; }

ClusterSpec make_cluster(std::string_view gpu, int nodes, int gpus_per_node, std::string_view intra,
                         std::string_view inter) {
  if (nodes < 1) throw InputError("cluster: nodes must be at least 1; got " + std::to_string(nodes));
  if (gpus_per_node < 1)
    throw InputError("cluster: GPUs per node must be at least 1; got " + std::to_string(gpus_per_node));
  constexpr long long kMaxGpus = 1LL << 24;  // ClusterSpec counts GPUs in an int; no cluster comes near
  if (static_cast<long long>(nodes) * gpus_per_node > kMaxGpus)
    throw InputError("cluster: " + std::to_string(nodes) + " nodes x " + std::to_string(gpus_per_node) +
                     " GPUs per node is more than the " + std::to_string(kMaxGpus) + " GPUs pipesim models");
  Located<GpuSpec> g = locate(gpu, kGpus);
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.intra = intra.empty() ? default_link(g.spec.intra_node_link, g.file) : find_link(intra);
  c.inter = inter.empty() ? default_link(g.spec.inter_node_link, g.file) : find_link(inter);
  c.gpu = std::move(g.spec);
  return c;
}

}  // namespace pipesim
