// Bounds for gpulab-cli's numeric flags, said as people read them: "--lr: must be a positive
// number (not inf)". CLI11's own Range and PositiveNumber print their limits with %f, so a flag
// with no upper limit read "not in range 0.000000 to 179769313486231570814527423731704...".
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace gpulab::cli {

CLI::Validator positive();                        // > 0 and finite
CLI::Validator not_negative();                    // >= 0 and finite
CLI::Validator at_least(double least);            // whole counts: --epochs, --steps
CLI::Validator between(double low, double high);  // low <= value <= high
// A training setting's range from the one table setup files, lab files and the run record reader
// use too (engine/training/setting_bounds.hpp): "--seed: must be a whole number from 0 to
// 9223372036854775807 (not -1)". `least` raises a whole number's lowest value where the flag
// has no meaning for 0 (--epochs, --steps).
CLI::Validator setting(const char* key, int64_t least = INT64_MIN);
// A name kept in run.json (--name): UTF-8, at most kMaxNameBytes.
CLI::Validator name_text();

}  // namespace gpulab::cli
