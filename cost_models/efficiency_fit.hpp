#pragma once
// Fitting kernel efficiencies of the analytical cost model (any of Efficiency's parameters)
// to measured iteration times: Gauss-Newton on the relative errors, the Jacobian by finite
// differences, each step a linear least-squares solve (Eigen), halved while it makes the
// fit worse. Times are close to linear in 1/efficiency and in the GEMM tile overhead K0, so
// those are the unknowns the steps move, and the fit converges in a few steps.
//
// The prediction is a callback, so that the caller can run the whole simulation (bubbles,
// communication) for each sample: cost_models does not know the engine.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cost_models/hardware_spec.hpp"

namespace pipesim {

// The Efficiency fields a fit can change (the tile shape is an integer choice, not fitted).
enum class EfficiencyParam : std::uint8_t { Gemm, GemmKOverhead, WaveSmoothing, Misaligned, Attention, Memory, Network };
inline constexpr EfficiencyParam kEfficiencyParams[] = {
    EfficiencyParam::Gemm,      EfficiencyParam::GemmKOverhead, EfficiencyParam::WaveSmoothing, EfficiencyParam::Misaligned,
    EfficiencyParam::Attention, EfficiencyParam::Memory,        EfficiencyParam::Network};

std::string_view efficiency_param_name(EfficiencyParam p);  // "gemm", "gemm_k_overhead", ... (the catalog's keys)
// InputError naming `what` and the accepted names.
EfficiencyParam parse_efficiency_param(std::string_view name, std::string_view what);
double efficiency_value(const Efficiency& e, EfficiencyParam p);
void set_efficiency_value(Efficiency& e, EfficiencyParam p, double value);

struct EfficiencyFit {
  Efficiency efficiency;           // `start` with the fitted parameters replaced
  std::vector<double> predicted;   // seconds of each sample at the fit
  double rms_relative = 0;         // sqrt(mean((predicted - measured)² / measured²))
  int iterations = 0;
  bool converged = false;          // the last step moved every unknown by less than 1e-9 relative
};

// predict(i, e): seconds of sample i under efficiencies e. measured[i] > 0 seconds.
// InputError if there are fewer samples than parameters, a parameter is listed twice, or a
// measurement is not positive.
EfficiencyFit fit_efficiency(const std::function<double(int, const Efficiency&)>& predict,
                             const std::vector<double>& measured, const Efficiency& start,
                             const std::vector<EfficiencyParam>& params);

}  // namespace pipesim
