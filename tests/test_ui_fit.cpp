// The window on a projector's screen, driven as a person drives it: at 1280x720 and 1024x768 it
// never needs more room than the screen (many runs ticked, one with replicas, a long message,
// presenter mode), every control stays reachable, controls stay put and say when they are off,
// presenter mode is readable from the back of a room, and the smaller behaviours around runs.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QFileInfo>
#include <QFontInfo>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QTabBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolButton>
#include <QTreeWidget>
#include <QtTest/QTest>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "engine/analysis/run_figures.hpp"
#include "engine/records/run_names.hpp"
#include "engine/records/run_record.hpp"
#include "recorded_runs.hpp"
#include "test_support.hpp"
#include "ui/charts/chart_bars.hpp"
#include "ui/charts/chart_render.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/charts/replica_timeline.hpp"
#include "ui/charts/scaling_chart.hpp"
#include "ui/compare/compare_view.hpp"
#include "ui/labs/labs_tab.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/runs/runs_panel.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/setup/layer_editor.hpp"
#include "ui/widgets/status_widgets.hpp"
#include "ui/window/chart_grid.hpp"
#include "ui/window/live_tab.hpp"
#include "ui/window/main_window.hpp"
#include "ui_fixture.hpp"
#include "ui_input.hpp"

namespace gpulab::ui {
namespace {

using namespace std::chrono_literals;
using test::wait_until;

// Every control a person may need (buttons, spin boxes, combo boxes, sliders, tabs) that is shown
// but cannot be reached: cut off by a widget around it, or outside the window, where a scroll area
// around it cannot scroll it into view.
QStringList controls_out_of_reach(QWidget* window) {
  QStringList problems;
  for (QWidget* control : window->findChildren<QWidget*>()) {
    if (!control->isVisible()) continue;
    const bool is_control =
        qobject_cast<QAbstractButton*>(control) || qobject_cast<QAbstractSpinBox*>(control) ||
        qobject_cast<QComboBox*>(control) || qobject_cast<QTabBar*>(control) ||
        (qobject_cast<QAbstractSlider*>(control) && !qobject_cast<QScrollBar*>(control));
    if (!is_control || qobject_cast<QScrollBar*>(control->parentWidget())) continue;
    if (qobject_cast<QTabBar*>(control->parentWidget())) continue;  // its scroll arrows
    QRect rect = control->rect();
    for (QWidget* at = control; at != window; at = at->parentWidget()) {
      QWidget* parent = at->parentWidget();
      rect.translate(at->pos());
      auto* area = qobject_cast<QAbstractScrollArea*>(parent->parentWidget());
      const QRect room = parent->rect().adjusted(-1, -1, 1, 1);
      if (area && area->viewport() == parent) {
        // Inside a scroll area: out of its view is fine where it scrolls that way.
        const bool h = area->horizontalScrollBarPolicy() != Qt::ScrollBarAlwaysOff ||
                       (rect.left() >= room.left() && rect.right() <= room.right());
        const bool v = area->verticalScrollBarPolicy() != Qt::ScrollBarAlwaysOff ||
                       (rect.top() >= room.top() && rect.bottom() <= room.bottom());
        if (!h || !v) {
          problems << QString("%1 \"%2\" is cut off by the scroll area %3")
                          .arg(control->metaObject()->className(), control->objectName(),
                               area->objectName());
          break;
        }
        rect = parent->rect();  // from here on, the view it scrolls into must be reachable
      } else if (!room.contains(rect)) {
        problems << QString("%1 \"%2\" (%3) at %4,%5 %6x%7 is outside %8 \"%9\" (%10x%11)")
                        .arg(control->metaObject()->className(), control->objectName())
                        .arg(qobject_cast<QAbstractButton*>(control)
                                 ? qobject_cast<QAbstractButton*>(control)->text()
                                 : QString())
                        .arg(rect.x())
                        .arg(rect.y())
                        .arg(rect.width())
                        .arg(rect.height())
                        .arg(parent->metaObject()->className(), parent->objectName())
                        .arg(parent->width())
                        .arg(parent->height());
        break;
      }
    }
  }
  return problems;
}

class Fit : public test::WindowTest {
 protected:
  // Six finished runs, the newest on two replicas.
  void write_six_runs() {
    for (int r = 0; r < 6; ++r)
      test::write_run(runs_.path() / ("r" + std::to_string(r)), 1 + r, 64, 120, 8 + r,
                      "2026-01-01T10:0" + std::to_string(r) + ":00Z", r == 5 ? 2 : 1);
  }
  void show_at(QSize size) {
    window_->showNormal();  // offscreen, "full screen" is whatever size it had
    window_->resize(size);
    wait_until([] { return false; }, 150ms);
  }
  void expect_fits(QSize size, const std::string& state) {
    EXPECT_LE(window_->minimumSizeHint().width(), size.width()) << state;
    EXPECT_LE(window_->minimumSizeHint().height(), size.height()) << state;
    EXPECT_LE(window_->minimumSize().width(), size.width()) << state;
    EXPECT_LE(window_->minimumSize().height(), size.height()) << state;
    EXPECT_EQ(window_->size(), size) << state;
    const QStringList problems = controls_out_of_reach(window_.get());
    EXPECT_TRUE(problems.isEmpty()) << state << ":\n" << problems.join("\n").toStdString();
    // The plots need no sideways scrolling, even beside the setup on a 1024 px screen.
    auto* center = window_->findChild<QScrollArea*>("center");
    ASSERT_NE(center, nullptr) << "the plots are in no scroll area";
    EXPECT_LE(center->widget()->minimumSizeHint().width(), center->viewport()->width())
        << state << ": the plots need more width than they have";
  }
};

TEST_F(Fit, EveryControlIsReachableAt1280x720And1024x768) {
  write_six_runs();
  // The 2-replica run's twin on one replica: Compare shows their scaling chart beside the others.
  test::write_run(runs_.path() / "r6", 6, 64, 120, 14, "2026-01-01T09:59:00Z", 1);
  open_window();
  window_->show_recent(7);
  ASSERT_NE(window_->replica_timeline()->run(), nullptr);
  window_->show_tab("compare");
  window_->compare()->scaling_chart()->refresh();
  ASSERT_TRUE(window_->compare()->scaling_chart()->study().has_value());
  for (const QSize size : {QSize(1280, 720), QSize(1024, 768)}) {
    for (bool presenter : {false, true}) {
      window_->set_presenter(presenter);
      for (bool message : {false, true}) {
        if (message)
          window_->show_warning(
              "Run lenet5 cpu, 6 threads, 2 replicas, b64 failed: " +
              QString::fromStdString((runs_.path() / "a_folder_name_that_is_much_longer_than_any_"
                                                     "line_of_the_message_bar_could_hold_at_once/"
                                                     "2026-01-01_100000_lenet5_cpu_6t_2r/run.json")
                                         .string()) +
              " could not be written: no space left on device. Free some space and train again.");
        for (const char* tab : {"live", "compare"}) {
          window_->show_tab(tab);
          show_at(size);
          expect_fits(size, QString("%1x%2%3%4 %5")
                                .arg(size.width())
                                .arg(size.height())
                                .arg(presenter ? " presenter" : "")
                                .arg(message ? " with a long message" : "")
                                .arg(tab)
                                .toStdString());
        }
      }
      // The message's close button dismisses it: it is on screen.
      auto* bar = window_->findChild<QWidget*>("message");
      QToolButton* close = nullptr;
      for (QToolButton* button : bar->findChildren<QToolButton*>())
        if (button->toolTip() == "Dismiss") close = button;
      ASSERT_NE(close, nullptr);
      EXPECT_TRUE(
          window_->rect().contains(QRect(close->mapTo(window_.get(), QPoint()), close->size())));
      QTest::mouseClick(close, Qt::LeftButton);
      EXPECT_TRUE(window_->message().isEmpty());
    }
  }
}

// At 1280x720 and 1024x768, with seven runs ticked (one on replicas) and a run training, no tab
// (nor the Inside tab's Draw section) needs to scroll sideways, and every Live chart stays
// readable: as wide as ChartGrid's readable width (fewer columns where the column is narrow) and as
// high as its plot's minimum, the column scrolling down instead.
TEST_F(Fit, NoTabScrollsSidewaysAndLiveChartsStayReadable) {
  write_six_runs();
  test::write_run(runs_.path() / "r6", 6, 64, 120, 14, "2026-01-01T09:59:00Z", 1);
  open_window();
  window_->show_recent(7);
  small_setup(1000000);  // still training while every tab is looked at
  ASSERT_GT(window_->start_training(), 0) << window_->message().toStdString();
  auto* center = window_->findChild<QScrollArea*>("center");
  ASSERT_NE(center, nullptr);
  // Then with only the training run shown: no run with replicas, so the replica timeline is its
  // one-line hint, which must wrap rather than widen the Live tab (it needed 797 px).
  for (const int shown : {7, 1})
    for (const QSize size : {QSize(1280, 720), QSize(1024, 768)}) {
      for (RunEntry* entry : window_->store()->entries())  // newest first: the training run
        window_->store()->set_checked(entry->id, entry == window_->store()->entries().front() ||
                                                     shown > 1);
      for (const char* tab : {"live", "compare", "inside", "labs"}) {
        ASSERT_TRUE(window_->show_tab(tab));
        show_at(size);
        ASSERT_TRUE(window_->any_running());
        if (shown == 1) {
          const auto* hint = window_->findChild<QLabel*>("replica-timeline-hint");
          ASSERT_NE(hint, nullptr);
          if (std::string(tab) == "live") {
            EXPECT_TRUE(hint->isVisible());
          }
        }
        const std::string state = QString("%1x%2 %3, %4 shown")
                                      .arg(size.width())
                                      .arg(size.height())
                                      .arg(tab)
                                      .arg(shown)
                                      .toStdString();
        EXPECT_LE(window_->minimumSizeHint().width(), size.width()) << state;
        const QScrollBar* sideways = center->horizontalScrollBar();
        EXPECT_TRUE(sideways->maximum() == 0 || !sideways->isVisible())
            << state << ": the tab needs " << center->widget()->minimumSizeHint().width()
            << " px, the column has " << center->viewport()->width();
        if (std::string(tab) == "inside") {  // its section scrolls on its own: not sideways either
          auto* section = qobject_cast<QScrollArea*>(
              window_->findChild<QTabWidget*>("inside-sections")->currentWidget());
          ASSERT_NE(section, nullptr);
          const QScrollBar* bar = section->horizontalScrollBar();
          EXPECT_TRUE(bar->maximum() == 0 || !bar->isVisible())
              << state << ": the section needs " << section->widget()->minimumSizeHint().width()
              << " px, it has " << section->viewport()->width();
        }
        if (std::string(tab) != "live") continue;
        for (ChartView* chart : window_->live_charts()) {
          EXPECT_GE(chart->width(), ChartGrid::kReadableWidth)
              << state << " " << chart_kind_name(chart->kind());
          EXPECT_GE(chart->plot()->height(), chart->plot()->minimumHeight())
              << state << " " << chart_kind_name(chart->kind());
        }
      }
    }
}

// The grid on its own: three columns where each chart gets ChartGrid's readable width, two, then
// one, and three again when it widens; it lets a scroll area make it as narrow as one chart, and
// asks for the height its columns need.
TEST(ChartGridTest, TakesColumnsAwayAsItNarrowsAndGivesThemBack) {
  std::vector<QWidget*> charts;
  for (int i = 0; i < 5; ++i) {
    charts.push_back(new QWidget);
    charts.back()->setMinimumSize(180, 200);
  }
  ChartGrid grid(charts);
  grid.show();
  const auto columns_at = [&](int width) {
    grid.resize(width, 1200);
    QApplication::processEvents();
    return grid.columns();
  };
  EXPECT_EQ(columns_at(3 * ChartGrid::kReadableWidth + 8), 3);
  const int three_high = grid.minimumSizeHint().height();
  EXPECT_EQ(columns_at(3 * ChartGrid::kReadableWidth), 2);
  EXPECT_EQ(charts[4]->width(), grid.width());  // the last one spans its row
  EXPECT_GT(grid.minimumSizeHint().height(), three_high);
  EXPECT_EQ(columns_at(2 * ChartGrid::kReadableWidth), 1);
  EXPECT_EQ(grid.minimumSizeHint().width(), 180);
  EXPECT_GE(grid.minimumSizeHint().height(), 5 * 200);
  EXPECT_EQ(columns_at(1000), 3);
  EXPECT_EQ(grid.minimumSizeHint().height(), three_high);
}

// The Train, Pause and Stop buttons stay where the pointer left them when a run starts and its
// status line (two lines of text) appears beside them, and when it ends.
TEST_F(Fit, TheTrainRowStaysPutWhenTrainingStartsAndEnds) {
  open_window();
  small_setup(40);
  show_at(QSize(1280, 720));
  auto where = [&](QWidget* w) { return w->mapTo(window_.get(), QPoint()); };
  const QPoint train = where(window_->train_button()), pause = where(window_->pause_button());
  QTest::mouseClick(window_->train_button(), Qt::LeftButton);
  ASSERT_TRUE(window_->any_running()) << window_->message().toStdString();
  wait_until([] { return false; }, 100ms);
  EXPECT_EQ(where(window_->train_button()), train);
  EXPECT_EQ(where(window_->pause_button()), pause);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  wait_until([] { return false; }, 100ms);
  EXPECT_EQ(where(window_->train_button()), train);
  EXPECT_EQ(where(window_->pause_button()), pause);
}

// A training run's progress text, however long it grows at 1280x720, never sets the window's
// width: it narrows to 1024 and the rows move under the buttons. (Their text once counted: rows
// that had grown beside the buttons kept the window 1059 px wide, under load only.)
TEST_F(Fit, TheProgressTextNeverKeepsTheWindowWide) {
  open_window();
  small_setup(1000000);
  show_at(QSize(1280, 720));
  ASSERT_GT(window_->start_training(), 0) << window_->message().toStdString();
  auto* progress = window_->findChild<ProgressList*>();
  ASSERT_NE(progress, nullptr);
  // The longest a row's bar says: a long run's step counts and ETA, as the text grows before
  // the resize (a loaded machine's first step).
  const int id = window_->store()->entries().front()->id;
  progress->set_plan(id, StepPlan{100, 9999999, 9999999 * 100});
  StepMetrics last;
  last.step = 999999999;
  last.epoch = 100;
  last.loss = 1.2345678;
  LiveFigures figures;
  figures.images_per_second = 123456789;
  figures.eta_s = 3600.0 * 999;
  progress->update(id, last, figures, false);
  QApplication::processEvents();
  EXPECT_LE(window_->minimumSizeHint().width(), 1024) << progress->text(id).toStdString();
  show_at(QSize(1024, 768));
  EXPECT_LE(window_->width(), 1024);
  EXPECT_GE(progress->mapTo(window_.get(), QPoint()).y(),
            window_->train_button()->mapTo(window_.get(), QPoint()).y() +
                window_->train_button()->height())
      << "the rows sit under the buttons in a 1024 px window";
}

// Presenter mode on and off again from the View menu: every widget has the font it had before
// (spin boxes and the runs list's header kept the large one).
TEST_F(Fit, LeavingPresenterModeGivesEveryWidgetItsFontBack) {
  write_six_runs();
  open_window();
  std::map<QWidget*, double> before;
  for (QWidget* w : window_->findChildren<QWidget*>()) before[w] = QFontInfo(w->font()).pixelSize();
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "View", "Presenter mode"));
  ASSERT_TRUE(wait_until([&] { return window_->key_numbers().size() > 0; }, 5s));
  auto* batch = window_->findChild<QSpinBox*>("batch");
  EXPECT_GT(QFontInfo(batch->font()).pixelSize(), before[batch]);
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "View", "Presenter mode"));
  ASSERT_TRUE(wait_until([&] { return window_->key_numbers().isEmpty(); }, 5s));
  QStringList changed;
  for (QWidget* w : window_->findChildren<QWidget*>())
    if (before.count(w) && QFontInfo(w->font()).pixelSize() != before[w])
      changed << QString("%1 \"%2\": %3 px, was %4 px")
                     .arg(w->metaObject()->className(), w->objectName())
                     .arg(QFontInfo(w->font()).pixelSize())
                     .arg(before[w]);
  EXPECT_TRUE(changed.isEmpty()) << changed.join("\n").toStdString();
  EXPECT_EQ(QFontInfo(window_->runs_panel()->tree()->header()->font()).pixelSize(),
            QFontInfo(window_->font()).pixelSize());
}

