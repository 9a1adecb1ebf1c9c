// Exporting charts and lab reports.
#include "ui/charts/chart_export.hpp"

#include <qcustomplot.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include <QDateTime>
#include <QDir>
#include <cmath>
#include <sstream>

#include "engine/analysis/chart_csv.hpp"
#include "engine/analysis/run_comparison.hpp"
#include "engine/records/output_paths.hpp"
#include "engine/records/run_names.hpp"
#include "engine/records/run_record.hpp"

#include "ui/charts/replica_timeline.hpp"
#include "ui/charts/scaling_chart.hpp"

namespace gpulab::ui {
namespace {

std::string fixed(double value, int decimals, const char* suffix = "") {
  if (!std::isfinite(value)) return "–";
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(decimals);
  out << value << suffix;
  return out.str();
}

// A setting as a person typed it: a float that went through the record as 0.0010000000474974513
// is 0.001 again (7 significant digits: what a float holds).
std::string setting_text(const nlohmann::json& value) {
  if (value.is_number_float()) {
    char text[32];
    std::snprintf(text, sizeof text, "%.7g", value.get<double>());
    return text;
  }
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {
    std::string text;
    for (const auto& item : value) text += (text.empty() ? "" : ", ") + setting_text(item);
    return text;
  }
  return value.dump();
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
    md << "| " << (r.flags.empty() ? "" : "⚠ ") << r.name << " | " << r.device << " | " << r.batch
       << " | " << r.precision << " | " << epoch_time_text(r) << " | "
       << fixed(r.images_per_second, 0) << " | " << fixed(100 * r.test_accuracy, 2, " %") << " | "
       << fixed(r.time_to_target_s, 2, " s") << " | " << fixed(r.speedup, 2, "×") << " |\n";
  if (!rows.empty() && options.baseline >= 0 && options.baseline < int(rows.size()))
    md << "\nSpeedup is throughput (images/s) relative to the baseline, "
       << rows[options.baseline].name
       << ". Time to target is the training seconds up to the first test evaluation at or above "
          "the target, with the evaluations themselves and pauses left out. Epoch time is the "
          "mean of the full epochs; ≈ marks a run with none, its mean step time times an "
          "epoch's steps.\n";
  for (const auto& r : rows)
    if (!r.flags.empty()) {
      md << "\n⚠ marks runs whose figures are not theirs alone, were cut short or disagree with "
            "each other; the reasons "
            "are under Runs.\n";
      break;
    }
  md << "\n## Runs\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunData& run = *runs[i];
    md << "\n### " << rows[i].name << "\n\n";
    md << "- status: " << rows[i].status;  // "diverged" for a finished run that diverged
    if (!rows[i].note.empty()) md << " (" << rows[i].note << ")";
    for (const std::string& flag : rows[i].flags) md << "\n- **⚠ caveat:** " << flag;
    md << "\n- folder: `" << run.dir.string() << "`\n";
    md << "- created: " << run.info.value("created", "?") << "\n";
    if (run.info.contains("versions")) md << "- versions: `" << run.info["versions"].dump() << "`\n";
    md << "- steps recorded: " << run.steps.size() << ", evaluations: " << run.evals.size()
       << ", device samples: " << run.samples.size() << "\n";
    if (!rows[i].matmul_note.empty()) md << "- compute: " << rows[i].matmul_note << "\n";
    if (run.info.contains("config") && run.info["config"].is_object()) {
      md << "\n| setting | value |\n|---|---|\n";
      for (const auto& [key, value] : run.info["config"].items())
        md << "| " << key << " | " << setting_text(value) << " |\n";
    }
    if (run.info.contains("model") && run.info["model"].is_object()) {
      const auto& model = run.info["model"];
      md << "\nModel " << setting_text(model.value("name", nlohmann::json("custom")));
      if (model.contains("layers") && model["layers"].is_array()) {
        md << ":\n\n| layer | settings |\n|---|---|\n";
        for (const auto& layer : model["layers"]) {
          std::string settings;
          if (layer.is_object())
            for (const auto& [key, value] : layer.items())
              if (key != "type")
                settings += (settings.empty() ? "" : ", ") + key + " " + setting_text(value);
          md << "| " << setting_text(layer.value("type", nlohmann::json("?"))) << " | " << settings
             << " |\n";
        }
      } else {
        md << "\n";
      }
    }
  }
  return md.str();
}

}  // namespace

