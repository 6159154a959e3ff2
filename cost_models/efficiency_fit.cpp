#include "cost_models/efficiency_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace pipesim {
namespace {

constexpr int kMaxIterations = 40;
constexpr int kMaxHalvings = 12;
constexpr double kStep = 1e-4;       // relative finite-difference step of an unknown
constexpr double kTolerance = 1e-9;  // relative change of every unknown that ends the fit

// The unknown a parameter is fitted as, and its bounds: efficiencies as 1/e (time is
// linear in it), K0 as itself, the wave smoothing q as itself.
struct Unknown {
  bool reciprocal;
  double lo, hi;  // bounds of the unknown
};

Unknown unknown_of(EfficiencyParam p) {
  switch (p) {
    case EfficiencyParam::GemmKOverhead: return {false, 0, 1e5};
    case EfficiencyParam::WaveSmoothing: return {false, 0.01, 1};
    default: return {true, 1, 1000};  // efficiency in [0.001, 1]
  }
}

}  // namespace

std::string_view efficiency_param_name(EfficiencyParam p) {
  switch (p) {
    case EfficiencyParam::Gemm: return "gemm";
    case EfficiencyParam::GemmKOverhead: return "gemm_k_overhead";
    case EfficiencyParam::WaveSmoothing: return "wave_smoothing";
    case EfficiencyParam::Misaligned: return "misaligned";
    case EfficiencyParam::Attention: return "attention";
    case EfficiencyParam::Memory: return "memory";
    case EfficiencyParam::Network: return "network";
  }
  return "?";
}

EfficiencyParam parse_efficiency_param(std::string_view name, std::string_view what) {
  std::string names;
  for (EfficiencyParam p : kEfficiencyParams) {
    if (name == efficiency_param_name(p)) return p;
    names += (names.empty() ? "" : ", ") + std::string(efficiency_param_name(p));
  }
  throw InputError(std::string(what) + ": unknown efficiency parameter '" + std::string(name) + "' (expected " + names + ")");
}

double efficiency_value(const Efficiency& e, EfficiencyParam p) {
  switch (p) {
    case EfficiencyParam::Gemm: return e.gemm;
    case EfficiencyParam::GemmKOverhead: return e.gemm_k_overhead;
    case EfficiencyParam::WaveSmoothing: return e.wave_smoothing;
    case EfficiencyParam::Misaligned: return e.misaligned;
    case EfficiencyParam::Attention: return e.attention;
    case EfficiencyParam::Memory: return e.memory;
    case EfficiencyParam::Network: return e.network;
  }
  return 0;
}

void set_efficiency_value(Efficiency& e, EfficiencyParam p, double value) {
  switch (p) {
    case EfficiencyParam::Gemm: e.gemm = value; break;
    case EfficiencyParam::GemmKOverhead: e.gemm_k_overhead = value; break;
    case EfficiencyParam::WaveSmoothing: e.wave_smoothing = value; break;
    case EfficiencyParam::Misaligned: e.misaligned = value; break;
    case EfficiencyParam::Attention: e.attention = value; break;
    case EfficiencyParam::Memory: e.memory = value; break;
    case EfficiencyParam::Network: e.network = value; break;
  }
}

