#pragma once
// What a generator file includes. Each file of this folder ends with
// `std::vector<GeneratorInfo> <file>_generators()`: its schedules with their metadata
// (schedules/generator.hpp); the build registers it (schedules/CMakeLists.txt).
#include <vector>

#include "schedules/generator.hpp"