// No sideways scroll bar on Live and Labs (the window's and the lab page's), and every control
// (Hand in…, Run all experiments, the run controls) on screen or where a scroll bar reaches it.
void expect_no_sideways_scrolling(MainWindow* window, const std::string& state) {
  auto* center = window->findChild<QScrollArea*>("center");
  ASSERT_NE(center, nullptr);
  for (const char* tab : {"live", "labs"}) {
    ASSERT_TRUE(window->show_tab(tab));
    wait_until([] { return false; }, 100ms);
    const QScrollBar* sideways = center->horizontalScrollBar();
    EXPECT_TRUE(sideways->maximum() == 0 || !sideways->isVisible())
        << state << " " << tab << ": the tab needs " << center->widget()->minimumSizeHint().width()
        << " px, the column has " << center->viewport()->width();
    auto* page = window->findChild<QScrollArea*>("lab-page");
    if (std::string(tab) == "labs" && page && page->isVisible()) {
      EXPECT_TRUE(page->horizontalScrollBar()->maximum() == 0 ||
                  !page->horizontalScrollBar()->isVisible())
          << state << ": the lab page scrolls sideways";
    }
    const QStringList off = controls_out_of_reach(window);
    EXPECT_TRUE(off.isEmpty()) << state << " " << tab << ":\n" << off.join("\n").toStdString();
  }
}

