// One quiz question of a lab: its choices as radio buttons (True and False for a true/false
// question), and once one is picked, whether it is right and the lab's reason for it.
#pragma once

#include <QFrame>
#include <vector>

#include "engine/labs/lab.hpp"

class QButtonGroup;
class QLabel;
class QRadioButton;

namespace gpulab::ui {

class QuizQuestionView : public QFrame {
  Q_OBJECT

 public:
  QuizQuestionView(const QuizQuestion& question, int number, QWidget* parent = nullptr);

  // Shows an answer given earlier (-1: none) without signalling.
  void set_answer(int choice);
  // Whether it takes another answer: a lab's quiz-attempts used up closes it, its answer and
  // reason still shown.
  void set_open(bool open);
  int answer() const { return answer_; }
  QRadioButton* choice_button(int choice) const { return buttons_.at(size_t(choice)); }
  bool eventFilter(QObject* watched, QEvent* event) override;
  QLabel* choice_label(int choice) const { return labels_.at(size_t(choice)); }
  QString feedback() const;  // plain text; empty until answered

 signals:
  void answered(int choice);

 private:
  void show_feedback();
  QString feedback_text(int choice) const;  // the verdict and the lab's reason for `choice`

  QuizQuestion question_;
  QButtonGroup* group_;
  std::vector<QRadioButton*> buttons_;
  std::vector<QLabel*> labels_;  // each choice's text, wrapped: a click on it picks the choice
  std::vector<QLabel*> feedbacks_;  // each choice's, the answer's shown
  int answer_ = -1;
};

}  // namespace gpulab::ui
