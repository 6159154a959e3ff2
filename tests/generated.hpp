#pragma once
// A generator's schedule of p devices, m micro-batches and `iterations` iterations, for
// tests that need one of a given shape; a schedule's op lists as text, for tests of an order.
#include <string>
#include <vector>

#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"

namespace pipesim::testing_schedules {

// The generators' defaults with this shape.
inline ScheduleParams shape(int p, int m, int iterations = 1) {
  ScheduleParams params;
  params.p = p;
  params.m = m;
  params.iterations = iterations;
  return params;
}

inline Schedule generated(const char* name, int p, int m, int iterations = 1) {
  return generate(name, shape(p, m, iterations));
}

// One line per device, its ops in order: "0F0 0F1 0B0 0OPT".
inline std::vector<std::string> device_rows(const Schedule& s) {
  std::vector<std::string> out;
  for (const auto& list : s.ops) {
    std::string row;
    for (const Op& op : list) row += (row.empty() ? "" : " ") + to_string(op);
    out.push_back(row);
  }
  return out;
}

}  // namespace pipesim::testing_schedules