// Presenter mode on (from the View menu) and off (its F11 shortcut) at 1024x768 and 1280x720,
// normal and maximized: every widget's font and size hint, the window's size and its maximized
// state are what they were, and neither Live nor Labs scrolls sideways.
TEST_F(Fit, LeavingPresenterModeGivesSizesFontsAndTheMaximizedStateBack) {
  write_six_runs();
  open_window();
  window_->show_recent(6);
  window_->show_tab("labs");
  window_->labs()->list()->setCurrentItem(window_->labs()->list()->topLevelItem(0));
  for (const QSize size : {QSize(1024, 768), QSize(1280, 720)})
    for (const bool maximized : {false, true}) {
      show_at(size);
      if (maximized) {  // on the offscreen platform's own screen (800x600): no fit asked there
        window_->showMaximized();
        wait_until([] { return false; }, 150ms);
      }
      const std::string state = QString("%1x%2%3")
                                    .arg(size.width())
                                    .arg(size.height())
                                    .arg(maximized ? " maximized" : "")
                                    .toStdString();
      if (!maximized) expect_no_sideways_scrolling(window_.get(), state + " before presenter mode");
      window_->show_tab("live");
      const Qt::WindowStates states = window_->windowState();
      const QSize window_size = window_->size();
      std::map<QWidget*, std::pair<int, QSize>> before;
      for (QWidget* w : window_->findChildren<QWidget*>())
        before[w] = {QFontInfo(w->font()).pixelSize(), w->sizeHint()};
      ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "View", "Presenter mode"));
      ASSERT_TRUE(wait_until([&] { return !window_->key_numbers().isEmpty(); }, 5s)) << state;
      wait_until([] { return false; }, 150ms);
      window_->activateWindow();
      QTest::keyClick(window_.get(), Qt::Key_F11);
      ASSERT_TRUE(wait_until([&] { return window_->key_numbers().isEmpty(); }, 5s)) << state;
      wait_until([] { return false; }, 150ms);
      EXPECT_EQ(window_->windowState(), states) << state;
      EXPECT_EQ(window_->isMaximized(), maximized) << state;
      // Maximized on the offscreen platform's 800x600 screen, the size is the window's least,
      // which settles late: there the state is what counts.
      if (!maximized) {
        EXPECT_EQ(window_->size(), window_size)
            << state << ": the window's least size is " << window_->minimumSizeHint().width() << "x"
            << window_->minimumSizeHint().height() << ", its central widget's "
            << window_->centralWidget()->minimumSizeHint().width();
      }
      QStringList changed;
      for (QWidget* w : window_->findChildren<QWidget*>()) {
        if (!before.count(w) || !w->isVisible()) continue;
        // A chart's hint follows its tick labels, which follow its width and data: its font
        // counts, and the setup's and controls' sizes do.
        const bool in_chart = qobject_cast<ChartView*>(w) || w->findChild<ChartView*>() ||
                              qobject_cast<QCustomPlot*>(w) || w->findChild<QCustomPlot*>();
        if (in_chart) before[w].second = w->sizeHint();
        const std::pair<int, QSize> now{QFontInfo(w->font()).pixelSize(), w->sizeHint()};
        if (now != before[w])
          changed << QString("%1 \"%2\": %3 px, %4x%5, was %6 px, %7x%8")
                         .arg(w->metaObject()->className(), w->objectName())
                         .arg(now.first)
                         .arg(now.second.width())
                         .arg(now.second.height())
                         .arg(before[w].first)
                         .arg(before[w].second.width())
                         .arg(before[w].second.height());
      }
      EXPECT_TRUE(changed.isEmpty()) << state << ":\n" << changed.join("\n").toStdString();
      if (!maximized) expect_no_sideways_scrolling(window_.get(), state + " after presenter mode");
      window_->showNormal();
    }
}

// The screen of kClassroomScreens named `name` (the test program's own screens).
QScreen* classroom_screen(const QString& name) {
  for (QScreen* screen : QGuiApplication::screens())
    if (screen->name() == name) return screen;
  return nullptr;
}

// On a real 1024x768 (and 1280x720) screen, as in a classroom: the window put on that screen,
// presenter mode on from the View menu and off with F11, then maximized there. The window is the
// screen's size, and Live and Labs neither scroll sideways nor put a control (Hand in…, Run all
// experiments, the run controls) out of reach. Then maximized first and presenter mode on and off:
// maximized again, the screen's size.
TEST_F(Fit, PresenterOnAndOffThenMaximizedFitsTheScreen) {
  write_six_runs();
  open_window();
  window_->show_recent(6);
  window_->show_tab("labs");
  window_->labs()->list()->setCurrentItem(window_->labs()->list()->topLevelItem(0));
  for (const char* name : {"1024x768", "1280x720"}) {
    QScreen* screen = classroom_screen(name);
    ASSERT_NE(screen, nullptr) << "the test program has no " << name << " screen";
    window_->showNormal();
    window_->setGeometry(QRect(screen->geometry().topLeft() + QPoint(20, 40), QSize(760, 560)));
    ASSERT_TRUE(wait_until([&] { return window_->screen() == screen; }, 2s))
        << "the window is on " << window_->screen()->name().toStdString() << ", not " << name;
    const QRect room = screen->availableGeometry();
    ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "View", "Presenter mode"));
    ASSERT_TRUE(wait_until([&] { return window_->isFullScreen(); }, 5s)) << name;
    wait_until([] { return false; }, 150ms);
    EXPECT_EQ(window_->geometry(), screen->geometry()) << name << ": presenter mode is not it";
    window_->activateWindow();
    QTest::keyClick(window_.get(), Qt::Key_F11);
    ASSERT_TRUE(wait_until([&] { return !window_->isFullScreen(); }, 5s)) << name;
    window_->showMaximized();
    ASSERT_TRUE(wait_until([&] { return window_->isMaximized(); }, 5s)) << name;
    wait_until([] { return false; }, 200ms);
    EXPECT_TRUE(room.contains(window_->frameGeometry()))
        << name << ": maximized, the window is " << window_->frameGeometry().width() << "x"
        << window_->frameGeometry().height() << " on a screen of " << room.width() << "x"
        << room.height() << "; its least size is " << window_->minimumSizeHint().width() << "x"
        << window_->minimumSizeHint().height();
    expect_no_sideways_scrolling(window_.get(),
                                 std::string(name) + ", presenter mode on and off, then maximized");
    // And the other way round: maximized, presenter mode on and off, maximized again.
    ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "View", "Presenter mode"));
    ASSERT_TRUE(wait_until([&] { return window_->isFullScreen(); }, 5s)) << name;
    wait_until([] { return false; }, 150ms);
    window_->activateWindow();
    QTest::keyClick(window_.get(), Qt::Key_F11);
    ASSERT_TRUE(wait_until([&] { return window_->isMaximized() && !window_->isFullScreen(); }, 5s))
        << name << ": leaving presenter mode did not give the maximized window back";
    wait_until([] { return false; }, 200ms);
    EXPECT_TRUE(room.contains(window_->frameGeometry())) << name;
    expect_no_sideways_scrolling(window_.get(),
                                 std::string(name) + ", maximized, presenter mode on and off");
  }
}

// Presenter mode on a 1280x720 projector (the window is the screen) with six runs: both rows of
// Live charts are on the screen whole, each plot inside its chart (a plot taller than the room
// its chart was given is cut at its x axis) and inside the part of the tab on screen (README).
TEST_F(Fit, PresenterModeShowsBothRowsOfLiveChartsOnA1280x720Screen) {
  write_six_runs();
  open_window();
  window_->show_recent(6);
  QScreen* screen = classroom_screen("1280x720");
  ASSERT_NE(screen, nullptr);
  window_->showNormal();
  window_->setGeometry(QRect(screen->geometry().topLeft() + QPoint(20, 40), QSize(900, 600)));
  ASSERT_TRUE(wait_until([&] { return window_->screen() == screen; }, 2s));
  window_->show_tab("live");
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "View", "Presenter mode"));
  ASSERT_TRUE(wait_until([&] { return window_->isFullScreen(); }, 5s));
  // The charts' larger type asks for taller plots; the layouts around them hear it in turn.
  auto* grid = window_->findChild<ChartGrid*>();
  ASSERT_NE(grid, nullptr);
  wait_until([&] { return grid->height() >= grid->minimumSizeHint().height(); }, 3s);
  wait_until([] { return false; }, 200ms);
  ASSERT_EQ(window_->geometry(), screen->geometry());
  auto* center = window_->findChild<QScrollArea*>("center");
  ASSERT_NE(center, nullptr);
  const QRect seen(center->viewport()->mapTo(window_.get(), QPoint()), center->viewport()->size());
  for (ChartView* chart : window_->live_charts()) {
    const QRect box(chart->mapTo(window_.get(), QPoint()), chart->size());
    const QRect plot(chart->plot()->mapTo(window_.get(), QPoint()), chart->plot()->size());
    const std::string kind = chart_kind_name(chart->kind());
    EXPECT_TRUE(box.contains(plot)) << kind << ": the plot is at y " << plot.top() << " to "
                                    << plot.bottom() << ", its chart at " << box.top() << " to "
                                    << box.bottom();
    EXPECT_TRUE(seen.contains(plot))
        << kind << "'s plot is at y " << plot.top() << " to " << plot.bottom()
        << "; the tab is seen from y " << seen.top() << " to " << seen.bottom();
  }
}

