// A learner's hand-in in the window, opened from the class board: its runs/ read into a store of
// their own (read-only), listed in place of the user's runs and drawn in Compare and the charts,
// under a line naming the learner; Back to my runs returns to the user's runs in one click.
#pragma once

#include <QObject>
#include <QStringList>
#include <filesystem>
#include <memory>

class QStackedWidget;

namespace gpulab::ui {

class Banner;
class RunStore;
class RunsPanel;

class HandInView : public QObject {
  Q_OBJECT

 public:
  // `lists`: where the runs list sits, the user's list its first page; `line`: the bar that names
  // the hand-in shown (hidden while the user's runs are shown). Neither is owned.
  HandInView(QStackedWidget* lists, Banner* line, QObject* parent = nullptr);
  ~HandInView() override;

  // Shows the runs in `hand_in`/runs of `learner`'s hand-in of `lab`, every one ticked, and
  // returns how many; `problems` gets one line each (no runs/ folder, a run whose record cannot
  // be read: the others are shown). Where no run could be read (0), the runs shown stay.
  int open(const std::filesystem::path& hand_in, const QString& learner, const QString& lab,
           QStringList* problems);
  void close();                                     // back to the user's runs
  RunStore* store() const { return store_.get(); }  // null while the user's runs are shown
  RunsPanel* panel() const { return panel_; }
  // The line the bar shows: "Ada's hand-in (read-only): cnn-on-gpu, 2 runs".
  QString line_text() const;

 signals:
  void changed();  // opened, closed, or its runs ticked: the views show them again
  void baseline_changed(int id);

 private:
  QStackedWidget* lists_;
  Banner* line_;
  QString lab_;
  std::unique_ptr<RunStore> store_;
  RunsPanel* panel_ = nullptr;
};

}  // namespace gpulab::ui
