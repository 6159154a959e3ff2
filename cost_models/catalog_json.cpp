// Reading catalog JSON (schema: docs/catalogs.md) and the built-in catalog.
#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <map>

#include <nlohmann/json.hpp>

#include "cost_models/catalog.hpp"
#include "cost_models/efficiency_fit.hpp"
#include "cost_models/gemm_model.hpp"
#include "cost_models/transformer.hpp"
#include "core/error.hpp"
#include "core/json_input.hpp"
#include "core/json_object.hpp"
#include "core/suggest.hpp"

namespace pipesim {

// Defined in catalog_embedded.cpp, which cost_models/CMakeLists.txt generates from catalogs/*.json.
std::string_view embedded_models_json();
std::string_view embedded_gpus_json();
std::string_view embedded_links_json();

namespace {

using nlohmann::json;

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// One object of the catalog (core/json_object.hpp), and its quantities with units.
class Entry : public JsonObject {
 public:
  Entry(const json& value, const std::string& source, const std::string& path, const Fields& allowed)
      : JsonObject(value, source, path, allowed) {}

  // A quantity with a unit: the text handed to a units.hpp parser, which names `where(key)`.
  std::string quantity(const char* key, const char* example) const {
    const json& v = at(key);
    if (!v.is_string())
      json_fail(where(key), std::string("expected a string with a unit such as ") + example + "; got " + json_shown(v));
    return v.get<std::string>();
  }
};

// Names are what people type on the command line: lowercase letters, digits, '.', '-', '_'.
std::string name_of(const Entry& e) {
  std::string name = e.text("name");
  const auto ok = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
  };
  if (!std::all_of(name.begin(), name.end(), ok))
    json_fail(e.where("name"), "expected lowercase letters, digits, '.', '-' or '_'; got " + quote(name));
  return name;
}

ModelSpec read_model(const json& value, const std::string& source, const std::string& path) {
  const std::string where = source + ": " + path;
  const Entry e(value, source, path,
                {"name", "family", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq_len", "vocab",
                 "tied_embeddings", "mlp", "linear_bias", "rms_norm", "learned_positions", "source"});
  ModelSpec m;
  m.name = name_of(e);
  if (e.has("family")) m.family = e.text("family");
  m.layers = e.count("layers");
  m.hidden = e.count("hidden");
  m.heads = e.count("heads");
  m.kv_heads = e.has("kv_heads") ? e.count("kv_heads") : m.heads;
  m.ffn_hidden = e.count("ffn_hidden");
  m.seq_len = e.count("seq_len");
  m.vocab = e.count("vocab");
  // Optional flags default to ModelSpec's (GPT-style) values.
  if (e.has("tied_embeddings")) m.tied_embeddings = e.flag("tied_embeddings");
  if (e.has("linear_bias")) m.linear_bias = e.flag("linear_bias");
  if (e.has("rms_norm")) m.rms_norm = e.flag("rms_norm");
  if (e.has("learned_positions")) m.learned_positions = e.flag("learned_positions");
  if (e.has("mlp")) {
    const std::string mlp = e.text("mlp");
    if (mlp != "gelu" && mlp != "swiglu") json_fail(e.where("mlp"), "expected 'gelu' or 'swiglu'; got " + quote(mlp));
    m.mlp = mlp == "gelu" ? MlpKind::Gelu : MlpKind::SwiGlu;
  }
  m.source = e.text("source");
  // Every implementation splits hidden into heads of equal width, and query heads into equal groups per KV head.
  if (m.hidden % m.heads != 0)
    json_fail(e.where("heads"), std::to_string(m.heads) + " heads do not divide hidden " + std::to_string(m.hidden));
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    json_fail(e.where("kv_heads"),
              std::to_string(m.kv_heads) + " KV heads do not divide " + std::to_string(m.heads) + " heads");
  check_model(m, 1, where);  // also bounds the size, so that parameter counts fit in 64 bits
  return m;
}

double read_price(const Entry& e) {
  return parse_price(e.quantity("price_per_hour", "2.99USD"), e.where("price_per_hour"));
}

// A dimensionless JSON number in [lo, hi].
double real(const Entry& e, const char* key, double lo, double hi) {
  const json& v = e.at(key);
  if (!v.is_number() || !(v.get<double>() >= lo && v.get<double>() <= hi)) {
    char range[64];
    std::snprintf(range, sizeof range, "a number in [%g, %g]", lo, hi);
    json_fail(e.where(key), std::string("expected ") + range + "; got " + json_shown(v));
  }
  return v.get<double>();
}

// "efficiency": the kernel efficiencies of a GPU (cost_models/hardware_spec.hpp). Every field
// is optional; a missing one keeps Efficiency's default.
Efficiency read_efficiency(const json& value, const std::string& source, const std::string& path) {
  const std::string where = source + ": " + path;
  const Entry e(value, source, path,
                {"gemm", "gemm_k_overhead", "tile_m", "tile_n", "wave_smoothing", "misaligned", "attention", "memory",
                 "network", "source"});
  Efficiency f;
  for (EfficiencyParam p : kEfficiencyParams) {
    const std::string key(efficiency_param_name(p));
    if (e.has(key.c_str()))
      set_efficiency_value(f, p, real(e, key.c_str(), p == EfficiencyParam::GemmKOverhead ? 0 : 1e-3,
                                      p == EfficiencyParam::GemmKOverhead ? 1e6 : 1));
  }
  if (e.has("tile_m")) f.tile_m = e.count("tile_m");
  if (e.has("tile_n")) f.tile_n = e.count("tile_n");
  if (e.has("source")) f.source = e.text("source");
  check_efficiency(f, where);  // the ranges of the fields read as integers
  return f;
}

GpuSpec read_gpu(const json& value, const std::string& source, const std::string& path) {
  const Entry e(value, source, path,
                {"name", "peak_flops", "hbm_bandwidth", "memory", "price_per_hour", "price_source", "price_assumed",
                 "intra_node_link", "inter_node_link", "sms", "efficiency", "source"});
  GpuSpec g;
  g.name = name_of(e);
  const json& peaks = e.at("peak_flops");
  const std::string peaks_at = e.where("peak_flops");
  if (!peaks.is_object() || peaks.empty())
    json_fail(peaks_at, "expected an object of dense peak rates per data type like {\"bf16\": \"989.4TFLOP/s\"}; got " +
                            json_shown(peaks));
  const Entry rates(peaks, source, e.child("peak_flops"),
                    {"fp32", "tf32", "bf16", "fp16", "fp8"});  // the data types a GpuSpec knows
  for (const auto& [dtype, rate] : peaks.items())
    g.peak_flops[dtype] = parse_flops(rates.quantity(dtype.c_str(), "989.4TFLOP/s"), rates.where(dtype.c_str()));
  g.hbm_bandwidth = parse_bandwidth(e.quantity("hbm_bandwidth", "3.35TB/s"), e.where("hbm_bandwidth"));
  g.memory_bytes = parse_bytes(e.quantity("memory", "80GiB"), e.where("memory"));
  if (g.memory_bytes <= 0) json_fail(e.where("memory"), "must be positive; got '" + e.text("memory") + "'");
  if (e.has("price_per_hour")) g.price_per_hour = read_price(e);
  for (const char* key : {"price_source", "price_assumed"})
    if (e.has(key) && !g.price_per_hour) json_fail(e.where(key), "given without a price_per_hour");
  if (e.has("price_source")) g.price_source = e.text("price_source");
  if (e.has("price_assumed")) g.price_assumed = e.flag("price_assumed");
  if (e.has("sms")) g.sms = e.count("sms");
  if (e.has("efficiency")) g.efficiency = read_efficiency(e.at("efficiency"), source, e.child("efficiency"));
  g.intra_node_link = e.text("intra_node_link");
  g.inter_node_link = e.text("inter_node_link");
  g.source = e.text("source");
  return g;
}

LinkSpec read_link(const json& value, const std::string& source, const std::string& path) {
  const Entry e(value, source, path, {"name", "bandwidth", "latency", "source"});
  LinkSpec l;
  l.name = name_of(e);
  l.bandwidth = parse_bandwidth(e.quantity("bandwidth", "450GB/s"), e.where("bandwidth"));
  l.latency = parse_duration(e.quantity("latency", "3.4us"), e.where("latency"));
  // A zero latency is a modelling choice (--link-latency 0), not a property of real hardware.
  if (l.latency <= 0) json_fail(e.where("latency"), "must be positive; got '" + e.text("latency") + "'");
  l.source = e.text("source");
  return l;
}

// Reads root[key] (if present) with `read`, rejecting a name that appears twice.
template <typename Spec, typename Read>
void read_array(const json& root, const char* key, const std::string& source, const char* kind, Read read,
                std::vector<Spec>& out) {
  if (!root.contains(key)) return;
  const json& items = root.at(key);
  const std::string path = std::string("/") + key, at = source + ": " + path;
  if (!items.is_array())
    json_fail(at, std::string("expected an array of ") + kind + " objects; got " + json_shown(items));
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string where = at + "/" + std::to_string(i);
    Spec spec = read(items[i], source, path + "/" + std::to_string(i));
    const auto [it, inserted] = seen.emplace(spec.name, i);
    if (!inserted)
      json_fail(where + "/name", std::string("duplicate ") + kind + " name " + quote(spec.name) + " (also /" + key +
                                     "/" + std::to_string(it->second) + ")");
    out.push_back(std::move(spec));
  }
}

