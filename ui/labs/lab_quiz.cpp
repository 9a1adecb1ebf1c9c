// A quiz question: radio buttons, graded by the lab engine with its feedback.
#include "ui/labs/lab_quiz.hpp"

#include <QButtonGroup>
#include <QEvent>
#include <QHBoxLayout>
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
  // Each choice a radio button and its text in a label beside it: a radio button's own text
  // never wraps, and a long choice would make the page wider than a 1024-pixel screen.
  for (size_t i = 0; i < question.choices.size(); ++i) {
    const QString choice = QString::fromStdString(question.choices[i].text);
    auto* button = new QRadioButton(this);
    button->setObjectName(QString("choice-%1").arg(i + 1));
    button->setAccessibleName(choice);
    auto* label = new QLabel(choice.toHtmlEscaped(), this);
    label->setWordWrap(true);
    label->setTextFormat(Qt::RichText);
    label->installEventFilter(this);
    auto* row = new QHBoxLayout;
    row->addWidget(button, 0, Qt::AlignTop);
    row->addWidget(label, 1);
    group_->addButton(button, int(i));
    buttons_.push_back(button);
    labels_.push_back(label);
    layout->addLayout(row);
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

bool QuizQuestionView::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::MouseButtonRelease)
    for (size_t i = 0; i < labels_.size(); ++i)
      if (watched == labels_[i]) buttons_[i]->click();
  return QFrame::eventFilter(watched, event);
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
