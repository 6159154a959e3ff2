#include "tools/cli_options.hpp"

#include <algorithm>
#include <sstream>

#include <CLI/CLI.hpp>

#include "core/decimal.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "tools/activity.hpp"
#include "tools/config_file.hpp"
#include "tools/table.hpp"
#include "schedules/schedule_io.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

void add_schedule_flags(CLI::App& app, ScheduleOptions& o, bool with_name, const std::vector<std::string_view>& own) {
  if (with_name) {
    // Checked as it is read, so that the error names the flag, or the file and key of a
    // --config that set it ("c.json: /schedule: unknown schedule ...").
    const CLI::Validator known(
        [](std::string& v) -> std::string {
          try {
            (void)find_generator(v);
            return {};
          } catch (const InputError& e) {
            return e.what();
          }
        },
        "", "pipesim-generator");
    auto* name = app.add_option("--schedule", o.name, "Schedule generator (see `pipesim schedule --list`)")
                     ->capture_default_str()
                     ->check(known);
    app.add_option("--schedule-file", o.file, "Read the schedule from a CSV (PyTorch compute_only) or JSON file")
        ->excludes(name);
  }
  for (const ScheduleSetting& setting : schedule_settings()) {
    if (std::find(own.begin(), own.end(), setting.name()) != own.end()) continue;
    const std::string flags(setting.flags), help(setting.help);
    if (setting.shape()) {
      app.add_option(flags, o.params.*setting.field, help)->capture_default_str();
      continue;
    }
    // A family setting lives in ScheduleParams' store, by name: the flag sets it there.
    const std::string_view name = setting.name();
    const std::string shown = setting.value(ScheduleParams{});
    if (setting.is_text())
      app.add_option_function<std::string>(flags, [&o, name](const std::string& v) { o.params.set(name, v); }, help)
          ->default_str(shown);
    else
      app.add_option_function<int>(flags, [&o, name](int v) { o.params.set(name, v); }, help)->default_str(shown);
  }
  app.add_option("--max-memory", o.max_memory,
                 "Memory a generated schedule may need, e.g. 64GiB [default: what the machine has available]");
}

void add_cost_flags(CLI::App& app, CostOptions& o) {
  app.add_option("--fwd", o.fwd, "Forward time of one micro-batch on one full stage")->capture_default_str();
  app.add_option("--bwd", o.bwd, "Full backward time (input + weight gradient)")->capture_default_str();
  app.add_option("--wgrad", o.wgrad, "Weight-gradient part of --bwd for split schedules [default: bwd/2]");
  app.add_option("--optimizer-time", o.optimizer, "Optimizer step time of one full stage")->capture_default_str();
  app.add_option("--link-latency", o.link_latency, "Link latency (pipelined)")->capture_default_str();
  app.add_option("--link-bandwidth", o.link_bandwidth, "Link bandwidth, e.g. 50GB/s [default: infinite]");
  app.add_option("--activation-bytes", o.activation_bytes, "Activation message per micro-batch per stage boundary")
      ->capture_default_str();
  app.add_option("--activation-memory", o.activation_memory,
                 "Activation memory one micro-batch holds on one stage [default: --activation-bytes]");
  app.add_option("--grad-bytes", o.grad_bytes, "Gradient bytes of one full stage, reduced by GradSync")
      ->capture_default_str();
  app.add_option("--input-grad-free-fraction", o.input_grad_free_fraction,
                 "Share of a micro-batch's activation memory freed by I (W frees the rest)")
      ->capture_default_str();
  app.add_option("--stage-cost", o.stage_overrides, "Per-stage override STAGE:FWD:BWD[:WGRAD], repeatable");
}

