// The `pipesim` Python module (python/README.md): schedules, validation, simulation under
// uniform, analytical or profiled costs, and the catalogs. Bad input raises
// pipesim.InputError (a ValueError) with the CLI's one-line message.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <functional>
#include <memory>

#include "cost_models/analytical.hpp"
#include "cost_models/catalog.hpp"
#include "cost_models/profile.hpp"
#include "cost_models/profiled.hpp"
#include "cost_models/uniform.hpp"
#include "core/units.hpp"
#include "python/bindings.hpp"
#include "core/error.hpp"
#include "schedules/validate.hpp"

namespace pipesim::python {
namespace {

// A cost model to be made for a given schedule (the analytical one needs its devices).
struct Costs {
  std::string description;
  std::function<std::unique_ptr<CostModel>(const Schedule&)> make;
};

Costs uniform_costs(const std::string& fwd, const std::string& bwd, const std::optional<std::string>& wgrad,
                    const std::string& optimizer, const std::string& link_latency,
                    const std::optional<std::string>& link_bandwidth, const std::string& activation_bytes,
                    const std::optional<std::string>& activation_memory, const std::string& grad_bytes,
                    double input_grad_free_fraction) {
  UniformCostConfig c;
  c.stage.fwd = parse_duration(fwd, "fwd");
  c.stage.bwd = parse_duration(bwd, "bwd");
  c.stage.wgrad = wgrad ? parse_duration(*wgrad, "wgrad") : c.stage.bwd / 2;
  c.optimizer = parse_duration(optimizer, "optimizer");
  c.link_latency = parse_duration(link_latency, "link_latency");
  c.link_bandwidth = link_bandwidth ? parse_bandwidth(*link_bandwidth, "link_bandwidth") : 0.0;
  c.message_bytes = parse_bytes(activation_bytes, "activation_bytes");
  c.activation_bytes = activation_memory ? parse_bytes(*activation_memory, "activation_memory") : c.message_bytes;
  c.grad_bytes = parse_bytes(grad_bytes, "grad_bytes");
  if (!(input_grad_free_fraction >= 0 && input_grad_free_fraction <= 1))
    throw InputError("input_grad_free_fraction: expected a number in [0, 1], got " + std::to_string(input_grad_free_fraction));
  c.input_grad_free_fraction = input_grad_free_fraction;
  const UniformCostModel check(c);  // the model's own checks, now
  return {"uniform fwd " + fwd + " bwd " + bwd, [c](const Schedule&) { return std::make_unique<UniformCostModel>(c); }};
}

Costs analytical_costs(const std::string& model, const std::string& gpu, int nodes, int gpus_per_node, int tp, int dp,
                       int micro_batch_size, const std::string& dtype, bool sequence_parallel, bool flash_attention,
                       const std::string& recompute) {
  AnalyticalConfig c;
  c.model = find_model(model);
  c.cluster = make_cluster(gpu, nodes, gpus_per_node);
  c.tp = tp;
  c.dp = dp;
  c.micro_batch_size = micro_batch_size;
  c.dtype = dtype;
  c.sequence_parallel = sequence_parallel;
  c.flash_attention = flash_attention;
  c.recompute = parse_recompute(recompute, "recompute");
  return {"analytical " + model + " on " + gpu, [c](const Schedule& s) {
            AnalyticalConfig per_schedule = c;
            per_schedule.pipeline_devices = s.num_devices;
            return std::make_unique<AnalyticalCostModel>(per_schedule);
          }};
}

Costs profiled_costs(const std::string& profile, const std::string& model, int micro_batch_size,
                     const std::string& optimizer) {
  ProfiledCostConfig c;
  c.profile = read_profile_file(profile);
  c.source = profile;
  if (!model.empty()) c.model = find_model(model);
  c.micro_batch_size = micro_batch_size;
  c.optimizer = optimizer;
  const ProfiledCostModel check(c);
  return {"profiled " + profile, [c](const Schedule&) { return std::make_unique<ProfiledCostModel>(c); }};
}

// simulate()'s costs when none are given: the CLI's defaults (forward 1 ms, backward 2 ms).
Costs default_costs() {
  return uniform_costs("1ms", "2ms", std::nullopt, "0ns", "0ns", std::nullopt, "0B", std::nullopt, "0B", 0.5);
}

RunOutcome run(const Schedule& schedule, const Costs& costs) {
  const std::unique_ptr<CostModel> model = costs.make(schedule);
  RunOutcome out{schedule, {}, {}};
  TimelineRecorder rec;
  {
    py::gil_scoped_release unlocked;  // a long simulation does not hold up other Python threads
    out.result = simulate(schedule, *model, &rec);
  }
  out.timeline = std::move(rec.timeline);
  return out;
}

py::dict model_dict(const ModelSpec& m) {
  py::dict d;
  d["name"] = m.name;
  d["family"] = m.family;
  d["layers"] = m.layers;
  d["hidden"] = m.hidden;
  d["heads"] = m.heads;
  d["ffn_hidden"] = m.ffn_hidden;
  d["seq_len"] = m.seq_len;
  d["vocab"] = m.vocab;
  return d;
}

}  // namespace
}  // namespace pipesim::python

