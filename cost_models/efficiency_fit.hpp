#pragma once
// Fitting the compute efficiencies of the analytical cost model (Efficiency::gemm and
// Efficiency::attention) to measured iteration times: Gauss-Newton on the relative errors,
// with the Jacobian by finite differences and each step a linear least-squares solve
// (Eigen). Iteration time is close to linear in 1/efficiency (time = work / rate), so the
// unknowns are u = 1/efficiency and the fit converges in a few steps.
//
// The prediction is a callback, so that the caller can run the whole simulation (bubbles,
// communication) for each sample: cost_models does not know the engine.
#include <functional>
#include <vector>

#include "cost_models/analytical.hpp"

namespace pipesim {

struct EfficiencyFit {
  Efficiency efficiency;      // start's memory and network, fitted gemm and attention
  double rms_relative = 0;    // sqrt(mean((predicted - measured)² / measured²))
  int iterations = 0;
};

// predict(i, e): seconds of sample i under efficiencies e. measured[i] > 0 seconds.
// InputError if there are fewer samples than the two unknowns or a measurement is not
// positive.
EfficiencyFit fit_compute_efficiency(const std::function<double(int, const Efficiency&)>& predict,
                                     const std::vector<double>& measured, Efficiency start = Efficiency{});

}  // namespace pipesim
