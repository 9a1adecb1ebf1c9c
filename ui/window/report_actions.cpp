// Export and lab report actions.
#include "ui/window/report_actions.hpp"

#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>

#include "ui/charts/chart_export.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/charts/replica_timeline.hpp"
#include "ui/compare/compare_view.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/widgets/status_widgets.hpp"
#include "ui/window/live_tab.hpp"

namespace gpulab::ui {

ReportActions::ReportActions(Parts parts, QWidget* window)
    : QObject(window), parts_(parts), window_(window) {
  connect(parts_.live, &LiveTab::export_requested, this, &ReportActions::export_chart);
  connect(parts_.live, &LiveTab::timeline_export_requested, this, [this](ExportFormat format) {
    ReplicaTimeline* timeline = parts_.live->timeline();
    export_dialog(
        "replica-timeline", format, [timeline, format](const QString& path, QString* error) {
          return timeline->export_to(path, format, error, kExportWidth, kExportHeight / 2);
        });
  });
  connect(parts_.compare, &CompareView::export_requested, this,
          [this](ChartView* view, int format) { export_chart(view, ExportFormat(format)); });
}

void ReportActions::export_chart(ChartView* view, ExportFormat format) {
  export_dialog(chart_file_stem(view->kind()), format,
                [view, format](const QString& path, QString* error) {
                  return view->export_to(path, format, error, kExportWidth, kExportHeight);
                });
}

void ReportActions::export_dialog(const QString& name, ExportFormat format,
                                  const std::function<bool(const QString&, QString*)>& save) {
  const QString ext = export_format_name(format);
  const QString suggested =
      QDir(export_dir_.isEmpty() ? QDir::homePath() : export_dir_).filePath(name + "." + ext);
  const QString path = QFileDialog::getSaveFileName(window_, tr("Export chart"), suggested,
                                                    tr("%1 files (*.%2)").arg(ext.toUpper(), ext));
  if (path.isEmpty()) return;
  export_dir_ = QFileInfo(path).absolutePath();
  QString error;
  if (save(path, &error))
    parts_.message->show_message(Banner::Kind::Info, tr("Saved %1").arg(path));
  else
    parts_.message->show_message(Banner::Kind::Error, error);
}

bool ReportActions::export_all(const QString& dir, QString* error) {
  if (!QDir().mkpath(dir)) {
    if (error) *error = dir + tr(": the folder could not be created");
    return false;
  }
  // The live charts, and Compare's speedup chart (its step-time chart is the live one's twin).
  std::vector<ChartView*> views = parts_.live->charts();
  parts_.compare->refresh(true);  // built when its tab is shown: it may never have been
  views.push_back(parts_.compare->speedup_chart());
  for (ChartView* view : views)
    for (ExportFormat format :
         {ExportFormat::Png, ExportFormat::Svg, ExportFormat::Pdf, ExportFormat::Csv}) {
      const QString path = QDir(dir).filePath(QString(chart_file_stem(view->kind())) + "." +
                                              export_format_name(format));
      if (!view->export_to(path, format, error, kExportWidth, kExportHeight)) return false;
    }
  // And the charts the runs may make besides: the scaling chart and the replica timeline, of the
  // runs shown (a learner's hand-in while one is open; the window's own store drew a hand-in's
  // charts beside the user's scaling chart).
  std::vector<const RunData*> runs;
  for (RunEntry* entry : parts_.compare->runs()) runs.push_back(&entry->data);
  return export_study_charts(dir, runs, error);
}

void ReportActions::lab_report() {
  const QString parent =
      QFileDialog::getExistingDirectory(window_, tr("Where to put the lab report folder"));
  if (parent.isEmpty()) return;
  const QString dir = QDir(parent).filePath(
      "gpulab-report-" + QDateTime::currentDateTime().toString("yyyy-MM-dd_HHmmss"));
  // What Compare shows: the ticked runs and the baseline, with the shared target.
  const std::vector<RunEntry*>& compared = parts_.compare->runs();
  std::vector<const RunData*> runs;
  std::vector<QColor> colors;
  ChartOptions options = parts_.live->options();
  options.target_accuracy = parts_.compare->target_accuracy();
  options.baseline = parts_.compare->baseline_index();
  for (RunEntry* entry : compared) {
    runs.push_back(&entry->data);
    colors.push_back(entry->color);
  }
  QString error;
  QStringList written;
  if (write_lab_report(dir, runs, colors, options, &error, &written))
    parts_.message->show_message(Banner::Kind::Info,
                                 tr("Lab report with %1 files in %2").arg(written.size()).arg(dir));
  else
    parts_.message->show_message(Banner::Kind::Error, tr("Lab report failed: %1").arg(error));
}

void ReportActions::add_actions(QMenu* file) {
  file->addAction(tr("&Export all charts…"), this, [this] {
    const QString dir =
        QFileDialog::getExistingDirectory(window_, tr("Export every chart into a folder"));
    if (dir.isEmpty()) return;
    QString error;
    if (export_all(dir, &error))
      parts_.message->show_message(Banner::Kind::Info, tr("Charts saved in %1").arg(dir));
    else
      parts_.message->show_message(Banner::Kind::Error, error);
  });
  file->addAction(tr("&Lab report…"), this, &ReportActions::lab_report);
}

}  // namespace gpulab::ui
