#pragma once
// The checks every fuzz target shares (fuzz/targets.hpp states the contract).
#include <cmath>
#include <string>
#include <string_view>
#include <typeinfo>

#include "fuzz/targets.hpp"
#include "core/error.hpp"

namespace pipesim {
struct Schedule;
class UniformCostModel;
}  // namespace pipesim

namespace pipesim::fuzz {

[[noreturn]] inline void violation(const std::string& what) { throw ContractViolation(what); }

inline void require(bool ok, const std::string& what) {
  if (!ok) violation(what);
}

// Messages are printed as one line ("pipesim: error: ..."), whatever the input held.
inline void require_one_line(std::string_view message, std::string_view context) {
  if (message.empty()) violation(std::string(context) + ": empty error message");
  if (message.find('\n') != std::string_view::npos || message.find('\r') != std::string_view::npos)
    violation(std::string(context) + ": message is not one line: " + std::string(message));
}

inline void require_finite_non_negative(double value, std::string_view what) {
  if (!std::isfinite(value) || value < 0) violation(std::string(what) + " is " + std::to_string(value));
}

// Runs `parse`; true if it succeeded, false if it threw a well-formed InputError.
// Any other exception is a contract violation (ContractViolation itself passes through).
template <typename F>
bool parses(F&& parse, std::string_view context) {
  try {
    parse();
    return true;
  } catch (const InputError& e) {
    require_one_line(e.what(), context);
    return false;
  } catch (const ContractViolation&) {
    throw;
  } catch (const std::exception& e) {
    violation(std::string(context) + ": " + typeid(e).name() + " instead of InputError: " + e.what());
  }
}

// Validates `s` (it must not throw: readers and generators promise a consistent shape); if
// valid and at most kMaxSimulatedOps, simulates it under `model` and checks the metrics,
// the Chrome trace, the HTML report and the text timeline. Returns whether it was valid.
bool check_runs(const Schedule& s, const UniformCostModel& model);

}  // namespace pipesim::fuzz
