// ui/classboard: the window's class board (File → Open class folder…): a folder `gpulab-cli lab
// grade` wrote, shown as its class.csv table and its chart, reloaded whenever the folder changes
// (a grade run again as hand-ins arrive), and one learner's hand-in opened read-only.
#pragma once

#include <QFileSystemWatcher>
#include <QLabel>
#include <QPixmap>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QWidget>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

namespace gpulab::ui {

class ClassBoard : public QWidget {
  Q_OBJECT
 public:
  // A window of its own over `folder` (the --out of lab grade), read at once. Deleted when
  // closed, with the zips it unpacked.
  ClassBoard(const std::filesystem::path& folder, QWidget* parent = nullptr);

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
  QTableWidget* table() const { return table_; }
  QLabel* chart() const { return chart_; }
  QTextBrowser* hand_in_view() const { return hand_in_; }
  QPushButton* compare_button() const { return compare_; }
  QString summary() const { return summary_->text(); }
  QString runs_line() const { return runs_line_->text(); }

  // Reads class.csv and the first class-*.png again; says so where there is none yet.
  void reload();
  // Shows the hand-in of the table's `row` (a zip unpacked into the board's folder): the row's
  // problems, answers.json's answers and its README.md; never writes into it.
  void open_hand_in(int row);
  // The row's runs in the window's Compare tab, read-only (double-click a row, or Open in
  // Compare); the line under the table says what was opened or why nothing was.
  void open_in_compare(int row);

 private:
  void watch();
  void fit_chart();  // the class chart scaled to the room it has
  void resizeEvent(QResizeEvent* event) override;
  QString text_at(int row, const char* column) const;
  // The row's hand-in folder to read: its source folder, or its .zip unpacked once (through the
  // engine's open_hand_in) into the board's temporary folder; "" with `problem` set.
  std::filesystem::path hand_in_folder(int row, QString* problem);

  std::filesystem::path folder_;
  QLabel* summary_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* chart_ = nullptr;
  QPixmap chart_picture_;  // as lab grade drew it
  QTextBrowser* hand_in_ = nullptr;
  QPushButton* compare_ = nullptr;
  QLabel* runs_line_ = nullptr;
  QFileSystemWatcher watcher_;
  std::function<RunsOpened(const HandInRuns&)> open_runs_;
  std::unique_ptr<QTemporaryDir> unpacked_;              // made at the first zip opened
  std::map<std::string, std::filesystem::path> opened_;  // a zip (and its time) -> its hand-in
};

}  // namespace gpulab::ui
