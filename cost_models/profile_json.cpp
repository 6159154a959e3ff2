// Reading profile files (docs/profile-format.md) with full validation: every problem is one
// line naming the file and the JSON path.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cost_models/profile.hpp"
#include "cost_models/transformer.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_input.hpp"

namespace pipesim {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw InputError(where + ": " + what); }

std::string shown(const json& v) {
  if (v.is_structured()) return v.is_array() ? "an array" : "an object";
  std::string s = v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// One JSON object at a path: its fields are checked against `allowed` before any is read,
// so a misspelt field is an error, not a silently missing measurement.
class Obj {
 public:
  Obj(const json& value, std::string source, std::string path, std::initializer_list<const char*> allowed)
      : source_(std::move(source)), path_(std::move(path)) {
    if (!value.is_object()) fail(where(), "expected an object; got " + shown(value));
    for (const auto& item : value.items()) {
      const std::string& key = item.key();
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
        std::string names;
        for (const char* a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
        fail(where(), "unknown field " + quote(key) + " (expected " + names + ")");
      }
    }
    object_ = &value;
  }

  std::string where() const { return source_ + ": " + (path_.empty() ? "/" : path_); }
  std::string where(const char* key) const { return source_ + ": " + path_ + "/" + key; }
  std::string child(const char* key) const { return path_ + "/" + key; }
  const std::string& source() const { return source_; }
  bool has(const char* key) const { return object_->contains(key); }

  const json& at(const char* key) const {
    if (!has(key)) fail(where(), std::string("missing field '") + key + "'");
    return object_->at(key);
  }
  Obj object(const char* key, std::initializer_list<const char*> allowed) const {
    return Obj(at(key), source_, child(key), allowed);
  }
  std::string text(const char* key) const {
    const json& v = at(key);
    if (!v.is_string() || v.get<std::string>().empty()) fail(where(key), "expected a non-empty string; got " + shown(v));
    return v.get<std::string>();
  }
  bool flag(const char* key) const {
    const json& v = at(key);
    if (!v.is_boolean()) fail(where(key), "expected true or false; got " + shown(v));
    return v.get<bool>();
  }
  std::int64_t integer(const char* key, std::int64_t min, std::int64_t max) const {
    const json& v = at(key);
    if (!v.is_number_integer()) fail(where(key), "expected an integer; got " + shown(v));
    // A JSON integer may be unsigned 64-bit: compare without converting it first.
    const bool in_range = v.is_number_unsigned() ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(max)
                                                 : v.get<std::int64_t>() >= min && v.get<std::int64_t>() <= max;
    if (!in_range || v.get<std::int64_t>() < min)
      fail(where(key), "expected an integer in " + std::to_string(min) + ".." + std::to_string(max) + "; got " + shown(v));
    return v.get<std::int64_t>();
  }
  int count(const char* key, int min = 1) const { return static_cast<int>(integer(key, min, INT_MAX)); }
  std::int64_t bytes(const char* key) const { return integer(key, 1, INT64_MAX); }
  // A finite number >= min (> 0 when `positive`).
  double number(const char* key, bool positive, const char* unit) const {
    const json& v = at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
        (positive && !(v.get<double>() > 0)))
      fail(where(key), std::string("expected a ") + (positive ? "positive" : "non-negative") + " number of " + unit +
                           "; got " + shown(v));
    return v.get<double>();
  }

 private:
  const json* object_ = nullptr;
  std::string source_, path_;
};

TimingStats read_stats(const Obj& parent, const char* key) {
  const Obj o = parent.object(key, {"median_s", "p10_s", "p90_s", "min_s", "max_s", "repeats"});
  TimingStats s;
  s.median = o.number("median_s", true, "seconds");
  s.p10 = o.number("p10_s", true, "seconds");
  s.p90 = o.number("p90_s", true, "seconds");
  s.min = o.number("min_s", true, "seconds");
  s.max = o.number("max_s", true, "seconds");
  s.repeats = o.count("repeats");
  if (!(s.min <= s.p10 && s.p10 <= s.median && s.median <= s.p90 && s.p90 <= s.max))
    fail(o.where(), "expected min_s <= p10_s <= median_s <= p90_s <= max_s");
  return s;
}

OptimizerTimes read_optimizer(const Obj& parent, const char* key) {
  const Obj o = parent.object(key, {"sgd", "adam"});
  return {read_stats(o, "sgd"), read_stats(o, "adam")};
}

