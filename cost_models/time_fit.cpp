#include "cost_models/time_fit.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <Eigen/Dense>

#include "core/error.hpp"

namespace pipesim {
namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void residuals(LineFit& f, std::span<const double> x, std::span<const double> y) {
  double sum = 0, worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = std::abs(f.at(x[i]) - y[i]) / y[i];
    worst = std::max(worst, r);
    sum += r * r;
  }
  f.max_relative_residual = worst;
  f.rms_relative_residual = std::sqrt(sum / static_cast<double>(x.size()));
}

}  // namespace

LineFit fit_line(std::span<const double> x, std::span<const double> y, bool through_origin) {
  PIPESIM_ASSERT(x.size() == y.size() && !x.empty());
  const auto n = static_cast<Eigen::Index>(x.size());
  const int cols = through_origin ? 1 : 2;
  Eigen::MatrixXd a(n, cols);
  Eigen::VectorXd rhs(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    PIPESIM_ASSERT(y[k] > 0 && std::isfinite(y[k]) && std::isfinite(x[k]));
    const double w = 1 / y[k];  // relative error: each row divided by its own value
    if (through_origin) {
      a(i, 0) = x[k] * w;
    } else {
      a(i, 0) = w;
      a(i, 1) = x[k] * w;
    }
    rhs(i) = 1;  // y_i · w_i
  }
  // Column-pivoting QR: stable for the badly scaled columns (1/y next to bytes/y).
  const Eigen::VectorXd c = a.colPivHouseholderQr().solve(rhs);
  LineFit f;
  if (through_origin) {
    f.c1 = c(0);
  } else {
    PIPESIM_ASSERT(std::any_of(x.begin(), x.end(), [&](double v) { return v != x[0]; }));
    f.c0 = c(0);
    f.c1 = c(1);
  }
  residuals(f, x, y);
  return f;
}

LinkFit fit_link(std::span<const double> bytes, std::span<const double> seconds, const std::string& what) {
  if (bytes.size() != seconds.size() || bytes.size() < 2)
    throw InputError(what + ": a link fit needs at least two message sizes, got " + std::to_string(bytes.size()));
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (!(seconds[i] > 0) || !std::isfinite(seconds[i]))
      throw InputError(what + ": the time of a " + number(bytes[i]) + "-byte message must be positive, got " +
                       number(seconds[i]) + " s");
    if (!(bytes[i] >= 0) || !std::isfinite(bytes[i]))
      throw InputError(what + ": message sizes must be non-negative, got " + number(bytes[i]));
  }
  if (std::all_of(bytes.begin(), bytes.end(), [&](double b) { return b == bytes[0]; }))
    throw InputError(what + ": a link fit needs two distinct message sizes");
  LinkFit f;
  f.line = fit_line(bytes, seconds);
  if (f.line.c0 < 0) f.line = fit_line(bytes, seconds, true);
  if (!(f.line.c1 > 0))
    throw InputError(what + ": the measured times do not grow with the message size (slope " + number(f.line.c1) +
                     " s/byte): no bandwidth can be fitted; measure again on a quieter machine");
  f.latency = f.line.c0;
  f.bandwidth = 1 / f.line.c1;
  return f;
}

std::string fit_kind_name(FitKind k) {
  switch (k) {
    case FitKind::Proportional: return "proportional";
    case FitKind::Line: return "line";
    case FitKind::Piecewise: return "piecewise";
  }
  return "?";
}

FitPolicy parse_fit_policy(const std::string& text, const std::string& what) {
  if (text == "auto") return FitPolicy::Auto;
  if (text == "line") return FitPolicy::Line;
  if (text == "piecewise") return FitPolicy::Piecewise;
  throw InputError(what + ": expected auto, line or piecewise, got '" + one_line(text) + "'");
}

SizeFit::SizeFit(std::vector<double> sizes, std::vector<double> values, FitPolicy policy, std::string what)
    : sizes_(std::move(sizes)), values_(std::move(values)), what_(std::move(what)) {
  PIPESIM_ASSERT(!sizes_.empty() && sizes_.size() == values_.size());
  for (std::size_t i = 0; i < sizes_.size(); ++i) {
    PIPESIM_ASSERT(sizes_[i] > 0 && values_[i] > 0);
    PIPESIM_ASSERT(i == 0 || sizes_[i] > sizes_[i - 1]);
  }
  if (sizes_.size() == 1) {
    kind_ = FitKind::Proportional;
    line_.c1 = values_[0] / sizes_[0];
    return;
  }
  line_ = fit_line(sizes_, values_);
  switch (policy) {
    case FitPolicy::Line: kind_ = FitKind::Line; break;
    case FitPolicy::Piecewise: kind_ = FitKind::Piecewise; break;
    case FitPolicy::Auto:
      kind_ = line_.max_relative_residual <= kLineTolerance ? FitKind::Line : FitKind::Piecewise;
      break;
  }
}

double SizeFit::at(double b) const {
  PIPESIM_ASSERT(!sizes_.empty());
  const double lo = min_size() / kExtrapolationFactor, hi = max_size() * kExtrapolationFactor;
  auto range = [&] {
    return "the profiled micro-batch sizes are " + number(min_size()) + ".." + number(max_size()) +
           " (extrapolation reaches " + number(lo) + ".." + number(hi) + ")";
  };
  if (!(b >= lo && b <= hi))
    throw InputError(what_ + ": micro-batch size " + number(b) + " is too far outside the profile: " + range() +
                     "; profile it with --micro-batch-sizes");
  double v = 0;
  if (kind_ == FitKind::Proportional || kind_ == FitKind::Line) {
    v = line_.at(b);
  } else {
    // The segment that holds b; the end segments carry on beyond the range.
    std::size_t k = 1;
    while (k + 1 < sizes_.size() && b > sizes_[k]) ++k;
    const double x0 = sizes_[k - 1], x1 = sizes_[k], y0 = values_[k - 1], y1 = values_[k];
    v = y0 + (y1 - y0) * (b - x0) / (x1 - x0);
  }
  if (!(v > 0))
    throw InputError(what_ + ": the fit extrapolates to " + number(v) + " at micro-batch size " + number(b) + ": " +
                     range() + "; profile that size");
  return v;
}

}  // namespace pipesim