// What is wrong with an axis's tick labels as last drawn: none, or two that run into each other.
QString tick_label_problem(QCPAxis* axis) {
  const QVector<double> ticks = axis->tickVector();
  const QVector<QString> labels = axis->tickVectorLabels();
  struct Span {
    double from, to;
  };
  std::vector<Span> spans;
  const QFontMetricsF metrics(axis->tickLabelFont());
  const bool across = axis->orientation() == Qt::Horizontal;
  for (int i = 0; i < ticks.size() && i < labels.size(); ++i) {
    const double at = axis->coordToPixel(ticks[i]);
    if (labels[i].isEmpty() || !axis->range().contains(ticks[i])) continue;
    // A label can be several lines (a bar's name over its figure): its widest line counts.
    double extent = 0;
    for (const QString& line : labels[i].split('\n'))
      extent = std::max(extent, across ? metrics.horizontalAdvance(line) : 0.0);
    if (!across) extent = metrics.height() * labels[i].count('\n') + metrics.height();
    spans.push_back({at - extent / 2, at + extent / 2});
  }
  if (spans.empty()) return "no tick labels";
  std::sort(spans.begin(), spans.end(), [](Span a, Span b) { return a.from < b.from; });
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].from < spans[i - 1].to)
      return QString("tick labels overlap by %1 px")
          .arg(spans[i - 1].to - spans[i].from, 0, 'f', 0);
  return {};
}

// Presenter mode at 1024x768 and 1280x720: every Live chart and Compare's bars keep tick labels
// on both axes that do not run together.
TEST_F(Fit, PresenterModeChartsKeepTheirTickLabelsAtSmallScreens) {
  // Runs of 470 steps: one tick in a narrow chart fell at 500, beyond the axis, and left it bare.
  for (int r = 0; r < 4; ++r)
    test::write_run(runs_.path() / ("r" + std::to_string(r)), 1 + r, 64, 470, 8 + r,
                    "2026-01-01T10:0" + std::to_string(r) + ":00Z");
  open_window();
  window_->show_recent(4);
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "View", "Presenter mode"));
  for (const QSize size : {QSize(1024, 768), QSize(1280, 720)}) {
    show_at(size);  // presenter mode stays: the window is that screen
    for (const char* tab : {"live", "compare"}) {
      window_->show_tab(tab);
      wait_until([] { return false; }, 200ms);
      std::vector<ChartView*> views = window_->live_charts();
      if (std::string(tab) == "compare")
        views = {window_->compare()->speedup_chart(), window_->compare()->step_time_chart()};
      for (ChartView* view : views) {
        if (!view->isVisible()) continue;
        view->plot()->replot(QCustomPlot::rpImmediateRefresh);
        const std::string state = QString("%1x%2 presenter %3 %4")
                                      .arg(size.width())
                                      .arg(size.height())
                                      .arg(tab, chart_kind_name(view->kind()))
                                      .toStdString();
        for (QCPAxis* axis : {view->plot()->xAxis, view->plot()->yAxis}) {
          const QString problem = tick_label_problem(axis);
          EXPECT_TRUE(problem.isEmpty())
              << state << (axis == view->plot()->xAxis ? " x: " : " y: ") << problem.toStdString();
        }
      }
    }
  }
}

// The "Saved…" message appears over the window, not above the tabs: Compare's Baseline and
// Export stay under the pointer (a second click on Export changed the baseline), and leave it
// when the message is closed.
TEST_F(Fit, AMessageMovesNothingUnderThePointer) {
  write_six_runs();
  open_window();
  window_->show_recent(3);
  for (const QSize size : {QSize(1024, 768), QSize(1280, 720)}) {
    show_at(size);
    window_->show_tab("compare");
    wait_until([] { return false; }, 100ms);
    QWidget* baseline = window_->findChild<QComboBox*>("baseline");
    QToolButton* export_button = nullptr;
    for (QToolButton* b : window_->compare()->speedup_chart()->findChildren<QToolButton*>())
      if (b->text() == "Export") export_button = b;
    ASSERT_NE(export_button, nullptr);
    auto where = [&](QWidget* w) { return QRect(w->mapTo(window_.get(), QPoint()), w->size()); };
    const QRect combo = where(baseline), button = where(export_button),
                tabs = where(window_->tabs()->tabBar());
    window_->show_warning("Saved " +
                          QString::fromStdString((runs_.path() / "speedup.png").string()));
    wait_until([] { return false; }, 100ms);
    ASSERT_TRUE(window_->findChild<QWidget*>("message")->isVisible());
    EXPECT_EQ(where(baseline), combo);
    EXPECT_EQ(where(export_button), button);
    EXPECT_EQ(where(window_->tabs()->tabBar()), tabs);
    // The message is wholly on screen, over no control that the runs need at once.
    const QRect message = where(window_->findChild<QWidget*>("message"));
    EXPECT_TRUE(window_->rect().contains(message));
    EXPECT_FALSE(message.intersects(combo));
    EXPECT_FALSE(message.intersects(button));
    window_->findChild<Banner*>("message")->dismiss();
  }
}

// Issue 40.5: ▶ Train's progress row took 42 px from the tabs, "lr 0.05 from step N" 15 px and
// a long status line in presenter mode 21 px; the message bar covered the runs list's last row and
// Show/Import. Every control's place is the same before and after each, in both modes, and the
// message covers none.
TEST_F(Fit, NothingMovesWhenRunsStartChangeTheirRateOrAMessageShows) {
  write_six_runs();
  open_window();
  window_->show_recent(6);
  auto where = [&](QWidget* w) { return QRect(w->mapTo(window_.get(), QPoint()), w->size()); };
  // Every visible button, tab bar and list of the window, by its place.
  auto controls = [&] {
    std::vector<std::pair<QWidget*, QRect>> placed;
    for (QWidget* w : window_->findChildren<QWidget*>())
      if (w->isVisible() && (qobject_cast<QPushButton*>(w) || qobject_cast<QTabBar*>(w) ||
                             qobject_cast<QTreeWidget*>(w)))
        placed.emplace_back(w, where(w));
    return placed;
  };
  auto expect_unmoved = [&](const std::vector<std::pair<QWidget*, QRect>>& before,
                            const std::string& what) {
    for (const auto& [w, rect] : before)
      if (w->isVisible()) {
        EXPECT_EQ(where(w), rect) << what << ": " << w->metaObject()->className() << " \""
                                  << w->objectName().toStdString() << "\" "
                                  << (qobject_cast<QPushButton*>(w)
                                          ? qobject_cast<QPushButton*>(w)->text().toStdString()
                                          : std::string());
      }
  };
  for (const bool presenter : {false, true}) {
    window_->set_presenter(presenter);
    show_at(QSize(1280, 720));
    const std::string mode = presenter ? "presenter mode" : "normal mode";
    small_setup(1'000'000);
    auto before = controls();
    QTest::mouseClick(window_->train_button(), Qt::LeftButton);
    ASSERT_TRUE(window_->any_running()) << window_->message().toStdString();
    RunEntry* live = nullptr;
    ASSERT_TRUE(wait_until([&] {
      for (RunEntry* e : window_->store()->entries())
        if (e->live && e->data.steps.size() >= 3) live = e;
      return live != nullptr;
    }));
    wait_until([] { return false; }, 300ms);  // the status line's text, at its long width
    expect_unmoved(before, mode + ", a run training");

    if (!presenter) {  // the learning rate field is beside ▶ Train, shown in normal mode
      auto* field = window_->findChild<QLineEdit*>("lr-field");
      auto* apply = window_->findChild<QPushButton*>("lr-apply");
      ASSERT_TRUE(field && apply);
      before = controls();
      QTest::mouseClick(field, Qt::LeftButton, {}, field->rect().center());
      QTest::keyClick(field, Qt::Key_A, Qt::ControlModifier);
      QTest::keyClicks(field, "0.05");
      QTest::mouseClick(apply, Qt::LeftButton, {}, apply->rect().center());
      ASSERT_TRUE(wait_until([&] { return !live->data.lr_changes.empty(); }));
      wait_until([] { return false; }, 300ms);
      ASSERT_TRUE(window_->findChild<QLabel*>("lr-status")->isVisible());
      expect_unmoved(before, mode + ", the learning rate changed");
    }

    before = controls();
    window_->show_warning(
        "Run lenet5 cpu failed: " +
        QString::fromStdString((runs_.path() / "a_long_folder_name_for_the_message_to_wrap/"
                                               "run.json")
                                   .string()) +
        " could not be written: no space left on device. Free some space and train again.");
    wait_until([] { return false; }, 150ms);
    QWidget* message = window_->findChild<QWidget*>("message");
    ASSERT_TRUE(message->isVisible());
    expect_unmoved(before, mode + ", a message shown");
    for (const auto& [w, rect] : controls())
      if (w != message && !message->isAncestorOf(w) && !w->isAncestorOf(message)) {
        EXPECT_FALSE(where(message).intersects(rect))
            << mode << ": the message covers " << w->metaObject()->className() << " \""
            << w->objectName().toStdString() << "\"";
      }
    window_->findChild<Banner*>("message")->dismiss();
    QTest::mouseClick(window_->stop_button(), Qt::LeftButton);
    ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  }
  window_->set_presenter(false);
}

