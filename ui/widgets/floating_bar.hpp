// A bar (a message) that floats over the bottom of a widget instead of taking a place in its
// layout: when it appears, grows or goes, nothing under the pointer moves.
#pragma once

#include <QObject>

class QWidget;

namespace gpulab::ui {

class FloatingBar : public QObject {
  Q_OBJECT

 public:
  // Makes `bar` a child of `area`, as wide as it less a margin, at its bottom, above its other
  // children; placed again when either changes size or the bar's content changes.
  FloatingBar(QWidget* bar, QWidget* area);

  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void place();

  QWidget* bar_;
  QWidget* area_;
};

}  // namespace gpulab::ui
