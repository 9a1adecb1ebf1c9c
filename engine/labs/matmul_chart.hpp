// The matrix-multiply lab's chart: time and GFLOP/s against the matrix size, both axes
// logarithmic, one line per benchmark experiment and one more for a GPU's times with the copies.
#pragma once

#include <vector>

#include "engine/analysis/chart_builder.hpp"
#include "engine/labs/lab.hpp"
#include "engine/labs/lab_results.hpp"

namespace gpulab {

// The series, in the lab's experiment order: "<experiment>" (the product alone) and, where the
// device copies (a GPU), "<experiment> with copies". Their points are the results table's ms and
// GFLOP/s cells, unrounded. A chart with no runs where no benchmark has timings.
Chart matmul_chart(const Lab& lab, const std::vector<LabRunResult>& results);

// Its files in a lab's hand-in folder: chart-matmul.png and .svg (a hand-in's "chart-" names, so
// a later `lab run` into the same folder replaces them).
inline constexpr const char* kMatmulChartStem = "chart-matmul";
inline constexpr const char* kMatmulChartTitle =
    "Matrix multiply: time and GFLOP/s against the size";

}  // namespace gpulab
