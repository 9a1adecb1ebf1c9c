// The matrix-multiply lab's chart, built from its benchmark timings as the results table is.
#include "engine/labs/matmul_chart.hpp"

#include <algorithm>

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
  auto add = [&](const std::string& name, const std::vector<MatmulTiming>& timings,
                 bool with_copies) {
    const int run = int(chart.runs.size());
    chart.runs.push_back(name);
    chart.flags.emplace_back();
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
    add(e.name, r->matmul, false);
    // The CPU's "with copies" is its product alone (nothing crosses a bus): no second line.
    if (std::any_of(r->matmul.begin(), r->matmul.end(),
                    [](const MatmulTiming& t) { return t.ms_with_copies != t.ms; }))
      add(e.name + " with copies", r->matmul, true);
  }
  if (!chart.runs.empty()) chart.panels = {std::move(time), std::move(rate)};
  return chart;
}

}  // namespace gpulab
