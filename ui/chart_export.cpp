// Exporting charts and lab reports.
#include "ui/chart_export.hpp"

#include <qcustomplot.h>

#include <QDateTime>
#include <QDir>
#include <cmath>
#include <sstream>

#include "engine/output_paths.hpp"
#include "engine/run_record.hpp"

namespace gpulab::ui {
namespace {

bool write_text(const QString& path, const std::string& text, QString* error) {
  try {
    write_file_atomically(path.toStdString(), text);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  return true;
}

// A chart file never replaces a run's record, a folder, a device or a FIFO
// (engine/output_paths.hpp).
bool may_write(const QString& path, QString* error) {
  try {
    check_output_file(path.toStdString(), "Export");
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  return true;
}

std::string fixed(double value, int decimals, const char* suffix = "") {
  if (!std::isfinite(value)) return "–";
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(decimals);
  out << value << suffix;
  return out.str();
}

std::string summary_markdown(const std::vector<const RunData*>& runs, const ChartOptions& options) {
  const auto rows = compare_runs(runs, options.baseline, options.target_accuracy);
  std::ostringstream md;
  md << "# gpulab lab report\n\n"
     << "Made " << QDateTime::currentDateTime().toString(Qt::ISODate).toStdString() << " from "
     << runs.size() << " run(s). Every figure was measured on the hardware named with it.\n\n";
  md << "| run | device | batch | precision | epoch time | images/s | test accuracy | time to "
     << fixed(100 * options.target_accuracy, 1) << "% | speedup |\n"
     << "|---|---|---:|---|---:|---:|---:|---:|---:|\n";
  for (const auto& r : rows)
    md << "| " << (r.caveats.empty() ? "" : "⚠ ") << r.name << " | " << r.device << " | " << r.batch << " | " << r.precision << " | "
       << fixed(r.epoch_seconds, 2, " s") << " | " << fixed(r.images_per_second, 0) << " | "
       << fixed(100 * r.test_accuracy, 2, " %") << " | " << fixed(r.time_to_target_s, 2, " s")
       << " | " << fixed(r.speedup, 2, "×") << " |\n";
  if (!rows.empty() && options.baseline >= 0 && options.baseline < int(rows.size()))
    md << "\nSpeedup is throughput (images/s) relative to the baseline, " << rows[options.baseline].name
       << ". Time to target is the wall time at the first test evaluation that reached it.\n";
  for (const auto& r : rows)
    if (!r.caveats.empty()) {
      md << "\n⚠ marks runs whose times are not theirs alone; the reasons are under Runs.\n";
      break;
    }
  md << "\n## Runs\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunData& run = *runs[i];
    md << "\n### " << rows[i].name << "\n\n";
    md << "- status: " << rows[i].status;  // "diverged" for a finished run that diverged
    if (!rows[i].note.empty()) md << " (" << rows[i].note << ")";
    for (const std::string& caveat : rows[i].caveats) md << "\n- **caveat:** " << caveat;
    md << "\n- folder: `" << run.dir.string() << "`\n";
    md << "- created: " << run.info.value("created", "?") << "\n";
    if (run.info.contains("model")) md << "- model: `" << run.info["model"].dump() << "`\n";
    if (run.info.contains("config")) md << "- training: `" << run.info["config"].dump() << "`\n";
    if (run.info.contains("versions")) md << "- versions: `" << run.info["versions"].dump() << "`\n";
    md << "- steps recorded: " << run.steps.size() << ", evaluations: " << run.evals.size()
       << ", device samples: " << run.samples.size() << "\n";
  }
  return md.str();
}

}  // namespace

bool export_chart(ChartKind kind, const std::vector<const RunData*>& runs,
                  const std::vector<QColor>& colors, const ChartOptions& options,
                  const QString& path, ExportFormat format, QString* error, int width, int height) {
  if (!may_write(path, error)) return false;
  const Chart chart = build_chart(kind, runs, options);
  if (format == ExportFormat::Csv) {
    std::ostringstream text;
    write_chart_csv(chart, text);
    return write_text(path, text.str(), error);
  }
  std::vector<QColor> palette = colors;
  for (size_t i = palette.size(); i < runs.size(); ++i) palette.push_back(run_color(int(i)));
  QCustomPlot plot;
  plot.resize(width, height);
  draw_chart(plot, chart, palette, PlotTheme{});
  plot.replot(QCustomPlot::rpImmediateRefresh);
  return save_plot(plot, path, format, width, height, error);
}

bool write_lab_report(const QString& dir, const std::vector<const RunData*>& runs,
                      const std::vector<QColor>& colors, const ChartOptions& options,
                      QString* error, QStringList* written) {
  if (runs.empty()) {
    if (error) *error = QObject::tr("tick at least one run to report on");
    return false;
  }
  if (!QDir().mkpath(dir)) {
    if (error) *error = dir + QObject::tr(": the folder could not be created");
    return false;
  }
  const QDir folder(dir);
  auto note = [&](const QString& name) {
    if (written) *written << folder.filePath(name);
  };
  for (ChartKind kind : all_chart_kinds()) {
    const QString base = chart_kind_name(kind);
    for (ExportFormat format : {ExportFormat::Png, ExportFormat::Svg, ExportFormat::Pdf, ExportFormat::Csv}) {
      const QString name = base + "." + export_format_name(format);
      if (!export_chart(kind, runs, colors, options, folder.filePath(name), format, error))
        return false;
      note(name);
    }
  }
  for (const char* name : {"comparison.csv", "summary.md"})
    if (!may_write(folder.filePath(name), error)) return false;
  std::ostringstream table;
  write_comparison_csv(compare_runs(runs, options.baseline, options.target_accuracy), table);
  if (!write_text(folder.filePath("comparison.csv"), table.str(), error)) return false;
  note("comparison.csv");
  if (!write_text(folder.filePath("summary.md"), summary_markdown(runs, options), error)) return false;
  note("summary.md");
  return true;
}

}  // namespace gpulab::ui
