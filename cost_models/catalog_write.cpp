// Writing catalog files (schema: docs/catalogs.md) that parse_catalog reads back exactly.
#include <cmath>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <utility>

#include <nlohmann/json.hpp>

#include "cost_models/catalog.hpp"
#include "cost_models/efficiency_fit.hpp"
#include "cost_models/gemm_model.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

using nlohmann::ordered_json;

struct Unit {
  double scale;
  const char* suffix;
};

// The shortest "<number><unit>" that `parse` reads back as exactly `value`, over `units`
// (the first wins a tie), a number of at least 1 before one below ("300GB/s", not
// "0.3TB/s"). Numbers are printed without exponents, which the parsers reject.
template <typename T>
std::string exact_text(T value, std::initializer_list<Unit> units, const std::function<T(const std::string&)>& parse) {
  std::string best;
  bool best_below_one = true;
  for (const Unit& u : units) {
    const bool below_one = std::fabs(static_cast<double>(value)) < u.scale;
    for (int digits = 1; digits <= 17; ++digits) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.*g%s", digits, static_cast<double>(value) / u.scale, u.suffix);
      const std::string text = buf;
      if (text.find('e') != std::string::npos) continue;
      T back{};
      try {
        back = parse(text);
      } catch (const InputError&) {
        continue;
      }
      if (back == value) {
        if (best.empty() || (best_below_one && !below_one) ||
            (below_one == best_below_one && text.size() < best.size())) {
          best = text;
          best_below_one = below_one;
        }
        break;
      }
    }
  }
  PIPESIM_ASSERT(!best.empty());
  return best;
}

std::string flops_text(double v) {
  return exact_text<double>(v, {{1e15, "PFLOP/s"}, {1e12, "TFLOP/s"}, {1e9, "GFLOP/s"}, {1, "FLOP/s"}},
                            [](const std::string& t) { return parse_flops(t, "catalog writer"); });
}

std::string bandwidth_text(double v) {
  return exact_text<double>(v, {{1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1, "B/s"}},
                            [](const std::string& t) { return parse_bandwidth(t, "catalog writer"); });
}

std::string bytes_text(std::int64_t v) {
  return exact_text<std::int64_t>(v, {{1024.0 * 1024 * 1024 * 1024, "TiB"}, {1024.0 * 1024 * 1024, "GiB"},
                                      {1024.0 * 1024, "MiB"}, {1024.0, "KiB"}, {1e9, "GB"}, {1, "B"}},
                                  [](const std::string& t) { return parse_bytes(t, "catalog writer"); });
}

std::string duration_text(Tick v) {
  return exact_text<Tick>(v, {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}},
                          [](const std::string& t) { return parse_duration(t, "catalog writer"); });
}

std::string price_text(double v) {
  return exact_text<double>(v, {{1, "USD"}}, [](const std::string& t) { return parse_price(t, "catalog writer"); });
}

ordered_json model_json(const ModelSpec& m) {
  PIPESIM_ASSERT(m.head_dim == 0);  // not a field of the schema: catalog models split hidden into heads
  ordered_json j;
  j["name"] = m.name;
  if (!m.family.empty()) j["family"] = m.family;
  j["layers"] = m.layers;
  j["hidden"] = m.hidden;
  j["heads"] = m.heads;
  j["kv_heads"] = m.kv_heads;
  j["ffn_hidden"] = m.ffn_hidden;
  j["seq_len"] = m.seq_len;
  j["vocab"] = m.vocab;
  j["tied_embeddings"] = m.tied_embeddings;
  j["mlp"] = m.mlp == MlpKind::SwiGlu ? "swiglu" : "gelu";
  j["linear_bias"] = m.linear_bias;
  j["rms_norm"] = m.rms_norm;
  j["learned_positions"] = m.learned_positions;
  j["source"] = m.source;
  return j;
}

ordered_json gpu_json(const GpuSpec& g) {
  ordered_json peaks = ordered_json::object();
  for (const auto& [dtype, rate] : g.peak_flops) peaks[dtype] = flops_text(rate);
  ordered_json j;
  j["name"] = g.name;
  if (g.sms > 0) j["sms"] = g.sms;
  j["peak_flops"] = peaks;
  j["hbm_bandwidth"] = bandwidth_text(g.hbm_bandwidth);
  j["memory"] = bytes_text(g.memory_bytes);
  j["intra_node_link"] = g.intra_node_link;
  j["inter_node_link"] = g.inter_node_link;
  if (g.price_per_hour) {
    j["price_per_hour"] = price_text(*g.price_per_hour);
    if (!g.price_source.empty()) j["price_source"] = g.price_source;
    if (g.price_assumed) j["price_assumed"] = true;
  }
  const Efficiency& e = g.efficiency;
  ordered_json eff;
  for (EfficiencyParam p : kEfficiencyParams) eff[std::string(efficiency_param_name(p))] = efficiency_value(e, p);
  eff["tile_m"] = e.tile_m;
  eff["tile_n"] = e.tile_n;
  if (!e.source.empty()) eff["source"] = e.source;
  j["efficiency"] = eff;
  j["source"] = g.source;
  return j;
}

ordered_json link_json(const LinkSpec& l) {
  return {{"name", l.name},
          {"bandwidth", bandwidth_text(l.bandwidth)},
          {"latency", duration_text(l.latency)},
          {"source", l.source}};
}

}  // namespace

std::string catalog_file_json(const Catalog& c) {
  ordered_json root = ordered_json::object();
  const auto add = [&](const char* key, const auto& entries, auto to_json) {
    if (entries.empty()) return;
    ordered_json& list = root[key] = ordered_json::array();
    for (const auto& e : entries) list.push_back(to_json(e));
  };
  add("models", c.models, model_json);
  add("gpus", c.gpus, gpu_json);
  add("links", c.links, link_json);
  if (root.empty()) root = {{"models", ordered_json::array()}, {"gpus", ordered_json::array()}, {"links", ordered_json::array()}};
  // Strings from a user's file that are not UTF-8 are written with U+FFFD instead of failing.
  return root.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

std::string gpu_catalog_json(const GpuSpec& gpu) { return catalog_file_json(Catalog{{}, {gpu}, {}}); }

}  // namespace pipesim
