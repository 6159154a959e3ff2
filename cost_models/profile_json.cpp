// Reading profile files (docs/profile-format.md) with full validation: every problem is one
// line naming the file and the JSON path.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cost_models/profile.hpp"
#include "cost_models/transformer.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_input.hpp"
#include "core/json_object.hpp"

namespace pipesim {
namespace {

using nlohmann::json;

// One object of a profile (core/json_object.hpp), and the format version that says which
// fields there may be.
class Obj : public JsonObject {
 public:
  Obj(const json& value, std::string source, std::string path, const Fields& allowed, int version = kProfileVersion)
      : JsonObject(value, std::move(source), std::move(path), allowed), version_(version) {}

  int version() const { return version_; }
  Obj object(const char* key, const Fields& allowed) const {
    return Obj(at(key), source(), child(key), allowed, version_);
  }
  // Element i of the array `array` (the value of field `key`).
  Obj element(const json& array, const char* key, std::size_t i, const Fields& allowed) const {
    return Obj(array[i], source(), child(key) + "/" + std::to_string(i), allowed, version_);
  }

 private:
  int version_;
};

TimingStats read_stats(const Obj& o) {
  TimingStats s;
  s.median = o.number("median_s", true, "seconds");
  s.p10 = o.number("p10_s", true, "seconds");
  s.p90 = o.number("p90_s", true, "seconds");
  s.min = o.number("min_s", true, "seconds");
  s.max = o.number("max_s", true, "seconds");
  s.repeats = o.count("repeats");
  if (!(s.min <= s.p10 && s.p10 <= s.median && s.median <= s.p90 && s.p90 <= s.max))
    json_fail(o.where(), "expected min_s <= p10_s <= median_s <= p90_s <= max_s");
  if (o.has("mean_s")) {
    s.mean = o.number("mean_s", true, "seconds");
    if (!(s.min <= s.mean && s.mean <= s.max)) json_fail(o.where("mean_s"), "expected min_s <= mean_s <= max_s");
  }
  if (o.has("quantiles_s")) {
    s.quantiles = o.numbers("quantiles_s", std::numeric_limits<double>::min(), std::numeric_limits<double>::max(), true,
                            "a positive number of seconds");
    const int want = quantile_count(s.repeats);
    if (static_cast<int>(s.quantiles.size()) != want)
      json_fail(o.where("quantiles_s"), "expected " + std::to_string(want) + " quantiles for " +
                                            std::to_string(s.repeats) + " repeats (min(repeats, " +
                                            std::to_string(kMaxQuantiles) + ")); got " +
                                            std::to_string(s.quantiles.size()));
    // The summary fields are points of the same distribution.
    const auto agrees = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); };
    if (!(s.quantiles.front() == s.min && s.quantiles.back() == s.max && agrees(s.at_quantile(0.1), s.p10) &&
          agrees(s.at_quantile(0.5), s.median) && agrees(s.at_quantile(0.9), s.p90)))
      json_fail(o.where("quantiles_s"), "do not agree with min_s, p10_s, median_s, p90_s and max_s");
  }
  return s;
}

TimingStats read_stats(const Obj& parent, const char* key) {
  if (parent.version() < 2) return read_stats(parent.object(key, {"median_s", "p10_s", "p90_s", "min_s", "max_s", "repeats"}));
  return read_stats(parent.object(key, {"median_s", "p10_s", "p90_s", "min_s", "max_s", "mean_s", "repeats", "quantiles_s"}));
}

// One curve: slowdown[k] and times[k] for k = 0..K neighbours, K = `neighbours` (-1: this
// is the first curve read, which sets it).
InterferenceCurve read_curve(const Obj& parent, const char* key, int& neighbours) {
  const Obj o = parent.object(key, {"slowdown", "times"});
  InterferenceCurve c;
  std::ostringstream range;
  range << "a slowdown in " << kMinSlowdown << ".." << kMaxSlowdown;
  c.slowdown = o.numbers("slowdown", kMinSlowdown, kMaxSlowdown, false, range.str());
  if (c.slowdown.size() < 2) json_fail(o.where("slowdown"), "expected slowdowns for 0 and at least 1 neighbour; got 1");
  if (neighbours < 0) neighbours = static_cast<int>(c.slowdown.size()) - 1;
  if (static_cast<int>(c.slowdown.size()) != neighbours + 1)
    json_fail(o.where("slowdown"), "expected " + std::to_string(neighbours + 1) + " slowdowns (0.." +
                                       std::to_string(neighbours) + " neighbours, as the first curve); got " +
                                       std::to_string(c.slowdown.size()));
  if (c.slowdown[0] != 1)
    json_fail(o.where("slowdown") + "/0", "expected 1 (the op alone); got " + json_shown(o.at("slowdown")[0]));
  const json& times = o.at("times");
  if (!times.is_array() || times.size() != c.slowdown.size())
    json_fail(o.where("times"), "expected an array of " + std::to_string(c.slowdown.size()) +
                                    " STATS, one per slowdown; got " + json_shown(times));
  for (std::size_t k = 0; k < times.size(); ++k) {
    const Obj t = o.element(times, "times", k, {"median_s", "p10_s", "p90_s", "min_s", "max_s", "mean_s", "repeats", "quantiles_s"});
    c.times.push_back(read_stats(t));
    const double ratio = c.times.back().median / c.times.front().median;
    if (!(std::abs(ratio - c.slowdown[k]) <= 1e-6 * ratio)) {
      std::ostringstream what;
      what << "expected times[" << k << "].median_s / times[0].median_s = " << ratio << "; got " << c.slowdown[k];
      json_fail(o.where("slowdown") + "/" + std::to_string(k), what.str());
    }
  }
  return c;
}

