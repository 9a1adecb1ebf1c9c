// The verdict of a race.
#include "engine/analysis/race_verdict.hpp"

#include <cmath>
#include <cstdio>

#include "engine/analysis/run_comparison.hpp"
#include "engine/analysis/run_figures.hpp"

namespace gpulab {

std::string race_verdict(const std::vector<const RunData*>& runs, bool one_after_another) {
  if (runs.size() < 2) return "";
  for (const RunData* run : runs)
    if (const auto* shared = info_field(run->info, {"shared_hardware"});
        shared && !shared->is_null())
      return "⚠ not comparable: shared hardware";
  for (const RunData* run : runs)
    if (const auto flags = run_flags(*run); !flags.empty())
      return "⚠ not comparable: " + flag_headline(flags.front());
  const std::vector<RunComparison> rows = compare_runs(runs, 0, 1.0);
  const double base = rows.front().images_per_second;
  if (!(base > 0)) return "";
  std::string text;
  for (size_t i = 1; i < rows.size(); ++i) {
    if (!(rows[i].images_per_second > 0)) return "";
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx ", rows[i].images_per_second / base);
    text += (i > 1 ? "; " : "") + runs[i]->name() + ": " + ratio + runs[0]->name();
  }
  return text + (one_after_another ? ", measured one after another"
                                   : ", measured side by side on their own hardware");
}

}  // namespace gpulab
