#include "tools/fit_advice.hpp"

#include <algorithm>
#include <functional>
#include <utility>

#include "core/error.hpp"
#include "assess/analytical_source.hpp"
#include "cost_models/analytical.hpp"
#include "core/units.hpp"
#include "sim/engine.hpp"
#include "tools/analytical_setup.hpp"
#include "tools/global_batch.hpp"
#include "tools/memory_guard.hpp"
#include "tools/table.hpp"

namespace pipesim {
namespace {

struct Candidate {
  std::string change;
  HardwareOptions hardware;
  int pp_factor = 1;
};

// The run of `q` with `c` applied: generated (or the file's), simulated, assessed. InputError
// when the model, the generator or the memory guard refuses it.
Assessment evaluate(const FitQuery& q, const Candidate& c) {
  const HardwareOptions& ho = c.hardware;
  std::optional<Schedule> generated;  // a schedule file is used as it is, not copied
  if (!q.generator.empty()) {
    ScheduleParams params = q.params;
    params.p *= c.pp_factor;
    if (ho.global_batch_size > 0) params.m = microbatches_for_global_batch(ho, q.generator, params, false);
    if (auto refusal = memory_refusal(describe_generation(q.generator, params), estimate_ops(q.generator, params),
                                      simulate_memory_use(false, false, 0), memory_limit(q.max_memory)))
      throw InputError(*refusal);
    generated = generate(q.generator, params);
  }
  const Schedule& schedule = generated ? *generated : *q.file;
  const AnalyticalCostModel model = analytical_model(ho, ho.hardware, schedule);
  Simulator simulator;
  return assess_configuration(simulator, schedule, model, AnalyticalSource(model)).assessment;
}

std::string signed_percent(double fraction) {
  return (fraction > 0 ? "+" : "") + format_percent(fraction);
}

std::vector<Candidate> candidates(const FitQuery& q) {
  const HardwareOptions& base = q.hardware;
  std::vector<Candidate> out;
  auto add = [&](std::string change, const std::function<void(HardwareOptions&)>& apply, int pp_factor = 1) {
    Candidate c{std::move(change), base, pp_factor};
    apply(c.hardware);
    out.push_back(std::move(c));
  };
  // The memory switches that are off, each alone.
  std::vector<std::pair<std::string, std::function<void(HardwareOptions&)>>> switches;
  if (base.recompute == "none")
    switches.emplace_back("--recompute selective", [](HardwareOptions& h) { h.recompute = "selective"; });
  if (!base.flash_attention)
    switches.emplace_back("--flash-attention true", [](HardwareOptions& h) { h.flash_attention = true; });
  if (base.tp > 1 && !base.sequence_parallel)
    switches.emplace_back("--sequence-parallel true", [](HardwareOptions& h) { h.sequence_parallel = true; });
  // ZeRO-1 shards over data-parallel replicas: nothing to shard with dp = 1.
  const int devices = q.generator.empty() ? q.file->num_devices : pipeline_devices(q.generator, q.params);
  if (!base.zero1 && data_parallel_width(base, devices) > 1) switches.emplace_back("--zero1 true", [](HardwareOptions& h) { h.zero1 = true; });
  for (const auto& [change, apply] : switches) add(change, apply);
  if (base.recompute != "full") add("--recompute full", [](HardwareOptions& h) { h.recompute = "full"; });
  // All of them together (selective, not full, recomputation), then with a wider tp or pp.
  std::string all;
  for (const auto& s : switches) all += (all.empty() ? "" : " ") + s.first;
  const auto apply_all = [&switches](HardwareOptions& h) {
    for (const auto& s : switches) s.second(h);
  };
  if (switches.size() > 1) add(all, apply_all);
  const std::string tp2 = "--tp " + std::to_string(base.tp * 2);
  add(tp2, [](HardwareOptions& h) { h.tp *= 2; });
  if (!switches.empty())
    add(tp2 + " " + all + (base.tp == 1 && !base.sequence_parallel ? " --sequence-parallel true" : ""),
        [&](HardwareOptions& h) {
          apply_all(h);
          if (h.tp == 1) h.sequence_parallel = true;
          h.tp *= 2;
        });
  if (!q.generator.empty()) {
    const std::string pp2 = "-p " + std::to_string(q.params.p * 2);
    add(pp2, [](HardwareOptions&) {}, 2);
    if (!switches.empty()) add(pp2 + " " + all, apply_all, 2);
  }
  return out;
}

}  // namespace

std::vector<FitChange> fit_changes(const FitQuery& query) {
  PIPESIM_ASSERT(!query.generator.empty() || query.file != nullptr);
  std::vector<FitChange> out;
  std::vector<std::string> refused;  // a wider tp or pp that does not apply: not with the switches either
  for (const Candidate& c : candidates(query)) {
    if (std::any_of(refused.begin(), refused.end(),
                    [&](const std::string& r) { return c.change.rfind(r + " ", 0) == 0; }))
      continue;
    FitChange change{c.change, std::nullopt, ""};
    try {
      change.result = evaluate(query, c);
    } catch (const InputError& e) {
      change.why = e.what();
      refused.push_back(c.change);
    }
    out.push_back(std::move(change));
  }
  return out;
}

std::string fit_advice_text(const std::string& label, const FitStatus& now, const std::vector<FitChange>& changes) {
  std::string out = one_line(label) + " does not fit: " + format_bytes(static_cast<double>(now.peak_memory)) +
                    " on its fullest GPU, " + format_bytes(static_cast<double>(now.capacity)) + " available (over by " +
                    format_bytes(static_cast<double>(now.peak_memory - now.capacity)) +
                    "). Re-evaluated with each change:\n";
  Table t;
  t.add_column("change", Table::Align::Left);
  for (const char* c : {"peak memory", "of capacity", "fits", "tokens/s", "vs now"}) t.add_column(c);
  std::vector<std::string> refused;
  for (const FitChange& c : changes) {
    if (!c.result) {
      refused.push_back(c.change + ": " + c.why);
      continue;
    }
    const Assessment& a = *c.result;
    t.add_row({c.change, format_bytes(static_cast<double>(a.peak_memory)),
               format_percent(static_cast<double>(a.peak_memory) / static_cast<double>(a.capacity)),
               a.fits ? "yes" : "no", format_fixed(a.tokens_per_s, 0),
               now.tokens_per_s > 0 ? signed_percent(a.tokens_per_s / now.tokens_per_s - 1) : "-"});
  }
  out += t.render();
  for (const std::string& r : refused) out += "  not applicable: " + one_line(r) + "\n";
  return out;
}

nlohmann::ordered_json fit_advice_json(const std::vector<FitChange>& changes) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const FitChange& c : changes) {
    nlohmann::ordered_json j;
    j["change"] = c.change;
    if (c.result) {
      j["peak_memory_bytes"] = c.result->peak_memory;
      j["capacity_bytes"] = c.result->capacity;
      j["fits"] = c.result->fits;
      j["tokens_per_s"] = c.result->tokens_per_s;
    } else {
      j["not_applicable"] = c.why;
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace pipesim
