#include "cost_models/efficiency_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace pipesim {
namespace {

constexpr int kMaxIterations = 30;
constexpr double kStep = 1e-3;       // relative finite-difference step in u
constexpr double kTolerance = 1e-5;  // relative change of u that ends the fit
// Efficiencies stay in [kMinEfficiency, 1]: u = 1/e in [1, 1/kMinEfficiency].
constexpr double kMinEfficiency = 0.01;

Efficiency with(const Efficiency& base, const Eigen::Vector2d& u) {
  Efficiency e = base;
  e.gemm = 1 / u(0);
  e.attention = 1 / u(1);
  return e;
}

}  // namespace

EfficiencyFit fit_compute_efficiency(const std::function<double(int, const Efficiency&)>& predict,
                                     const std::vector<double>& measured, Efficiency start) {
  const int n = static_cast<int>(measured.size());
  if (n < 2) throw InputError("efficiency fit: needs at least 2 measurements for 2 unknowns, got " + std::to_string(n));
  for (int i = 0; i < n; ++i)
    if (!(measured[static_cast<std::size_t>(i)] > 0))
      throw InputError("efficiency fit: measurement " + std::to_string(i) + " must be a positive time");

  auto residuals = [&](const Eigen::Vector2d& u, Eigen::VectorXd& predicted) {
    const Efficiency e = with(start, u);
    predicted.resize(n);
    for (int i = 0; i < n; ++i) predicted(i) = predict(i, e);
  };
  Eigen::Vector2d u(1 / start.gemm, 1 / start.attention);
  Eigen::VectorXd m(n), predicted, shifted;
  for (int i = 0; i < n; ++i) m(i) = measured[static_cast<std::size_t>(i)];

  EfficiencyFit fit;
  for (fit.iterations = 1; fit.iterations <= kMaxIterations; ++fit.iterations) {
    residuals(u, predicted);
    // Relative residuals, so that a 3 s and a 100 s iteration weigh the same.
    const Eigen::VectorXd r = (m - predicted).cwiseQuotient(m);
    Eigen::MatrixXd jacobian(n, 2);
    for (int j = 0; j < 2; ++j) {
      Eigen::Vector2d v = u;
      v(j) *= 1 + kStep;
      residuals(v, shifted);
      jacobian.col(j) = (shifted - predicted).cwiseQuotient(m) / (v(j) - u(j));
    }
    const Eigen::Vector2d du = jacobian.colPivHouseholderQr().solve(r);
    const Eigen::Vector2d next = (u + du).cwiseMax(1.0).cwiseMin(1 / kMinEfficiency);
    const bool done = (next - u).norm() <= kTolerance * u.norm();
    u = next;
    if (done) break;
  }
  fit.iterations = std::min(fit.iterations, kMaxIterations);
  residuals(u, predicted);
  fit.efficiency = with(start, u);
  fit.rms_relative = std::sqrt((m - predicted).cwiseQuotient(m).squaredNorm() / n);
  return fit;
}

}  // namespace pipesim
