// gpulab-cli export: charts of recorded runs as PNG, PDF, SVG or CSV, without a display.
#pragma once

#include <string>
#include <vector>

#include "engine/analysis/chart_builder.hpp"
#include "engine/base/output_kind.hpp"

namespace gpulab::cli {

struct ExportFlags {
  std::vector<std::string> runs;  // run folders, or folders of runs
  std::string chart, format, out;
  std::string x = "step";
  int smoothing = 25;
  std::string baseline;           // a run's name or its 1-based position; default: the first
  double target_accuracy = 98;    // percent, or a fraction
  int width = 1200, height = 750;
  bool force = false;  // --force: --out may replace a file that is no chart of gpulab's
};

// Returns the exit code; prints one line on stderr naming what was wrong.
int run_export(const ExportFlags& flags, int argc, char** argv);

// Draws a chart built elsewhere (a lab's matrix-multiply chart) to `path` (.png, .pdf or .svg)
// offscreen. Throws ConfigError where this gpulab-cli was built without Qt, RecordError where the
// file could not be written, each naming it.
void write_chart_file(const Chart& chart, const std::string& path, int argc, char** argv,
                      bool force = false);

// What an exported chart in `format` (png, pdf, svg, csv) is as an output: the kind of file
// --out may replace.
const OutputKind& chart_file_kind(const std::string& format);

}  // namespace gpulab::cli
