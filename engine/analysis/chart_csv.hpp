// The CSV files of charts and comparisons: a chart's points and bars (what `gpulab-cli export`
// and the window's "Export CSV" write) and the comparison table (comparison.csv).
#pragma once

#include <iosfwd>
#include <vector>

#include "engine/analysis/chart_builder.hpp"
#include "engine/analysis/run_comparison.hpp"
#include "engine/base/output_kind.hpp"

namespace gpulab {

// One row per point: panel,run,series,device,x,value,smoothed (x is empty for bars).
void write_chart_csv(const Chart& chart, std::ostream& out);

// A chart's CSV as write_chart_csv or write_comparison_csv writes it (by its header): what an
// export of a chart as CSV may replace.
const OutputKind& chart_csv_kind();
// One row per run, its figures as RunComparison holds them.
void write_comparison_csv(const std::vector<RunComparison>& rows, std::ostream& out);

}  // namespace gpulab
