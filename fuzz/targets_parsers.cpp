// Fuzz targets for the small parsers: op text, units, catalogs.
#include <cstdint>
#include <limits>
#include <optional>

#include "cost_models/catalog.hpp"
#include "cost_models/transformer.hpp"
#include "core/units.hpp"
#include "fuzz/check.hpp"
#include "schedules/op_text.hpp"

namespace pipesim::fuzz {

void op_text(std::string_view bytes) {
  std::string error;
  const std::optional<Op> op = parse_op(bytes, &error);
  if (!op) {
    // The readers put the message into an InputError, which escapes what the input held.
    require(!error.empty(), "parse_op: no error message");
    require_one_line(InputError(error).what(), "parse_op");
    return;
  }
  require(op->stage >= 0 && op->pipeline >= 0, "parse_op: negative stage or pipeline");
  require(!is_microbatch_op(op->kind) || op->microbatch >= 0, "parse_op: negative micro-batch");
  // Writing and reading again gives the same op (the CSV and JSON writers rely on it).
  const std::string text = to_string(*op);
  const std::optional<Op> back = parse_op(text, &error);
  require(back && *back == *op, "parse_op(to_string(op)) != op for '" + text + "'");
}

void units(std::string_view bytes) {
  if (bytes.empty()) return;
  const auto which = static_cast<unsigned char>(bytes.front()) % 4;
  const std::string_view text = bytes.substr(1);
  switch (which) {
    case 0: {
      Tick ns = 0;
      if (!parses([&] { ns = parse_duration(text, "--fwd"); }, "parse_duration")) return;
      require(ns >= 0, "parse_duration: negative result");
      // What people read parses back to within the rounding of its three decimals.
      const std::string shown = format_duration(ns);
      Tick back = 0;
      if (!parses([&] { back = parse_duration(shown, "formatted"); }, "parse_duration(format_duration)")) {
        // Rounding up the largest values can step past int64; nothing smaller may fail.
        require(ns > std::numeric_limits<Tick>::max() - kNsPerS, "format_duration output does not parse: " + shown);
        return;
      }
      const Tick diff = back > ns ? back - ns : ns - back;
      require(diff <= ns / 1000 + 1, "format_duration round trip: " + std::to_string(ns) + " -> " + shown);
      break;
    }
    case 1: {
      std::int64_t n = 0;
      if (!parses([&] { n = parse_bytes(text, "--activation-bytes"); }, "parse_bytes")) return;
      require(n >= 0, "parse_bytes: negative result");
      (void)format_bytes(static_cast<double>(n));
      break;
    }
    case 2: {
      double rate = 0;
      if (!parses([&] { rate = parse_bandwidth(text, "--link-bandwidth"); }, "parse_bandwidth")) return;
      require(std::isfinite(rate) && rate > 0, "parse_bandwidth: " + std::to_string(rate));
      break;
    }
    default: {
      double rate = 0;
      if (!parses([&] { rate = parse_flops(text, "/gpus/0/peak_flops/bf16"); }, "parse_flops")) return;
      require(std::isfinite(rate) && rate > 0, "parse_flops: " + std::to_string(rate));
      break;
    }
  }
}

namespace {

// What the analytical cost model and the memory model compute from a model file.
void check_model_formulas(const ModelSpec& m) {
  if (!parses([&] { check_model(m, 1, "fuzz"); }, "check_model")) return;
  const std::string who = "model " + m.name + ": ";
  require(total_parameters(m) > 0, who + "total_parameters <= 0");
  require(matmul_parameters(m) >= 0, who + "matmul_parameters < 0");
  const Microbatch mb;
  for (Pass pass : {Pass::Forward, Pass::InputGrad, Pass::WeightGrad}) {
    require_finite_non_negative(layer_flops(m, 1, pass), who + "layer_flops");
    require_finite_non_negative(head_flops(m, 1, pass), who + "head_flops");
    require_finite_non_negative(layer_work(m, mb, pass).bytes(), who + "layer_work bytes");
  }
  require_finite_non_negative(megatron_flops_per_iteration(m, 1), who + "megatron_flops_per_iteration");
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
    require(layer_activation_bytes(m, mb, r) >= 0, who + "layer_activation_bytes < 0");
  require(head_activation_bytes(m, mb) >= 0, who + "head_activation_bytes < 0");
}

}  // namespace

void catalog(std::string_view bytes) {
  Catalog c;
  if (!parses([&] { c = parse_catalog(bytes, "fuzz.json"); }, "parse_catalog")) return;
  for (const GpuSpec& g : c.gpus) {
    require(!g.peak_flops.empty(), "gpu " + g.name + ": no peak rates");
    for (const auto& [dtype, rate] : g.peak_flops) require(std::isfinite(rate) && rate > 0, "gpu peak " + dtype);
    require(std::isfinite(g.hbm_bandwidth) && g.hbm_bandwidth > 0, "gpu hbm_bandwidth");
    require(g.memory_bytes > 0, "gpu memory");
    require(!g.price_per_hour || (std::isfinite(*g.price_per_hour) && *g.price_per_hour > 0), "gpu price");
  }
  for (const LinkSpec& l : c.links)
    require(std::isfinite(l.bandwidth) && l.bandwidth > 0 && l.latency > 0, "link " + l.name);
  for (const ModelSpec& m : c.models) check_model_formulas(m);
}

}  // namespace pipesim::fuzz
