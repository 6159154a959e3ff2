// pipesim.Schedule and where schedules come from: the generators, files and text, the
// lowering pass; and where they go: pipesim's CSV / JSON and PyTorch's two CSV formats.
#include <pybind11/stl.h>

#include <algorithm>
#include <limits>

#include "python/bindings.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "schedules/lowering.hpp"
#include "schedules/op_text.hpp"
#include "schedules/pytorch_format.hpp"
#include "schedules/schedule_io.hpp"

namespace pipesim::python {

namespace {

std::vector<std::vector<std::string>> op_text(const Schedule& s) {
  std::vector<std::vector<std::string>> out(s.ops.size());
  for (std::size_t d = 0; d < s.ops.size(); ++d)
    for (const Op& op : s.ops[d]) out[d].push_back(to_string(op));
  return out;
}

Schedule parse(const std::string& text, const std::string& format, const std::string& name) {
  if (format == "csv") return parse_schedule_csv(text, name.empty() ? "schedule.csv" : name);
  if (format == "json") return parse_schedule_json(text, name.empty() ? "schedule.json" : name);
  throw InputError("format: expected \"csv\" or \"json\", got \"" + format + "\"");
}

// A keyword argument of generate(): a setting `g` reads, named as its flag with '_' for '-'
// (max_active_keys: --max-active-keys), of the setting's type. InputError otherwise.
void set_keyword(ScheduleParams& params, const GeneratorInfo& g, std::string key, const py::handle& value) {
  std::string flag = key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  const ScheduleSetting* s = setting_named(flag);
  if (s == nullptr || s->every || s->shape()) {
    std::string known;
    for (const ScheduleSetting& setting : schedule_settings()) {
      if (setting.every || setting.shape()) continue;
      std::string name(setting.name());
      std::replace(name.begin(), name.end(), '-', '_');
      known += (known.empty() ? "" : ", ") + name;
    }
    throw InputError("generate: unknown keyword argument '" + key + "' (settings: " + known + ")");
  }
  if (!g.reads(s->name())) {
    std::string readers;
    for (const GeneratorInfo& other : generators())
      if (other.reads(s->name())) readers += (readers.empty() ? "" : ", ") + std::string(other.name);
    throw InputError(key + ": not a setting of " + std::string(g.name) + " (it is one of " + readers + ")");
  }
  if (s->is_text() && py::isinstance<py::str>(value)) {
    s->set(params, py::cast<std::string>(value));
    return;
  }
  if (!s->is_text() && py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value)) {
    // Python's integers are unbounded: one beyond int is refused here, not wrapped.
    const py::int_ big = py::reinterpret_borrow<py::int_>(value);
    if (big >= py::int_(std::numeric_limits<int>::min()) && big <= py::int_(std::numeric_limits<int>::max())) {
      s->set(params, py::cast<int>(value));
      return;
    }
  }
  throw InputError(key + ": expected " + (s->is_text() ? s->choices_text() : std::string("an integer")) + ", got " +
                   py::cast<std::string>(py::repr(value)));
}

}  // namespace

void bind_schedules(py::module_& module) {
  py::module_& m = module;
  py::class_<Schedule>(m, "Schedule", "Per-device op lists and the placement of every stage (data, never time).")
      .def_readonly("name", &Schedule::name)
      .def_readonly("num_devices", &Schedule::num_devices)
      .def_readonly("num_stages", &Schedule::num_stages)
      .def_readonly("num_pipelines", &Schedule::num_pipelines)
      .def_readonly("microbatches", &Schedule::microbatches)
      .def_readonly("iterations", &Schedule::iterations)
      .def_readonly("placement", &Schedule::placement, "placement[pipeline][stage] = device")
      .def_property_readonly("ops", &op_text, "ops[device]: that device's ops in order, as text ('2F0', '1SEND_F3')")
      .def_property_readonly("total_ops", &Schedule::total_ops)
      .def_property_readonly("chunks_per_device", &Schedule::chunks_per_device)
      .def("to_csv", &schedule_to_csv, "pipesim's CSV (docs/schedule-format.md)")
      .def("to_json", &schedule_to_json, "pipesim's JSON (docs/schedule-format.md)")
      .def(
          "to_pytorch",
          [](const Schedule& s, bool comms) {
            return schedule_to_pytorch(s, comms ? PytorchFormat::ComputeComms : PytorchFormat::ComputeOnly);
          },
          py::arg("comms") = false,
          "PyTorch's compute_only CSV, or with comms=True its compute_comms CSV (SEND/RECV, REDUCE_GRAD)")
      .def("write", [](const Schedule& s, const std::string& path) { write_schedule_file(s, path); }, py::arg("path"),
           "Writes .csv or .json, chosen by the extension")
      .def("__repr__", [](const Schedule& s) {
        return "<pipesim.Schedule " + s.name + ": " + std::to_string(s.num_devices) + " devices, " +
               std::to_string(s.num_stages) + " stages, " + std::to_string(s.total_ops()) + " ops>";
      });

  m.def(
      "generators",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const GeneratorInfo& g : generators()) out.emplace_back(g.name, g.summary);
        return out;
      },
      "The schedule generators: (name, summary) pairs, as `pipesim schedule --list`");
  m.def(
      "generate",
      [](const std::string& name, int p, int microbatches, int v, int iterations, const py::kwargs& settings) {
        ScheduleParams params;
        params.p = p;
        params.m = microbatches;
        params.v = v;
        params.iterations = iterations;
        const GeneratorInfo& g = find_generator(name);
        for (const auto& [key, value] : settings) set_keyword(params, g, py::cast<std::string>(key), value);
        return generate(name, params);
      },
      py::arg("name"), py::arg("p") = 4, py::arg("m") = 8, py::arg("v") = 2, py::arg("iterations") = 1,
      "Runs a generator (the CLI's -p, -m, -v, --iterations); the settings of its family are keyword arguments "
      "named as the flags with '_' for '-' (pipelines=4, max_active_keys=2, twobw_policy='naive'; "
      "`pipesim schedule --list`). InputError names a bad parameter");
  m.def("read_schedule", &read_schedule_file, py::arg("path"), "Reads a .csv (PyTorch's or pipesim's) or .json file");
  m.def("parse_schedule", &parse, py::arg("text"), py::arg("format") = "csv", py::arg("name") = "",
        "Parses CSV or JSON text; `name` is used in error messages");
  m.def("add_send_recv", &add_send_recv, py::arg("schedule"),
        "PyTorch's lowering: the same schedule with SEND/RECV ops where results cross devices");
}

}  // namespace pipesim::python
