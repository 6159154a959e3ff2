// Uses pipesim as a subdirectory: the pipesim::schedules target and its headers.
#include <cstdio>

#include "schedules/generator.hpp"
#include "schedules/pytorch_format.hpp"

int main() {
  pipesim::ScheduleParams p;
  p.p = 2;
  p.m = 3;
  const std::string csv = pipesim::schedule_to_pytorch(pipesim::generate("1f1b", p), pipesim::PytorchFormat::ComputeOnly);
  std::fputs(csv.c_str(), stdout);
  return csv == "0F0,0F1,0B0,0F2,0B1,0B2\n1F0,1B0,1F1,1B1,1F2,1B2\n" ? 0 : 1;
}
