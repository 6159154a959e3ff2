#pragma once
// Least-squares fits of measured times (Eigen), for the profiled cost model
// (cost_models/profiled.hpp) and the profiler's link fit (kernels/profiler.hpp).
//
// Fits minimise RELATIVE error, Σ ((c0 + c1·x_i - y_i) / y_i)², because the samples span
// orders of magnitude (a 4 KiB copy and a 64 MiB copy; micro-batch 1 and 16) and each
// should count alike. Linear data is reproduced exactly.
//
// SizeFit: a duration (or size) as a function of the micro-batch size b.
//
//   line       t(b) = c0 + c1·b, the least-squares line through every measured size
//   piecewise  straight segments between the measured medians (exact at measured sizes)
//
//     t |            x          line: smooths the noise of medians of few repeats; used
//       |        ./´            when it reproduces every measured median within the
//       |    x´´                tolerance (FitPolicy::Auto, 5 %), otherwise the piecewise
//       | x´                    curve, which follows a real bend (cache effects, small GEMMs)
//       +------------- b
//
// One measured size: t(b) = t_0 · b / b_0 (proportional; a line needs two points).
// Outside [b_min, b_max] the line (or the nearest segment) extrapolates, but only up to a
// factor kExtrapolationFactor beyond the range: farther, or where the extrapolation is not
// positive, at() is an InputError naming the measured range.
#include <span>
#include <string>
#include <vector>

namespace pipesim {

struct LineFit {
  double c0 = 0;  // intercept
  double c1 = 0;  // slope
  double max_relative_residual = 0;  // max_i |fit(x_i) - y_i| / y_i
  double rms_relative_residual = 0;
  double at(double x) const { return c0 + c1 * x; }
};

// Weighted least squares (weights 1/y_i) through (x_i, y_i); every y_i must be positive
// and there must be two distinct x (PIPESIM_ASSERT: callers check their data).
// through_origin: fit y = c1·x only (c0 = 0).
LineFit fit_line(std::span<const double> x, std::span<const double> y, bool through_origin = false);

// A point-to-point link: time(bytes) = latency + bytes / bandwidth.
struct LinkFit {
  double latency = 0;    // seconds, >= 0
  double bandwidth = 0;  // bytes per second, > 0
  LineFit line;          // seconds against bytes (c0 = latency, c1 = 1 / bandwidth)
};

// The line fit of seconds against bytes; a negative intercept (noise on a link whose
// latency is below the timer's reach) is refitted through the origin (latency 0).
// InputError ("<what>: ...") unless there are two distinct sizes, every time is positive
// and time grows with size.
LinkFit fit_link(std::span<const double> bytes, std::span<const double> seconds, const std::string& what);

enum class FitPolicy { Auto, Line, Piecewise };
enum class FitKind { Proportional, Line, Piecewise };

std::string fit_kind_name(FitKind k);  // "proportional", "line", "piecewise"
FitPolicy parse_fit_policy(const std::string& text, const std::string& what);  // "auto", "line", "piecewise"

inline constexpr double kLineTolerance = 0.05;       // Auto: the line's max relative residual
inline constexpr double kExtrapolationFactor = 2.0;  // allowed reach beyond the measured sizes

class SizeFit {
 public:
  SizeFit() = default;
  // sizes strictly increasing and positive, values positive, same length >= 1
  // (PIPESIM_ASSERT). `what` names the quantity in errors ("profile.json: block forward").
  SizeFit(std::vector<double> sizes, std::vector<double> values, FitPolicy policy, std::string what);

  // The fitted value at size b (> 0). InputError beyond the extrapolation reach.
  double at(double b) const;
  FitKind kind() const { return kind_; }
  const LineFit& line() const { return line_; }  // the least-squares line (also when not used)
  double min_size() const { return sizes_.front(); }
  double max_size() const { return sizes_.back(); }

 private:
  std::vector<double> sizes_, values_;
  FitKind kind_ = FitKind::Proportional;
  LineFit line_;
  std::string what_;
};

}  // namespace pipesim
