#include "schedules/generator.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/error.hpp"
#include "core/saturate.hpp"
#include "core/suggest.hpp"
#include "schedules/generator_list.hpp"

namespace pipesim {

bool GeneratorInfo::reads(std::string_view setting) const {
  return std::any_of(settings.begin(), settings.end(), [&](const ScheduleSetting& s) { return s.name() == setting; });
}

const std::vector<GeneratorInfo>& generators() {
  static const std::vector<GeneratorInfo> all = [] {
    std::vector<GeneratorInfo> out;
    for (const auto& family : generator_families())
      for (GeneratorInfo& g : family()) out.push_back(std::move(g));
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
    for (const GeneratorInfo& g : out) {
      PIPESIM_ASSERT(g.fn != nullptr && g.ops_per_iteration != nullptr);
      for (const ScheduleSetting& s : g.settings) PIPESIM_ASSERT(!s.every);
    }
    return out;
  }();
  return all;
}

GeneratorInfo overlapping(GeneratorInfo g) {
  g.overlaps_iterations = true;
  return g;
}

const GeneratorInfo* generator_named(std::string_view name) {
  for (const auto& g : generators())
    if (g.name == name) return &g;
  return nullptr;
}

const GeneratorInfo& find_generator(std::string_view name) {
  if (const GeneratorInfo* g = generator_named(name)) return *g;
  std::vector<std::string> names;
  std::string known;
  for (const auto& g : generators()) {
    names.emplace_back(g.name);
    known += (known.empty() ? "" : ", ") + std::string(g.name);
  }
  throw InputError("unknown schedule " + quote(name) + " (" + did_you_mean(name, names) + "known: " + known + ")");
}

std::string broken_constraint(const GeneratorInfo& g, const ScheduleParams& params) {
  for (const Constraint& c : g.constraints) {
    if (c.holds(params)) continue;
    std::string got;
    for (const ScheduleSetting& s : schedule_settings())
      if (s.every ? s.name() != "iterations" : g.reads(s.name()))
        got += (got.empty() ? "" : ", ") + std::string(s.letter()) + "=" + s.value(params);
    return std::string(g.name) + ": " + std::string(c.rule) + " (got " + got + ")";
  }
  return "";
}

Schedule generate(std::string_view name, const ScheduleParams& params) {
  const GeneratorInfo& g = find_generator(name);
  for (const ScheduleSetting& s : g.settings)
    if (s.is_text() && std::find(s.choices.begin(), s.choices.end(), s.value(params)) == s.choices.end())
      throw InputError(std::string(name) + ": " + std::string(s.name()) + " must be " + s.choices_text() + ", got " +
                       quote(s.value(params)));
  if (std::string broken = broken_constraint(g, params); !broken.empty()) throw InputError(broken);
  return g.fn(params);
}

std::uint64_t estimate_ops(std::string_view name, const ScheduleParams& params) {
  ScheduleParams q = params;
  for (const ScheduleSetting& s : schedule_settings())
    if (!s.is_text()) s.set(q, std::max(std::get<int>(s.get(q)), 0));
  return saturate_u64(find_generator(name).ops_per_iteration(q) * q.iterations);
}

int pipeline_devices(std::string_view name, const ScheduleParams& params) {
  const GeneratorInfo& g = find_generator(name);
  return g.devices ? g.devices(params) : params.p;
}

Schedule plain_pipeline(std::string_view name, const ScheduleParams& params, int chunks) {
  require_positive(name, "p", params.p);
  require_positive(name, "m", params.m);
  require_positive(name, "iterations", params.iterations);
  require(static_cast<long long>(params.p) * chunks <= std::numeric_limits<int>::max(), name,
          "p x chunks must be at most 2^31 - 1 stages (got p=" + std::to_string(params.p) + " and " +
              std::to_string(chunks) + " chunks)");
  Schedule s;
  s.name = std::string(name);
  s.num_devices = params.p;
  s.num_stages = params.p * chunks;
  s.microbatches = params.m;
  s.iterations = params.iterations;
  s.placement = round_robin_placement(s.num_stages, params.p);
  s.ops.resize(static_cast<std::size_t>(params.p));
  return s;
}

Schedule v_pipeline(std::string_view name, const ScheduleParams& params) {
  Schedule s = plain_pipeline(name, params, 2);
  const int p = params.p;
  for (int st = 0; st < 2 * p; ++st) s.placement[0][static_cast<std::size_t>(st)] = st < p ? st : 2 * p - 1 - st;
  return s;
}

int run_microbatches(std::string_view name, const ScheduleParams& params) {
  const long long n = static_cast<long long>(params.m) * params.iterations;
  require(n <= std::numeric_limits<std::int32_t>::max(), name,
          "m x iterations (" + std::to_string(n) + ") is too many micro-batches for one run");
  return static_cast<int>(n);
}

void require_positive(std::string_view schedule, std::string_view flag, long long value) {
  if (value <= 0)
    throw InputError(std::string(schedule) + ": " + std::string(flag) + " must be a positive integer, got " +
                     std::to_string(value));
}

void require(bool ok, std::string_view schedule, const std::string& what) {
  if (!ok) throw InputError(std::string(schedule) + ": " + what);
}

}  // namespace pipesim