bool export_study_charts(const QString& dir, const std::vector<const RunData*>& runs,
                         QString* error, QStringList* written) {
  const QDir folder(dir);
  const auto names = display_run_names(runs);
  const std::vector<ExportFormat> formats = {ExportFormat::Png, ExportFormat::Svg,
                                             ExportFormat::Pdf, ExportFormat::Csv};
  ScalingChart scaling;
  scaling.resize(kExportWidth, kExportHeight);
  scaling.set_runs(runs, names);
  if (scaling.study())
    for (ExportFormat format : formats) {
      const QString name = "scaling." + export_format_name(format);
      if (!scaling.export_to(folder.filePath(name), format, error, kExportWidth, kExportHeight))
        return false;
      if (written) *written << folder.filePath(name);
    }
  ReplicaTimeline timeline;
  timeline.resize(kExportWidth, kExportHeight / 2);
  std::vector<QString> labels;
  for (const std::string& name : names) labels.push_back(QString::fromStdString(name));
  timeline.set_runs(runs, labels);
  timeline.refresh();
  if (timeline.run())
    for (ExportFormat format : {ExportFormat::Png, ExportFormat::Svg, ExportFormat::Pdf}) {
      const QString name = "replica-timeline." + export_format_name(format);
      if (!timeline.export_to(folder.filePath(name), format, error, kExportWidth,
                              kExportHeight / 2))
        return false;
      if (written) *written << folder.filePath(name);
    }
  return true;
}

bool export_chart(ChartKind kind, const std::vector<const RunData*>& runs,
                  const std::vector<QColor>& colors, const ChartOptions& options,
                  const QString& path, ExportFormat format, QString* error, int width, int height) {
  if (!may_write(path, error)) return false;
  const Chart chart = build_chart(kind, runs, options);
  if (format == ExportFormat::Csv) {
    std::ostringstream text;
    write_chart_csv(chart, text);
    return save_text(path, text.str(), error);
  }
  std::vector<QColor> palette = colors;
  for (size_t i = palette.size(); i < runs.size(); ++i) palette.push_back(run_color(int(i)));
  return save_chart(chart, palette, path, format, width, height, error);
}

namespace {

// A logarithmic axis just beyond the positive values in [lo, hi] (a log axis has no zero), its
// ticks at the powers of `base`.
void set_log_axis(QCPAxis* axis, double base, double lo, double hi) {
  QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
  ticker->setLogBase(base);
  axis->setTicker(ticker);
  axis->setScaleType(QCPAxis::stLogarithmic);
  if (lo > 0 && hi >= lo) axis->setRange(lo / 1.4, hi * 1.4);
}

}  // namespace

bool export_built_chart(const Chart& chart, const QString& path, ExportFormat format,
                        QString* error, int width, int height) {
  if (format == ExportFormat::Csv) {
    if (error)
      *error = path + ": this chart is drawn, not tabulated; its results table is its data";
    return false;
  }
  if (!may_write(path, error)) return false;
  std::vector<QColor> palette;
  for (size_t i = 0; i < chart.runs.size(); ++i) palette.push_back(run_color(int(i)));
  QCustomPlot plot;
  plot.resize(width, height);
  DrawnChart drawn = draw_chart(plot, chart, palette, PlotTheme{});
  double x_lo = 0, x_hi = 0;
  for (size_t i = 0; i < drawn.rects.size(); ++i) {
    const Panel& panel = chart.panels[size_t(drawn.rect_panel[i])];
    double y_lo = 0, y_hi = 0;
    for (const LineSeries& line : panel.lines)
      for (size_t k = 0; k < line.points.size(); ++k) {
        const double x = line.points.x[k], y = line.points.y[k];
        if (x > 0) x_lo = x_lo > 0 ? std::min(x_lo, x) : x, x_hi = std::max(x_hi, x);
        if (y > 0) y_lo = y_lo > 0 ? std::min(y_lo, y) : y, y_hi = std::max(y_hi, y);
      }
    if (panel.log_y) set_log_axis(drawn.rects[i]->axis(QCPAxis::atLeft), 10, y_lo, y_hi);
  }
  if (chart.log_x)
    for (QCPAxisRect* rect : drawn.rects)
      set_log_axis(rect->axis(QCPAxis::atBottom), 2, x_lo, x_hi);
  for (const DrawnLine& line : drawn.lines) {
    const std::string& name =
        chart.runs[size_t(chart.panels[size_t(line.panel)].lines[size_t(line.line)].run)];
    QPen pen = line.raw->pen();
    if (name.size() > 12 && name.compare(name.size() - 12, 12, " with copies") == 0)
      pen.setStyle(Qt::DashLine);
    line.raw->setPen(pen);
    line.raw->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDisc, pen.color(), pen.color(), 7));
  }
  fit_text(plot, drawn);
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
    const QString base = chart_file_stem(kind);
    for (ExportFormat format : {ExportFormat::Png, ExportFormat::Svg, ExportFormat::Pdf, ExportFormat::Csv}) {
      const QString name = base + "." + export_format_name(format);
      if (!export_chart(kind, runs, colors, options, folder.filePath(name), format, error))
        return false;
      note(name);
    }
  }
  if (!export_study_charts(dir, runs, error, written)) return false;
  for (const char* name : {"comparison.csv", "summary.md"})
    if (!may_write(folder.filePath(name), error)) return false;
  std::ostringstream table;
  write_comparison_csv(compare_runs(runs, options.baseline, options.target_accuracy), table);
  if (!save_text(folder.filePath("comparison.csv"), table.str(), error)) return false;
  note("comparison.csv");
  if (!save_text(folder.filePath("summary.md"), summary_markdown(runs, options), error))
    return false;
  note("summary.md");
  return true;
}

}  // namespace gpulab::ui
