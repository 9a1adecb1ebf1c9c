// The learner's written answers to a lab's "## Questions": a box per question at the end of the
// lab's page, kept in the labs' progress file and handed in with answers.json.
#pragma once

#include <QFrame>
#include <map>
#include <string>
#include <vector>

class QPlainTextEdit;

namespace gpulab::ui {

class WrittenAnswersView : public QFrame {
  Q_OBJECT

 public:
  WrittenAnswersView(const std::vector<std::string>& questions, QWidget* parent = nullptr);

  // Shows the answers kept (by question) without signalling; a box whose text is already the
  // kept one is left alone, so the learner's cursor stays where it is.
  void set_answers(const std::map<std::string, std::string>& answers);
  QPlainTextEdit* editor(size_t question) const { return editors_.at(question); }

 signals:
  void changed(const QString& question, const QString& text);

 private:
  std::vector<std::string> questions_;
  std::vector<QPlainTextEdit*> editors_;
};

}  // namespace gpulab::ui
