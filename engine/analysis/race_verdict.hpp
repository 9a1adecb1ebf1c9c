// A race's verdict in one line, from its runs' records: how many times the first run's images/s
// each other run got, and how they were measured, or why their figures are not comparable.
#pragma once

#include <string>
#include <vector>

#include "engine/records/run_record.hpp"

namespace gpulab {

// "2 threads: 1.22x 1 thread, measured one after another" (each run's images/s over the first's,
// compare_runs' figure, to two decimals; "; " between runs), or ", measured side by side on
// their own hardware" where `one_after_another` is false. Where a run has flags (run_flags) its
// figures are not what it gets alone: "⚠ not comparable: shared hardware" for runs that shared
// it, else the first flag's headline ("⚠ not comparable: measured under outside load"). Empty
// for fewer than two runs or a run without images/s.
std::string race_verdict(const std::vector<const RunData*>& runs, bool one_after_another);

}  // namespace gpulab