// `o`'s micro_batch_size, which must be one of the profiled `sizes` (the interference
// curve's and the turns' size).
int profiled_size(const Obj& o, const std::vector<MicroBatchProfile>& sizes) {
  const int b = o.count("micro_batch_size");
  if (std::none_of(sizes.begin(), sizes.end(), [&](const MicroBatchProfile& mb) { return mb.size == b; }))
    json_fail(o.where("micro_batch_size"), "expected one of the profiled micro-batch sizes; got " + std::to_string(b));
  return b;
}

ProfileInterference read_interference(const Obj& root, const std::vector<MicroBatchProfile>& sizes) {
  const Obj o = root.object("interference", {"micro_batch_size", "block", "embedding", "head"});
  ProfileInterference in;
  in.micro_batch_size = profiled_size(o, sizes);
  int k = -1;
  const Obj block = o.object("block", {"forward", "input_grad", "weight_grad"});
  in.block = {read_curve(block, "forward", k), read_curve(block, "input_grad", k), read_curve(block, "weight_grad", k)};
  const Obj embedding = o.object("embedding", {"forward", "weight_grad"});
  in.embedding = {read_curve(embedding, "forward", k), {}, read_curve(embedding, "weight_grad", k)};
  const Obj head = o.object("head", {"forward", "input_grad", "weight_grad"});
  in.head = {read_curve(head, "forward", k), read_curve(head, "input_grad", k), read_curve(head, "weight_grad", k)};
  return in;
}

ProfileSharedCore read_shared_core(const Obj& root, const std::vector<MicroBatchProfile>& sizes, int version) {
  std::vector<const char*> fields = {"micro_batch_size", "forward", "input_grad", "weight_grad", "optimizer"};
  if (version >= 5) fields.insert(fields.begin() + 1, {"threads", "cores"});
  const Obj o = root.object("shared_core", fields);
  ProfileSharedCore s;
  s.micro_batch_size = profiled_size(o, sizes);
  s.threads = 2;  // versions 3 and 4: two threads pinned to one core, handing it to each other
  s.cores = 1;
  if (version >= 5) {  // a ring of more threads than cores
    s.threads = o.count("threads");
    s.cores = o.count("cores");
    if (s.threads <= s.cores)
      json_fail(o.where("threads"), "expected more device threads than the " + std::to_string(s.cores) +
                                        " cores they took turns on; got " + std::to_string(s.threads));
  }
  const auto turns = [&](const char* key) {
    const Obj c = o.object(key, {"slowdown", "times"});
    if (const json& slowdown = c.at("slowdown"); slowdown.is_array() && slowdown.size() != 2)
      json_fail(c.where("slowdown"),
                "expected 2 slowdowns (alone: 1, and in turns); got " + std::to_string(slowdown.size()));
    int points = 1;
    return read_curve(o, key, points);
  };
  s.forward = turns("forward");
  s.input_grad = turns("input_grad");
  s.weight_grad = turns("weight_grad");
  s.optimizer = turns("optimizer");
  return s;
}

ProfileGradientCopies read_gradient_copies(const Obj& root, std::int64_t block_parameters) {
  std::vector<const char*> fields = {"parameters", "copy_out", "copy_in"};
  if (root.version() >= 7) fields.push_back("sum");
  const Obj o = root.object("gradient_copies", fields);
  ProfileGradientCopies g;
  g.parameters = o.bytes("parameters");
  if (g.parameters % block_parameters != 0)
    json_fail(o.where("parameters"), "expected a whole number of blocks of " + std::to_string(block_parameters) +
                                         " parameters (a stage's gradient); got " + std::to_string(g.parameters));
  g.copy_out = read_stats(o, "copy_out");
  g.copy_in = read_stats(o, "copy_in");
  if (o.has("sum")) g.sum = read_stats(o, "sum");
  return g;
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
    json_fail(o.where("held_after_input_grad_bytes"),
              "exceeds activation_bytes (" + std::to_string(p.activation_bytes) + ")");
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
    json_fail(o.where("family"), "expected 'gpt' (the profiled kernels are GPT blocks); got " + quote(m.family));
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
    json_fail(o.where("heads"), std::to_string(m.heads) + " heads do not divide hidden " + std::to_string(m.hidden));
  try {
    check_model(m, 1, "model");
  } catch (const InputError& e) {
    json_fail(o.where(), e.what());
  }
  return m;
}

}  // namespace

