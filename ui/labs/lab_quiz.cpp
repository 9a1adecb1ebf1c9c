// A quiz question: radio buttons, graded by the lab engine with its feedback.
#include "ui/labs/lab_quiz.hpp"

#include <QButtonGroup>
#include <QLabel>
#include <QRadioButton>
#include <QTextDocumentFragment>
#include <QVBoxLayout>

namespace gpulab::ui {

QuizQuestionView::QuizQuestionView(const QuizQuestion& question, int number, QWidget* parent)
    : QFrame(parent), question_(question), group_(new QButtonGroup(this)) {
  setObjectName("quiz-question");
  setFrameShape(QFrame::StyledPanel);
  auto* layout = new QVBoxLayout(this);
  auto* text = new QLabel(tr("<b>Question %1%2.</b> %3")
                              .arg(number)
                              .arg(question.true_false ? tr(" (true or false)") : QString())
                              .arg(QString::fromStdString(question.question).toHtmlEscaped()),
                          this);
  text->setWordWrap(true);
  text->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(text);
  for (size_t i = 0; i < question.choices.size(); ++i) {
    auto* button = new QRadioButton(QString::fromStdString(question.choices[i].text), this);
    button->setObjectName(QString("choice-%1").arg(i + 1));
    group_->addButton(button, int(i));
    buttons_.push_back(button);
    layout->addWidget(button);
  }
  feedback_ = new QLabel(this);
  feedback_->setObjectName("quiz-feedback");
  feedback_->setWordWrap(true);
  feedback_->setTextFormat(Qt::RichText);
  feedback_->hide();
  layout->addWidget(feedback_);
  connect(group_, &QButtonGroup::idClicked, this, [this](int choice) {
    if (choice == answer_) return;
    answer_ = choice;
    show_feedback();
    emit answered(choice);
  });
}

void QuizQuestionView::set_answer(int choice) {
  answer_ = choice >= 0 && choice < int(buttons_.size()) ? choice : -1;
  if (answer_ < 0) {
    // A group with exclusive buttons cannot be cleared button by button.
    group_->setExclusive(false);
    for (QRadioButton* b : buttons_) b->setChecked(false);
    group_->setExclusive(true);
  } else {
    buttons_[size_t(answer_)]->setChecked(true);
  }
  show_feedback();
}

QString QuizQuestionView::feedback() const {
  return feedback_->isHidden() ? QString()
                               : QTextDocumentFragment::fromHtml(feedback_->text()).toPlainText();
}

void QuizQuestionView::show_feedback() {
  if (answer_ < 0) {
    feedback_->hide();
    return;
  }
  const QuizFeedback graded = grade(question_, answer_);
  // Coloured and worded both: the verdict must not rest on colour alone.
  feedback_->setText(QString("<span style='color:%1'><b>%2</b></span> %3")
                         .arg(graded.correct ? "#1b7f2a" : "#b02a20",
                              graded.correct ? tr("Right.") : tr("Not quite."),
                              QString::fromStdString(graded.why).toHtmlEscaped()));
  feedback_->show();
}

}  // namespace gpulab::ui
