// The outside-load caveat.
#include "engine/records/outside_load.hpp"

#include <cstdio>

namespace gpulab {

std::string outside_load_caveat(const nlohmann::json& load) {
  if (!load.is_object() || !load.value("under_load", false)) return "";
  const auto mean = load.find("mean_cores");
  const auto cores = load.find("cores");
  char text[160];
  std::snprintf(text, sizeof text,
                "measured under outside load: other programs kept %.1f of %d cores busy on average",
                mean != load.end() && mean->is_number() ? mean->get<double>() : 0.0,
                cores != load.end() && cores->is_number() ? cores->get<int>() : 0);
  return text;
}

}  // namespace gpulab