EfficiencyFit fit_efficiency(const std::function<double(int, const Efficiency&)>& predict,
                             const std::vector<double>& measured, const Efficiency& start,
                             const std::vector<EfficiencyParam>& params) {
  const int n = static_cast<int>(measured.size());
  const int k = static_cast<int>(params.size());
  if (k == 0) throw InputError("efficiency fit: no parameters to fit");
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < j; ++i)
      if (params[static_cast<std::size_t>(i)] == params[static_cast<std::size_t>(j)])
        throw InputError("efficiency fit: parameter '" + std::string(efficiency_param_name(params[static_cast<std::size_t>(j)])) +
                         "' is listed twice");
  if (n < k)
    throw InputError("efficiency fit: needs at least " + std::to_string(k) + " measurements for " + std::to_string(k) +
                     " unknowns, got " + std::to_string(n));
  for (int i = 0; i < n; ++i)
    if (!(measured[static_cast<std::size_t>(i)] > 0))
      throw InputError("efficiency fit: measurement " + std::to_string(i) + " must be a positive time");

  std::vector<Unknown> unknowns;
  Eigen::VectorXd u(k);
  for (int j = 0; j < k; ++j) {
    const EfficiencyParam p = params[static_cast<std::size_t>(j)];
    unknowns.push_back(unknown_of(p));
    const double v = efficiency_value(start, p);
    u(j) = std::clamp(unknowns.back().reciprocal ? 1 / v : v, unknowns.back().lo, unknowns.back().hi);
  }
  auto efficiency_at = [&](const Eigen::VectorXd& x) {
    Efficiency e = start;
    for (int j = 0; j < k; ++j)
      set_efficiency_value(e, params[static_cast<std::size_t>(j)], unknowns[static_cast<std::size_t>(j)].reciprocal ? 1 / x(j) : x(j));
    return e;
  };
  Eigen::VectorXd m(n);
  for (int i = 0; i < n; ++i) m(i) = measured[static_cast<std::size_t>(i)];
  // Relative residuals, so that a 3 s and a 100 s iteration weigh the same.
  auto residuals = [&](const Eigen::VectorXd& x, Eigen::VectorXd& predicted) {
    const Efficiency e = efficiency_at(x);
    predicted.resize(n);
    for (int i = 0; i < n; ++i) predicted(i) = predict(i, e);
    return Eigen::VectorXd((m - predicted).cwiseQuotient(m));
  };
  auto clamp = [&](Eigen::VectorXd x) {
    for (int j = 0; j < k; ++j) x(j) = std::clamp(x(j), unknowns[static_cast<std::size_t>(j)].lo, unknowns[static_cast<std::size_t>(j)].hi);
    return x;
  };

  EfficiencyFit fit;
  Eigen::VectorXd predicted, shifted, trial_predicted;
  Eigen::VectorXd r = residuals(u, predicted);
  for (fit.iterations = 1; fit.iterations <= kMaxIterations; ++fit.iterations) {
    Eigen::MatrixXd jacobian(n, k);
    for (int j = 0; j < k; ++j) {
      Eigen::VectorXd v = u;
      const double h = std::max(kStep * std::abs(u(j)), 1e-6);
      v(j) += v(j) + h <= unknowns[static_cast<std::size_t>(j)].hi ? h : -h;
      const Eigen::VectorXd rs = residuals(v, shifted);
      jacobian.col(j) = (rs - r) / (v(j) - u(j));
    }
    // r(u + du) ≈ r + J du = 0.
    const Eigen::VectorXd du = jacobian.colPivHouseholderQr().solve(-r);
    double scale = 1;
    Eigen::VectorXd next = clamp(u + du), next_r = residuals(next, trial_predicted);
    for (int halving = 0; halving < kMaxHalvings && next_r.squaredNorm() > r.squaredNorm(); ++halving) {
      scale /= 2;
      next = clamp(u + scale * du);
      next_r = residuals(next, trial_predicted);
    }
    if (next_r.squaredNorm() > r.squaredNorm()) {  // no step improves it: a minimum
      fit.converged = true;
      break;
    }
    bool small = true;
    for (int j = 0; j < k; ++j) small = small && std::abs(next(j) - u(j)) <= kTolerance * std::max(std::abs(u(j)), 1.0);
    u = next;
    r = next_r;
    predicted = trial_predicted;
    if (small) {
      fit.converged = true;
      break;
    }
  }
  if (fit.iterations > kMaxIterations) fit.iterations = kMaxIterations;
  fit.efficiency = efficiency_at(u);
  fit.predicted.assign(predicted.data(), predicted.data() + n);
  fit.rms_relative = std::sqrt(r.squaredNorm() / n);
  if (!fit.converged) fit.converged = r.squaredNorm() < 1e-20;
  return fit;
}

}  // namespace pipesim
