// One set of bounds for every numeric training setting a run records: gpulab-cli's flags, setup
// files, lab files and the run record reader all check against this table, so a value one of
// them takes is never one another refuses (a seed of -1 once became 18446744073709551615 in
// run.json, which no reader loaded).
#pragma once

#include <string_view>
#include <vector>

#include "engine/base/bounds.hpp"

namespace gpulab {

struct SettingBound {
  const char* key;   // as run.json's "config" and a setup's "train" name it: "max_steps"
  const char* flag;  // as gpulab-cli train names it: "--steps"
  Bound bound;
};

// Every numeric setting of run.json's "config", in its order.
const std::vector<SettingBound>& setting_bounds();
// By JSON key ("max_steps") or flag ("--steps" or "steps"); nullptr for a setting with no bound.
const SettingBound* find_setting_bound(std::string_view key_or_flag);
// The bound of a key the table holds (a programming error otherwise: throws std::logic_error).
const Bound& setting_bound(std::string_view key_or_flag);

}  // namespace gpulab
