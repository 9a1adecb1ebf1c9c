// The matrix-multiply lab's chart, built from its benchmark timings as the results table is.
#include "engine/labs/matmul_chart.hpp"

#include <algorithm>

#include "engine/analysis/run_figures.hpp"

namespace gpulab {

Chart matmul_chart(const Lab& lab, const std::vector<LabRunResult>& results) {
  Chart chart;
  chart.kind = ChartKind::StepTime;  // the nearest kind: a time per unit of work; not drawn by kind
  chart.title = kMatmulChartTitle;
  chart.x_label = "matrix size n (log scale)";
  chart.log_x = true;
  Panel time, rate;
  time.y_label = "ms (log scale)";
  rate.y_label = "GFLOP/s (log scale)";
  time.log_y = rate.log_y = true;
  auto add = [&](const LabRunResult& r, const std::string& series, bool with_copies) {
    const std::vector<MatmulTiming>& timings = r.matmul;
    const int run = int(chart.runs.size());
    // Marked as every chart marks a run: recorded elsewhere, and ⚠ where flagged.
    const std::string where =
        r.recorded_on.empty() ? "" : " (reference, recorded on " + r.recorded_on + ")";
    chart.runs.push_back(flagged_name(series + where, r.flags));
    chart.flags.push_back(join_flags(r.flags));
    LineSeries t, g;
    t.run = g.run = run;
    t.metric = g.metric = Metric::StepMs;  // the line's tooltip name only; y_label says what it is
    for (const MatmulTiming& timing : timings) {
      const double ms = with_copies ? timing.ms_with_copies : timing.ms;
      t.points.x.push_back(timing.size);
      t.points.y.push_back(ms);
      g.points.x.push_back(timing.size);
      g.points.y.push_back(matmul_gflops(timing.size, ms));
    }
    t.points.smoothed = t.points.y;
    g.points.smoothed = g.points.y;
    time.lines.push_back(std::move(t));
    rate.lines.push_back(std::move(g));
  };
  for (const LabExperiment& e : lab.experiments) {
    if (e.bench != "matmul") continue;
    const auto r = std::find_if(results.begin(), results.end(),
                                [&](const LabRunResult& x) { return x.experiment == e.name; });
    if (r == results.end() || r->matmul.empty()) continue;
    add(*r, e.name, false);
    // The CPU's "with copies" is its product alone (nothing crosses a bus): no second line.
    if (std::any_of(r->matmul.begin(), r->matmul.end(),
                    [](const MatmulTiming& t) { return t.ms_with_copies != t.ms; }))
      add(*r, e.name + " with copies", true);
  }
  if (!chart.runs.empty()) chart.panels = {std::move(time), std::move(rate)};
  return chart;
}

}  // namespace gpulab
