#pragma once
// The body of every libFuzzer entry point: run one target, and turn a contract violation
// into an abort, which libFuzzer reports as a crash and saves the input for.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <typeinfo>

#include "fuzz/targets.hpp"

namespace pipesim::fuzz {

inline int run_one(Target target, const std::uint8_t* data, std::size_t size) {
  try {
    target(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const ContractViolation& e) {
    std::fprintf(stderr, "pipesim fuzz: contract violation: %s\n", e.what());
    std::abort();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipesim fuzz: uncaught %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  }
  return 0;
}

}  // namespace pipesim::fuzz
