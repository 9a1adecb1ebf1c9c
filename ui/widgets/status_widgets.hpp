// Small widgets the window reports with: a message bar (information, warning, error, with
// optional buttons and a progress bar) and one progress row per training run.
#pragma once

#include <QFrame>
#include <QLabel>
#include <QWidget>
#include <map>
#include <vector>

#include "engine/analysis/run_figures.hpp"
#include "engine/backend/metrics.hpp"
#include "engine/training/trainer.hpp"

class QHBoxLayout;
class QLabel;
class QProgressBar;
class QPushButton;
class QVBoxLayout;

namespace gpulab::ui {

// A line of text that stays one line whatever its width, cut with "…" where it is narrow (give the
// whole text as its tooltip): a long run name or presenter mode's large type never wraps it into
// a second line that pushes what is below it down, and never widens the window.
class OneLineLabel : public QLabel {
 public:
  using QLabel::QLabel;
  QSize minimumSizeHint() const override;
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
};

class Banner : public QFrame {
  Q_OBJECT

 public:
  enum class Kind { Info, Warning, Error };
  explicit Banner(QWidget* parent = nullptr);

  void show_message(Kind kind, const QString& text);  // removes any buttons and other lines
  // Adds a line under the ones shown (the same text only once; the last kMostLines stay), so
  // several messages in a row all stay readable; the bar takes the most serious kind.
  void add_message(Kind kind, const QString& text);
  // The line kept under `key` (one per key, replaced in place); an empty text removes it.
  void set_line(const QString& key, Kind kind, const QString& text);
  QPushButton* add_button(const QString& text);
  QProgressBar* progress();  // shown on first use
  QString text() const;
  void dismiss();

 signals:
  void closed();  // by its ✕

 private:
  static constexpr int kMostLines = 4;
  struct Line {
    QString key, text;
    Kind kind;
  };
  void show_lines();
  std::vector<Line> lines_;
  QString text_;  // as given; the label's copy may have places to wrap at added
  QLabel* label_;
  QHBoxLayout* buttons_;
  QProgressBar* progress_ = nullptr;
};

class ProgressList : public QWidget {
  Q_OBJECT

 public:
  explicit ProgressList(QWidget* parent = nullptr);

  void add(int id, const QString& name);
  void set_plan(int id, const StepPlan& plan);
  // The row of a live run: its last step, and images/s and ETA from live_figures (a dash for
  // what is not measured yet), the figures the presenter's headline shows.
  void update(int id, const StepMetrics& last, const LiveFigures& figures, bool paused);
  void finish(int id, const QString& result);  // the row keeps the result until the next start
  void clear_finished();
  QString text(int id) const;  // what the row says, for tests and screen readers
  // The width a long run's bar text needs ("epoch 100/100 · step 999999/999999 · ETA 10:00:00"):
  // what a place beside other controls should offer. The rows themselves ask for little (the
  // labels wrap, the bars' minimum is kBarMinimum), so their text never widens the window.
  int text_width() const;
  static constexpr int kBarMinimum = 60;

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void reserve_row();  // the list's minimum: one row's height, in its font
  struct Row {
    QWidget* line;  // holds the label and the bar
    QLabel* label;
    QProgressBar* bar;
    StepPlan plan;
    bool finished = false;
  };
  QVBoxLayout* layout_;
  QLabel* idle_;  // said while no run has a row
  std::map<int, Row> rows_;
};

// "1:05", "12:03:07"
QString duration_text(double seconds);

}  // namespace gpulab::ui
