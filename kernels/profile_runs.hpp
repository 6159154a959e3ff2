#pragma once
// What the profiler's measurements share (kernels/profiler.cpp, kernels/interference_probe.cpp):
// how many timed runs a measurement gets, and how a pass's runs become a PassProfile.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "cost_models/profile.hpp"
#include "kernels/profile_backend.hpp"
#include "kernels/profiler.hpp"

namespace pipesim::profile_runs {

// Timed runs of one measurement: at least `repeats`, then more until `min_time_s` of wall
// clock has passed since the first (at most kMaxTimedRepeats). Wall clock, not the runs'
// own times: a probe with untimed work around its timed part (the link's hand-off keeps
// its sender busy for a millisecond) costs what it costs, and the profile's duration stays
// bounded by the measurements x min_time_s.
class RunBudget {
 public:
  explicit RunBudget(const ProfileOptions& o) : o_(o), start_(std::chrono::steady_clock::now()) {}
  bool more(std::size_t runs) const {
    const auto n = static_cast<int>(runs);
    if (n < o_.repeats) return true;
    if (n >= kMaxTimedRepeats) return false;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() < o_.min_time_s;
  }

 private:
  const ProfileOptions& o_;
  std::chrono::steady_clock::time_point start_;
};

// o.warmup untimed calls, then timed ones as RunBudget says.
template <class F>
auto repeat(const ProfileOptions& o, F&& once) {
  for (int i = 0; i < o.warmup; ++i) (void)once();
  std::vector<decltype(once())> out;
  out.reserve(static_cast<std::size_t>(o.repeats));
  for (const RunBudget budget(o); budget.more(out.size());) out.push_back(once());
  return out;
}

inline PassProfile pass_profile(const std::vector<PassTimes>& runs, const WorkloadBytes& bytes, bool input_grad) {
  std::vector<double> f, i, w;
  for (const PassTimes& t : runs) {
    f.push_back(t.forward);
    i.push_back(t.input_grad);
    w.push_back(t.weight_grad);
  }
  PassProfile p;
  p.forward = summarize_timings(f);
  if (input_grad) p.input_grad = summarize_timings(i);
  p.weight_grad = summarize_timings(w);
  p.activation_bytes = bytes.activation;
  p.held_after_input_grad_bytes = bytes.held_after_input_grad;
  return p;
}

// A timer's zero (a call faster than the clock) would make the profile unreadable.
inline double at_least_one_ns(double s) { return std::max(s, 1e-9); }
inline PassTimes at_least_one_ns(PassTimes t) {
  return {at_least_one_ns(t.forward), at_least_one_ns(t.input_grad), at_least_one_ns(t.weight_grad)};
}

// `value` with `decimals` digits after the point, for the progress lines.
inline std::string fixed(double value, int decimals) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(decimals);
  s << value;
  return s.str();
}

}  // namespace pipesim::profile_runs
