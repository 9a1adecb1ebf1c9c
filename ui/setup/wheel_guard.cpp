// Wheel events that pass unfocused value widgets on to the panel's scroll area.
#include "ui/setup/wheel_guard.hpp"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QScrollBar>
#include <QWidget>

namespace gpulab::ui {
namespace {

// The spin box, combo box or slider `widget` is or is part of (a spin box's editor), or null.
QWidget* value_widget(QWidget* widget) {
  for (int depth = 0; widget && depth < 2; ++depth, widget = widget->parentWidget()) {
    if (qobject_cast<QAbstractSpinBox*>(widget) || qobject_cast<QComboBox*>(widget)) return widget;
    if (qobject_cast<QAbstractSlider*>(widget) && !qobject_cast<QScrollBar*>(widget)) return widget;
  }
  return nullptr;
}

}  // namespace

WheelGuard::WheelGuard(QWidget* panel) : QObject(panel), panel_(panel) {
  // On the application: it sees the widgets the panel gains later (a layer's cells) as they are
  // first polished, and the wheel before the widget under the pointer does.
  qApp->installEventFilter(this);
  for (QWidget* widget : panel->findChildren<QWidget*>())
    if (QWidget* value = value_widget(widget); value && value->focusPolicy() == Qt::WheelFocus)
      value->setFocusPolicy(Qt::StrongFocus);
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::Wheel && event->type() != QEvent::Polish) return false;
  auto* widget = qobject_cast<QWidget*>(watched);
  if (!widget || !panel_->isAncestorOf(widget)) return false;
  QWidget* value = value_widget(widget);
  if (!value) return false;
  // Not given the focus by the wheel either: a turn of the wheel in passing must not take it.
  if (event->type() == QEvent::Polish) {  // one made after the guard
    if (value->focusPolicy() == Qt::WheelFocus) value->setFocusPolicy(Qt::StrongFocus);
    return false;
  }
  if (value->hasFocus()) return false;
  event->ignore();  // handled here, not accepted: it goes on to the parents, the scroll area
  return true;
}

}  // namespace gpulab::ui
