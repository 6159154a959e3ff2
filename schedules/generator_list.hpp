#pragma once
// The generator files the build found: schedules/CMakeLists.txt writes generator_list.cpp
// from generator_list.cpp.in with one `<file>_generators` per schedules/generators/*.cpp.
#include <vector>

#include "schedules/generator.hpp"

namespace pipesim {

using GeneratorFamily = std::vector<GeneratorInfo> (*)();
const std::vector<GeneratorFamily>& generator_families();

}  // namespace pipesim