PassProfile read_pass(const Obj& parent, const char* key, bool input_grad) {
  const Obj o = input_grad ? parent.object(key, {"forward", "input_grad", "weight_grad", "activation_bytes",
                                                 "held_after_input_grad_bytes"})
                           : parent.object(key, {"forward", "weight_grad", "activation_bytes",
                                                 "held_after_input_grad_bytes"});
  PassProfile p;
  p.forward = read_stats(o, "forward");
  if (input_grad) p.input_grad = read_stats(o, "input_grad");
  p.weight_grad = read_stats(o, "weight_grad");
  p.activation_bytes = o.bytes("activation_bytes");
  p.held_after_input_grad_bytes = o.bytes("held_after_input_grad_bytes");
  if (p.held_after_input_grad_bytes > p.activation_bytes)
    fail(o.where("held_after_input_grad_bytes"), "exceeds activation_bytes (" + std::to_string(p.activation_bytes) + ")");
  return p;
}

bool iso_utc(const std::string& d) {  // YYYY-MM-DDTHH:MM:SSZ
  static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:ddZ";
  if (d.size() != kShape.size()) return false;
  for (std::size_t i = 0; i < d.size(); ++i)
    if (kShape[i] == 'd' ? !(d[i] >= '0' && d[i] <= '9') : d[i] != kShape[i]) return false;
  return true;
}

ModelSpec read_model(const Obj& root) {
  const Obj o = root.object("model", {"name", "family", "layers", "hidden", "heads", "ffn_hidden", "seq_len", "vocab",
                                      "tied_embeddings"});
  ModelSpec m;
  m.name = o.text("name");
  m.family = o.text("family");
  if (m.family != "gpt")
    fail(o.where("family"), "expected 'gpt' (the profiled kernels are GPT blocks); got " + quote(m.family));
  m.layers = o.count("layers");
  m.hidden = o.count("hidden");
  m.heads = o.count("heads");
  m.kv_heads = m.heads;
  m.ffn_hidden = o.count("ffn_hidden");
  m.seq_len = o.count("seq_len");
  m.vocab = o.count("vocab");
  m.tied_embeddings = o.flag("tied_embeddings");
  m.source = "profile " + root.source();
  if (m.hidden % m.heads != 0)
    fail(o.where("heads"), std::to_string(m.heads) + " heads do not divide hidden " + std::to_string(m.hidden));
  try {
    check_model(m, 1, "model");
  } catch (const InputError& e) {
    fail(o.where(), e.what());
  }
  return m;
}

}  // namespace

