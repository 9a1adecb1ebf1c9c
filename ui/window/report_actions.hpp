// Export and lab report: a chart saved where the user says, every chart into a folder, and the lab
// report of what Compare shows.
#pragma once

#include <QObject>
#include <QString>
#include <functional>

#include "ui/charts/chart_render.hpp"

class QMenu;
class QWidget;

namespace gpulab::ui {

class Banner;
class ChartView;
class CompareView;
class LiveTab;
class RunStore;

class ReportActions : public QObject {
  Q_OBJECT

 public:
  struct Parts {
    LiveTab* live;
    CompareView* compare;
    RunStore* store;
    Banner* message;
  };
  // Answers the live charts', the replica timeline's and Compare's Export menus.
  ReportActions(Parts parts, QWidget* window);

  // Asks where to save the chart and saves it there.
  void export_chart(ChartView* view, ExportFormat format);
  // Every live chart and Compare's speedup chart into `dir` as PNG, SVG, PDF and CSV, and the
  // charts the ticked runs make besides (the scaling chart, the replica timeline).
  bool export_all(const QString& dir, QString* error);
  void lab_report();  // asks for the folder
  // Export all charts… and Lab report… in the File menu.
  void add_actions(QMenu* file);

 private:
  // Asks where to save a chart (named `name` by default) and saves it there with `save`.
  void export_dialog(const QString& name, ExportFormat format,
                     const std::function<bool(const QString&, QString*)>& save);

  Parts parts_;
  QWidget* window_;
  QString export_dir_;  // where the last chart went: the next is offered there
};

}  // namespace gpulab::ui
