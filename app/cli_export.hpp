// gpulab-cli export: charts of recorded runs as PNG, PDF, SVG or CSV, without a display.
#pragma once

#include <string>
#include <vector>

namespace gpulab::cli {

struct ExportFlags {
  std::vector<std::string> runs;  // run folders, or folders of runs
  std::string chart, format, out;
  std::string x = "step";
  int smoothing = 25;
  std::string baseline;           // a run's name or its 1-based position; default: the first
  double target_accuracy = 98;    // percent, or a fraction
  int width = 1200, height = 750;
};

// Returns the exit code; prints one line on stderr naming what was wrong.
int run_export(const ExportFlags& flags, int argc, char** argv);

}  // namespace gpulab::cli
