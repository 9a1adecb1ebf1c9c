// Real input for the window's tests: clicks where the style draws an item or its check box, keys,
// drags, menus opened from the menu bar as a person opens them, combo boxes, names typed into file
// dialogs; and a guard that closes the dialogs and popups a click opens, so no test hangs on a
// dialog nobody answers.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include <gtest/gtest.h>
#include <QAbstractButton>
#include <QAction>
#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QElapsedTimer>
#include <QCompleter>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QStyledItemDelegate>
#include <QTimer>
#include <QWheelEvent>
#include <QtTest/QTest>

namespace gpulab::test {

using namespace std::chrono_literals;

// Runs the event loop until `done` holds or the time is up.
inline bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout = 60s) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    QApplication::processEvents(QEventLoop::AllEvents, 20);
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// How long the event loop takes to answer a zero-timer: the window's responsiveness.
inline std::chrono::milliseconds event_loop_latency(std::chrono::milliseconds give_up = 30s) {
  bool answered = false;
  QElapsedTimer clock;
  clock.start();
  QTimer::singleShot(0, qApp, [&] { answered = true; });
  wait_until([&] { return answered; }, give_up);
  return std::chrono::milliseconds(clock.elapsed());
}

// Where the style draws the check box of `index` in `view` (viewport coordinates): the rectangle
// the item delegate tests a click against.
inline QRect check_box_rect(QAbstractItemView* view, const QModelIndex& index) {
  struct Delegate : QStyledItemDelegate {
    using QStyledItemDelegate::initStyleOption;
  } delegate;
  QStyleOptionViewItem option;
  option.initFrom(view);
  option.widget = view;
  option.rect = view->visualRect(index);
  const int icon = view->style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, view);
  option.decorationSize = view->iconSize().isValid() ? view->iconSize() : QSize(icon, icon);
  delegate.initStyleOption(&option, index);
  return view->style()->subElementRect(QStyle::SE_ItemViewItemCheckIndicator, &option, view);
}

inline void click_check_box(QAbstractItemView* view, const QModelIndex& index) {
  QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, check_box_rect(view, index).center());
}

// A click on the item's text, right of its check box and icon.
inline void click_item(QAbstractItemView* view, const QModelIndex& index,
                       Qt::MouseButton button = Qt::LeftButton) {
  const QRect item = view->visualRect(index);
  const QRect check = check_box_rect(view, index);
  const int x = std::min(item.right() - 2, std::max(check.right(), item.left()) + 40);
  QTest::mouseClick(view->viewport(), button, {}, QPoint(x, item.center().y()));
}

// A drag with the left button held, in steps, as a hand moves.
inline void drag(QWidget* widget, QPoint from, QPoint to, int steps = 8) {
  QTest::mousePress(widget, Qt::LeftButton, {}, from);
  for (int i = 1; i <= steps; ++i) {
    const QPoint at = from + (to - from) * i / steps;
    QMouseEvent move(QEvent::MouseMove, at, widget->mapToGlobal(at), Qt::NoButton, Qt::LeftButton,
                     Qt::NoModifier);
    QApplication::sendEvent(widget, &move);
  }
  QTest::mouseRelease(widget, Qt::LeftButton, {}, to);
}

