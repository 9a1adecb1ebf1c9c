// Which runs a lab's chart draws, and the chart they give.
#include "engine/labs/lab_charts.hpp"

#include <algorithm>
#include <sstream>

#include "engine/analysis/chart_csv.hpp"

namespace gpulab {

std::vector<size_t> lab_chart_results(const Lab& lab, size_t chart,
                                      const std::vector<LabRunResult>& results) {
  const std::vector<std::string>& wanted = lab.charts.at(chart).experiments;
  std::vector<size_t> drawn;
  for (size_t i = 0; i < results.size(); ++i) {
    const LabRunResult& r = results[i];
    const LabExperiment* e = lab.experiment(r.experiment);
    const bool named =
        wanted.empty() || std::find(wanted.begin(), wanted.end(), r.experiment) != wanted.end();
    if (named && e && e->bench.empty() && r.summary && !r.run_dir.empty()) drawn.push_back(i);
  }
  return drawn;
}

Chart lab_chart(const Lab& lab, size_t chart, const std::vector<const RunData*>& runs) {
  return build_chart(parse_chart_kind(lab.charts.at(chart).kind), runs, ChartOptions{});
}

std::string chart_points_csv(const Chart& chart) {
  std::ostringstream out;
  write_chart_csv(chart, out);
  return out.str();
}

}  // namespace gpulab
