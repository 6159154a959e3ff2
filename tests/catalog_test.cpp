// cost_models/catalog: the built-in catalogs (values against their datasheets and papers),
// lookups by name and by file, clusters, and every validation error of a catalog file.
#include "input_error.hpp"
#include "cost_models/catalog.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cost_models/efficiency_fit.hpp"
#include "cost_models/gemm_model.hpp"
#include "cost_models/transformer.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;

// The message parse_catalog(text) throws; every one must be a single line.
std::string parse_error(const std::string& text) {
  const std::string e = error_of([&] { parse_catalog(text, "my.json"); });
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  return e;
}

std::string temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("pipesim_catalog_test_" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

constexpr double kTera = 1e12;
constexpr std::int64_t kGiB = 1024LL * 1024 * 1024;

// A valid GPU entry whose fields the error tests replace one at a time.
std::string gpu_with(const std::string& field, const std::string& value) {
  std::map<std::string, std::string> f{{"\"name\"", "\"x1\""},
                                       {"\"peak_flops\"", R"({"bf16": "100TFLOP/s"})"},
                                       {"\"hbm_bandwidth\"", "\"1TB/s\""},
                                       {"\"memory\"", "\"16GiB\""},
                                       {"\"intra_node_link\"", "\"nvlink4\""},
                                       {"\"inter_node_link\"", "\"ib-ndr\""},
                                       {"\"source\"", "\"test\""}};
  if (value.empty())
    f.erase("\"" + field + "\"");
  else
    f["\"" + field + "\""] = value;
  std::string body;
  for (const auto& [k, v] : f) body += (body.empty() ? "" : ", ") + k + ": " + v;
  return R"({"gpus": [{)" + body + "}]}";
}

std::string model_with(const std::string& extra) {
  return R"({"models": [{"name": "m", "layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256, "seq_len": 128,
             "vocab": 1000, "source": "test")" +
         extra + "}]}";
}

TEST(BuiltinCatalog, EveryEntryHasASourceAndUniqueName) {
  const Catalog& c = builtin_catalog();
  EXPECT_EQ(c.models.size(), 24u);
  EXPECT_EQ(c.gpus.size(), 6u);
  EXPECT_EQ(c.links.size(), 9u);
  std::set<std::string> names;
  for (const auto& m : c.models) {
    EXPECT_FALSE(m.source.empty()) << m.name;
    EXPECT_TRUE(names.insert("model " + m.name).second) << m.name;
    EXPECT_EQ(m.hidden % m.heads, 0) << m.name;
    EXPECT_EQ(m.heads % m.kv_heads, 0) << m.name;
  }
  for (const auto& g : c.gpus) {
    EXPECT_FALSE(g.source.empty()) << g.name;
    // Every GPU has a price per hour, with where it comes from or what it assumes.
    EXPECT_TRUE(g.price_per_hour.has_value()) << g.name;
    EXPECT_FALSE(g.price_source.empty()) << g.name;
    EXPECT_TRUE(names.insert("gpu " + g.name).second) << g.name;
    EXPECT_GT(g.peak_flops.at("bf16"), 0) << g.name;
    EXPECT_NO_THROW(find_link(g.intra_node_link)) << g.name;
    EXPECT_NO_THROW(find_link(g.inter_node_link)) << g.name;
  }
  for (const auto& l : c.links) {
    EXPECT_FALSE(l.source.empty()) << l.name;
    EXPECT_TRUE(names.insert("link " + l.name).second) << l.name;
  }
}