// Fields and arrays, without the cross-reference from GPUs to links.
Catalog parse_entries(std::string_view text, const std::string& source) {
  static constexpr const char* kExpected = "a JSON object with \"models\", \"gpus\" or \"links\" arrays";
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    json_fail(source, std::string("empty file (expected ") + kExpected + ")");
  const json root = parse_json_input(text, source);
  if (!root.is_object()) json_fail(source, std::string("expected ") + kExpected + "; got " + json_shown(root));
  for (const auto& [key, value] : root.items())
    if (key != "models" && key != "gpus" && key != "links")
      json_fail(source, "unknown top-level field " + quote(key) + " (expected models, gpus or links)");
  if (root.empty()) json_fail(source, std::string("expected ") + kExpected + "; got an empty object");
  Catalog c;
  read_array(root, "models", source, "model", read_model, c.models);
  read_array(root, "gpus", source, "gpu", read_gpu, c.gpus);
  read_array(root, "links", source, "link", read_link, c.links);
  return c;
}

// Every GPU's default links must exist among `links` (the file's own, then `fallback`).
void check_links(const Catalog& c, const std::string& source, const std::vector<LinkSpec>& fallback) {
  const auto known = [&](const std::string& name) {
    const auto named = [&](const LinkSpec& l) { return l.name == name; };
    return std::any_of(c.links.begin(), c.links.end(), named) || std::any_of(fallback.begin(), fallback.end(), named);
  };
  for (std::size_t i = 0; i < c.gpus.size(); ++i)
    for (const auto& [field, name] : {std::pair{"intra_node_link", c.gpus[i].intra_node_link},
                                      std::pair{"inter_node_link", c.gpus[i].inter_node_link}})
      if (!known(name)) {
        std::vector<std::string> names;
        for (const auto* list : {&c.links, &fallback})
          for (const LinkSpec& l : *list) names.push_back(l.name);
        json_fail(source + ": /gpus/" + std::to_string(i) + "/" + field,
                  "unknown link " + quote(name) + " (" + did_you_mean(name, names) + "known: " + joined(names) + ")");
      }
}

}  // namespace