Profile parse_profile(const std::string& text, const std::string& source) {
  const json root_value = parse_json_input(text, source);
  // The version first: it says which fields the file may have.
  const int version = [&] {
    if (!root_value.is_object() || !root_value.contains("version")) return kProfileVersion;  // reported below
    const json only_version = {{"version", root_value.at("version")}};
    const Obj peek(only_version, source, "", {"version"});
    const std::int64_t v = peek.integer("version", 1, INT_MAX);
    if (v < kOldestProfileVersion || v > kProfileVersion)
      json_fail(peek.where("version"), "this pipesim reads versions " + std::to_string(kOldestProfileVersion) + " to " +
                                           std::to_string(kProfileVersion) + "; got " + std::to_string(v) +
                                           " (written by another pipesim)");
    return static_cast<int>(v);
  }();
  // Each version's fields: 2 added interference, 3 shared_core, 4 gradient_copies, 5 the
  // shared-core ring's threads and cores, 6 executor and the link's sender parts, 7 the
  // gradient copies' sum.
  std::vector<const char*> fields = {"format", "version", "backend", "date", "machine", "libraries", "settings",
                                     "model", "dtype", "parameters", "optimizer", "micro_batches", "link"};
  if (version >= 2) fields.push_back("interference");
  if (version >= 3) fields.push_back("shared_core");
  if (version >= 4) fields.push_back("gradient_copies");
  if (version >= 6) fields.push_back("executor");
  const Obj root(root_value, source, "", fields, version);
  if (root.text("format") != kProfileFormat)
    json_fail(root.where("format"),
              std::string("expected '") + kProfileFormat + "'; got " + json_shown(root.at("format")));
  (void)root.at("version");  // missing: one line naming it
  Profile p;
  p.backend = root.text("backend");
  if (p.backend != "cpu" && p.backend != "cuda")
    json_fail(root.where("backend"), "expected 'cpu' or 'cuda'; got " + quote(p.backend));
  p.date = root.text("date");
  if (!iso_utc(p.date))
    json_fail(root.where("date"), "expected a UTC date like 2026-11-30T07:51:38Z; got " + quote(p.date));

  const Obj machine = root.object("machine", {"cpu", "cores", "hostname", "device", "device_count", "virtual_devices", "sms"});
  p.machine.cpu = machine.text("cpu");
  p.machine.cores = machine.count("cores");
  if (machine.has("hostname")) p.machine.hostname = machine.text("hostname");
  p.machine.device = machine.text("device");
  p.machine.device_count = machine.count("device_count");
  if (machine.has("virtual_devices") || machine.has("sms")) {
    p.machine.virtual_devices = machine.count("virtual_devices", 2);
    p.machine.sms = machine.count("sms");
  }

  const Obj libs = root.object("libraries", {"compiler", "eigen", "cuda"});
  p.libraries.compiler = libs.text("compiler");
  p.libraries.eigen = libs.text("eigen");
  if (!libs.at("cuda").is_null()) p.libraries.cuda = libs.text("cuda");
  if (p.backend == "cuda" && p.libraries.cuda.empty())
    json_fail(libs.where("cuda"), "a cuda profile must name the CUDA version; got null");

  const Obj settings = root.object("settings", {"repeats", "warmup", "min_time_s", "stage_blocks", "threads", "clock"});
  p.settings.repeats = settings.count("repeats");
  p.settings.warmup = settings.count("warmup", 0);
  if (settings.has("min_time_s")) p.settings.min_time = settings.number("min_time_s", false, "seconds");
  if (settings.has("stage_blocks")) p.settings.stage_blocks = settings.count("stage_blocks");
  p.settings.threads = settings.count("threads");
  p.settings.clock = settings.text("clock");
  if (p.settings.clock != "wall" && p.settings.clock != "thread-cpu" && p.settings.clock != "events")
    json_fail(settings.where("clock"), "expected 'wall', 'thread-cpu' or 'events'; got " + quote(p.settings.clock));

  p.model = read_model(root);
  if (p.settings.stage_blocks > p.model.layers)
    json_fail(settings.where("stage_blocks"), "expected at most the model's " + std::to_string(p.model.layers) +
                                                  " layers; got " + std::to_string(p.settings.stage_blocks));
  p.dtype = root.text("dtype");
  if (p.dtype != "fp32")
    json_fail(root.where("dtype"), "expected 'fp32' (the only dtype the kernels run); got " + quote(p.dtype));

  const Obj params = root.object("parameters", {"block", "embedding", "head_norm", "head_weight"});
  p.parameters.block = params.bytes("block");
  p.parameters.embedding = params.bytes("embedding");
  p.parameters.head_norm = params.bytes("head_norm");
  p.parameters.head_weight = params.bytes("head_weight");
  const ModelSpec& m = p.model;
  const std::int64_t h = m.hidden, v = m.vocab;
  const auto expect_count = [&](const char* key, std::int64_t got, std::int64_t want) {
    if (got != want)
      json_fail(params.where(key),
                std::to_string(got) + " parameters, but the model's shape has " + std::to_string(want));
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
    json_fail(root.where("micro_batches"), "expected a non-empty array of micro-batch sizes; got " + json_shown(mbs));
  for (std::size_t i = 0; i < mbs.size(); ++i) {
    const Obj e = root.element(mbs, "micro_batches", i, {"size", "message_bytes", "block", "embedding", "head"});
    MicroBatchProfile mb;
    mb.size = e.count("size");
    if (mb.size > kMaxMicroBatchSize)
      json_fail(e.where("size"),
                "expected at most " + std::to_string(kMaxMicroBatchSize) + "; got " + std::to_string(mb.size));
    if (!p.micro_batches.empty() && mb.size <= p.micro_batches.back().size)
      json_fail(e.where("size"), "sizes must increase strictly; " + std::to_string(mb.size) + " follows " +
                                     std::to_string(p.micro_batches.back().size));
    mb.message_bytes = e.bytes("message_bytes");
    mb.block = read_pass(e, "block", true);
    mb.embedding = read_pass(e, "embedding", false);
    mb.head = read_pass(e, "head", true);
    p.micro_batches.push_back(mb);
  }

  std::vector<const char*> link_fields = {"kind", "latency_s", "bandwidth_bytes_per_s", "rms_relative_residual",
                                          "max_relative_residual", "samples"};
  if (version >= 6) link_fields.push_back("wake");
  const Obj link = root.object("link", link_fields);
  p.link.kind = link.text("kind");
  p.link.latency = link.number("latency_s", false, "seconds");
  p.link.bandwidth = link.number("bandwidth_bytes_per_s", true, "bytes per second");
  p.link.rms_relative_residual = link.number("rms_relative_residual", false, "(a ratio)");
  p.link.max_relative_residual = link.number("max_relative_residual", false, "(a ratio)");
  const json& samples = link.at("samples");
  if (!samples.is_array() || samples.size() < 2)
    json_fail(link.where("samples"), "expected an array of at least two message sizes; got " + json_shown(samples));
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Obj s = version >= 6 ? link.element(samples, "samples", i, {"bytes", "time", "copy"})
                               : link.element(samples, "samples", i, {"bytes", "time"});
    LinkSample ls;
    ls.bytes = s.bytes("bytes");
    if (!p.link.samples.empty() && ls.bytes <= p.link.samples.back().bytes)
      json_fail(s.where("bytes"), "sizes must increase strictly; " + std::to_string(ls.bytes) + " follows " +
                                      std::to_string(p.link.samples.back().bytes));
    ls.time = read_stats(s, "time");
    if (s.has("copy")) ls.copy = read_stats(s, "copy");
    p.link.samples.push_back(ls);
  }
  // The sender's parts of a hand-off come together: the wake-up call and every sample's copy.
  if (link.has("wake")) {
    p.link.wake = read_stats(link, "wake");
    for (std::size_t i = 0; i < p.link.samples.size(); ++i)
      if (p.link.samples[i].copy.repeats == 0)
        json_fail(link.where("samples") + "/" + std::to_string(i),
                  "missing field 'copy': with the sender's wake-up call (link/wake) every sample has its copy");
  } else if (const auto it = std::find_if(p.link.samples.begin(), p.link.samples.end(),
                                          [](const LinkSample& s) { return s.copy.repeats > 0; });
             it != p.link.samples.end()) {
    json_fail(link.where("samples") + "/" + std::to_string(it - p.link.samples.begin()) + "/copy",
              "a sender's copy without its wake-up call (link/wake): both, or neither");
  }
  if (root.has("interference")) p.interference = read_interference(root, p.micro_batches);
  if (root.has("shared_core")) p.shared_core = read_shared_core(root, p.micro_batches, version);
  if (root.has("gradient_copies")) p.gradient_copies = read_gradient_copies(root, p.parameters.block);
  if (root.has("executor")) p.executor.op_gap = read_stats(root.object("executor", {"op_gap"}), "op_gap");
  return p;
}

Profile read_profile_file(const std::string& path) {
  return parse_profile(read_input_file(path, kProfileFileInput), path);
}

}  // namespace pipesim