// Issue 40.6: presenter mode said "7.7× / 8.0× the baseline" without naming it, and the baseline
// picked by itself was a cancelled, flagged run. It is now the first finished run with no ⚠ of
// the model most runs train, and the headline names it.
TEST_F(Fit, TheHeadlineNamesItsBaselineAFinishedCleanRunOfTheSameModel) {
  // Compared in the order they were made: a cancelled run (flagged) first, then two finished.
  const auto cancelled =
      test::write_run(runs_.path() / "cut", 2, 64, 30, 12, "2026-01-01T09:59:00Z");
  test::write_run(runs_.path() / "slow", 1, 64, 60, 20, "2026-01-01T10:00:00Z");
  test::write_run(runs_.path() / "fast", 4, 64, 60, 8, "2026-01-01T10:01:00Z");
  {
    nlohmann::json info = nlohmann::json::parse(std::ifstream(cancelled / "run.json"));
    info["status"] = "cancelled";
    std::ofstream(cancelled / "run.json") << info.dump(2);
  }
  open_window();
  window_->show_recent(3);
  window_->set_presenter(true);
  show_at(QSize(1920, 1080));
  const std::vector<RunEntry*>& compared = window_->compare()->runs();
  const int baseline = window_->compare()->baseline_index();
  ASSERT_GE(baseline, 0);
  const RunData& chosen = compared[size_t(baseline)]->data;
  EXPECT_EQ(chosen.status(), "finished");
  EXPECT_TRUE(run_flags(chosen).empty());
  EXPECT_EQ(chosen.dir.filename(), "slow") << "the first finished, clean run";
  const QString headline = window_->key_numbers();
  const QString name = QString::fromStdString(window_->compare()->rows()[size_t(baseline)].name);
  EXPECT_FALSE(headline.contains("× the baseline")) << headline.toStdString();
  EXPECT_TRUE(headline.contains("×</b> " + name.toHtmlEscaped())) << headline.toStdString();
  EXPECT_TRUE(headline.contains("the baseline")) << "its own line says it is the baseline";
  window_->set_presenter(false);
}

// In presenter mode the headline above the tabs keeps the room of its most lines: the tab bar
// stays put when a line wraps or runs are added.
TEST_F(Fit, TheTabBarStaysPutWhenTheHeadlineWraps) {
  write_six_runs();
  open_window();
  window_->show_recent(1);
  window_->set_presenter(true);
  for (const QSize size : {QSize(1024, 768), QSize(1280, 720)}) {
    show_at(size);
    wait_until([] { return false; }, 100ms);
    QTabBar* bar = window_->tabs()->tabBar();
    const int y = bar->mapTo(window_.get(), QPoint()).y();
    window_->show_recent(6);  // more runs, some lines wrapping at 1024 px
    wait_until([] { return false; }, 100ms);
    EXPECT_EQ(bar->mapTo(window_.get(), QPoint()).y(), y)
        << size.width() << "x" << size.height() << ": " << window_->key_numbers().toStdString();
    for (RunEntry* entry : window_->store()->entries())
      window_->store()->set_checked(entry->id, false);
    window_->show_recent(1);
    wait_until([] { return false; }, 100ms);
    EXPECT_EQ(bar->mapTo(window_.get(), QPoint()).y(), y) << size.width() << "x" << size.height();
  }
}

// Compare's summary table at 1280x720 and 1024x768 with six runs: every row in view, not 2½ rows
// in a scroll box of its own inside the scrolling tab.
TEST_F(Fit, CompareShowsEverySummaryRowWithoutAScrollBoxOfItsOwn) {
  write_six_runs();
  open_window();
  window_->show_recent(6);
  window_->show_tab("compare");
  auto* table = window_->findChild<QTableWidget*>("summary-table");
  ASSERT_NE(table, nullptr);
  for (const QSize size : {QSize(1280, 720), QSize(1024, 768)}) {
    show_at(size);
    wait_until([] { return false; }, 100ms);
    ASSERT_EQ(table->rowCount(), 6);
    EXPECT_EQ(table->verticalScrollBar()->maximum(), 0)
        << size.width() << "x" << size.height() << ": the table is " << table->height()
        << " px high for rows of " << table->rowHeight(0) << " px";
  }
}

// The darkest pixel of a widget as drawn: its text.
int darkest(QWidget* widget) {
  const QImage image = widget->grab().toImage();
  int dark = 255;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) dark = std::min(dark, qGray(image.pixel(x, y)));
  return dark;
}

// Pause and Stop are off while nothing trains, and look it, in both modes: their text is grey.
TEST_F(Fit, DisabledButtonsLookDisabledInBothModes) {
  open_window();
  for (bool presenter : {false, true}) {
    window_->set_presenter(presenter);
    show_at(QSize(1280, 720));
    QPushButton* pause = window_->pause_button();
    ASSERT_FALSE(pause->isEnabled());
    const int disabled = darkest(pause);
    pause->setEnabled(true);
    const int enabled = darkest(pause);
    pause->setEnabled(false);
    EXPECT_GE(disabled - enabled, 60)
        << (presenter ? "presenter: " : "normal: ") << "darkest pixel " << disabled << " disabled, "
        << enabled << " enabled";
  }
}

// The wheel over the setup panel scrolls the panel, also where a spin box is under the pointer;
// a spin box clicked into takes the wheel.
TEST_F(Fit, TheWheelOverTheSetupPanelScrollsItNotItsSpinBoxes) {
  open_window();
  show_at(QSize(1280, 720));
  auto* column = window_->findChild<QScrollArea*>("setup-column");
  ASSERT_GT(column->verticalScrollBar()->maximum(), 0) << "the setup panel does not scroll";
  auto* batch = window_->findChild<QSpinBox*>("batch");
  const int value = batch->value();
  const QPoint at = batch->mapTo(window_.get(), batch->rect().center());
  QWidget* took = test::turn_wheel(window_.get(), at, -1);
  EXPECT_EQ(batch->value(), value);
  EXPECT_GT(column->verticalScrollBar()->value(), 0);
  EXPECT_FALSE(batch->hasFocus());
  EXPECT_NE(took, nullptr);
  // Clicked into, it is the spin box's.
  const QPoint now = batch->mapTo(window_.get(), batch->rect().center());
  QTest::mouseClick(batch->findChild<QLineEdit*>(), Qt::LeftButton);
  ASSERT_TRUE(batch->hasFocus());
  test::turn_wheel(window_.get(), now, 1);
  EXPECT_NE(batch->value(), value);
}

// Presenter mode on a 1920x1080 screen: every chart's text (ticks, axis labels, legends, titles)
// is at least ~28 px high, not only the headline.
TEST_F(Fit, PresenterModeChartTextIsReadableFromTheBackOfARoom) {
  write_six_runs();
  // The 2-replica run's twin on one replica: Compare draws their scaling chart too.
  test::write_run(runs_.path() / "r6", 6, 64, 120, 14, "2026-01-01T09:59:00Z", 1);
  open_window();
  window_->show_recent(7);
  window_->set_presenter(true);
  show_at(QSize(1920, 1080));
  for (const char* tab : {"live", "compare"}) {
    window_->show_tab(tab);
    wait_until([] { return false; }, 150ms);
    std::vector<std::pair<std::string, QCustomPlot*>> plots;
    std::vector<ChartView*> views = window_->live_charts();
    views.push_back(window_->compare()->speedup_chart());
    views.push_back(window_->compare()->step_time_chart());
    for (ChartView* view : views)
      if (view->isVisible()) plots.emplace_back(chart_kind_name(view->kind()), view->plot());
    if (ScalingChart* scaling = window_->compare()->scaling_chart(); scaling->isVisible())
      plots.emplace_back("scaling", scaling->plot());
    if (std::string(tab) == "compare") {
      ASSERT_TRUE(window_->compare()->scaling_chart()->isVisible());
    }
    for (const auto& [name, plot] : plots) {
      for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes()) {
          if (!axis->visible()) continue;
          EXPECT_GE(QFontMetricsF(axis->tickLabelFont()).height(), 27.5) << name;
          EXPECT_GE(QFontMetricsF(axis->labelFont()).height(), 27.5) << name;
        }
      for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
        QFont font;
        if (auto* legend = qobject_cast<QCPLegend*>(plot->plotLayout()->elementAt(i)))
          font = legend->font();
        else if (auto* text = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i)))
          font = text->font();
        else
          continue;
        EXPECT_GE(QFontMetricsF(font).height(), 27.5) << name;
      }
    }
  }
}

// A layer made invalid, Train pressed: the message says the model cannot be built. The layer put
// right again: the message goes, and the model is LeNet-5 again, not "custom".
TEST_F(Fit, AFixedModelClearsItsMessageAndIsItsPresetAgain) {
  open_window();
  LayerEditor* layers = window_->experiment()->layers();
  auto* model = window_->findChild<QComboBox*>("model");
  ASSERT_EQ(model->currentData().toString(), "lenet5");
  layers->set_value(0, "kernel", 40);
  EXPECT_EQ(model->currentData().toString(), "custom");
  EXPECT_EQ(window_->start_training(), 0);
  EXPECT_TRUE(window_->message().contains("cannot be built")) << window_->message().toStdString();
  layers->set_value(0, "kernel", 5);
  EXPECT_TRUE(window_->message().isEmpty()) << window_->message().toStdString();
  EXPECT_EQ(model->currentData().toString(), "lenet5");
  EXPECT_EQ(window_->experiment()->experiment().model.name, "lenet5");
}

// The row of `dir`'s run in the runs list.
QTreeWidgetItem* row_of(RunsPanel* panel, RunStore* store, const std::string& dir) {
  for (int i = 0; i < panel->tree()->topLevelItemCount(); ++i) {
    QTreeWidgetItem* item = panel->tree()->topLevelItem(i);
    RunEntry* entry = store->find(item->data(0, Qt::UserRole).toInt());
    if (entry && entry->data.dir.filename() == dir) return item;
  }
  return nullptr;
}