TEST(BuiltinCatalog, GpusMatchTheirDatasheets) {
  const GpuSpec h100 = find_gpu("h100-sxm");
  EXPECT_DOUBLE_EQ(h100.peak_flops.at("bf16"), 989.4 * kTera);  // dense; 1979 is with sparsity
  EXPECT_DOUBLE_EQ(h100.peak_flops.at("fp8"), 1978.9 * kTera);
  EXPECT_DOUBLE_EQ(h100.peak_flops.at("tf32"), 494.7 * kTera);
  EXPECT_DOUBLE_EQ(h100.peak_flops.at("fp32"), 66.9 * kTera);
  EXPECT_DOUBLE_EQ(h100.hbm_bandwidth, 3.35e12);
  EXPECT_EQ(h100.memory_bytes, 80 * kGiB);
  EXPECT_EQ(h100.intra_node_link, "nvlink4");
  EXPECT_EQ(h100.inter_node_link, "ib-ndr");
  ASSERT_TRUE(h100.price_per_hour.has_value());
  EXPECT_DOUBLE_EQ(*h100.price_per_hour, 12.29);

  const GpuSpec a100 = find_gpu("a100-40g");
  EXPECT_DOUBLE_EQ(a100.peak_flops.at("bf16"), 312 * kTera);
  EXPECT_DOUBLE_EQ(a100.peak_flops.at("tf32"), 156 * kTera);
  EXPECT_DOUBLE_EQ(a100.peak_flops.at("fp32"), 19.5 * kTera);
  EXPECT_EQ(a100.peak_flops.count("fp8"), 0u);  // Ampere has no FP8 tensor cores
  EXPECT_DOUBLE_EQ(a100.hbm_bandwidth, 1555e9);
  EXPECT_EQ(a100.memory_bytes, 40 * kGiB);
  EXPECT_DOUBLE_EQ(find_gpu("a100-80g").hbm_bandwidth, 2039e9);
  // AWS list prices per GPU-hour: the instance price / its 8 GPUs.
  EXPECT_DOUBLE_EQ(*a100.price_per_hour, 4.0966);
  EXPECT_DOUBLE_EQ(*find_gpu("a100-80g").price_per_hour, 5.1207);
  EXPECT_FALSE(a100.price_assumed);
  EXPECT_FALSE(h100.price_assumed);
  EXPECT_THAT(h100.price_source, HasSubstr("p5.48xlarge"));
  // No list price to cite: assumptions, said so in the data.
  for (const char* name : {"h200", "b200", "l40s"}) EXPECT_TRUE(find_gpu(name).price_assumed) << name;
  EXPECT_NEAR(*find_gpu("h200").price_per_hour, 12.29 * 43.26 / 39.33, 0.005);

  const GpuSpec h200 = find_gpu("h200");
  EXPECT_EQ(h200.peak_flops, h100.peak_flops);
  EXPECT_DOUBLE_EQ(h200.hbm_bandwidth, 4.8e12);
  EXPECT_EQ(h200.memory_bytes, 141 * kGiB);

  const GpuSpec b200 = find_gpu("b200");
  EXPECT_DOUBLE_EQ(b200.peak_flops.at("bf16"), 2.25e15);
  EXPECT_DOUBLE_EQ(b200.peak_flops.at("fp8"), 4.5e15);
  EXPECT_EQ(b200.intra_node_link, "nvlink5");

  const GpuSpec l40s = find_gpu("l40s");
  EXPECT_DOUBLE_EQ(l40s.peak_flops.at("bf16"), 362.05 * kTera);
  EXPECT_DOUBLE_EQ(l40s.peak_flops.at("fp8"), 733 * kTera);
  EXPECT_DOUBLE_EQ(l40s.hbm_bandwidth, 864e9);
  EXPECT_EQ(l40s.memory_bytes, 48 * kGiB);
  EXPECT_EQ(l40s.intra_node_link, "pcie4");  // no NVLink
}

