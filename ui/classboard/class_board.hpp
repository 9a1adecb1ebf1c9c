// ui/classboard: the window's class board (File → Open class folder…). A folder of hand-ins (as a
// course platform downloads them) is graded by the board itself, on a thread of its own, into its
// graded/ folder, and graded again whenever a hand-in arrives (the folder and its subfolders are
// watched); a folder `gpulab-cli lab grade` wrote is shown as it is and reread whenever it is
// written again. Either way: the class.csv table, the class chart, and one learner's hand-in
// opened read-only.
#pragma once

#include <QFileSystemWatcher>
#include <QLabel>
#include <QPixmap>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTimer>
#include <QWidget>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <thread>

namespace gpulab::ui {

class ClassBoard : public QWidget {
  Q_OBJECT
 public:
  // A window of its own over `folder`: the --out of lab grade (it holds class.csv), read at once;
  // else a class's hand-ins, graded at once into folder/graded (a temporary folder where that
  // cannot be written). Deleted when closed, with the zips it unpacked; a grade under way stops.
  ClassBoard(const std::filesystem::path& folder, QWidget* parent = nullptr);
  ~ClassBoard() override;

  // A learner's hand-in whose runs the board asks the window to show, read-only.
  struct HandInRuns {
    std::filesystem::path folder;  // the hand-in (a zip's unpacked in the board's own folder)
    QString learner, lab;
  };
  struct RunsOpened {
    int runs = 0;          // shown; 0: none, the window's runs stay as they were
    QStringList problems;  // one line each: no runs/, a run that could not be read
  };
  // How the window opens a hand-in's runs in Compare (MainWindow gives it).
  void set_runs_opener(std::function<RunsOpened(const HandInRuns&)> opener) {
    open_runs_ = std::move(opener);
  }

  const std::filesystem::path& folder() const { return folder_; }
  // Where class.csv is read from: folder() for a graded folder, the board's graded/ for a class.
  const std::filesystem::path& report_folder() const { return report_; }
  bool grades() const { return grades_; }  // folder() is a class's hand-ins, graded here
  bool grading() const { return worker_.joinable(); }
  QPushButton* grade_button() const { return regrade_; }
  QPushButton* lab_button() const { return lab_button_; }
  QTableWidget* table() const { return table_; }
  QLabel* chart() const { return chart_; }
  QTextBrowser* hand_in_view() const { return hand_in_; }
  QPushButton* compare_button() const { return compare_; }
  QString summary() const { return summary_->text(); }
  QString runs_line() const { return runs_line_->text(); }

  // Reads class.csv and the first class-*.png again; says so where there is none yet.
  void reload();
  // Grades the class's hand-ins again (on the board's thread; one more after the one under way).
  void grade();
  // Checks every hand-in against this copy of the lab (lab grade's --lab) from now on, and grades
  // again; false, with the summary saying why, when the file is no lab.
  bool set_lab_file(const std::filesystem::path& lab);
  // Shows the hand-in of the table's `row` (a zip unpacked into the board's folder): the row's
  // problems, answers.json's answers and its README.md; never writes into it.
  void open_hand_in(int row);
  // The row's runs in the window's Compare tab, read-only (double-click a row, or Open in
  // Compare); the line under the table says what was opened or why nothing was.
  void open_in_compare(int row);

 private:
  void watch();
  void watch_class();  // the class folder and its subfolders (a course platform's one per learner)
  void graded(const std::shared_ptr<struct ClassGradeDone>& done);
  void fit_chart();  // the class chart scaled to the room it has
  void resizeEvent(QResizeEvent* event) override;
  QString text_at(int row, const char* column) const;
  // The row's hand-in folder to read: its source folder, or its .zip unpacked once (through the
  // engine's open_hand_in) into the board's temporary folder; "" with `problem` set.
  std::filesystem::path hand_in_folder(int row, QString* problem);

  std::filesystem::path folder_, report_;
  bool grades_ = false;
  std::unique_ptr<QTemporaryDir> report_temporary_;  // where folder/graded cannot be written
  std::filesystem::path
      lab_file_;  // lab grade's --lab: a file or a built-in lab's name; empty: any built-in lab
  QString report_note_;                              // where the grades went, and why there
  QLabel* summary_ = nullptr;
  QPushButton* regrade_ = nullptr;
  QPushButton* lab_button_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* chart_ = nullptr;
  QPixmap chart_picture_;  // as lab grade drew it
  QTextBrowser* hand_in_ = nullptr;
  QPushButton* compare_ = nullptr;
  QLabel* runs_line_ = nullptr;
  QFileSystemWatcher watcher_;
  QFileSystemWatcher class_watcher_;
  QTimer settle_;  // a hand-in arrives as many files: graded once they have stopped coming
  std::thread worker_;
  std::atomic<bool> cancel_{false};
  bool pending_ = false;  // the folder changed while a grade was under way
  std::function<RunsOpened(const HandInRuns&)> open_runs_;
  std::unique_ptr<QTemporaryDir> unpacked_;              // made at the first zip opened
  std::map<std::string, std::filesystem::path> opened_;  // a zip (and its time) -> its hand-in
};

}  // namespace gpulab::ui
