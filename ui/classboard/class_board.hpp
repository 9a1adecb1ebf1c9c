// ui/classboard: the window's class board (File → Open class folder…): a folder `gpulab-cli lab
// grade` wrote, shown as its class.csv table and its chart, reloaded whenever the folder changes
// (a grade run again as hand-ins arrive), and one learner's hand-in opened read-only.
#pragma once

#include <QFileSystemWatcher>
#include <QLabel>
#include <QTableWidget>
#include <QTextBrowser>
#include <QWidget>
#include <filesystem>

namespace gpulab::ui {

class ClassBoard : public QWidget {
  Q_OBJECT
 public:
  // A window of its own over `folder` (the --out of lab grade), read at once.
  ClassBoard(const std::filesystem::path& folder, QWidget* parent = nullptr);

  const std::filesystem::path& folder() const { return folder_; }
  QTableWidget* table() const { return table_; }
  QLabel* chart() const { return chart_; }
  QTextBrowser* hand_in_view() const { return hand_in_; }
  QString summary() const { return summary_->text(); }

  // Reads class.csv and the first class-*.png again; says so where there is none yet.
  void reload();
  // Shows the hand-in of the table's `row`: its README.md where the source is a folder, the row's
  // problems, and what cannot be shown (a zip); never writes into it.
  void open_hand_in(int row);

 private:
  void watch();

  std::filesystem::path folder_;
  QLabel* summary_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* chart_ = nullptr;
  QTextBrowser* hand_in_ = nullptr;
  QFileSystemWatcher watcher_;
};

}  // namespace gpulab::ui
