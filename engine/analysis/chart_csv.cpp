// Writing a chart's points and bars, and the comparison table, as CSV.
#include "engine/analysis/chart_csv.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>

#include "engine/analysis/run_figures.hpp"
#include "engine/base/text.hpp"

namespace gpulab {

namespace {

std::string csv_number(double value) {
  if (!std::isfinite(value)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

}  // namespace

const OutputKind& chart_csv_kind() {
  static const OutputKind kind = first_line_kind("a chart's CSV", [](std::string_view line) {
    return line.starts_with("panel,run,series,device,") ||
           line.starts_with("run,device,batch,precision,status,");
  });
  return kind;
}

void write_chart_csv(const Chart& chart, std::ostream& out) {
  out << "panel,run,series,device," << (chart.x == XAxis::Time ? "time_s" : x_axis_name(chart.x))
      << ",value,smoothed\n";
  for (const Panel& panel : chart.panels) {
    const std::string panel_name = csv_field(panel.title.empty() ? panel.y_label : panel.title);
    for (const LineSeries& line : panel.lines) {
      const std::string prefix = panel_name + "," + csv_field(chart.runs[line.run]) + "," +
                                 metric_key(line.metric) + "," + csv_field(line.device) + ",";
      for (size_t i = 0; i < line.points.size(); ++i)
        if (std::isfinite(line.points.y[i]))  // not the gaps where the run was evaluating
          out << prefix << csv_number(line.points.x[i]) << ',' << csv_number(line.points.y[i])
              << ',' << (line.smoothing > 1 ? csv_number(line.points.smoothed[i]) : "") << '\n';
    }
    for (const BarSet& set : panel.bars)
      for (size_t r = 0; r < set.values.size(); ++r)
        out << panel_name << ',' << csv_field(chart.runs[r]) << ',' << csv_field(set.label) << ",,,"
            << csv_number(set.values[r]) << ",\n";
  }
  // The learning rates changed while a run trained: a row each, on no panel (every line panel
  // marks them), the new rate as the value.
  for (const ChartMark& mark : chart.marks)
    out << ',' << csv_field(chart.runs[size_t(mark.run)]) << ",lr_change,," << csv_number(mark.x)
        << ',' << csv_number(mark.lr) << ",\n";
}

void write_comparison_csv(const std::vector<RunComparison>& rows, std::ostream& out) {
  out << "run,device,batch,precision,status,epoch_seconds,images_per_second,test_accuracy,"
         "time_to_target_s,speedup,epoch_speedup,caveats,allreduce_ms,allreduce_hidden_ms,"
         "overlap_percent,epoch_seconds_from,energy_joules,images_per_joule,matmul_percent\n";
  for (const auto& r : rows)
    out << csv_field(r.name) << ',' << csv_field(r.device) << ',' << r.batch << ','
        << csv_field(r.precision) << ',' << csv_field(r.status) << ','
        << csv_number(r.epoch_seconds) << ',' << csv_number(r.images_per_second) << ','
        << csv_number(r.test_accuracy) << ',' << csv_number(r.time_to_target_s) << ','
        << csv_number(r.speedup) << ',' << csv_number(r.epoch_speedup) << ','
        << csv_field(join_flags(r.caveats)) << ',' << csv_number(r.allreduce_ms) << ','
        << csv_number(r.allreduce_hidden_ms) << ',' << csv_number(r.overlap_percent) << ','
        << (!std::isfinite(r.epoch_seconds) ? ""
            : r.epoch_extrapolated          ? "extrapolated from steps"
                                            : "full epochs")
        << ',' << csv_number(r.energy_j) << ',' << csv_number(r.images_per_joule) << ','
        << csv_number(r.matmul_percent) << '\n';
}

}  // namespace gpulab