// At 1024x768 (and in presenter mode at 1280x720) the runs list keeps its names readable: the Run
// column has room for 14 characters after its tick box and colour, every column ends inside the
// list (the device's long text gives way, elided, and its tooltip says it whole). The Run column
// showed only tick boxes at 1024x768, the device and epoch columns taking all the room.
TEST_F(Fit, TheRunsListKeepsItsNamesReadableOnASmallScreen) {
  write_six_runs();
  open_window();
  window_->show_recent(6);
  QTreeWidget* tree = window_->runs_panel()->tree();
  for (const auto& [size, presenter] :
       {std::pair{QSize(1024, 768), false}, std::pair{QSize(1280, 720), true}}) {
    window_->set_presenter(presenter);
    show_at(size);
    wait_until([] { return false; }, 100ms);
    const std::string at = std::to_string(size.width()) + (presenter ? " presenter" : "");
    const QFontMetrics metrics = tree->fontMetrics();
    EXPECT_GE(tree->header()->sectionSize(0),
              metrics.horizontalAdvance(QString(14, QChar('x'))) + tree->iconSize().width())
        << at;
    EXPECT_LE(tree->header()->length(), tree->viewport()->width()) << at;
    for (int i = 0; i < tree->topLevelItemCount(); ++i) {
      QTreeWidgetItem* item = tree->topLevelItem(i);
      EXPECT_TRUE(item->toolTip(1).startsWith(item->text(1)))
          << at << ": " << item->text(1).toStdString();
    }
  }
}

// Every line of text a Compare chart draws (its titles and the key of its numbered bars) fits in
// the chart at 1280x720 and 1024x768: the key centred a long run name wider than its chart and cut
// it off at both ends ("enet5 cpu, 2 threads, 2 replicas, b6").
TEST_F(Fit, CompareChartTextFitsItsChart) {
  write_six_runs();
  // A run named by a learner, longer than a chart is wide.
  const auto long_run =
      test::write_run(runs_.path() / "long", 7, 64, 120, 9, "2026-01-01T10:07:00Z", 2);
  nlohmann::json info = nlohmann::json::parse(std::ifstream(long_run / "run.json"));
  info["name"] = "the second try with seven threads and two replicas after the lecture";
  std::ofstream(long_run / "run.json") << info.dump();
  open_window();
  window_->show_recent(7);
  window_->show_tab("compare");
  for (const QSize size : {QSize(1280, 720), QSize(1024, 768)}) {
    show_at(size);
    wait_until([] { return false; }, 200ms);
    int keys = 0;
    for (QCustomPlot* plot : window_->compare()->findChildren<QCustomPlot*>()) {
      if (!plot->isVisible()) continue;
      for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
        auto* text = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i));
        if (!text) continue;
        keys += text->text().contains('\n');
        for (const QString& line : text->text().split('\n'))
          EXPECT_LE(QFontMetricsF(text->font()).horizontalAdvance(line), plot->width())
              << size.width() << ": " << line.toStdString();
      }
    }
    EXPECT_GT(keys, 0) << "no numbered key drawn at " << size.width();
  }
}

// At 1280x720 Compare's summary table shows every figure without scrolling sideways: the device,
// the epoch time, the run's name and the all-reduce give way (elided, whole in their tips). "Time
// to target" and the columns after it were cut off at the table's right edge.
TEST_F(Fit, CompareTableShowsEveryFigureAt1280x720) {
  write_six_runs();
  open_window();
  window_->show_recent(6);
  window_->show_tab("compare");
  show_at(QSize(1280, 720));
  wait_until([] { return false; }, 200ms);
  QTableWidget* table = window_->compare()->table();
  ASSERT_EQ(table->rowCount(), 6);
  EXPECT_LE(table->horizontalHeader()->length(), table->viewport()->width());
  EXPECT_FALSE(table->horizontalScrollBar()->isVisible());
  for (int r = 0; r < table->rowCount(); ++r)
    for (int c : {0, 1, 4, 11})
      EXPECT_TRUE(table->item(r, c)->toolTip().startsWith(table->item(r, c)->text().remove("⚠ ")))
          << table->item(r, c)->text().toStdString();
  // The runs' names, the epoch times and the figures are whole: each of those columns is as wide
  // as its widest cell ("lenet5 cpu, 1 threa…", "≈ 13.39 s,…" were cut here). The device (which
  // the name says) and the all-reduce give way first. Columns of dashes only are left out, and
  // named below the table.
  const QAbstractItemView* view = table;  // sizeHintForColumn is public here
  QString widths;                         // what each column has and needs, for a failure's message
  for (int c = 0; c < table->columnCount(); ++c)
    widths += QString(" %1/%2%3")
                  .arg(table->horizontalHeader()->sectionSize(c))
                  .arg(view->sizeHintForColumn(c))
                  .arg(table->isColumnHidden(c) ? "h" : "");
  for (int c = 0; c < table->columnCount(); ++c) {
    if (table->isColumnHidden(c) || c == 1 || c == 11) continue;
    EXPECT_GE(table->horizontalHeader()->sectionSize(c), view->sizeHintForColumn(c))
        << table->horizontalHeaderItem(c)->text().toStdString() << " in " << widths.toStdString();
  }
  EXPECT_TRUE(table->isColumnHidden(9));  // Energy: no fixture run measured it
  EXPECT_FALSE(table->isColumnHidden(0));
  QLabel* left_out = window_->compare()->left_out_label();
  EXPECT_TRUE(left_out->isVisible());
  EXPECT_TRUE(left_out->text().contains("Energy")) << left_out->text().toStdString();
  EXPECT_TRUE(left_out->text().contains("Images/J")) << left_out->text().toStdString();
}

// The scaling chart's legend wraps to its width, at 1024x768 and after the window is resized: in
// one row it cut off "predicted" and "measured" at 1024x768.
TEST_F(Fit, TheScalingChartsLegendStaysInsideIt) {
  write_six_runs();
  test::write_run(runs_.path() / "r6", 6, 64, 120, 14, "2026-01-01T09:59:00Z", 1);
  open_window();
  window_->show_recent(7);
  window_->show_tab("compare");
  ScalingChart* scaling = window_->compare()->scaling_chart();
  for (const QSize size : {QSize(1920, 1080), QSize(1024, 768)}) {
    show_at(size);
    wait_until([] { return false; }, 200ms);
    ASSERT_TRUE(scaling->isVisible());
    QCustomPlot* plot = scaling->plot();
    plot->replot();
    QCPLegend* legend = nullptr;
    for (int i = 0; i < plot->plotLayout()->elementCount() && !legend; ++i)
      legend = qobject_cast<QCPLegend*>(plot->plotLayout()->elementAt(i));
    ASSERT_NE(legend, nullptr);
    int entries = 0;
    for (int i = 0; i < legend->itemCount(); ++i) {
      QCPAbstractLegendItem* item = legend->item(i);  // null: an empty cell of the last row
      if (!item) continue;
      ++entries;
      EXPECT_LE(item->outerRect().right(), plot->width())
          << size.width() << ": entry " << i << " ends at " << item->outerRect().right();
    }
    EXPECT_EQ(entries, 3);
  }
}

