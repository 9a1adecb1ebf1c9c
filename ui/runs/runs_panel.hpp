// The list of runs: tick runs to overlay them in the plots, pick the baseline, rename, delete
// (after asking), open a run's folder, import runs from elsewhere, reuse a run's setup.
#pragma once

#include <QWidget>

class QMenu;
class QTreeWidget;
class QTreeWidgetItem;

namespace gpulab::ui {

class RunStore;
struct RunEntry;

class RunsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit RunsPanel(RunStore* store, QWidget* parent = nullptr);

  // Rebuilds the rows from the store (cheap: tens to hundreds of runs).
  void rebuild();
  // Updates one run's row (status, accuracy, images/s) in place.
  void update_run(int id);
  int baseline() const { return baseline_; }
  int selected_run() const;  // the run of the current row, 0 when none
  void set_baseline(int id);
  QTreeWidget* tree() { return tree_; }

 signals:
  void baseline_changed(int id);
  void use_setup_requested(int id);  // load this run's configuration into the experiment panel
  void message(const QString& text);

 public slots:
  void import_runs();

 private:
  void fill_row(QTreeWidgetItem* item, const RunEntry& entry);
  // Widths for the columns: each detail column its text's, and the run's name at least room
  // for about 14 characters; where that does not fit, the device column gives way (its text
  // elided, whole in its tooltip), then the epoch and batch columns are hidden. Called when rows
  // change and when the list is resized.
  void fit_columns();
  void resizeEvent(QResizeEvent* event) override;
  void show_menu(const QPoint& pos);
  void rename_run(int id);
  void delete_run(int id);

  RunStore* store_;
  QTreeWidget* tree_;
  int baseline_ = 0;
  bool filling_ = false;
};

// "Untick all" and "Show only the latest N", for the runs list's Show button and the window's
// "Runs shown" menu.
void add_show_actions(QMenu* menu, RunStore* store);
// The window's "Runs shown" menu: every run with its colour, ticked as in the list, then the
// show actions.
void fill_runs_menu(QMenu* menu, RunStore* store);

}  // namespace gpulab::ui
