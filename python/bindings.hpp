#pragma once
// The pieces of the `pipesim` Python module (module.cpp puts them together).
#include <pybind11/pybind11.h>

#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace pipesim::python {

namespace py = pybind11;

void bind_schedules(py::module_& m);  // schedules.cpp: Schedule, generators, files
void bind_results(py::module_& m);    // results.cpp: Result, its NumPy arrays

// One simulation's outcome, as the Python Result object holds it.
struct RunOutcome {
  Schedule schedule;
  SimResult result;
  Timeline timeline;
};

}  // namespace pipesim::python
