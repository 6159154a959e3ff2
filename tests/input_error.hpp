#pragma once
// For the tests of bad input: error_of(f) is the message of the InputError that f()
// throws, "" when it throws none, and fails the test if the message is more than one line
// (every bad-input message is one line). error_of(generator, params) is the same for a
// generator's parameter check.
#include <gtest/gtest.h>

#include <concepts>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "schedules/generator.hpp"

namespace pipesim {

template <std::invocable F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find_first_of("\r\n"), std::string::npos) << "a bad-input message of several lines: " << what;
    return what;
  }
  return "";
}

inline std::string error_of(std::string_view generator, const ScheduleParams& params) {
  return error_of([&] { generate(generator, params); });
}

}  // namespace pipesim
