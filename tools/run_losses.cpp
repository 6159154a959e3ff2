#include "tools/run_losses.hpp"

#include <algorithm>
#include <map>

#include "core/units.hpp"
#include "tools/table.hpp"
#include "traces/html_lines.hpp"
#include "traces/svg.hpp"

namespace pipesim {
std::string loss_text(double loss) { return format_fixed(loss, 4); }

namespace {

std::string seconds_text(Tick ns) { return format_fixed(static_cast<double>(ns) * 1e-9, 3) + " s"; }

}  // namespace

std::vector<Tick> iteration_end_times(const MeasuredRun& run) {
  std::vector<Tick> out(run.iteration_loss.size(), 0);
  for (const LossRecord& l : run.losses)
    if (static_cast<std::size_t>(l.iteration) < out.size())
      out[static_cast<std::size_t>(l.iteration)] = std::max(out[static_cast<std::size_t>(l.iteration)], l.time);
  return out;
}

std::string loss_lines(const MeasuredRun& run) {
  const auto& l = run.iteration_loss;
  std::string out;
  if (!l.empty()) {
    out = "loss          iteration 0: " + loss_text(l.front());
    if (l.size() > 1) out += ", iteration " + std::to_string(l.size() - 1) + ": " + loss_text(l.back());
    out += " (mean over the iteration's micro-batches)\n";
  }
  const auto& v = run.validation;
  if (!v.empty()) {
    const auto best = std::min_element(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.loss < b.loss; });
    out += "validation    after " + std::to_string(v.front().iteration) + " iterations: " + loss_text(v.front().loss);
    if (v.size() > 1) out += ", after " + std::to_string(v.back().iteration) + ": " + loss_text(v.back().loss);
    out += ", lowest " + loss_text(best->loss) + " after " + std::to_string(best->iteration) + " (" +
           std::to_string(v.size()) + " points)\n";
  }
  return out;
}

std::string loss_table(const MeasuredRun& run) {
  const auto& l = run.iteration_loss;
  const std::vector<Tick> ends = iteration_end_times(run);
  std::map<int, std::pair<int, int>> rows;  // iteration -> (training index or -1, validation index or -1)
  for (std::size_t k = 0; k < run.validation.size(); ++k) rows[run.validation[k].iteration] = {-1, static_cast<int>(k)};
  if (run.validation.empty()) {
    const std::size_t n = l.size(), shown = std::min<std::size_t>(n, 10);
    for (std::size_t k = 0; k < shown; ++k) rows[static_cast<int>(shown > 1 ? k * (n - 1) / (shown - 1) : 0)] = {-1, -1};
  }
  if (rows.empty()) return "";
  Table t;
  t.add_column("iteration");
  t.add_column("training loss");
  t.add_column("validation loss");
  t.add_column("wall time");
  for (const auto& [iteration, which] : rows) {
    const auto i = static_cast<std::size_t>(iteration);
    const bool trained = i < l.size();
    const ValidationPoint* v = which.second >= 0 ? &run.validation[static_cast<std::size_t>(which.second)] : nullptr;
    t.add_row({std::to_string(iteration), trained ? loss_text(l[i]) : "-", v ? loss_text(v->loss) : "-",
               seconds_text(v ? v->time : ends[i])});
  }
  return t.render();
}

void add_loss_json(nlohmann::ordered_json& j, const MeasuredRun& run) {
  j["iteration_loss"] = run.iteration_loss;
  auto& ends = j["iteration_end_s"] = nlohmann::ordered_json::array();
  for (const Tick t : iteration_end_times(run)) ends.push_back(static_cast<double>(t) * 1e-9);
  auto& v = j["validation"] = nlohmann::ordered_json::array();
  for (const ValidationPoint& p : run.validation)
    v.push_back({{"iteration", p.iteration}, {"loss", p.loss}, {"time_s", static_cast<double>(p.time) * 1e-9}});
}

std::string loss_report(const std::string& heading, const MeasuredRun& run) {
  const std::vector<Tick> ends = iteration_end_times(run);
  LineSeries train_it{"training loss", {}}, val_it{"validation loss", {}}, train_t{"training loss", {}},
      val_t{"validation loss", {}};
  for (std::size_t k = 0; k < run.iteration_loss.size(); ++k) {
    train_it.points.emplace_back(static_cast<double>(k), run.iteration_loss[k]);
    train_t.points.emplace_back(static_cast<double>(ends[k]) * 1e-9, run.iteration_loss[k]);
  }
  for (const ValidationPoint& p : run.validation) {
    val_it.points.emplace_back(p.iteration, p.loss);
    val_t.points.emplace_back(static_cast<double>(p.time) * 1e-9, p.loss);
  }
  return line_chart_page(
      "pipesim run: loss", "<p>" + xml_escape(heading) + "</p>\n<h2>Against iterations</h2>\n" +
                               line_chart_svg("loss against iterations", "iterations", "loss", {train_it, val_it}) +
                               "\n<h2>Against wall time</h2>\n" +
                               line_chart_svg("loss against wall time", "seconds (measured)", "loss", {train_t, val_t}) +
                               "\n<pre>" + xml_escape(loss_table(run)) + "</pre>\n");
}

std::vector<TraceCounter> loss_counters(const Schedule& schedule, const MeasuredRun& run) {
  const int device = schedule.device_of(0, schedule.num_stages - 1);
  std::vector<TraceCounter> out;
  const std::vector<Tick> ends = iteration_end_times(run);
  for (std::size_t k = 0; k < run.iteration_loss.size(); ++k)
    out.push_back(TraceCounter{"training loss", device, ends[k], {{"loss", run.iteration_loss[k]}}});
  for (const ValidationPoint& p : run.validation)
    out.push_back(TraceCounter{"validation loss", device, p.time, {{"loss", p.loss}}});
  return out;
}

}  // namespace pipesim
