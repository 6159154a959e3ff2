#pragma once
// A generator's schedule of p devices, m micro-batches and `iterations` iterations, for
// tests that need one of a given shape.
#include "schedules/generator.hpp"

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

}  // namespace pipesim::testing_schedules