TEST(BuiltinCatalog, LinksArePerDirection) {
  EXPECT_DOUBLE_EQ(find_link("nvlink3").bandwidth, 300e9);  // 600 GB/s bidirectional
  EXPECT_DOUBLE_EQ(find_link("nvlink4").bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(find_link("nvlink5").bandwidth, 900e9);
  EXPECT_DOUBLE_EQ(find_link("pcie4").bandwidth, 32e9);
  EXPECT_DOUBLE_EQ(find_link("pcie5").bandwidth, 64e9);
  EXPECT_DOUBLE_EQ(find_link("ib-hdr").bandwidth, 25e9);  // 200 Gb/s
  EXPECT_DOUBLE_EQ(find_link("ib-ndr").bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(find_link("ethernet-100g").bandwidth, 12.5e9);
  EXPECT_DOUBLE_EQ(find_link("ethernet-400g").bandwidth, 50e9);
  EXPECT_EQ(find_link("nvlink4").latency, 3'400);
  EXPECT_EQ(find_link("pcie4").latency, 5'700);
  EXPECT_EQ(find_link("ib-ndr").latency, 14'000);
}

// One row per published shape: name, layers, hidden, heads, kv heads, ffn, seq, vocab.
struct Shape {
  const char* name;
  int layers, hidden, heads, kv_heads, ffn, seq, vocab;
};

void expect_shapes(const std::vector<Shape>& rows) {
  for (const Shape& r : rows) {
    const ModelSpec m = find_model(r.name);
    EXPECT_EQ(m.layers, r.layers) << r.name;
    EXPECT_EQ(m.hidden, r.hidden) << r.name;
    EXPECT_EQ(m.heads, r.heads) << r.name;
    EXPECT_EQ(m.kv_heads, r.kv_heads) << r.name;
    EXPECT_EQ(m.ffn_hidden, r.ffn) << r.name;
    EXPECT_EQ(m.seq_len, r.seq) << r.name;
    EXPECT_EQ(m.vocab, r.vocab) << r.name;
  }
}

// GPT-style flags (the defaults) or Llama-style ones.
void expect_flags(const char* name, bool gpt_style) {
  const ModelSpec m = find_model(name);
  EXPECT_EQ(m.tied_embeddings, gpt_style) << name;
  EXPECT_EQ(m.mlp, gpt_style ? MlpKind::Gelu : MlpKind::SwiGlu) << name;
  EXPECT_EQ(m.linear_bias, gpt_style) << name;
  EXPECT_EQ(m.rms_norm, !gpt_style) << name;
  EXPECT_EQ(m.learned_positions, gpt_style) << name;  // Llama: RoPE
}

TEST(BuiltinCatalog, Gpt3MatchesBrownTable21) {
  // 1.3B keeps d_model 2048 and d_head 128 (16 heads; the table's 24 contradicts both);
  // 13B keeps 40 heads of 128 (5120; the table's 5140 is neither).
  expect_shapes({{"gpt3-1.3b", 24, 2048, 16, 16, 8192, 2048, 50257},
                 {"gpt3-2.7b", 32, 2560, 32, 32, 10240, 2048, 50257},
                 {"gpt3-6.7b", 32, 4096, 32, 32, 16384, 2048, 50257},
                 {"gpt3-13b", 40, 5120, 40, 40, 20480, 2048, 50257},
                 {"gpt3-175b", 96, 12288, 96, 96, 49152, 2048, 50257}});
  EXPECT_EQ(find_model("gpt3-175b").family, "gpt");
  expect_flags("gpt3-175b", true);
}

TEST(BuiltinCatalog, MegatronModelsMatchNarayananTable1) {
  // Table 1: heads, hidden, layers; seq 2048 and vocab 51200 for all; ffn 4h.
  const std::tuple<const char*, int, int, int> table[] = {
      {"megatron-gpt-1.7b", 24, 2304, 24},      {"megatron-gpt-3.6b", 32, 3072, 30},
      {"megatron-gpt-7.5b", 32, 4096, 36},      {"megatron-gpt-18.4b", 48, 6144, 40},
      {"megatron-gpt-39.1b", 64, 8192, 48},     {"megatron-gpt-76.1b", 80, 10240, 60},
      {"megatron-gpt-145.6b", 96, 12288, 80},   {"megatron-gpt-310.1b", 128, 16384, 96},
      {"megatron-gpt-529.6b", 128, 20480, 105}, {"megatron-gpt-1t", 160, 25600, 128}};
  std::vector<Shape> rows;
  for (const auto& [name, heads, hidden, layers] : table)
    rows.push_back({name, layers, hidden, heads, heads, 4 * hidden, 2048, 51200});
  expect_shapes(rows);
  expect_flags("megatron-gpt-1t", true);
}

// The shapes reproduce each paper's own parameter count (transformer.hpp counts them), a
// check on the shapes rather than on the counting: Megatron names its models by
// 12lh^2(1 + 13/12h + (V+s)/12lh) rounded to the digit shown (1.65B is "1.7B"), and
// BERT's 340M also counts its pooler and segment embeddings.
TEST(BuiltinCatalog, ShapesReproduceThePublishedParameterCounts) {
  const std::pair<const char*, double> published[] = {
      {"megatron-gpt-1.7b", 1.7e9},     {"megatron-gpt-3.6b", 3.6e9},     {"megatron-gpt-7.5b", 7.5e9},
      {"megatron-gpt-18.4b", 18.4e9},   {"megatron-gpt-39.1b", 39.1e9},   {"megatron-gpt-76.1b", 76.1e9},
      {"megatron-gpt-145.6b", 145.6e9}, {"megatron-gpt-310.1b", 310.1e9}, {"megatron-gpt-529.6b", 529.6e9},
      {"megatron-gpt-1t", 1008.0e9},    {"gpt3-175b", 175e9},             {"gpt3-13b", 13e9},
      {"llama2-7b", 6.74e9},            {"llama2-70b", 68.98e9},          {"llama3-8b", 8.03e9},
      {"llama3-70b", 70.55e9},          {"bert-large", 340e6}};
  for (const auto& [name, params] : published)
    EXPECT_NEAR(static_cast<double>(total_parameters(find_model(name))) / params, 1.0, 0.035) << name;
}

TEST(BuiltinCatalog, LlamaAndBert) {
  expect_shapes({{"llama2-7b", 32, 4096, 32, 32, 11008, 4096, 32000},
                 {"llama2-13b", 40, 5120, 40, 40, 13824, 4096, 32000},
                 {"llama2-70b", 80, 8192, 64, 8, 28672, 4096, 32000},
                 {"llama3-8b", 32, 4096, 32, 8, 14336, 8192, 128256},
                 {"llama3-70b", 80, 8192, 64, 8, 28672, 8192, 128256},
                 {"bert-large", 24, 1024, 16, 16, 4096, 512, 30522}});
  for (const char* llama : {"llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b"})
    expect_flags(llama, false);
  expect_flags("bert-large", true);
}

TEST(Find, UnknownNamesListTheKnownOnesAndTheClosest) {
  EXPECT_THAT(error_of([] { find_model("gpt5"); }), HasSubstr("unknown model 'gpt5' (known: gpt3-1.3b, gpt3-2.7b, "));
  EXPECT_THAT(error_of([] { find_gpu("H100-SXM"); }),
              HasSubstr("unknown gpu 'H100-SXM' (did you mean 'h100-sxm'? known: a100-40g, "));
  EXPECT_THAT(error_of([] { find_gpu("tpu-v5p"); }), HasSubstr("unknown gpu 'tpu-v5p' (known: a100-40g, "));
  EXPECT_THAT(error_of([] { find_link("nvlink9"); }),
              HasSubstr("unknown link 'nvlink9' (did you mean 'nvlink3', 'nvlink4' or 'nvlink5'? known: nvlink3, "
                        "nvlink4, nvlink5, pcie4, "));
  EXPECT_THAT(error_of([] { find_link("nvlink9"); }), HasSubstr("or a catalog file, see docs/catalogs.md"));
}

TEST(Find, FromAFile) {
  const std::string one = temp_file("one.json", gpu_with("name", "\"my-gpu\""));
  EXPECT_EQ(find_gpu(one).name, "my-gpu");
  EXPECT_EQ(find_gpu(one + ":my-gpu").name, "my-gpu");
  EXPECT_THAT(error_of([&] { find_gpu(one + ":other"); }),
              HasSubstr(one + ": no gpu named 'other' (gpus in it: my-gpu)"));
  EXPECT_THAT(error_of([&] { find_gpu(one + ":my_gpu"); }),
              HasSubstr(one + ": no gpu named 'my_gpu' (did you mean 'my-gpu'? gpus in it: my-gpu)"));
  EXPECT_THAT(error_of([&] { find_model(one); }),
              HasSubstr(one + ": expected exactly one model, found 0 (none); pick one as " + one + ":NAME"));
  const std::string two = temp_file("two.json", R"({"links": [
      {"name": "a", "bandwidth": "1GB/s", "latency": "1us", "source": "t"},
      {"name": "b", "bandwidth": "2GB/s", "latency": "1us", "source": "t"}]})");
  EXPECT_THAT(error_of([&] { find_link(two); }), HasSubstr("expected exactly one link, found 2 (a, b)"));
  EXPECT_DOUBLE_EQ(find_link(two + ":b").bandwidth, 2e9);
  EXPECT_THAT(error_of([] { find_link("/nonexistent/links.json"); }),
              HasSubstr("cannot read catalog file '/nonexistent/links.json'"));
  const std::string dir = std::filesystem::temp_directory_path() / "pipesim_catalog_test_dir.json";
  std::filesystem::create_directories(dir);
  EXPECT_THAT(error_of([&] { read_catalog_file(dir); }), HasSubstr("cannot read catalog file '" + dir + "'"));
}

TEST(MakeCluster, DefaultsAndOverrides) {
  const ClusterSpec c = make_cluster("a100-80g", 4, 8);
  EXPECT_EQ(c.gpu.name, "a100-80g");
  EXPECT_EQ(c.total_gpus(), 32);
  EXPECT_EQ(c.intra.name, "nvlink3");
  EXPECT_EQ(c.inter.name, "ib-hdr");
  const ClusterSpec o = make_cluster("h100-sxm", 2, 4, "pcie5", "ethernet-400g");
  EXPECT_EQ(o.intra.name, "pcie5");
  EXPECT_EQ(o.inter.name, "ethernet-400g");
  EXPECT_THAT(error_of([] { make_cluster("h100-sxm", 0, 8); }), HasSubstr("cluster: nodes must be at least 1; got 0"));
  EXPECT_THAT(error_of([] { make_cluster("h100-sxm", 1, -2); }),
              HasSubstr("cluster: GPUs per node must be at least 1; got -2"));
  EXPECT_THAT(error_of([] { make_cluster("h100-sxm", 1, 8, "nvlink9"); }), HasSubstr("unknown link 'nvlink9'"));
}

TEST(MakeCluster, AUserGpuUsesTheLinksOfItsOwnFile) {
  const std::string file = temp_file("cluster.json", R"({
    "gpus": [{"name": "x1", "peak_flops": {"bf16": "100TFLOP/s"}, "hbm_bandwidth": "1TB/s", "memory": "16GiB",
              "intra_node_link": "fabric", "inter_node_link": "ib-hdr", "source": "t"}],
    "links": [{"name": "fabric", "bandwidth": "123GB/s", "latency": "2us", "source": "t"}]})");
  const ClusterSpec c = make_cluster(file, 2, 4);
  EXPECT_EQ(c.gpu.name, "x1");
  EXPECT_DOUBLE_EQ(c.intra.bandwidth, 123e9);
  EXPECT_EQ(c.intra.latency, 2'000);
  EXPECT_EQ(c.inter.name, "ib-hdr");  // built in
}

TEST(ParseCatalog, AcceptsAnyOfTheThreeArrays) {
  const Catalog c = parse_catalog(model_with(R"(, "kv_heads": 2, "mlp": "swiglu", "tied_embeddings": false,
                                              "linear_bias": false, "rms_norm": true, "learned_positions": false)"),
                                  "m.json");
  ASSERT_EQ(c.models.size(), 1u);
  EXPECT_EQ(c.models[0].kv_heads, 2);
  EXPECT_FALSE(c.models[0].linear_bias);
  EXPECT_TRUE(c.models[0].rms_norm);
  EXPECT_FALSE(c.models[0].learned_positions);
  EXPECT_EQ(c.models[0].mlp, MlpKind::SwiGlu);
  EXPECT_FALSE(c.models[0].tied_embeddings);
  EXPECT_TRUE(c.gpus.empty());
  const Catalog g = parse_catalog(gpu_with("price_per_hour", "\"2.5 USD\""), "g.json");
  ASSERT_EQ(g.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(*g.gpus[0].price_per_hour, 2.5);
  EXPECT_TRUE(g.gpus[0].price_source.empty());
  EXPECT_FALSE(g.gpus[0].price_assumed);
  EXPECT_EQ(g.gpus[0].memory_bytes, 16 * kGiB);
  const Catalog p = parse_catalog(
      gpu_with("price_per_hour", R"("2.5USD", "price_source": "my invoice", "price_assumed": true)"), "p.json");
  EXPECT_EQ(p.gpus[0].price_source, "my invoice");
  EXPECT_TRUE(p.gpus[0].price_assumed);
}

TEST(ParseCatalog, FileLevelErrors) {
  EXPECT_EQ(parse_error("  \n"),
            "my.json: empty file (expected a JSON object with \"models\", \"gpus\" or \"links\" arrays)");
  EXPECT_THAT(parse_error("{\n  \"models\": [,]\n}"),
              HasSubstr("my.json: line 2, column 14: invalid JSON (syntax error"));
  EXPECT_THAT(parse_error("[1]"), HasSubstr("my.json: expected a JSON object with \"models\", \"gpus\" or \"links\" "
                                            "arrays; got [1]"));
  EXPECT_THAT(parse_error("{}"), HasSubstr("my.json: expected a JSON object with \"models\", \"gpus\" or \"links\" "
                                           "arrays; got an empty object"));
  EXPECT_EQ(parse_error(R"({"gpu": []})"), "my.json: unknown top-level field 'gpu' (expected models, gpus or links)");
  EXPECT_EQ(parse_error(R"({"models": {}})"), "my.json: /models: expected an array of model objects; got {}");
  EXPECT_EQ(parse_error(R"({"links": [3]})"), "my.json: /links/0: expected an object; got 3");
}

TEST(ParseCatalog, ModelErrors) {
  EXPECT_THAT(parse_error(model_with(R"(, "hiden": 5)")),
              HasSubstr("my.json: /models/0: unknown field 'hiden' (expected name, family, layers, hidden, "));
  EXPECT_EQ(parse_error(R"({"models": [{"name": "m"}]})"), "my.json: /models/0: missing field 'layers'");
  EXPECT_EQ(parse_error(R"({"models": [{"name": 5}]})"), "my.json: /models/0/name: expected a non-empty string; got 5");
  EXPECT_EQ(parse_error(R"({"models": [{"name": "GPT 3"}]})"),
            "my.json: /models/0/name: expected lowercase letters, digits, '.', '-' or '_'; got 'GPT 3'");
  EXPECT_EQ(parse_error(model_with(R"(, "kv_heads": -1)")),
            "my.json: /models/0/kv_heads: expected a positive integer; got -1");
  EXPECT_EQ(parse_error(model_with(R"(, "kv_heads": 1.5)")),
            "my.json: /models/0/kv_heads: expected a positive integer; got 1.5");
  EXPECT_EQ(parse_error(model_with(R"(, "kv_heads": "2")")),
            "my.json: /models/0/kv_heads: expected a positive integer; got '2'");
  EXPECT_EQ(parse_error(model_with(R"(, "kv_heads": 4294967296)")),
            "my.json: /models/0/kv_heads: expected a positive integer; got 4294967296");
  EXPECT_EQ(parse_error(model_with(R"(, "tied_embeddings": "yes")")),
            "my.json: /models/0/tied_embeddings: expected true or false; got 'yes'");
  EXPECT_EQ(parse_error(model_with(R"(, "mlp": "relu")")),
            "my.json: /models/0/mlp: expected 'gelu' or 'swiglu'; got 'relu'");
  EXPECT_EQ(parse_error(model_with(R"(, "kv_heads": 3)")),
            "my.json: /models/0/kv_heads: 3 KV heads do not divide 4 heads");
  EXPECT_EQ(parse_error(model_with(R"(, "kv_heads": 8)")),
            "my.json: /models/0/kv_heads: 8 KV heads do not divide 4 heads");
  EXPECT_EQ(parse_error(R"({"models": [{"name": "m", "layers": 2, "hidden": 64, "heads": 24, "ffn_hidden": 256,
              "seq_len": 128, "vocab": 1000, "source": "t"}]})"),
            "my.json: /models/0/heads: 24 heads do not divide hidden 64");
  const std::string m = R"({"name": "m", "layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256, "seq_len": 128,
                           "vocab": 1000, "source": "t"})";
  EXPECT_EQ(parse_error(R"({"models": [)" + m + ", " + m + "]}"),
            "my.json: /models/1/name: duplicate model name 'm' (also /models/0)");
}