Schedule make_schedule(const CLI::App& app, const ScheduleOptions& o, const std::string& name, const MemoryUse& use) {
  if (o.file.empty()) {
    check_memory(name, o.params, use, o.max_memory);
    const Activity activity("generating " + describe_generation(name, o.params));
    return generate(name, o.params);
  }
  Schedule s = [&] {
    const Activity activity("reading the schedule file " + quote(o.file, 256));
    return read_schedule_file(o.file);
  }();
  check_schedule_file_flags(app, s, o.file);
  check_memory_for_ops(o.file, s.total_ops(), use, o.max_memory);
  const ValidationReport report = validate(s);
  if (!report.ok())
    throw InputError(o.file + ": " + report.errors.front() +
                     (report.errors.size() > 1 ? " (and " + std::to_string(report.errors.size() - 1) +
                                                     " more problems; run `pipesim check` for all)"
                                               : ""));
  return s;
}

void check_schedule_file_flags(const CLI::App& app, const Schedule& s, const std::string& file) {
  reject_given_flags(app, generator_only_flags(),
                     "a setting of the generators; the schedule file (--schedule-file) fixes the schedule");
  const std::pair<const char*, std::pair<int, const char*>> shape[] = {
      {"-p/--stages", {s.num_devices, "devices"}},
      {"-m/--microbatches", {s.microbatches, "micro-batches per iteration"}},
      {"-v/--chunks", {s.chunks_per_device(), "chunks per device"}},
      {"--iterations", {s.iterations, "iterations"}}};
  for (const auto& [flag, in_file] : shape) {
    const std::string name = std::string(flag).substr(std::string(flag).find("--"));
    if (!given(app, name)) continue;
    const int given = app.get_option(name)->as<int>();
    if (given != in_file.first)
      throw InputError(std::string(flag) + " " + std::to_string(given) + ": " + quote(file, 256) + " has " +
                       std::to_string(in_file.first) + " " + in_file.second + " (drop " + flag + ", or give " +
                       std::to_string(in_file.first) + ")");
  }
}

namespace {

template <class Keep>
std::vector<std::string> flags_where(Keep keep) {
  std::vector<std::string> out;
  for (const ScheduleSetting& s : schedule_settings())
    if (keep(s)) out.push_back(s.flag());
  return out;
}

}  // namespace

std::vector<std::string> shape_flags() {
  return flags_where([](const ScheduleSetting& s) { return s.shape(); });
}
std::vector<std::string> generator_only_flags() {
  return flags_where([](const ScheduleSetting& s) { return !s.shape(); });
}
std::vector<std::string> generator_setting_flags() {
  return flags_where([](const ScheduleSetting& s) { return !s.every; });
}

void check_generator_flags(const CLI::App& app, const std::vector<std::string>& names) {
  std::vector<const ScheduleSetting*> settings;  // the generator-only ones first, then -v
  for (bool shape : {false, true})
    for (const ScheduleSetting& s : schedule_settings())
      if (s.shape() == shape && !s.every) settings.push_back(&s);
  for (const ScheduleSetting* s : settings) {
    const ScheduleSetting& setting = *s;
    const std::string flag = setting.flag();
    if (!given(app, flag)) continue;
    bool used = false;
    for (const std::string& name : names) used = used || find_generator(name).reads(setting.name());
    if (used) continue;
    std::string readers;
    for (const GeneratorInfo& g : generators())
      if (g.reads(setting.name())) readers += (readers.empty() ? "" : ", ") + std::string(g.name);
    std::string listed;
    for (const std::string& name : names) listed += (listed.empty() ? "" : ", ") + name;
    throw InputError(flag + ": not a setting of " + listed + " (it is one of " + readers + ")");
  }
}

namespace {

StageCosts stage_costs(const std::string& fwd, const std::string& bwd, const std::string& wgrad, const std::string& flag) {
  StageCosts c;
  c.fwd = parse_duration(fwd, flag);
  c.bwd = parse_duration(bwd, flag);
  c.wgrad = wgrad.empty() ? c.bwd / 2 : parse_duration(wgrad, flag);
  return c;
}

}  // namespace