PYBIND11_MODULE(pipesim, m) {
  using namespace pipesim;
  using namespace pipesim::python;
  m.doc() = "pipesim: pipeline-parallel training schedules, simulated (docs in the repository, python/README.md)";
  m.attr("__version__") = PIPESIM_VERSION;

  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(input_error.ptr(), e.what());
    }
  });

  bind_schedules(m);
  bind_results(m);

  py::class_<Costs>(m, "Costs", "What ops cost: made by UniformCosts, AnalyticalCosts or ProfiledCosts")
      .def("__repr__", [](const Costs& c) { return "<pipesim.Costs " + c.description + ">"; });
  m.def("UniformCosts", &uniform_costs, py::arg("fwd") = "1ms", py::arg("bwd") = "2ms", py::arg("wgrad") = py::none(),
        py::arg("optimizer") = "0ns", py::arg("link_latency") = "0ns", py::arg("link_bandwidth") = py::none(),
        py::arg("activation_bytes") = "0B", py::arg("activation_memory") = py::none(), py::arg("grad_bytes") = "0B",
        py::arg("input_grad_free_fraction") = 0.5,
        "The CLI's --fwd/--bwd/... costs: every stage alike, quantities with units ('1ms', '64MiB', '50GB/s')");
  m.def("AnalyticalCosts", &analytical_costs, py::arg("model"), py::arg("gpu") = "h100-sxm", py::arg("nodes") = 1,
        py::arg("gpus_per_node") = 8, py::arg("tp") = 1, py::arg("dp") = 1, py::arg("micro_batch_size") = 1,
        py::arg("dtype") = "bf16", py::arg("sequence_parallel") = false, py::arg("flash_attention") = false,
        py::arg("recompute") = "none", "A catalog model on a catalog GPU (docs/cost-model.md)");
  m.def("ProfiledCosts", &profiled_costs, py::arg("profile"), py::arg("model") = "", py::arg("micro_batch_size") = 1,
        py::arg("optimizer") = "adam", "Costs measured by `pipesim profile` (docs/profile-format.md)");

  m.def(
      "simulate",
      [](const Schedule& s, const std::optional<Costs>& costs) {
        return run(s, costs ? *costs : default_costs());
      },
      py::arg("schedule"), py::arg("costs") = py::none(), "Runs the schedule in the engine: a Result");
  m.def(
      "compare",
      [](const std::vector<Schedule>& schedules, const std::optional<Costs>& costs) {
        std::vector<RunOutcome> out;
        for (const Schedule& s : schedules)
          out.push_back(run(s, costs ? *costs : default_costs()));
        return out;
      },
      py::arg("schedules"), py::arg("costs") = py::none(), "simulate() for each schedule, under the same costs");
  m.def(
      "validate",
      [](const Schedule& s, const std::optional<Costs>& costs) {
        std::unique_ptr<CostModel> model;
        if (costs) model = costs->make(s);
        const OpScale scale = scale_of(s);
        const ValidationReport r =
            model ? validate(s, [&](const Op& op) -> std::int64_t { return is_compute(op.kind) ? model->compute_time(op, scale) : 0; })
                  : validate(s);
        py::dict d;
        d["ok"] = r.ok();
        d["errors"] = r.errors;
        d["cycle"] = r.cycle;
        d["critical_path_s"] = r.critical_path < 0 ? py::object(py::none()) : py::object(py::float_(static_cast<double>(r.critical_path) * 1e-9));
        d["critical_path_ops"] = r.critical_path_ops;
        return d;
      },
      py::arg("schedule"), py::arg("costs") = py::none(),
      "Every problem of a schedule (missing ops, placement, deadlocks with their cycle); with costs also the "
      "critical-path lower bound");

  m.def("models", [] {
    py::list out;
    for (const ModelSpec& s : builtin_catalog().models) out.append(model_dict(s));
    return out;
  }, "The built-in models (docs/catalogs.md)");
  m.def("gpus", [] {
    py::list out;
    for (const GpuSpec& g : builtin_catalog().gpus) {
      py::dict d;
      d["name"] = g.name;
      d["peak_flops"] = g.peak_flops;
      d["hbm_bandwidth"] = g.hbm_bandwidth;
      d["memory_bytes"] = g.memory_bytes;
      d["intra_node_link"] = g.intra_node_link;
      d["inter_node_link"] = g.inter_node_link;
      out.append(d);
    }
    return out;
  }, "The built-in GPUs");
  m.def("links", [] {
    py::list out;
    for (const LinkSpec& l : builtin_catalog().links) {
      py::dict d;
      d["name"] = l.name;
      d["latency_s"] = static_cast<double>(l.latency) * 1e-9;
      d["bandwidth"] = l.bandwidth;
      out.append(d);
    }
    return out;
  }, "The built-in link classes");
}