TEST(ParseCatalog, GpuErrors) {
  EXPECT_EQ(parse_error(gpu_with("hbm_bandwidth", "\"3.35\"")),
            "my.json: /gpus/0/hbm_bandwidth: expected a bandwidth such as 50GB/s, 25GiB/s, 400Gb/s or 100Gbit/s; "
            "got '3.35' (missing unit)");
  EXPECT_THAT(parse_error(gpu_with("hbm_bandwidth", "\"80GiB\"")),
              HasSubstr("my.json: /gpus/0/hbm_bandwidth: expected a bandwidth"));
  EXPECT_EQ(parse_error(gpu_with("hbm_bandwidth", "3.35")),
            "my.json: /gpus/0/hbm_bandwidth: expected a string with a unit such as 3.35TB/s; got 3.35");
  EXPECT_EQ(parse_error(gpu_with("memory", "\"0GiB\"")), "my.json: /gpus/0/memory: must be positive; got '0GiB'");
  EXPECT_THAT(parse_error(gpu_with("memory", "\"1TB/s\"")), HasSubstr("my.json: /gpus/0/memory: expected a size"));
  EXPECT_EQ(parse_error(gpu_with("memory", "")), "my.json: /gpus/0: missing field 'memory'");
  EXPECT_EQ(parse_error(gpu_with("peak_flops", "\"100TFLOP/s\"")),
            "my.json: /gpus/0/peak_flops: expected an object of dense peak rates per data type like "
            "{\"bf16\": \"989.4TFLOP/s\"}; got '100TFLOP/s'");
  EXPECT_THAT(parse_error(gpu_with("peak_flops", "{}")), HasSubstr("my.json: /gpus/0/peak_flops: expected an object"));
  EXPECT_EQ(parse_error(gpu_with("peak_flops", R"({"int8": "1POP/s"})")),
            "my.json: /gpus/0/peak_flops: unknown field 'int8' (expected fp32, tf32, bf16, fp16, fp8)");
  EXPECT_THAT(parse_error(gpu_with("peak_flops", R"({"bf16": "989.4TB/s"})")),
              HasSubstr("my.json: /gpus/0/peak_flops/bf16: expected a compute rate such as 989.4TFLOP/s"));
  EXPECT_EQ(parse_error(gpu_with("peak_flops", R"({"bf16": "0TFLOP/s"})")),
            "my.json: /gpus/0/peak_flops/bf16: must be positive; got '0TFLOP/s'");
  for (const char* bad : {"\"3\"", "\"0USD\"", "\"-1USD\"", "\"infUSD\"", "\"nanUSD\"", "\"USD\"", "\"3EUR\""})
    EXPECT_THAT(parse_error(gpu_with("price_per_hour", bad)),
                HasSubstr("my.json: /gpus/0/price_per_hour: expected a positive price per GPU-hour such as 2.99USD"))
        << bad;
  EXPECT_THAT(parse_error(gpu_with("intra_node_link", "\"nvlnk4\"")),
              HasSubstr("my.json: /gpus/0/intra_node_link: unknown link 'nvlnk4' (did you mean 'nvlink4'? known: nvlink3, "));
  EXPECT_EQ(parse_error(gpu_with("price_source", "\"an invoice\"")),
            "my.json: /gpus/0/price_source: given without a price_per_hour");
  EXPECT_EQ(parse_error(gpu_with("price_assumed", "true")), "my.json: /gpus/0/price_assumed: given without a price_per_hour");
  EXPECT_THAT(parse_error(gpu_with("price_per_hour", R"("2USD", "price_assumed": "yes")")),
              HasSubstr("my.json: /gpus/0/price_assumed: expected true or false; got 'yes'"));
  EXPECT_THAT(parse_error(gpu_with("inter_node_link", "\"\"")),
              HasSubstr("my.json: /gpus/0/inter_node_link: expected a non-empty string; got ''"));
}