// Compare in presenter mode on a 1024x768 projector, maximized there first, with seven runs ticked
// (a 2-replica run and its 1-replica twin, which ran under outside load): the three charts share
// the row fairly; each bar chart's title is drawn whole, wrapped rather than elided (they were cut
// to "Compared …" while the scaling chart took 452 of 1000 px); the scaling chart's caption, its
// model box and both its panels lie inside it without overlapping, each panel at least three
// tick labels tall (in a third, its caption wrapped to eight lines and crushed the panels into
// each other), and its ⚠ (the caption's and those over the flagged baseline's points) is seen.
TEST_F(Fit, CompareInPresenterModeAt1024x768ShowsEveryTitleCaptionAndWarningWhole) {
  write_six_runs();
  const auto twin = test::write_run(runs_.path() / "r6", 6, 64, 120, 14, "2026-01-01T09:59:00Z", 1);
  nlohmann::json info = nlohmann::json::parse(std::ifstream(twin / "run.json"));
  info["outside_load"] = {{"under_load", true}, {"mean_cores", 1.2}, {"cores", 2}};
  std::ofstream(twin / "run.json") << info.dump();
  open_window();
  window_->show_recent(7);
  window_->show_tab("compare");
  QScreen* screen = classroom_screen("1024x768");
  ASSERT_NE(screen, nullptr);
  window_->showNormal();
  window_->setGeometry(QRect(screen->geometry().topLeft() + QPoint(20, 40), QSize(900, 600)));
  ASSERT_TRUE(wait_until([&] { return window_->screen() == screen; }, 2s));
  window_->showMaximized();
  ASSERT_TRUE(wait_until([&] { return window_->isMaximized(); }, 5s));
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "View", "Presenter mode"));
  ASSERT_TRUE(wait_until([&] { return window_->isFullScreen(); }, 5s));
  wait_until([] { return false; }, 300ms);
  ASSERT_EQ(window_->geometry(), screen->geometry());

  CompareView* compare = window_->compare();
  ScalingChart* scaling = compare->scaling_chart();
  ASSERT_TRUE(scaling->isVisible()) << "no scaling study among the runs";
  ASSERT_FALSE(scaling->study()->baseline_warning().empty()) << "the baseline is not flagged";
  // A fair share: no chart more than a quarter wider than another.
  const std::vector<QWidget*> charts = {compare->speedup_chart(), compare->step_time_chart(),
                                        scaling};
  int narrowest = 1 << 20, widest = 0;
  for (QWidget* chart : charts) {
    narrowest = std::min(narrowest, chart->width());
    widest = std::max(widest, chart->width());
  }
  EXPECT_LE(widest, narrowest * 5 / 4)
      << "the charts are " << charts[0]->width() << ", " << charts[1]->width() << " and "
      << charts[2]->width() << " px wide";

  // Each bar chart's title: the chart's or its one panel's, every word of it, inside the plot.
  for (ChartView* view : {compare->speedup_chart(), compare->step_time_chart()}) {
    view->plot()->replot(QCustomPlot::rpImmediateRefresh);
    auto* title = qobject_cast<QCPTextElement*>(view->plot()->plotLayout()->elementAt(0));
    ASSERT_NE(title, nullptr);
    const QString drawn = title->text();
    const QString whole = QString(drawn).replace('\n', ' ');
    bool known = whole == QString::fromStdString(view->chart().title);
    for (const Panel& panel : view->chart().panels)
      known |= whole == QString::fromStdString(panel.title);
    EXPECT_TRUE(known) << "the title is drawn as \"" << drawn.toStdString() << "\"";
    EXPECT_FALSE(drawn.contains(QChar(0x2026))) << drawn.toStdString();
    for (const QString& line : drawn.split('\n'))
      EXPECT_LE(QFontMetricsF(title->font()).horizontalAdvance(line), view->plot()->width())
          << line.toStdString();
    EXPECT_TRUE(view->plot()->rect().contains(title->outerRect())) << drawn.toStdString();
  }
  const QString baseline = compare->findChild<QComboBox*>("baseline")->currentText();
  QString speedup_title =
      qobject_cast<QCPTextElement*>(compare->speedup_chart()->plot()->plotLayout()->elementAt(0))
          ->text();
  EXPECT_TRUE(speedup_title.replace('\n', ' ').contains(baseline))
      << speedup_title.toStdString() << " does not name " << baseline.toStdString();

  // Both panels of the scaling chart inside its plot, apart, and not crushed.
  QCustomPlot* plot = scaling->plot();
  plot->replot(QCustomPlot::rpImmediateRefresh);
  const QList<QCPAxisRect*> panels = plot->axisRects();
  ASSERT_EQ(panels.size(), 2);
  const double tick_h = QFontMetricsF(panels[0]->axis(QCPAxis::atLeft)->tickLabelFont()).height();
  for (QCPAxisRect* panel : panels) {
    EXPECT_GE(panel->height(), 3 * tick_h) << "a panel is " << panel->height() << " px high";
    EXPECT_TRUE(plot->rect().contains(panel->outerRect()));
  }
  EXPECT_FALSE(panels[0]->outerRect().intersects(panels[1]->outerRect()))
      << "the panels overlap: " << panels[0]->outerRect().bottom() << " below "
      << panels[1]->outerRect().top();
  int marks = 0;
  for (int i = 0; i < plot->itemCount(); ++i) {
    auto* mark = qobject_cast<QCPItemText*>(plot->item(i));
    if (!mark || mark->text() != QStringLiteral("⚠")) continue;
    ++marks;
    const QRectF drawn(mark->topLeft->pixelPosition(), mark->bottomRight->pixelPosition());
    EXPECT_TRUE(QRectF(mark->clipAxisRect()->rect()).contains(drawn))
        << "a ⚠ at " << drawn.top() << " to " << drawn.bottom() << " is cut by its panel, "
        << mark->clipAxisRect()->top() << " to " << mark->clipAxisRect()->bottom();
  }
  EXPECT_EQ(marks, 2) << "the flagged baseline is marked in both panels";

  // The scaling chart: its caption whole, above the plot, and its model's box below it, each
  // inside the chart and none over another.
  auto* caption = scaling->findChild<QLabel*>("scaling-runs");
  auto* details = scaling->findChild<QWidget*>("scaling-details");
  ASSERT_NE(caption, nullptr);
  ASSERT_NE(details, nullptr);
  auto in_chart = [&](QWidget* w) { return QRect(w->mapTo(scaling, QPoint()), w->size()); };
  for (QWidget* part : {static_cast<QWidget*>(caption), details, static_cast<QWidget*>(plot)}) {
    EXPECT_TRUE(part->isVisible()) << part->objectName().toStdString();
    EXPECT_TRUE(scaling->rect().contains(in_chart(part)))
        << part->objectName().toStdString() << " is outside the chart";
  }
  EXPECT_GE(caption->height(), caption->heightForWidth(caption->width()))
      << "the caption is cut: " << caption->text().toStdString();
  EXPECT_TRUE(caption->text().contains("⚠")) << caption->text().toStdString();
  EXPECT_FALSE(in_chart(caption).intersects(in_chart(plot)));
  EXPECT_FALSE(in_chart(details).intersects(in_chart(plot)));
  // And the caption on the screen, inside the part of the tab it is seen through.
  const QRect caption_on_screen(caption->mapTo(window_.get(), QPoint()), caption->size());
  EXPECT_TRUE(window_->rect().contains(caption_on_screen));
  for (QWidget* at = caption->parentWidget(); at && at != window_.get(); at = at->parentWidget()) {
    auto* area = qobject_cast<QAbstractScrollArea*>(at->parentWidget());
    if (area && area->viewport() == at) {
      EXPECT_TRUE(QRect(at->mapTo(window_.get(), QPoint()), at->size()).contains(caption_on_screen))
          << "the caption is scrolled out of " << area->objectName().toStdString();
    }
  }

  // Exported, the chart is drawn for the file's size, and then for the window as it was.
  const QSize plot_size = plot->size();
  const QRect caption_at = in_chart(caption);
  test::TempDir out;
  QString error;
  const QString file = QString::fromStdString((out.path() / "scaling.png").string());
  ASSERT_TRUE(scaling->export_to(file, ExportFormat::Png, &error, 1200, 750))
      << error.toStdString();
  EXPECT_EQ(QImage(file).size(), QSize(1200, 750));
  EXPECT_EQ(plot->size(), plot_size);
  EXPECT_EQ(in_chart(caption), caption_at);
  plot->replot(QCustomPlot::rpImmediateRefresh);
  EXPECT_EQ(plot->axisRects().size(), 2);
  EXPECT_TRUE(plot->rect().contains(plot->axisRects()[1]->outerRect()));
}

// A bar panel whose every bar is empty says why once in its middle ("not reached (every run)"),
// fitted to the panel: in presenter mode at 1024x768 under X it was cut at both ends ("o full
// epoc"). A panel 90 px wide, in presenter type: every line of the note fits, and the words stay.
TEST(EmptyNote, FitsAPanelNarrowerThanItsText) {
  QCustomPlot plot;
  plot.resize(130, 240);
  plot.show();
  plot.replot();
  QCPAxisRect* rect = plot.axisRect();
  ASSERT_LT(rect->width(), 110);
  auto* note = new QCPItemText(&plot);
  note->setClipAxisRect(rect);
  note->setFont(scaled_font(1.8 * 0.9));
  set_empty_note(note, "no full epoch\n(every run)");
  const QFontMetricsF metrics(note->font());
  ASSERT_GT(metrics.horizontalAdvance("no full epoch"), rect->width()) << "not narrow enough";
  for (const QString& line : note->text().split('\n'))
    EXPECT_LE(metrics.horizontalAdvance(line), rect->width() - 6) << line.toStdString();
  EXPECT_TRUE(note->text().startsWith("no full")) << note->text().toStdString();
  // Wider again (the window resized): the note is its whole text once more.
  plot.resize(600, 240);
  plot.replot();
  fit_empty_note(note);
  EXPECT_EQ(note->text(), "no full epoch\n(every run)");
}

// The same in the window, at 1024x768 with and without presenter mode (a guard: offscreen fonts
// left the panels wide enough before the fix too).
TEST_F(Fit, AnEmptyPanelsNoteFitsItsPanel) {
  write_six_runs();
  // The 2-replica run's twin on one replica: the scaling chart takes its share of the width.
  test::write_run(runs_.path() / "r6", 6, 64, 120, 14, "2026-01-01T09:59:00Z", 1);
  open_window();
  window_->show_recent(7);
  window_->show_tab("compare");
  window_->compare()->target_box()->setValue(99.9);  // reached by no run
  for (bool presenter : {false, true}) {
    window_->set_presenter(presenter);
    show_at(QSize(1024, 768));
    wait_until([] { return false; }, 200ms);
    int notes = 0;
    for (QCustomPlot* plot : window_->compare()->findChildren<QCustomPlot*>()) {
      if (!plot->isVisible()) continue;
      plot->replot();
      for (int i = 0; i < plot->itemCount(); ++i) {
        auto* note = qobject_cast<QCPItemText*>(plot->item(i));
        if (!note || !note->visible() || !note->clipAxisRect() ||
            !note->property("whole_text").isValid())
          continue;
        ++notes;
        for (const QString& line : note->text().split('\n'))
          EXPECT_LE(QFontMetricsF(note->font()).horizontalAdvance(line),
                    note->clipAxisRect()->width())
              << (presenter ? "presenter: " : "") << line.toStdString();
      }
    }
    EXPECT_GT(notes, 0) << "no panel said why its bars are empty";
  }
}