Profile parse_profile(const std::string& text, const std::string& source) {
  const json root_value = parse_json_input(text, source);
  const Obj root(root_value, source, "",
                 {"format", "version", "backend", "date", "machine", "libraries", "settings", "model", "dtype",
                  "parameters", "optimizer", "micro_batches", "link"});
  if (root.text("format") != kProfileFormat)
    fail(root.where("format"), std::string("expected '") + kProfileFormat + "'; got " + shown(root.at("format")));
  const std::int64_t version = root.integer("version", 1, INT_MAX);
  if (version != kProfileVersion)
    fail(root.where("version"), "this pipesim reads version " + std::to_string(kProfileVersion) + "; got " +
                                    std::to_string(version) + " (written by another pipesim)");
  Profile p;
  p.backend = root.text("backend");
  if (p.backend != "cpu" && p.backend != "cuda")
    fail(root.where("backend"), "expected 'cpu' or 'cuda'; got " + quote(p.backend));
  p.date = root.text("date");
  if (!iso_utc(p.date)) fail(root.where("date"), "expected a UTC date like 2026-11-30T07:51:38Z; got " + quote(p.date));

  const Obj machine = root.object("machine", {"cpu", "cores", "hostname", "device", "device_count"});
  p.machine.cpu = machine.text("cpu");
  p.machine.cores = machine.count("cores");
  if (machine.has("hostname")) p.machine.hostname = machine.text("hostname");
  p.machine.device = machine.text("device");
  p.machine.device_count = machine.count("device_count");

  const Obj libs = root.object("libraries", {"compiler", "eigen", "cuda"});
  p.libraries.compiler = libs.text("compiler");
  p.libraries.eigen = libs.text("eigen");
  if (!libs.at("cuda").is_null()) p.libraries.cuda = libs.text("cuda");
  if (p.backend == "cuda" && p.libraries.cuda.empty())
    fail(libs.where("cuda"), "a cuda profile must name the CUDA version; got null");

  const Obj settings = root.object("settings", {"repeats", "warmup", "threads", "clock"});
  p.settings.repeats = settings.count("repeats");
  p.settings.warmup = settings.count("warmup", 0);
  p.settings.threads = settings.count("threads");
  p.settings.clock = settings.text("clock");
  if (p.settings.clock != "wall" && p.settings.clock != "thread-cpu" && p.settings.clock != "events")
    fail(settings.where("clock"), "expected 'wall', 'thread-cpu' or 'events'; got " + quote(p.settings.clock));

  p.model = read_model(root);
  p.dtype = root.text("dtype");
  if (p.dtype != "fp32") fail(root.where("dtype"), "expected 'fp32' (the only dtype the kernels run); got " + quote(p.dtype));

  const Obj params = root.object("parameters", {"block", "embedding", "head_norm", "head_weight"});
  p.parameters.block = params.bytes("block");
  p.parameters.embedding = params.bytes("embedding");
  p.parameters.head_norm = params.bytes("head_norm");
  p.parameters.head_weight = params.bytes("head_weight");
  const ModelSpec& m = p.model;
  const std::int64_t h = m.hidden, v = m.vocab;
  const auto expect_count = [&](const char* key, std::int64_t got, std::int64_t want) {
    if (got != want)
      fail(params.where(key), std::to_string(got) + " parameters, but the model's shape has " + std::to_string(want));
  };
  expect_count("block", p.parameters.block, layer_parameters(m));
  expect_count("embedding", p.parameters.embedding, embedding_parameters(m));
  expect_count("head_norm", p.parameters.head_norm, 2 * h);
  expect_count("head_weight", p.parameters.head_weight, v * h);

  const Obj opt = root.object("optimizer", {"block", "embedding", "head_norm", "head_weight"});
  p.block_optimizer = read_optimizer(opt, "block");
  p.embedding_optimizer = read_optimizer(opt, "embedding");
  p.head_norm_optimizer = read_optimizer(opt, "head_norm");
  p.head_weight_optimizer = read_optimizer(opt, "head_weight");

  const json& mbs = root.at("micro_batches");
  if (!mbs.is_array() || mbs.empty())
    fail(root.where("micro_batches"), "expected a non-empty array of micro-batch sizes; got " + shown(mbs));
  for (std::size_t i = 0; i < mbs.size(); ++i) {
    const Obj e(mbs[i], source, "/micro_batches/" + std::to_string(i), {"size", "message_bytes", "block", "embedding", "head"});
    MicroBatchProfile mb;
    mb.size = e.count("size");
    if (mb.size > kMaxMicroBatchSize)
      fail(e.where("size"), "expected at most " + std::to_string(kMaxMicroBatchSize) + "; got " + std::to_string(mb.size));
    if (!p.micro_batches.empty() && mb.size <= p.micro_batches.back().size)
      fail(e.where("size"), "sizes must increase strictly; " + std::to_string(mb.size) + " follows " +
                                std::to_string(p.micro_batches.back().size));
    mb.message_bytes = e.bytes("message_bytes");
    mb.block = read_pass(e, "block", true);
    mb.embedding = read_pass(e, "embedding", false);
    mb.head = read_pass(e, "head", true);
    p.micro_batches.push_back(mb);
  }

  const Obj link = root.object("link", {"kind", "latency_s", "bandwidth_bytes_per_s", "rms_relative_residual",
                                        "max_relative_residual", "samples"});
  p.link.kind = link.text("kind");
  p.link.latency = link.number("latency_s", false, "seconds");
  p.link.bandwidth = link.number("bandwidth_bytes_per_s", true, "bytes per second");
  p.link.rms_relative_residual = link.number("rms_relative_residual", false, "(a ratio)");
  p.link.max_relative_residual = link.number("max_relative_residual", false, "(a ratio)");
  const json& samples = link.at("samples");
  if (!samples.is_array() || samples.size() < 2)
    fail(link.where("samples"), "expected an array of at least two message sizes; got " + shown(samples));
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Obj s(samples[i], source, "/link/samples/" + std::to_string(i), {"bytes", "time"});
    LinkSample ls;
    ls.bytes = s.bytes("bytes");
    if (!p.link.samples.empty() && ls.bytes <= p.link.samples.back().bytes)
      fail(s.where("bytes"), "sizes must increase strictly; " + std::to_string(ls.bytes) + " follows " +
                                 std::to_string(p.link.samples.back().bytes));
    ls.time = read_stats(s, "time");
    p.link.samples.push_back(ls);
  }
  return p;
}

Profile read_profile_file(const std::string& path) {
  return parse_profile(read_input_file(path, kProfileFileInput), path);
}

}  // namespace pipesim
