// Bounds for gpulab-cli's numeric flags, said as people read them: "--lr: must be a positive
// number (not inf)". CLI11's own Range and PositiveNumber print their limits with %f, so a flag
// with no upper limit read "not in range 0.000000 to 179769313486231570814527423731704...".
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace gpulab::cli {

// 1000, 0.9999, 0.1, 1e+20: integers in full, others as %g.
std::string readable_number(double value);

CLI::Validator positive();                        // > 0 and finite
CLI::Validator not_negative();                    // >= 0 and finite
CLI::Validator at_least(double least);            // whole counts: --epochs, --steps
CLI::Validator between(double low, double high);  // low <= value <= high

}  // namespace gpulab::cli
