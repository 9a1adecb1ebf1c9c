// One lab as a learner reads it: its Markdown text, code, a card per experiment with its Run
// button and what became of it, the results tables, the charts and the quiz with its score, in
// the order the lab file gives them.
#pragma once

#include <QColor>
#include <QScrollArea>
#include <map>
#include <string>
#include <vector>

#include "engine/labs/lab.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/records/run_record.hpp"

class QLabel;
class QPushButton;
class QTableWidget;

namespace gpulab::ui {

class ChartView;
class QuizQuestionView;
class WrittenAnswersView;

// What the page shows of one experiment besides its results: why it cannot run here (a GPU this
// machine lacks), or what its run is doing.
struct ExperimentState {
  std::string missing;  // the hardware it needs and this machine lacks; "" when it can run
  std::string status;   // "not run yet", "running", "finished in 3.2 s", ...
  bool running = false;
  bool own_run = false;  // the learner has a run of it (from another machine, where it cannot run)
  // Where it cannot run: the reference run filling its row, "NVIDIA H200, 2026-11-20"; else "".
  std::string reference;
};

class LabPage : public QScrollArea {
  Q_OBJECT

 public:
  explicit LabPage(const Lab& lab, QWidget* parent = nullptr);

  const Lab& lab() const { return lab_; }
  void set_states(const std::vector<ExperimentState>& states, bool busy);
  // The results as they stand: the tables are filled by the lab engine (lab_results_table).
  void set_results(const std::vector<LabRunResult>& results);
  // The finished runs each chart draws, with their colours; the runs stay alive until the next
  // call.
  void set_chart_runs(size_t chart, std::vector<const RunData*> runs, std::vector<QColor> colors);
  void set_answers(const std::vector<int>& answers);  // per question, -1 for none
  // Per quiz question, whether it takes another answer (a lab's quiz-attempts used up: no).
  void set_quiz_open(const std::vector<bool>& open);
  void set_written(const std::map<std::string, std::string>& written);  // by question
  WrittenAnswersView* written_view() const { return written_; }         // null: the lab asks none

  QPushButton* run_button(const std::string& experiment) const;
  QPushButton* run_all_button() const { return run_all_; }
  QPushButton* hand_in_button() const { return hand_in_; }
  QPushButton* hand_in_zip_button() const { return hand_in_zip_; }
  const std::vector<LabRunResult>& results() const { return results_; }  // as last set
  std::vector<int> answers() const;                                      // per question, -1 none
  void set_hand_in_text(const QString& text);  // under the heading: where the hand-in went
  QTableWidget* table(size_t index) const { return tables_.at(index); }
  ChartView* chart(size_t index) const { return charts_.at(index); }
  QuizQuestionView* question(size_t index) const { return questions_.at(index); }
  QString score_text() const;                                    // as plain text
  QString experiment_text(const std::string& experiment) const;  // its status line, plain

 signals:
  void run_requested(const QString& experiment);  // empty: every experiment this machine can run
  void answered(int question, int choice);
  void written(const QString& question, const QString& text);
  void hand_in_requested(bool zip);  // zip: also pack the folder into LEARNER-LAB.zip beside it
  void live_requested();  // a running experiment's "watch it on the Live tab"

 private:
  QWidget* experiment_card(const LabExperiment& e);
  QWidget* code_block(const LabBlock& block);
  void update_score();
  void fit_table(QTableWidget* table);
  bool eventFilter(QObject* watched, QEvent* event) override;

  Lab lab_;
  std::map<std::string, QPushButton*> run_buttons_;
  std::map<std::string, QLabel*> status_labels_;
  QPushButton* run_all_ = nullptr;
  QPushButton* hand_in_ = nullptr;
  QPushButton* hand_in_zip_ = nullptr;
  QLabel* hand_in_text_ = nullptr;
  std::vector<LabRunResult> results_;
  std::vector<QTableWidget*> tables_;
  std::vector<ChartView*> charts_;
  std::vector<QuizQuestionView*> questions_;
  WrittenAnswersView* written_ = nullptr;
  QLabel* score_ = nullptr;
};

}  // namespace gpulab::ui
