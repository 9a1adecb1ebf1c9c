// The sentence figures measured under outside load carry, from run.json's "outside_load" (or a
// benchmark's, in the same shape): one wording for runs and benchmarks alike.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gpulab {

// "measured under outside load: other programs kept 1.5 of 2 cores busy on average" where `load`
// (outside_load_json) is under load; empty where it is not (or is not such an object).
std::string outside_load_caveat(const nlohmann::json& load);

}  // namespace gpulab
