// `pipesim schedule` (print or export op lists) and `pipesim check` (validate a schedule).
#include <iostream>
#include <sstream>
#include <memory>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "schedules/pytorch_format.hpp"
#include "schedules/schedule_io.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"
#include "tools/cli_options.hpp"
#include "tools/command_files.hpp"
#include "tools/commands.hpp"
#include "tools/config_file.hpp"
#include "tools/cost_model_registry.hpp"
#include "tools/table.hpp"
#include "traces/ascii_timeline.hpp"

namespace pipesim {
namespace {

// The chart needs the ops' times only: no transfers, collectives or memory are kept.
class OpTimes final : public SimObserver {
 public:
  explicit OpTimes(std::size_t ops) { timeline.ops.reserve(ops); }
  void on_op(const OpRecord& r) override { timeline.ops.push_back(r); }
  std::uint8_t wants() const override { return kOpRecords; }  // the engine makes no other records
  // The chart's rows are independent, each drawn in its device's order (render_ascii_timeline):
  // the engine may run its ready pass (sim/ready_pass.hpp).
  bool needs_time_order() const override { return false; }
  void restart() override { timeline.ops.clear(); }
  Timeline timeline;
};

std::string text_form(const Schedule& s, const CostModel& costs) {
  std::string out = s.name + ": " + std::to_string(s.num_devices) + " devices, " + std::to_string(s.num_stages) +
                    " stages, " + std::to_string(s.total_ops()) + " ops\n\n" + render_ascii_order(s) + "\n";
  OpTimes times(s.total_ops());
  simulate(s, costs, &times);
  return out + render_ascii_timeline(s, times.timeline);
}

// The registry's uniform cost model (tools/cost_model_registry.hpp) of the flags: schedule
// and check take no other. InputError for a bad flag.
std::unique_ptr<CostModelSetup> uniform_setup(const CostOptions& co) {
  const HardwareOptions no_hardware;
  const ProfiledOptions no_profile;
  return find_cost_model("uniform").setup({co, no_hardware, no_profile});
}

// One row per generator (GeneratorInfo): its name first, what it is, the flags of its
// settings (a text setting with its choices: "--concat direct|doubling|halving") and its
// constraints. fuzz/run.sh takes the names, flags and choices of its dictionaries from here.
std::string list_generators() {
  Table t;
  t.add_column("schedule", Table::Align::Left);
  t.add_column("what it is", Table::Align::Left);
  t.add_column("settings", Table::Align::Left);
  t.add_column("requires", Table::Align::Left);
  for (const auto& g : generators()) {
    std::string settings, rules;
    for (const ScheduleSetting& s : schedule_settings()) {
      if (!g.reads(s.name())) continue;
      settings += (settings.empty() ? "" : " ") + std::string(s.flags.substr(0, s.flags.find(',')));
      for (std::size_t i = 0; i < s.choices.size(); ++i) settings += (i == 0 ? " " : "|") + std::string(s.choices[i]);
    }
    for (const Constraint& c : g.constraints) rules += (rules.empty() ? "" : "; ") + std::string(c.rule);
    t.add_row({std::string(g.name), std::string(g.summary), settings, rules});
  }
  std::string out;  // without the padding of the empty last cells
  std::istringstream in(t.render());
  for (std::string line; std::getline(in, line);) out += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
  return out;
}

}  // namespace

void add_schedule_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("schedule", "Print a schedule's op lists (text timeline, CSV or JSON)");
  auto so = std::make_shared<ScheduleOptions>();
  auto co = std::make_shared<CostOptions>();
  auto format = std::make_shared<std::string>("text");
  auto out = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  add_schedule_flags(*cmd, *so, true);
  add_cost_flags(*cmd, *co);
  cmd->add_option("--format", *format,
                  "text (op lists and a timeline), csv (pipesim's CSV), json, pytorch (PyTorch's compute_only CSV) "
                  "or pytorch-comms (its compute_comms CSV, with SEND/RECV)")
      ->check(CLI::IsMember({"text", "csv", "json", "pytorch", "pytorch-comms"}))
      ->capture_default_str();
  cmd->add_option("-o,--out", *out,
                  "Write to this file instead of standard output; without --format, a name ending in .json or .csv "
                  "gets that format");
  cmd->add_flag("--list", *list, "List the schedule generators");
  cmd->callback([=] {
    if (*list) {
      std::cout << list_generators();
      return;
    }
    // The format follows the file's name unless given, and may not contradict it: a text
    // timeline in s.json would read back as invalid JSON.
    const std::string ext = out->ends_with(".json") ? "json" : out->ends_with(".csv") ? "csv" : "";
    if (!given(*cmd, "--format") && !ext.empty()) *format = ext;
    const bool csv = *format == "csv" || format->starts_with("pytorch");
    if (!ext.empty() && ((ext == "json") != (*format == "json") || (ext == "csv") != csv))
      throw InputError("--format " + *format + ": the output " + quote(*out, 256) + " ends in ." + ext +
                       " (give --format " + ext + (ext == "csv" ? ", pytorch or pytorch-comms" : "") +
                       ", or another name)");
    CommandFiles files;
    files.input("--schedule-file", so->file);
    OutputFile* file = files.output("--out", *out);
    if (so->file.empty()) check_generator_flags(*cmd, {so->name});
    const std::unique_ptr<CostModelSetup> uniform = uniform_setup(*co);
    const Schedule s = make_schedule(*cmd, *so, so->name, {export_bytes_per_op(*format), 0, 0});
    const ScheduleCosts costs = uniform->make(s, "");  // checks --stage-cost against the schedule
    (file ? file->stream() : std::cout) << (*format == "csv"             ? schedule_to_csv(s)
                                            : *format == "json"          ? schedule_to_json(s)
                                            : *format == "pytorch"       ? schedule_to_pytorch(s, PytorchFormat::ComputeOnly)
                                            : *format == "pytorch-comms" ? schedule_to_pytorch(s, PytorchFormat::ComputeComms)
                                                                         : text_form(s, *costs.model));
    files.commit();
  });
}

