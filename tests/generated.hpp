#pragma once
// A generator's schedule of p devices, m micro-batches and `iterations` iterations, for
// tests that need one of a given shape.
#include "schedules/generator.hpp"

namespace pipesim::testing_schedules {

inline Schedule generated(const char* name, int p, int m, int iterations = 1) {
  ScheduleParams params;
  params.p = p;
  params.m = m;
  params.iterations = iterations;
  return generate(name, params);
}

}  // namespace pipesim::testing_schedules