TEST(ParseCatalog, SmsAndEfficiency) {
  EXPECT_EQ(parse_error(gpu_with("sms", "0")), "my.json: /gpus/0/sms: expected a positive integer; got 0");
  EXPECT_EQ(parse_error(gpu_with("efficiency", R"({"gemm": 1.5})")),
            "my.json: /gpus/0/efficiency/gemm: expected a number in [0.001, 1]; got 1.5");
  EXPECT_EQ(parse_error(gpu_with("efficiency", R"({"gemm_k_overhead": "128"})")),
            "my.json: /gpus/0/efficiency/gemm_k_overhead: expected a number in [0, 1e+06]; got '128'");
  EXPECT_THAT(parse_error(gpu_with("efficiency", R"({"gem": 0.7})")),
              HasSubstr("my.json: /gpus/0/efficiency: unknown field 'gem' (expected gemm, gemm_k_overhead, tile_m"));
  EXPECT_EQ(parse_error(gpu_with("efficiency", R"({"tile_m": 8192})")),
            "my.json: /gpus/0/efficiency: efficiency.tile_m and tile_n must lie in 1..4096, got 8192 x 256");
  // Given fields replace the defaults, the rest keep them; the writer's file reads back the same values.
  const Catalog c = parse_catalog(gpu_with("efficiency", R"({"gemm": 0.7, "tile_n": 128, "source": "mine"})"), "my.json");
  ASSERT_EQ(c.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(c.gpus[0].efficiency.gemm, 0.7);
  EXPECT_EQ(c.gpus[0].efficiency.tile_n, 128);
  EXPECT_EQ(c.gpus[0].efficiency.memory, Efficiency{}.memory);
}

void expect_same(const ModelSpec& a, const ModelSpec& b) {
  EXPECT_EQ(std::tie(a.name, a.family, a.layers, a.hidden, a.heads, a.kv_heads, a.head_dim, a.ffn_hidden, a.seq_len,
                     a.vocab, a.tied_embeddings, a.mlp, a.linear_bias, a.rms_norm, a.learned_positions, a.source),
            std::tie(b.name, b.family, b.layers, b.hidden, b.heads, b.kv_heads, b.head_dim, b.ffn_hidden, b.seq_len,
                     b.vocab, b.tied_embeddings, b.mlp, b.linear_bias, b.rms_norm, b.learned_positions, b.source))
      << a.name;
}

void expect_same(const GpuSpec& a, const GpuSpec& b) {
  EXPECT_EQ(std::tie(a.name, a.sms, a.peak_flops, a.hbm_bandwidth, a.memory_bytes, a.price_per_hour, a.price_source,
                     a.price_assumed, a.intra_node_link, a.inter_node_link, a.source),
            std::tie(b.name, b.sms, b.peak_flops, b.hbm_bandwidth, b.memory_bytes, b.price_per_hour, b.price_source,
                     b.price_assumed, b.intra_node_link, b.inter_node_link, b.source))
      << a.name;
  for (EfficiencyParam p : kEfficiencyParams)
    EXPECT_EQ(efficiency_value(a.efficiency, p), efficiency_value(b.efficiency, p)) << a.name;
  EXPECT_EQ(std::tie(a.efficiency.tile_m, a.efficiency.tile_n, a.efficiency.source),
            std::tie(b.efficiency.tile_m, b.efficiency.tile_n, b.efficiency.source))
      << a.name;
}

void expect_same(const LinkSpec& a, const LinkSpec& b) {
  EXPECT_EQ(std::tie(a.name, a.latency, a.bandwidth, a.source), std::tie(b.name, b.latency, b.bandwidth, b.source));
}

// Exactly: no field within a rounding error.
TEST(CatalogFile, EveryBuiltInEntryReadsBackExactly) {
  const Catalog& c = builtin_catalog();
  const std::string text = catalog_file_json(c);
  const Catalog back = parse_catalog(text, "back.json");
  ASSERT_EQ(back.models.size(), c.models.size());
  ASSERT_EQ(back.gpus.size(), c.gpus.size());
  ASSERT_EQ(back.links.size(), c.links.size());
  for (std::size_t i = 0; i < c.models.size(); ++i) expect_same(back.models[i], c.models[i]);
  for (std::size_t i = 0; i < c.gpus.size(); ++i) expect_same(back.gpus[i], c.gpus[i]);
  for (std::size_t i = 0; i < c.links.size(); ++i) expect_same(back.links[i], c.links[i]);
  EXPECT_EQ(catalog_file_json(back), text);  // a fixed point
  // Quantities read as people write them.
  EXPECT_THAT(text, HasSubstr(R"("bf16": "989.4TFLOP/s")"));
  EXPECT_THAT(text, HasSubstr(R"("memory": "80GiB")"));
  EXPECT_THAT(text, HasSubstr(R"("bandwidth": "450GB/s")"));
  EXPECT_THAT(text, HasSubstr(R"("bandwidth": "300GB/s")"));  // not "0.3TB/s"
  EXPECT_THAT(text, HasSubstr(R"("latency": "3.4us")"));
  EXPECT_THAT(text, HasSubstr(R"("price_per_hour": "12.29USD")"));
}

TEST(CatalogFile, ValuesWithoutAShortFormStillReadBackExactly) {
  GpuSpec g = find_gpu("h100-sxm");
  g.name = "odd";
  g.peak_flops = {{"bf16", 123456789.123456789e6}};
  g.hbm_bandwidth = 1.0 / 3.0 * 1e12;
  g.memory_bytes = 85'899'345'921;  // 80 GiB + 1 B
  g.price_per_hour = 2.0 / 3.0;
  g.price_source.clear();
  g.efficiency.gemm = 0.1 + 0.2;
  LinkSpec l = find_link("nvlink4");
  l.latency = 3'401;
  const Catalog c{{}, {g}, {l}};
  const Catalog back = parse_catalog(catalog_file_json(c), "odd.json");
  expect_same(back.gpus.at(0), g);
  expect_same(back.links.at(0), l);
  EXPECT_THAT(catalog_file_json(c), HasSubstr(R"("memory": "85899345921B")"));
  EXPECT_EQ(parse_catalog(catalog_file_json(Catalog{}), "empty.json").models.size(), 0u);
}


TEST(ParseCatalog, LinkErrors) {
  const auto link = [](const std::string& bandwidth, const std::string& latency) {
    return R"({"links": [{"name": "l", "bandwidth": ")" + bandwidth + R"(", "latency": ")" + latency +
           R"(", "source": "t"}]})";
  };
  EXPECT_NO_THROW(parse_catalog(link("400Gb/s", "2us"), "ok.json"));
  EXPECT_EQ(parse_error(link("400Gb/s", "0us")), "my.json: /links/0/latency: must be positive; got '0us'");
  EXPECT_THAT(parse_error(link("400Gb/s", "2")), HasSubstr("my.json: /links/0/latency: expected a duration"));
  EXPECT_THAT(parse_error(link("0GB/s", "2us")), HasSubstr("my.json: /links/0/bandwidth: must be positive"));
  EXPECT_THAT(parse_error(link("400GB", "2us")), HasSubstr("my.json: /links/0/bandwidth: expected a bandwidth"));
}

}  // namespace
}  // namespace pipesim