// The baseline unticked in the runs list leaves Compare and the presenter's headline.
TEST_F(Fit, AnUntickedBaselineLeavesCompareAndTheHeadline) {
  write_six_runs();
  open_window();
  show_at(QSize(1280, 720));
  window_->show_recent(3);  // r3, r4, r5
  RunEntry* r3 = nullptr;
  for (RunEntry* e : window_->store()->entries())
    if (e->data.dir.filename() == "r3") r3 = e;
  ASSERT_NE(r3, nullptr);
  window_->runs_panel()->set_baseline(r3->id);
  ASSERT_EQ(window_->compare()->runs().size(), 3u);
  QTreeWidget* tree = window_->runs_panel()->tree();
  QTreeWidgetItem* item = row_of(window_->runs_panel(), window_->store(), "r3");
  ASSERT_NE(item, nullptr);
  tree->scrollToItem(item);
  test::click_check_box(tree, tree->indexFromItem(item));
  ASSERT_TRUE(wait_until([&] { return !r3->checked; }, 5s));
  wait_until([] { return false; }, 100ms);
  ASSERT_EQ(window_->compare()->runs().size(), 2u);
  for (RunEntry* e : window_->compare()->runs()) EXPECT_NE(e->id, r3->id);
  window_->set_presenter(true);
  EXPECT_FALSE(
      window_->key_numbers().contains(QString::fromStdString(display_run_names({&r3->data})[0])))
      << window_->key_numbers().toStdString();
}

// The replica timeline's key names its white gaps, says "1 step" for one, and exports.
TEST_F(Fit, TheReplicaTimelineNamesItsGapsCountsRightAndExports) {
  test::write_run(runs_.path() / "one", 2, 64, 1, 10, "2026-01-01T10:00:00Z", 2);
  open_window();
  window_->show_recent(1);
  ReplicaTimeline* timeline = window_->replica_timeline();
  ASSERT_NE(timeline->run(), nullptr);
  auto* title = window_->findChild<QLabel*>("replica-timeline-title");
  EXPECT_TRUE(title->text().contains("last step,")) << title->text().toStdString();
  EXPECT_TRUE(title->text().contains("□")) << title->text().toStdString();
  auto* button = window_->findChild<QToolButton*>("replica-timeline-export");
  ASSERT_NE(button, nullptr);
  ASSERT_TRUE(button->isVisible());
  const QString path = QString::fromStdString((runs_.path() / "timeline.png").string());
  test::answer_file_dialog(
      path, [&] { EXPECT_TRUE(test::choose_from_button_menu(button, button->menu(), "PNG")); });
  ASSERT_TRUE(wait_until([&] { return QFileInfo(path).size() > 1000; }, 10s));
  EXPECT_TRUE(window_->message().contains("Saved")) << window_->message().toStdString();
}

// A run gpulab-cli records into the runs folder while the window is open is listed without a
// restart, and its status follows the run's record.
TEST_F(Fit, RunsAnotherProgramRecordsInTheRunsFolderAppear) {
  open_window();
  ASSERT_TRUE(window_->store()->entries().empty());
  const std::string command = std::string(GPULAB_CLI_PATH) +
                              " train --model mlp --steps 3 --batch 32 --threads 1 --quiet"
                              " --data-dir " +
                              data_.path().string() + " --out " +
                              (runs_.path() / "from-cli").string() + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  ASSERT_TRUE(wait_until([&] { return window_->store()->entries().size() == 1; }, 10s));
  RunEntry* run = window_->store()->entries()[0];
  EXPECT_EQ(run->data.status(), "finished");
  ASSERT_TRUE(
      wait_until([&] { return window_->runs_panel()->tree()->topLevelItemCount() == 1; }, 5s));
}

// "Untick all" and "Show only the latest 2", from the runs list's Show button and from the
// window's "Runs shown" menu.
TEST_F(Fit, UntickAllAndShowOnlyTheLatestRuns) {
  write_six_runs();
  open_window();
  show_at(QSize(1280, 720));
  window_->show_recent(5);
  auto* show = window_->findChild<QToolButton*>("runs-show");
  ASSERT_NE(show, nullptr);
  ASSERT_TRUE(test::choose_from_button_menu(show, show->menu(), "Untick all"));
  ASSERT_TRUE(wait_until([&] { return window_->store()->checked().empty(); }, 5s));
  ASSERT_TRUE(test::choose_from_button_menu(show, show->menu(), "Show only the latest", "2 runs"));
  ASSERT_TRUE(wait_until([&] { return window_->store()->checked().size() == 2; }, 5s));
  const auto checked = window_->store()->checked();
  EXPECT_EQ(checked[0]->data.dir.filename(), "r4");
  EXPECT_EQ(checked[1]->data.dir.filename(), "r5");
  ASSERT_TRUE(test::choose_from_button_menu(window_->runs_button(), window_->runs_button()->menu(),
                                            "Untick all"));
  ASSERT_TRUE(wait_until([&] { return window_->store()->checked().empty(); }, 5s));
}

// Issue 40.8: in presenter mode at 1024x768 and 1280x720 (and beside the setup at both), every
// Live chart's title is whole on one line, as written or in its brief form ("Step by phase"),
// never cut to "Median step, by phas…" nor wrapped out of line with its neighbours'.
TEST_F(Fit, LiveChartTitlesAreWholeOnOneLineOnAClassroomScreen) {
  write_six_runs();
  open_window();
  window_->show_recent(6);
  window_->show_tab("live");
  for (const QSize size : {QSize(1024, 768), QSize(1280, 720)})
    for (const bool presenter : {true, false}) {
      window_->set_presenter(presenter);
      show_at(size);
      wait_until([] { return false; }, 200ms);
      for (ChartView* view : window_->live_charts()) {
        if (!view->isVisible()) continue;
        const std::string where = std::to_string(size.width()) + "x" +
                                  std::to_string(size.height()) +
                                  (presenter ? " presenter " : " ") + chart_kind_name(view->kind());
        QCustomPlot* plot = view->plot();
        int titles = 0;
        for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
          auto* text = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i));
          if (!text) continue;
          ++titles;
          EXPECT_FALSE(text->text().contains(QChar(0x2026)))
              << where << ": " << text->text().toStdString();
          EXPECT_FALSE(text->text().contains('\n')) << where << ": " << text->text().toStdString();
          EXPECT_LE(QFontMetricsF(text->font()).horizontalAdvance(text->text()), plot->width())
              << where << ": " << text->text().toStdString();
        }
        EXPECT_GE(titles, 1) << where;
      }
    }
}

// Issue 40.8: presenter mode at 1024x768 and 1280x720 with runs on one device: the Live tab's
// per-replica hint is whole (its wrapped lines, which a fixed line's height cut in half), the
// runs are named once above the charts however few, and the step-time bars are numbered as that
// key numbers them, with no legend of run names in any chart to crowd the plots.
TEST_F(Fit, PresenterLiveNamesTheRunsAboveAndShowsTheReplicaHintWhole) {
  test::write_run(runs_.path() / "r0", 1, 64, 120, 8, "2026-01-01T10:00:00Z", 1);
  test::write_run(runs_.path() / "r1", 2, 64, 120, 9, "2026-01-01T10:01:00Z", 1);
  open_window();
  window_->show_recent(2);
  window_->show_tab("live");
  window_->set_presenter(true);
  auto* hint = window_->findChild<QLabel*>("replica-timeline-hint");
  ASSERT_NE(hint, nullptr);
  for (const QSize size : {QSize(1024, 768), QSize(1280, 720)}) {
    show_at(size);
    wait_until([] { return false; }, 200ms);
    const std::string where = std::to_string(size.width()) + "x" + std::to_string(size.height());
    ASSERT_TRUE(hint->isVisible()) << where;
    EXPECT_GE(hint->height(), hint->heightForWidth(hint->width())) << where;
    if (size.width() == 1024) {
      EXPECT_GT(hint->heightForWidth(hint->width()), QFontMetrics(hint->font()).height())
          << where << ": the hint wraps here";
    }
    EXPECT_TRUE(window_->live()->run_key_shown()) << where;
    for (ChartView* view : window_->live_charts()) {
      QCPLegend* legend = nullptr;
      for (int i = 0; i < view->plot()->plotLayout()->elementCount(); ++i)
        if (auto* l = qobject_cast<QCPLegend*>(view->plot()->plotLayout()->elementAt(i)))
          legend = l;
      if (!legend) continue;
      for (int i = 0; i < legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i))) {
          EXPECT_FALSE(item->plottable()->name().startsWith("lenet5"))
              << where << " " << chart_kind_name(view->kind()) << ": "
              << item->plottable()->name().toStdString();
        }
    }
    ChartView* steps = window_->chart(ChartKind::StepTime);
    auto ticker = steps->plot()->axisRects().back()->axis(QCPAxis::atBottom)->ticker();
    auto* text = dynamic_cast<QCPAxisTickerText*>(ticker.data());
    ASSERT_NE(text, nullptr) << where;
    EXPECT_EQ(text->ticks().value(1.0), "1") << where;
    EXPECT_EQ(text->ticks().value(2.0), "2") << where;
  }
  // Out of presenter mode two runs are named in each chart again.
  window_->set_presenter(false);
  EXPECT_FALSE(window_->live()->run_key_shown());
}

}  // namespace
}  // namespace gpulab::ui

int main(int argc, char** argv) {
  using gpulab::test::kClassroomScreens;
  return gpulab::test::run_window_tests(argc, argv, /*qt_dialogs=*/true, kClassroomScreens);
}
