// A lab's charts as points: which runs each ```chart block draws, and the chart built from them
// as every view of a lab draws it, so that a hand-in keeps each chart's points (CSV) beside its
// PNG and SVG and `gpulab-cli lab verify` recomputes every point from the hand-in's runs.
#pragma once

#include <string>
#include <vector>

#include "engine/analysis/chart_builder.hpp"
#include "engine/labs/lab.hpp"
#include "engine/labs/lab_results.hpp"

namespace gpulab {

// The results chart `chart` of the lab draws, as indices into `results` in their order: those of
// its experiments (every experiment where it names none) that have a run, never a benchmark (it
// keeps no run). A reference run is drawn too, its name marked "(reference, recorded on ...)"
// (RunData::recorded_on, which whoever loads it for the chart sets from the result's).
std::vector<size_t> lab_chart_results(const Lab& lab, size_t chart,
                                      const std::vector<LabRunResult>& results);

// Chart `chart` of the lab drawn from `runs` (those lab_chart_results picks, loaded) with the
// options the Labs tab and `gpulab-cli export` draw it with: by step, smoothed over 25 steps, the
// first run the baseline, 98 % the target accuracy.
Chart lab_chart(const Lab& lab, size_t chart, const std::vector<const RunData*>& runs);

// A chart's points and bars as CSV (write_chart_csv): a hand-in's chart-N-KIND.csv.
std::string chart_points_csv(const Chart& chart);

}  // namespace gpulab
