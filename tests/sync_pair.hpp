#pragma once
// A data-parallel pair for the engine's tests: devices 0 and 1 each run F B, a GradSync of
// their one stage, then F B again (engine_test: blocking or not; sharing_test: overlap).
#include "schedules/op_text.hpp"
#include "schedules/schedule.hpp"

namespace pipesim::testing_schedules {

inline Schedule sync_pair() {
  Schedule s;
  s.num_devices = 2;
  s.num_stages = 1;
  s.num_pipelines = 2;
  s.placement = {{0}, {1}};
  s.ops = {{*parse_op("0F0"), *parse_op("0B0"), *parse_op("0GRADSYNC"), *parse_op("0F1"), *parse_op("0B1")},
           {*parse_op("1:0F2"), *parse_op("1:0B2"), *parse_op("1:0GRADSYNC"), *parse_op("1:0F3"), *parse_op("1:0B3")}};
  return s;
}

}  // namespace pipesim::testing_schedules