// One notch of the mouse wheel at `pos` in `window` (negative: toward the user, scrolling down),
// delivered as Qt delivers a real one: the widget under the pointer takes the focus if its policy
// says the wheel gives it, then the event goes to that widget and up its parents until one
// accepts it. Returns the widget that accepted it, or null.
inline QWidget* turn_wheel(QWidget* window, QPoint pos, int notches) {
  QWidget* under = window->childAt(pos);
  if (!under) under = window;
  for (QWidget* w = under; w; w = w->isWindow() ? nullptr : w->parentWidget())
    if (w->isEnabled() && (w->focusPolicy() & Qt::WheelFocus) == Qt::WheelFocus) {
      w->setFocus(Qt::MouseFocusReason);
      break;
    }
  for (QWidget* w = under; w; w = w->isWindow() ? nullptr : w->parentWidget()) {
    const QPointF at = w->mapFrom(window, pos);
    QWheelEvent wheel(at, w->mapToGlobal(at), QPoint(), QPoint(0, 120 * notches), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    wheel.setAccepted(true);
    const bool handled = QApplication::sendEvent(w, &wheel);
    if (handled && wheel.isAccepted()) return w;
  }
  return nullptr;
}

inline QString plain_text(QString text) { return text.remove('&').remove(QChar(0x2026)).trimmed(); }

// Opens the menu bar's `menu` with a click on its title, then clicks `entry` in it. Returns false
// when either is missing or disabled.
// With `sub_entry`, `entry` is a submenu (File > Demos): clicking it opens the submenu, whose
// `sub_entry` is then clicked.
inline bool choose_from_menu_bar(QMainWindow* window, const QString& menu, const QString& entry,
                                 const QString& sub_entry = {}) {
  QMenuBar* bar = window->menuBar();
  for (QAction* title : bar->actions()) {
    if (plain_text(title->text()) != menu || !title->menu()) continue;
    QTest::mouseClick(bar, Qt::LeftButton, {}, bar->actionGeometry(title).center());
    QMenu* popup = title->menu();
    if (!wait_until([&] { return popup->isVisible(); }, 5s)) return false;
    for (QAction* action : popup->actions()) {
      if (plain_text(action->text()) != entry) continue;
      if (!action->isEnabled()) break;
      QTest::mouseClick(popup, Qt::LeftButton, {}, popup->actionGeometry(action).center());
      if (sub_entry.isEmpty()) return true;
      QMenu* submenu = action->menu();
      if (!submenu || !wait_until([&] { return submenu->isVisible(); }, 5s)) break;
      for (QAction* inner : submenu->actions())
        if (plain_text(inner->text()) == sub_entry && inner->isEnabled()) {
          QTest::mouseClick(submenu, Qt::LeftButton, {}, submenu->actionGeometry(inner).center());
          return true;
        }
      submenu->close();
      break;
    }
    popup->close();
  }
  return false;
}

// Opens the menu of `button` (a tool button that pops one up) with a click, as a person does, and
// clicks `entry` in it, and then `sub_entry` in the submenu `entry` opens, when given. The popup
// blocks the click that opened it, so the entries are clicked from a timer. Returns false, with
// the menus closed, when an entry is missing or disabled.
inline bool choose_from_button_menu(QAbstractButton* button, QMenu* menu, const QString& entry,
                                    const QString& sub_entry = {}) {
  enum class Stage { Menu, Submenu, Done } stage = Stage::Menu;
  bool found = false;
  QMenu* submenu = nullptr;
  auto click = [](QMenu* in, const QString& text) -> QAction* {
    for (QAction* action : in->actions())
      if (plain_text(action->text()) == text && action->isEnabled()) {
        QTest::mouseClick(in, Qt::LeftButton, {}, in->actionGeometry(action).center());
        return action;
      }
    return nullptr;
  };
  QTimer poll;
  poll.setInterval(20);
  QObject::connect(&poll, &QTimer::timeout, [&] {
    if (stage == Stage::Menu && menu->isVisible()) {
      stage = sub_entry.isEmpty() ? Stage::Done : Stage::Submenu;
      QAction* action = click(menu, entry);
      if (!action || (!sub_entry.isEmpty() && !action->menu())) {
        stage = Stage::Done;
        menu->close();
        return;
      }
      found = sub_entry.isEmpty();
      submenu = action->menu();
    } else if (stage == Stage::Submenu && submenu->isVisible()) {
      stage = Stage::Done;
      found = click(submenu, sub_entry) != nullptr;
      if (!found) {
        submenu->close();
        menu->close();
      }
    }
  });
  poll.start();
  QTest::mouseClick(button, Qt::LeftButton);
  wait_until([&] { return stage == Stage::Done; }, 5s);
  poll.stop();
  return found;
}

// Types `text` over what a spin box holds, as a person does: focus, select all, type, then `key`
// (Return or Enter) to end the edit.
inline void type_into(QAbstractSpinBox* box, const QString& text, Qt::Key key = Qt::Key_Return) {
  box->setFocus();
  QTest::keyClick(box, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClicks(box, text);
  QTest::keyClick(box, key);
}

// Chooses `text` in a combo box as a person does: a click opens its list, a click on the entry.
inline void choose_in_combo(QComboBox* combo, const QString& text) {
  QTest::mouseClick(combo, Qt::LeftButton);
  QAbstractItemView* list = combo->view();
  ASSERT_TRUE(wait_until([&] { return list->isVisible(); }, 5s)) << "the list did not open";
  // A release sooner than a double click after opening is taken as the opening click's own.
  QTest::qWait(QApplication::doubleClickInterval() + 50);
  const int row = combo->findText(text);
  ASSERT_GE(row, 0) << text.toStdString();
  const QModelIndex index = list->model()->index(row, 0);
  QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualRect(index).center());
  ASSERT_TRUE(wait_until([&] { return !list->isVisible(); }, 5s));
  EXPECT_EQ(combo->currentText(), text);
}

// Types `path` into the file dialog that `open` opens and clicks its Save (or Open) button, as a
// person does. The click waits until no list is open (the name box's completer fills its list from
// a thread, so the list can open after the typing; a click while it is open only closes it) and
// is made again while the dialog stays open. Any dialog still open after `give_up` is rejected,
// so a test fails with a message instead of hanging in the dialog's event loop.
inline void answer_file_dialog(const QString& path, const std::function<void()>& open,
                               std::chrono::milliseconds give_up = 30s) {
  enum class Stage { Waiting, Typed, Clicked, GaveUp } stage = Stage::Waiting;
  QElapsedTimer clock, since_click;
  clock.start();
  QTimer poll;
  poll.setInterval(50);
  QObject::connect(&poll, &QTimer::timeout, [&] {
    QWidget* modal = QApplication::activeModalWidget();
    if (!modal) return;
    if (clock.elapsed() > give_up.count()) {
      if (auto* dialog = qobject_cast<QDialog*>(modal)) dialog->reject();
      else modal->close();
      stage = Stage::GaveUp;
      return;
    }
    auto* dialog = qobject_cast<QFileDialog*>(modal);
    auto* name = dialog ? dialog->findChild<QLineEdit*>("fileNameEdit") : nullptr;
    if (!name || !name->isVisible()) return;
    const auto type_path = [&] {
      dialog->activateWindow();
      name->setFocus();
      name->selectAll();
      QTest::keyClicks(name, path);
      stage = Stage::Typed;
    };
    if (stage == Stage::Waiting) return type_path();
    if (QWidget* popup = QApplication::activePopupWidget()) {
      popup->hide();
      return;
    }
    if (stage == Stage::Clicked && since_click.elapsed() < 500) return;
    // The dialog selects in its list what the name typed so far names ("/", then "/tmp"), and
    // lets go of those only while the name field has the focus, which a busy machine may not
    // have given it yet: then it would choose "/" and "/tmp". A person would see that and type
    // the path again, into the field now focused.
    if (name->text() != path || dialog->selectedFiles().size() != 1) return type_path();
    auto* buttons = dialog->findChild<QDialogButtonBox*>("buttonBox");
    for (QAbstractButton* button : buttons ? buttons->buttons() : QList<QAbstractButton*>{})
      if (buttons->buttonRole(button) == QDialogButtonBox::AcceptRole && button->isEnabled()) {
        QTest::mouseClick(button, Qt::LeftButton);
        stage = Stage::Clicked;
        since_click.start();
        return;
      }
  });
  poll.start();
  open();
  poll.stop();
  EXPECT_NE(stage, Stage::GaveUp) << "a dialog was still open after " << give_up.count()
                                  << " ms; it was rejected";
  EXPECT_NE(stage, Stage::Waiting) << "no file dialog opened";
  EXPECT_NE(stage, Stage::Typed) << "the file dialog was never answered";
}

// Closes every modal dialog that opens while it lives (file dialogs included: the tests use Qt's
// own dialogs, never the platform's), as a person pressing Escape would.
class DialogCloser {
 public:
  DialogCloser() {
    timer_.setInterval(30);
    QObject::connect(&timer_, &QTimer::timeout, [this] {
      if (QWidget* modal = QApplication::activeModalWidget()) {
        ++closed_;
        if (auto* dialog = qobject_cast<QDialog*>(modal))
          dialog->reject();
        else
          modal->close();
      }
    });
    timer_.start();
  }
  int closed() const { return closed_; }

 private:
  QTimer timer_;
  int closed_ = 0;
};

}  // namespace gpulab::test
