// The written answers' boxes: one per question, each change said at once so nothing typed is
// lost when the window closes.
#include "ui/labs/lab_written.hpp"

#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalBlocker>
#include <QVBoxLayout>

namespace gpulab::ui {

WrittenAnswersView::WrittenAnswersView(const std::vector<std::string>& questions, QWidget* parent)
    : QFrame(parent), questions_(questions) {
  setObjectName("lab-written");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 8, 0, 0);
  layout->addWidget(new QLabel(tr("<b>Your answers to the questions</b> (kept as you type, and "
                                  "handed in)"),
                               this));
  for (size_t i = 0; i < questions_.size(); ++i) {
    auto* label =
        new QLabel(QString("%1. %2").arg(i + 1).arg(QString::fromStdString(questions_[i])), this);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText);
    auto* editor = new QPlainTextEdit(this);
    editor->setObjectName(QString("lab-written-%1").arg(i + 1));
    editor->setPlaceholderText(tr("Your answer"));
    editor->setTabChangesFocus(true);
    editor->setFixedHeight(editor->fontMetrics().lineSpacing() * 4 + 12);
    const QString question = QString::fromStdString(questions_[i]);
    connect(editor, &QPlainTextEdit::textChanged, this,
            [this, editor, question] { emit changed(question, editor->toPlainText()); });
    editors_.push_back(editor);
    layout->addWidget(label);
    layout->addWidget(editor);
  }
}

void WrittenAnswersView::set_answers(const std::map<std::string, std::string>& answers) {
  for (size_t i = 0; i < questions_.size(); ++i) {
    const auto found = answers.find(questions_[i]);
    const QString text = found == answers.end() ? QString() : QString::fromStdString(found->second);
    if (editors_[i]->toPlainText() == text) continue;
    const QSignalBlocker quiet(editors_[i]);
    editors_[i]->setPlainText(text);
  }
}

}  // namespace gpulab::ui
