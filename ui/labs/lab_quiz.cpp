// A quiz question: radio buttons, graded by the lab engine with its feedback.
#include "ui/labs/lab_quiz.hpp"

#include <QButtonGroup>
#include <QEvent>
#include <QGridLayout>
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
  // Every answer's feedback is made at once, in one cell, one shown at a time and the others
  // keeping their room: the cell is as high as the highest from the start, so that the question
  // under it stays where the pointer is when feedback appears (it moved down mid-click, and the
  // click chose the answer under it).
  auto* feedback = new QWidget(this);
  auto* cell = new QGridLayout(feedback);
  cell->setContentsMargins(0, 0, 0, 0);
  for (size_t i = 0; i < question.choices.size(); ++i) {
    auto* label = new QLabel(feedback_text(int(i)), feedback);
    label->setObjectName("quiz-feedback");
    label->setWordWrap(true);
    label->setTextFormat(Qt::RichText);
    QSizePolicy policy = label->sizePolicy();
    policy.setRetainSizeWhenHidden(true);
    label->setSizePolicy(policy);
    label->hide();
    cell->addWidget(label, 0, 0, Qt::AlignTop);
    feedbacks_.push_back(label);
  }
  layout->addWidget(feedback);
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

void QuizQuestionView::set_open(bool open) {
  for (QRadioButton* b : buttons_) b->setEnabled(open);
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
  return answer_ < 0
             ? QString()
             : QTextDocumentFragment::fromHtml(feedbacks_[size_t(answer_)]->text()).toPlainText();
}

QString QuizQuestionView::feedback_text(int choice) const {
  const QuizFeedback graded = grade(question_, choice);
  // Coloured and worded both: the verdict must not rest on colour alone.
  return QString("<span style='color:%1'><b>%2</b></span> %3")
      .arg(graded.correct ? "#1b7f2a" : "#b02a20", graded.correct ? tr("Right.") : tr("Not quite."),
           QString::fromStdString(graded.why).toHtmlEscaped());
}

void QuizQuestionView::show_feedback() {
  for (size_t i = 0; i < feedbacks_.size(); ++i) feedbacks_[i]->setVisible(int(i) == answer_);
}

}  // namespace gpulab::ui