UniformCostConfig make_cost_config(const CostOptions& o) {
  UniformCostConfig c;
  c.stage.fwd = parse_duration(o.fwd, "--fwd");
  c.stage.bwd = parse_duration(o.bwd, "--bwd");
  c.stage.wgrad = o.wgrad.empty() ? c.stage.bwd / 2 : parse_duration(o.wgrad, "--wgrad");
  c.optimizer = parse_duration(o.optimizer, "--optimizer-time");
  c.link_latency = parse_duration(o.link_latency, "--link-latency");
  c.link_bandwidth = o.link_bandwidth.empty() ? 0.0 : parse_bandwidth(o.link_bandwidth, "--link-bandwidth");
  c.message_bytes = parse_bytes(o.activation_bytes, "--activation-bytes");
  c.activation_bytes = o.activation_memory.empty() ? c.message_bytes : parse_bytes(o.activation_memory, "--activation-memory");
  c.input_grad_free_fraction = o.input_grad_free_fraction;
  c.grad_bytes = parse_bytes(o.grad_bytes, "--grad-bytes");
  // The cost model's own checks, named by the flags (its messages say "cost model: ...").
  if (c.stage.wgrad > c.stage.bwd)
    throw InputError("--wgrad " + format_duration(c.stage.wgrad) + ": more than --bwd " + format_duration(c.stage.bwd) +
                     " (the weight gradient is a part of the full backward)");
  if (!(c.input_grad_free_fraction >= 0 && c.input_grad_free_fraction <= 1))
    throw InputError("--input-grad-free-fraction: expected a share from 0 to 1, got " +
                     format_fixed(c.input_grad_free_fraction, 3));
  if (c.stage.fwd == 0 && c.stage.bwd == 0)
    throw InputError("--fwd and --bwd: both 0 ns: every op would take no time and the run would have no throughput; "
                     "give one of them a duration");
  for (const std::string& text : o.stage_overrides) {
    const std::string flag = "--stage-cost " + quote(text);
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t colon; (colon = text.find(':', start)) != std::string::npos; start = colon + 1)
      parts.push_back(text.substr(start, colon - start));
    parts.push_back(text.substr(start));
    if (parts.size() < 3 || parts.size() > 4)
      throw InputError(flag + ": expected STAGE:FWD:BWD[:WGRAD], e.g. 3:1.5ms:3ms");
    const std::optional<int> stage = parse_decimal<int>(parts[0]);
    if (!stage || *stage < 0) throw InputError(flag + ": STAGE must be a non-negative integer, got " + quote(parts[0]));
    if (c.overrides.count(*stage)) throw InputError(flag + ": stage " + parts[0] + " is given a cost twice");
    c.overrides[*stage] = stage_costs(parts[1], parts[2], parts.size() == 4 ? parts[3] : "", flag);
  }
  return c;
}

void check_stage_costs(const UniformCostConfig& costs, const Schedule& schedule) {
  if (costs.overrides.empty()) return;
  const int last = costs.overrides.rbegin()->first;
  if (last >= schedule.num_stages)
    throw InputError("--stage-cost: stage " + std::to_string(last) + " does not exist (" + schedule.name + " has " +
                     std::to_string(schedule.num_stages) + " stages, 0.." + std::to_string(schedule.num_stages - 1) +
                     ")");
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<std::string> parse_schedule_list(const std::string& text) {
  std::vector<std::string> list;
  if (text == "all") {
    for (const auto& g : generators()) list.emplace_back(g.name);
    return list;
  }
  list = split_list(text);
  if (list.empty()) throw InputError("--schedules: expected a comma-separated list of schedule names");
  for (auto it = list.begin(); it != list.end(); ++it)
    if (std::find(list.begin(), it, *it) != it) throw InputError("--schedules: '" + *it + "' is listed twice");
  return list;
}

}  // namespace pipesim
