// A bar (a message) that floats over the bottom of a widget instead of taking a place in its
// layout: when it appears, grows or goes, nothing under the pointer moves, and with a reserve under
// it, nothing is covered.
#pragma once

#include <QObject>

class QWidget;

namespace gpulab::ui {

class FloatingBar : public QObject {
  Q_OBJECT

 public:
  // Makes `bar` a child of `area`, as wide as it less a margin, at its bottom, above its other
  // children; placed again when either changes size or the bar's content changes. `reserve`, a
  // widget at the bottom of `area`'s layout, is kept as high as the bar while it shows (0 while it
  // is hidden): what the bar would cover moves out from under it, and nothing above moves.
  FloatingBar(QWidget* bar, QWidget* area, QWidget* reserve = nullptr);

  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void place();

  QWidget* bar_;
  QWidget* area_;
  QWidget* reserve_;
};

}  // namespace gpulab::ui
