// The mouse wheel over a scrolling panel scrolls the panel: a spin box, combo box or slider in it
// takes the wheel only once it has the keyboard focus (clicked or tabbed to), so scrolling past
// one never changes a setting by accident.
#pragma once

#include <QObject>

class QWidget;

namespace gpulab::ui {

class WheelGuard : public QObject {
 public:
  // Guards every value widget inside `panel`, those made later included. Install it before the
  // panel is first shown.
  explicit WheelGuard(QWidget* panel);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  QWidget* panel_;
};

}  // namespace gpulab::ui
