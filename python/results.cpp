// pipesim.Result: a simulation's numbers as Python values, its per-op, per-transfer and
// memory records as NumPy structured arrays (one row per record, in the engine's order).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>

#include "python/bindings.hpp"
#include "schedules/op_text.hpp"
#include "sim/metrics.hpp"

namespace pipesim::python {

namespace {

struct OpRow {
  std::int32_t device, index, stage, microbatch, pipeline, weight_version;
  std::int64_t start_ns, end_ns;
  char kind[8];  // "F", "B", "I", "W", "GRADSYNC", "OPT", "SEND_F", ... (NumPy S8)
};
struct TransferRow {
  std::int32_t from_device, from_index, to_device, to_index;
  std::int64_t ready_ns, link_start_ns, link_end_ns, arrival_ns, bytes;
};
struct MemoryRow {
  std::int32_t device, activations;
  std::int64_t time_ns, bytes;
};

template <class Row, class Record, class Fill>
py::array_t<Row> rows(const std::vector<Record>& records, Fill fill) {
  py::array_t<Row> out(static_cast<py::ssize_t>(records.size()));
  Row* data = out.mutable_data();
  for (std::size_t i = 0; i < records.size(); ++i) {
    std::memset(&data[i], 0, sizeof(Row));
    fill(data[i], records[i]);
  }
  return out;
}

double seconds(Tick t) { return static_cast<double>(t) * 1e-9; }

}  // namespace

void bind_results(py::module_& m) {
  PYBIND11_NUMPY_DTYPE(OpRow, device, index, stage, microbatch, pipeline, weight_version, start_ns, end_ns, kind);
  PYBIND11_NUMPY_DTYPE(TransferRow, from_device, from_index, to_device, to_index, ready_ns, link_start_ns, link_end_ns,
                       arrival_ns, bytes);
  PYBIND11_NUMPY_DTYPE(MemoryRow, device, activations, time_ns, bytes);
  py::class_<RunOutcome>(m, "Result", "One simulation: times in seconds, records as NumPy arrays (times in ns).")
      .def_property_readonly("schedule", [](const RunOutcome& r) { return r.schedule; })
      .def_property_readonly("makespan_s", [](const RunOutcome& r) { return seconds(r.result.makespan); })
      .def_property_readonly("makespan_ns", [](const RunOutcome& r) { return r.result.makespan; })
      .def_property_readonly("metrics",
                             [](const RunOutcome& r) {
                               const Metrics x = summarize(r.schedule, r.result);
                               py::dict d;
                               d["makespan_s"] = seconds(x.makespan);
                               d["time_per_iteration_s"] = seconds(x.time_per_iteration);
                               d["bubble_ratio"] = x.bubble_ratio;
                               d["bubble_ratio_megatron"] = x.bubble_ratio_megatron;
                               d["throughput_mb_per_s"] = x.throughput_mb_per_s;
                               d["busy_s"] = seconds(x.busy);
                               d["idle_s"] = seconds(x.idle);
                               d["max_mismatch"] = x.staleness.max_mismatch;
                               d["max_delay"] = x.staleness.max_delay;
                               return d;
                             },
                             "The CLI's summary numbers (pipesim simulate --json)")
      .def_property_readonly("devices",
                             [](const RunOutcome& r) {
                               py::list out;
                               for (std::size_t d = 0; d < r.result.devices.size(); ++d) {
                                 const DeviceStats& s = r.result.devices[d];
                                 py::dict row;
                                 row["device"] = d;
                                 row["busy_s"] = seconds(s.busy);
                                 row["idle_s"] = seconds(r.result.makespan - s.busy);
                                 row["first_start_s"] = seconds(s.first_start);
                                 row["last_end_s"] = seconds(s.last_end);
                                 row["peak_activations"] = s.peak_activations;
                                 row["peak_activation_bytes"] = s.peak_activation_bytes;
                                 row["peak_weight_versions"] = s.peak_weight_versions;
                                 out.append(row);
                               }
                               return out;
                             })
      .def_property_readonly("critical_path",
                             [](const RunOutcome& r) {
                               std::vector<std::string> out;
                               for (const OpRef& ref : r.result.critical_path)
                                 out.push_back(to_string(r.schedule.ops[static_cast<std::size_t>(ref.device)]
                                                                       [static_cast<std::size_t>(ref.index)]) +
                                               "@" + std::to_string(ref.device));
                               return out;
                             })
      .def_property_readonly("ops",
                             [](const RunOutcome& r) {
                               return rows<OpRow>(r.timeline.ops, [](OpRow& row, const OpRecord& o) {
                                 row.device = o.ref.device;
                                 row.index = o.ref.index;
                                 row.stage = o.op.stage;
                                 row.microbatch = o.op.microbatch;
                                 row.pipeline = o.op.pipeline;
                                 row.weight_version = o.weight_version;
                                 row.start_ns = o.start;
                                 row.end_ns = o.end;
                                 const std::string_view kind = op_kind_name(o.op.kind);
                                 std::memcpy(row.kind, kind.data(), std::min(kind.size(), sizeof row.kind));
                               });
                             },
                             "Every op that ran: device, index, stage, microbatch, pipeline, weight_version, "
                             "start_ns, end_ns, kind")
      .def_property_readonly("transfers",
                             [](const RunOutcome& r) {
                               return rows<TransferRow>(r.timeline.transfers, [](TransferRow& row, const TransferRecord& t) {
                                 row.from_device = t.from.device;
                                 row.from_index = t.from.index;
                                 row.to_device = t.to.device;
                                 row.to_index = t.to.index;
                                 row.ready_ns = t.ready;
                                 row.link_start_ns = t.link_start;
                                 row.link_end_ns = t.link_end;
                                 row.arrival_ns = t.arrival;
                                 row.bytes = t.bytes;
                               });
                             })
      .def_property_readonly("memory",
                             [](const RunOutcome& r) {
                               return rows<MemoryRow>(r.timeline.memory, [](MemoryRow& row, const MemoryRecord& x) {
                                 row.device = x.device;
                                 row.activations = x.activations;
                                 row.time_ns = x.time;
                                 row.bytes = x.bytes;
                               });
                             })
      .def("__repr__", [](const RunOutcome& r) {
        return "<pipesim.Result " + r.schedule.name + ": makespan " + std::to_string(seconds(r.result.makespan)) + " s>";
      });
}

}  // namespace pipesim::python