// Money is no physical unit (core/units.hpp), so it is parsed here.
// A bound far above any GPU's price that keeps $ per million tokens finite and printable.
constexpr double kMaxPricePerHour = 1e6;

double parse_price(std::string_view text, std::string_view what, bool unit_required) {
  static constexpr std::string_view kUnit = "USD";
  std::string_view number(text);
  const bool has_unit = number.ends_with(kUnit);
  if (has_unit) number.remove_suffix(kUnit.size());
  while (!number.empty() && number.back() == ' ') number.remove_suffix(1);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  // from_chars also reads "inf" and "nan"; isfinite keeps them out.
  if ((unit_required && !has_unit) || number.empty() || ec != std::errc() || ptr != number.data() + number.size() ||
      !std::isfinite(value) || !(value > 0) || value > kMaxPricePerHour)
    throw InputError(std::string(what) + ": expected a positive price per GPU-hour such as " +
                     (unit_required ? "2.99USD" : "2.99 (US dollars)") + ", at most 1000000; got " + quote(text));
  return value;
}

const Catalog& builtin_catalog() {
  static const Catalog catalog = [] {
    // Each kind lives in its own file, so names are unique per kind once each file is.
    Catalog c;
    for (const auto& [text, source] :
         {std::pair{embedded_models_json(), "models.json"}, std::pair{embedded_gpus_json(), "gpus.json"},
          std::pair{embedded_links_json(), "links.json"}}) {
      Catalog part = parse_entries(text, source);
      c.models.insert(c.models.end(), part.models.begin(), part.models.end());
      c.gpus.insert(c.gpus.end(), part.gpus.begin(), part.gpus.end());
      c.links.insert(c.links.end(), part.links.begin(), part.links.end());
    }
    check_links(c, "gpus.json", {});
    return c;
  }();
  return catalog;
}

Catalog parse_catalog(std::string_view json_text, std::string_view source) {
  const std::string src(source);
  Catalog c = parse_entries(json_text, src);
  check_links(c, src, builtin_catalog().links);
  return c;
}

}  // namespace pipesim
