#include "tools/simulate_report.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/units.hpp"
#include "schedules/generator.hpp"
#include "tools/assessment_output.hpp"
#include "traces/html_report.hpp"

namespace pipesim {

void add_report_flags(CLI::App& cmd, ReportFlags& flags) {
  auto* report = cmd.add_option("--report", flags.path,
                                "Write a self-contained HTML report (timelines, memory, staleness) to this file");
  cmd.add_option("--report-capacity", flags.capacity, "Device memory capacity drawn on the report's memory charts")
      ->needs(report);
}

// The settings line of the report: the flags that shaped the runs, and only those (no
// uniform costs on a model or a profile, no -v without a schedule that reads it, no --wgrad
// without a split backward). Model, GPU, cluster and parallelism are the page's own table.
std::vector<std::pair<std::string, std::string>> report_settings(const ScheduleOptions& so, const CostOptions& co,
                                                                 const HardwareOptions& ho,
                                                                 const std::string& cost_label,
                                                                 const std::vector<RunOutput>& runs) {
  const auto any_run = [&](auto pred) { return std::any_of(runs.begin(), runs.end(), pred); };
  std::vector<std::pair<std::string, std::string>> out;
  if (so.file.empty()) {
    if (ho.model.empty()) out.emplace_back("p", std::to_string(so.params.p));
    out.emplace_back("m", std::to_string(so.params.m));
    const auto chunked = [](const RunOutput& r) {
      return std::any_of(generators().begin(), generators().end(),
                         [&](const GeneratorInfo& g) { return g.name == r.schedule.name && g.reads("chunks"); });
    };
    if (any_run(chunked))
      out.emplace_back("v", std::to_string(so.params.v));
    out.emplace_back("iterations", std::to_string(so.params.iterations));
  } else {
    out = {{"schedule file", so.file}};
  }
  if (!ho.model.empty()) {
    const auto yes_no = [](bool b) { return std::string(b ? "on" : "off"); };
    out.insert(out.end(), {{"micro-batch size", std::to_string(ho.micro_batch_size)},
                           {"recompute", ho.recompute},
                           {"dtype", ho.dtype},
                           {"flash attention", yes_no(ho.flash_attention)},
                           {"sequence parallel", yes_no(ho.sequence_parallel)},
                           {"ZeRO-1", yes_no(ho.zero1)}});
    return out;
  }
  if (!cost_label.empty()) {
    out.emplace_back("cost model", cost_label);
    return out;
  }
  out.insert(out.end(), {{"fwd", co.fwd}, {"bwd", co.bwd}});
  const auto split = [](const RunOutput& r) {
    for (const auto& device : r.schedule.ops)
      for (const Op& op : device)
        if (op.kind == OpKind::W) return true;
    return false;
  };
  if (any_run(split)) out.emplace_back("wgrad", co.wgrad.empty() ? "bwd/2" : co.wgrad);
  if (co.optimizer != "0ns") out.emplace_back("optimizer", co.optimizer);
  if (co.link_latency != "0ns") out.emplace_back("link latency", co.link_latency);
  if (!co.link_bandwidth.empty()) out.emplace_back("link bandwidth", co.link_bandwidth);
  if (co.activation_bytes != "0B") out.emplace_back("activation bytes", co.activation_bytes);
  if (!co.activation_memory.empty()) out.emplace_back("activation memory", co.activation_memory);
  if (co.grad_bytes != "0B") out.emplace_back("grad bytes", co.grad_bytes);
  return out;
}

// `assessments`: one per run on a model, or empty.
void write_report(const ReportFlags& flags, OutputFile& file, const std::string& title,
                  std::vector<std::pair<std::string, std::string>> settings, const std::vector<RunOutput>& runs,
                  const std::vector<Assessment>& assessments, const std::vector<NamedInterval>& intervals) {
  PIPESIM_ASSERT(assessments.empty() || assessments.size() == runs.size());
  ReportOptions options;
  options.title = title;
  options.intro_html = interval_report_html(intervals);
  options.settings = std::move(settings);
  options.generator = "pipesim " PIPESIM_VERSION;
  if (!flags.capacity.empty()) options.capacity_bytes = parse_bytes(flags.capacity, "--report-capacity");
  std::vector<ReportAssessment> model;
  for (const Assessment& a : assessments) model.push_back(report_assessment(a));
  std::vector<ReportRun> list;
  for (std::size_t i = 0; i < runs.size(); ++i)
    list.push_back({runs[i].schedule, runs[i].timeline, runs[i].metrics, model.empty() ? nullptr : &model[i],
                    runs[i].breakdown ? &*runs[i].breakdown : nullptr});
  write_html_report(file.stream(), list, options);
  file.close();
}

// "pipesim report: compare", with the model and GPUs of a model run.
std::string report_title(const std::string& what, const std::vector<Assessment>& assessed) {
  if (assessed.empty()) return "pipesim report: " + what;
  std::vector<std::string> gpus;
  for (const Assessment& a : assessed)
    if (std::find(gpus.begin(), gpus.end(), a.hardware) == gpus.end()) gpus.push_back(a.hardware);
  std::string names;
  for (const std::string& g : gpus) names += (names.empty() ? "" : ", ") + g;
  return "pipesim report: " + what + ", " + assessed.front().model + " on " + std::to_string(assessed.front().gpus) +
         " x " + names;
}

}  // namespace pipesim
