// Charts of recorded runs written straight to files, with no window: `gpulab-cli export`, the
// window's "export all", and the one-click lab report folder.
#pragma once

#include <vector>

#include <QColor>
#include <QString>
#include <QStringList>

#include "engine/analysis/chart_builder.hpp"
#include "ui/charts/chart_render.hpp"

namespace gpulab::ui {

inline constexpr int kExportWidth = 1200, kExportHeight = 750;

// One chart of `runs` to `path` in `format` (CSV: the chart's data). colors may be empty (the
// palette in run order). Needs a QApplication. Returns false with a message naming the file.
bool export_chart(ChartKind kind, const std::vector<const RunData*>& runs,
                  const std::vector<QColor>& colors, const ChartOptions& options,
                  const QString& path, ExportFormat format, QString* error,
                  int width = kExportWidth, int height = kExportHeight);

// A chart built elsewhere (engine/labs/matmul_chart) to `path` as PNG, PDF or SVG, drawn as
// export_chart draws, with the logarithmic axes it asks for (Chart::log_x, Panel::log_y) and a dot
// at each point; a series named "... with copies" dashed. Needs a QApplication. Returns false with
// a message naming the file.
bool export_built_chart(const Chart& chart, const QString& path, ExportFormat format,
                        QString* error, int width = kExportWidth, int height = kExportHeight);

// The charts that only some runs make, into `dir`: the scaling chart (scaling.png/svg/pdf/csv)
// where two of them differ only in replicas, and the replica timeline (replica-timeline.png/svg/
// pdf) of the newest run with replicas. `written` gets the files made.
bool export_study_charts(const QString& dir, const std::vector<const RunData*>& runs,
                         QString* error, QStringList* written = nullptr);

// A lab report in `dir` (created): every chart as PNG, SVG and PDF (the scaling chart and the
// replica timeline too, where the runs make them), each chart's data as CSV,
// comparison.csv, and summary.md describing each run and the comparison. `written` lists the
// files made.
bool write_lab_report(const QString& dir, const std::vector<const RunData*>& runs,
                      const std::vector<QColor>& colors, const ChartOptions& options,
                      QString* error, QStringList* written = nullptr);

}  // namespace gpulab::ui