void add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Validate a schedule: missing ops, placement, deadlocks, critical path");
  auto so = std::make_shared<ScheduleOptions>();
  auto co = std::make_shared<CostOptions>();
  add_schedule_flags(*cmd, *so, true);
  add_cost_flags(*cmd, *co);
  cmd->callback([=] {
    // Not make_schedule: an invalid schedule is what `check` reports, not an error before it.
    Schedule s;
    if (so->file.empty()) {
      check_generator_flags(*cmd, {so->name});
      check_memory(so->name, so->params, {kValidateBytesPerOp, 0, 0}, so->max_memory);
      s = generate(so->name, so->params);
    } else {
      s = read_schedule_file(so->file);
      check_schedule_file_flags(*cmd, s, so->file);
      check_memory_for_ops(so->file, s.total_ops(), {kValidateBytesPerOp, 0, 0}, so->max_memory);
    }
    const ScheduleCosts costs = uniform_setup(*co)->make(s, "");  // checks --stage-cost against the schedule
    const CostModel& model = *costs.model;
    const OpScale scale = scale_of(s);
    const ValidationReport r = validate(s, [&](const Op& op) -> std::int64_t {
      return op.kind == OpKind::GradSync ? 0 : model.compute_time(op, scale);
    });
    const std::string source = one_line(so->file.empty() ? s.name : so->file);
    if (!r.ok()) {
      std::cout << source << ": " << r.errors.size() << " problem(s)\n";
      for (const auto& e : r.errors) std::cout << "  " << one_line(e) << "\n";
      flush_stdout();
      throw InputError(source + ": schedule is not valid");
    }
    std::cout << source << ": valid (" << s.total_ops() << " ops on " << s.num_devices << " devices)\n"
              << "critical-path lower bound " << format_duration(r.critical_path) << " over "
              << r.critical_path_ops.size() << " ops (zero-cost links): " << r.critical_path_ops.front() << " ... "
              << r.critical_path_ops.back() << "\n";
  });
}

}  // namespace pipesim
