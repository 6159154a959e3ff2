#pragma once
// The error tables of `pipesim validate --report`: predicted against measured, headline
// numbers and per-kind duration errors (traces/validation.hpp has the definitions). The
// report puts them above the two aligned timelines (ReportOptions::intro_html).
#include <string>

#include "traces/validation.hpp"

namespace pipesim {

// `title` heads the section ("1f1b: predicted against measured"); `anchor` is its id.
std::string validation_html(const PredictionReport& r, const std::string& title = "Predicted against measured",
                            const std::string& anchor = "validation");

}  // namespace pipesim
