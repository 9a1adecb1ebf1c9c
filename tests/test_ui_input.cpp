// The window driven as a person drives it, on Qt's offscreen platform: mouse clicks at the real
// rectangles of items and check boxes, keys, drags on the plots, menus opened from the menu bar,
// and a seeded monkey that clicks everything it can reach while runs train.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QAbstractSpinBox>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSlider>
#include <QTabBar>
#include <QTableWidget>
#include <QToolButton>
#include <QTreeWidget>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

#include "engine/training/experiment.hpp"
#include "test_support.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/runs/runs_panel.hpp"
#include "ui/setup/device_picker.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/setup/race_panel.hpp"
#include "ui/window/main_window.hpp"
#include "ui_fixture.hpp"
#include "ui_input.hpp"

namespace gpulab::ui {
namespace {

using namespace std::chrono_literals;
using test::wait_until;

class Input : public test::WindowTest {
 protected:
  // A run recorded by gpulab-cli, as a user makes one before starting the window.
  void cli_run(const std::string& name) {
    const std::string command = std::string(GPULAB_CLI_PATH) +
                                " train --model mlp --steps 20 --batch 32 --threads 1 --quiet" +
                                " --data-dir " + data_.path().string() + " --out " +
                                (runs_.path() / name).string() + " > /dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  QTreeWidget* runs_tree() { return window_->runs_panel()->tree(); }
  QModelIndex run_index(int row) { return runs_tree()->model()->index(row, 0); }
  RunEntry* run_at(int row) {
    const int id = runs_tree()->topLevelItem(row)->data(0, Qt::UserRole).toInt();
    return window_->store()->find(id);
  }
};

// Issue 9.1: a click on a run's check box rebuilt the list under the view's own mouse handler.
TEST_F(Input, ClickingARunsCheckBoxTicksItAndTheWindowLives) {
  cli_run("a");
  cli_run("b");
  open_window();
  ASSERT_EQ(runs_tree()->topLevelItemCount(), 2);
  RunEntry* first = run_at(0);
  ASSERT_FALSE(first->checked);

  test::click_check_box(runs_tree(), run_index(0));
  ASSERT_TRUE(wait_until([&] { return first->checked; }, 5s)) << "the click did not tick the run";
  EXPECT_EQ(runs_tree()->topLevelItem(0)->checkState(0), Qt::Checked);
  EXPECT_EQ(window_->chart(ChartKind::Loss)->chart().runs.size(), 1u);

  test::click_check_box(runs_tree(), run_index(1));
  ASSERT_TRUE(wait_until([&] { return run_at(1)->checked; }, 5s));
  EXPECT_EQ(window_->chart(ChartKind::Loss)->chart().runs.size(), 2u);

  test::click_check_box(runs_tree(), run_index(0));
  ASSERT_TRUE(wait_until([&] { return !first->checked; }, 5s));
  EXPECT_EQ(window_->chart(ChartKind::Loss)->chart().runs.size(), 1u);
  // A double click on the box toggles twice and leaves the list usable.
  QTest::mouseDClick(runs_tree()->viewport(), Qt::LeftButton, {},
                     test::check_box_rect(runs_tree(), run_index(0)).center());
  wait_until([] { return false; }, 100ms);
  EXPECT_EQ(runs_tree()->topLevelItemCount(), 2);
}

TEST_F(Input, SpaceOnASelectedRunTicksIt) {
  cli_run("a");
  cli_run("b");
  open_window();
  test::click_item(runs_tree(), run_index(1));
  ASSERT_EQ(runs_tree()->currentIndex().row(), 1);
  RunEntry* second = run_at(1);
  ASSERT_FALSE(second->checked) << "a click on the text must not tick";
  QTest::keyClick(runs_tree(), Qt::Key_Space);
  ASSERT_TRUE(wait_until([&] { return second->checked; }, 5s));
  QTest::keyClick(runs_tree(), Qt::Key_Space);
  ASSERT_TRUE(wait_until([&] { return !second->checked; }, 5s));
  EXPECT_EQ(runs_tree()->topLevelItemCount(), 2);
}

// The list changes as a run trains (rows added, updated at every bar refresh): ticks in between
// land on the right runs.
TEST_F(Input, TickingRunsWhileOneTrains) {
  cli_run("a");
  open_window();
  small_setup(1'000'000);
  QTest::mouseClick(window_->train_button(), Qt::LeftButton);
  ASSERT_TRUE(window_->any_running());
  ASSERT_EQ(runs_tree()->topLevelItemCount(), 2);
  RunEntry* live = run_at(0);
  RunEntry* old = run_at(1);
  ASSERT_TRUE(live->live);
  for (int i = 0; i < 6; ++i) {
    test::click_check_box(runs_tree(), run_index(i % 2));
    wait_until([] { return false; }, 150ms);
  }
  // Three clicks on each box: the live run (ticked at its start) ends unticked, the old one ticked.
  EXPECT_TRUE(wait_until([&] { return !live->checked && old->checked; }, 5s))
      << "live " << live->checked << ", old " << old->checked;
  QTest::mouseClick(window_->stop_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  EXPECT_EQ(run_at(0)->data.status(), "cancelled");
}

// Issue 20.7: a learning rate typed while a run trains, applied by a click on Apply or by Enter,
// is the run's from its next step on; the status line names the step, every live chart marks
// it, and a value that cannot be used is refused with a message while the run goes on.
TEST_F(Input, ALearningRateTypedWhileARunTrainsTakesEffectAndIsMarked) {
  open_window();
  small_setup(1'000'000, 0.001f, OptimizerKind::SGD);
  auto* field = window_->findChild<QLineEdit*>("lr-field");
  auto* apply = window_->findChild<QPushButton*>("lr-apply");
  auto* status = window_->findChild<QLabel*>("lr-status");
  ASSERT_TRUE(field && apply && status);
  EXPECT_FALSE(field->isEnabled()) << "nothing trains yet";
  EXPECT_FALSE(apply->isEnabled());

  QTest::mouseClick(window_->train_button(), Qt::LeftButton);
  ASSERT_TRUE(window_->any_running());
  RunEntry* live = run_at(0);
  ASSERT_TRUE(live->live);
  ASSERT_TRUE(wait_until([&] { return live->data.steps.size() >= 3 && field->isEnabled(); }));
  EXPECT_EQ(field->text(), "0.001") << "the run's learning rate now";

  // Typed over, applied by a click at Apply's rectangle.
  QTest::mouseClick(field, Qt::LeftButton, {}, field->rect().center());
  QTest::keyClick(field, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClicks(field, "0.05");
  QTest::mouseClick(apply, Qt::LeftButton, {}, apply->rect().center());
  ASSERT_TRUE(wait_until([&] { return live->data.lr_changes.size() == 1; }));
  const int64_t changed_at = live->data.lr_changes[0].step;
  ASSERT_TRUE(wait_until([&] { return live->data.steps.back().step >= changed_at + 3; }));
  for (const StepMetrics& step : live->data.steps)
    ASSERT_EQ(step.lr, step.step < changed_at ? 0.001f : 0.05f) << "step " << step.step;
  const QString confirmed = QString("lr 0.05 from step %1").arg(changed_at);
  EXPECT_TRUE(wait_until([&] { return status->isVisible() && status->text() == confirmed; }, 5s))
      << status->text().toStdString();
  EXPECT_EQ(field->text(), "0.05");

  // Every live chart with lines marks the step; the loss chart draws it as a dashed line there.
  ASSERT_TRUE(wait_until([&] {
    window_->chart(ChartKind::Loss)->refresh(false);
    return window_->chart(ChartKind::Loss)->chart().marks.size() == 1;
  }));
  for (ChartView* view : window_->live_charts()) {
    view->refresh(false);
    if (view->chart().kind == ChartKind::Speedup) continue;
    ASSERT_EQ(view->chart().marks.size(), 1u) << chart_kind_name(view->chart().kind);
    EXPECT_EQ(view->chart().marks[0].label, "lr 0.05");
  }
  // As the window's next tick does: the axes take in the points the refreshes above added.
  window_->chart(ChartKind::Loss)->replot_if_dirty();
  QCustomPlot* plot = window_->chart(ChartKind::Loss)->plot();
  int lines_at_change = 0;
  bool labelled = false;
  for (int i = 0; i < plot->itemCount(); ++i) {
    if (auto* line = qobject_cast<QCPItemStraightLine*>(plot->item(i)))
      lines_at_change +=
          line->point1->coords().x() == double(changed_at) && line->pen().style() == Qt::DashLine;
    if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)))
      labelled |= text->text() == "lr 0.05" && text->visible();
  }
  EXPECT_EQ(lines_at_change, 1);
  EXPECT_TRUE(labelled);

  // Enter applies too.
  QTest::mouseClick(field, Qt::LeftButton, {}, field->rect().center());
  QTest::keyClick(field, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClicks(field, "0.02");
  QTest::keyClick(field, Qt::Key_Return);
  ASSERT_TRUE(wait_until([&] { return live->data.lr_changes.size() == 2; }));
  EXPECT_EQ(live->data.lr_changes[1].lr, 0.02);

  // Refused: the run goes on with the learning rate it has.
  for (const char* bad : {"fast", "-1", "0"}) {
    QTest::mouseClick(field, Qt::LeftButton, {}, field->rect().center());
    QTest::keyClick(field, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(field, bad);
    QTest::mouseClick(apply, Qt::LeftButton, {}, apply->rect().center());
    EXPECT_TRUE(window_->message().startsWith("Learning rate")) << window_->message().toStdString();
    EXPECT_TRUE(window_->message().contains("positive number")) << window_->message().toStdString();
  }
  EXPECT_TRUE(window_->message().contains("-1") || window_->message().contains("0"));
  const size_t steps_before = live->data.steps.size();
  ASSERT_TRUE(wait_until([&] { return live->data.steps.size() > steps_before + 2; }));
  EXPECT_EQ(live->data.lr_changes.size(), 2u);
  EXPECT_EQ(live->data.steps.back().lr, 0.02f);

  QTest::mouseClick(window_->stop_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  EXPECT_FALSE(field->isEnabled());
  // The record keeps both changes: a reloaded run is marked as the live one was.
  const RunData reloaded = load_run(live->data.dir);
  ASSERT_EQ(reloaded.lr_changes.size(), 2u);
  EXPECT_EQ(reloaded.lr_changes[0].step, changed_at);
  EXPECT_EQ(build_chart(ChartKind::Loss, {&reloaded}, ChartOptions{}).marks.size(), 2u);
}

TEST_F(Input, MenusWorkThroughTheMenuBar) {
  open_window();
  small_setup(1'000'000);
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "Run", "Train"));
  ASSERT_TRUE(wait_until([&] { return window_->any_running(); }, 5s));
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "Run", "Pause / resume"));
  EXPECT_EQ(window_->pause_button()->text(), "Resume");
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "Run", "Stop"));
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));

  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "View", "Presenter mode"));
  EXPECT_FALSE(window_->runs_panel()->isVisible());
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "View", "Presenter mode"));
  EXPECT_TRUE(window_->runs_panel()->isVisible());

  // Dialogs opened from the menus are Qt's own and are answered (here: cancelled).
  test::DialogCloser closer;
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "File", "Open setup"));
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "Help", "About gpulab"));
  EXPECT_EQ(closer.closed(), 2);
}

// Issue 40.2: File → Demos → cpu-threads, then ▶ Train, trained one run on the picker's threads
// instead of racing 1 thread against all; in presenter mode the Race panel is hidden, so ▶ Train
// is the presenter's only way to the race. Both ways now race the demo's runs, under the demo's
// names, and end with the verdict.
TEST_F(Input, ADemoOpenedFromTheMenuRacesOnTrainInPresenterModeToo) {
  open_window();
  const int all_threads = std::max(1, cpu_info().logical_cores);
  for (const bool presenter : {false, true}) {
    SCOPED_TRACE(presenter ? "presenter mode" : "normal mode");
    if (presenter) {
      ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "View", "Presenter mode"));
    }
    ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "File", "Demos", "cpu-threads"));
    QPushButton* train = window_->train_button();
    ASSERT_TRUE(train->isVisible());
    EXPECT_EQ(train->text(), "▶ Race 2 runs");
    EXPECT_TRUE(train->toolTip().contains("1 CPU thread")) << train->toolTip().toStdString();
    const size_t before = window_->store()->entries().size();
    QTest::mouseClick(train, Qt::LeftButton);
    ASSERT_TRUE(window_->any_running()) << window_->message().toStdString();
    ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
    ASSERT_EQ(window_->store()->entries().size(), before + 2);
    std::map<std::string, int> threads;  // run name -> its threads, as its record says
    for (RunEntry* entry : window_->store()->entries())
      threads[entry->data.name()] = entry->data.info["config"].value("threads", 0);
    EXPECT_EQ(threads["1 CPU thread"], 1);
    EXPECT_EQ(threads["every CPU thread"], all_threads);
    EXPECT_TRUE(window_->message().contains("Race: ")) << window_->message().toStdString();
  }
  // A device ticked after the demo: ▶ Train trains that, and the race waits for Start race.
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "View", "Presenter mode"));
  ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "File", "Demos", "cpu-threads"));
  auto* threads = window_->device_picker()->findChild<QAbstractSpinBox*>("cpu-threads");
  ASSERT_NE(threads, nullptr);
  test::type_into(threads, all_threads == 1 ? "1" : QString::number(all_threads - 1));
  if (all_threads == 1) window_->device_picker()->set_replicas(2);  // a change all the same
  EXPECT_EQ(window_->train_button()->text(), "▶ Train");
  EXPECT_EQ(window_->race()->entries().size(), 2u);
}

TEST_F(Input, DraggingAPlotPansItAndADoubleClickFitsItAgain) {
  cli_run("a");
  open_window();
  window_->show_recent(1);
  ChartView* loss = window_->chart(ChartKind::Loss);
  QCustomPlot* plot = loss->plot();
  wait_until([] { return false; }, 100ms);
  const QCPRange before = plot->xAxis->range();
  const QRect area = plot->axisRect()->rect();
  test::drag(plot, area.center(), area.center() + QPoint(area.width() / 4, 0));
  const QCPRange dragged = plot->xAxis->range();
  EXPECT_LT(dragged.lower, before.lower) << "a drag to the right shows earlier steps";
  QTest::mouseDClick(plot, Qt::LeftButton, {}, area.center());
  EXPECT_NEAR(plot->xAxis->range().lower, before.lower, 1e-9 + 1e-6 * before.size());
}

// --- The monkey -----------------------------------------------------------------------------

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

// Random real interactions with whatever is visible and enabled, runs present and one training.
class Monkey {
 public:
  Monkey(MainWindow* window, uint32_t seed) : window_(window), random_(seed) {
    // Popups opened by a click (context menus, tool button menus) run their own event loop: a
    // timer acts inside it, choosing an entry or closing the popup, as a hand would.
    popups_.setInterval(60);
    QObject::connect(&popups_, &QTimer::timeout, [this] { act_in_popup(); });
    popups_.start();
  }

  void step() {
    std::vector<QWidget*> targets;
    for (QWidget* w : window_->findChildren<QWidget*>()) {
      if (!w->isVisible() || !w->isEnabled() || w->window() != window_) continue;
      if (qobject_cast<QAbstractButton*>(w) || qobject_cast<QTabBar*>(w) ||
          qobject_cast<QAbstractItemView*>(w) || qobject_cast<QAbstractSpinBox*>(w) ||
          qobject_cast<QComboBox*>(w) || qobject_cast<QSlider*>(w) ||
          qobject_cast<QCustomPlot*>(w) || qobject_cast<QMenuBar*>(w))
        targets.push_back(w);
    }
    if (targets.empty()) return;
    act_on(targets[pick(targets.size())]);
    ++interactions_;
  }
  int interactions() const { return interactions_; }
  int popup_actions() const { return popup_actions_; }
  // What the last interaction did, for the message of a check that fails after it (the popup's
  // entry when a timer chose one since).
  const QString& last_action() const { return last_action_; }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random_); }
  QPoint inside(const QRect& r) {
    return {r.left() + int(pick(std::max(1, r.width() - 2))) + 1,
            r.top() + int(pick(std::max(1, r.height() - 2))) + 1};
  }
  static bool forbidden(const QAction* action) {
    // Quitting ends the test's window; opening a folder starts the desktop's file manager.
    const QString text = test::plain_text(action->text());
    return text == "Quit" || text == "Open folder";
  }

  void act_on(QWidget* w) {
    last_action_ = QString::fromLatin1(w->metaObject()->className()) +
                   (w->objectName().isEmpty() ? QString() : " \"" + w->objectName() + "\"");
    if (auto* bar = qobject_cast<QMenuBar*>(w)) {
      std::vector<QAction*> titles;
      for (QAction* a : bar->actions())
        if (a->menu() && a->isEnabled()) titles.push_back(a);
      if (titles.empty()) return;
      QAction* title = titles[pick(titles.size())];
      std::vector<QString> entries;
      for (QAction* a : title->menu()->actions())
        if (!a->isSeparator() && a->isEnabled() && !forbidden(a))
          entries.push_back(test::plain_text(a->text()));
      if (entries.empty()) return;
      const QString entry = entries[pick(entries.size())];
      last_action_ = "the menu " + test::plain_text(title->text()) + " → " + entry;
      test::choose_from_menu_bar(window_, test::plain_text(title->text()), entry);
    } else if (auto* tabs = qobject_cast<QTabBar*>(w)) {
      const int tab = int(pick(tabs->count()));
      last_action_ += " tab " + tabs->tabText(tab);
      QTest::mouseClick(tabs, Qt::LeftButton, {}, tabs->tabRect(tab).center());
    } else if (auto* view = qobject_cast<QAbstractItemView*>(w)) {
      QAbstractItemModel* model = view->model();
      if (!model || model->rowCount() == 0) {
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, inside(view->viewport()->rect()));
        return;
      }
      const QModelIndex index = model->index(int(pick(model->rowCount())), 0);
      view->scrollTo(index);
      const size_t how = pick(4);
      const char* hows[] = {"its check box", "a click", "a right click", "a click and Space"};
      last_action_ += " row " + QString::number(index.row()) + ", " + hows[how];
      switch (how) {
        case 0:
          test::click_check_box(view, index);
          break;
        case 1:
          test::click_item(view, index);
          break;
        case 2:
          test::click_item(view, index, Qt::RightButton);
          break;
        default:
          test::click_item(view, index);
          QTest::keyClick(view, Qt::Key_Space);
      }
    } else if (auto* spin = qobject_cast<QAbstractSpinBox*>(w)) {
      // Steps, never typed numbers: a typed 9999 channels would make one step take minutes.
      const Qt::Key keys[] = {Qt::Key_Up, Qt::Key_Down, Qt::Key_PageUp, Qt::Key_PageDown};
      spin->setFocus();
      QTest::keyClick(spin, keys[pick(4)]);
    } else if (auto* combo = qobject_cast<QComboBox*>(w)) {
      QTest::keyClick(combo, pick(2) ? Qt::Key_Down : Qt::Key_Up);
    } else if (auto* slider = qobject_cast<QSlider*>(w)) {
      const Qt::Key keys[] = {Qt::Key_Left, Qt::Key_Right, Qt::Key_PageUp, Qt::Key_PageDown};
      QTest::keyClick(slider, keys[pick(4)]);
    } else if (auto* plot = qobject_cast<QCustomPlot*>(w)) {
      const QRect area = plot->rect();
      switch (pick(3)) {
        case 0:
          test::drag(plot, inside(area), inside(area));
          break;
        case 1:
          QTest::mouseDClick(plot, Qt::LeftButton, {}, inside(area));
          break;
        default: {
          const QPoint at = inside(area);
          QWheelEvent wheel(at, plot->mapToGlobal(at), {}, QPoint(0, pick(2) ? 120 : -120),
                            Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
          QApplication::sendEvent(plot, &wheel);
        }
      }
    } else if (auto* button = qobject_cast<QAbstractButton*>(w)) {
      QTest::mouseClick(button, Qt::LeftButton, {}, inside(button->rect()));
    }
  }

  void act_in_popup() {
    auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
    if (!menu) return;
    if (menu != last_popup_) {  // give it a moment on screen first
      last_popup_ = menu;
      return;
    }
    last_popup_ = nullptr;
    std::vector<QAction*> entries;
    for (QAction* a : menu->actions())
      if (!a->isSeparator() && a->isEnabled() && a->isVisible() && !forbidden(a))
        entries.push_back(a);
    ++popup_actions_;
    if (entries.empty() || pick(4) == 0) {
      QTest::keyClick(menu, Qt::Key_Escape);
      return;
    }
    QAction* entry = entries[pick(entries.size())];
    last_action_ += " → popup entry " + test::plain_text(entry->text());
    QTest::mouseClick(menu, Qt::LeftButton, {}, menu->actionGeometry(entry).center());
  }

  MainWindow* window_;
  std::mt19937 random_;
  QTimer popups_;
  QMenu* last_popup_ = nullptr;
  int interactions_ = 0;
  int popup_actions_ = 0;
  QString last_action_;
};

TEST_F(Input, MonkeySurvivesHundredsOfRandomInteractionsWhileRunsTrain) {
  const int seed = env_int("GPULAB_MONKEY_SEED", 9);
  const int steps = env_int("GPULAB_MONKEY_STEPS", 300);
  // A frozen window, not a slow answer: 3 s natively. Under AddressSanitizer the window's own code
  // runs several times slower (starting a lab's runs: 0.22 s natively, 2.6 s instrumented on a
  // quiet machine, 4.5 s beside another suite on CI's two cores), so the bound is 15 s there; a
  // window that hangs still fails, after event_loop_latency's 30 s.
#ifdef __SANITIZE_ADDRESS__
  constexpr int kBoundMs = 15000;
#else
  constexpr int kBoundMs = 3000;
#endif
  const auto bound = std::chrono::milliseconds(env_int("GPULAB_MONKEY_LATENCY_MS", kBoundMs));
  cli_run("a");
  cli_run("b");
  open_window();
  small_setup(1'000'000);
  test::DialogCloser closer;  // before the monkey: its clicks open dialogs
  Monkey monkey(window_.get(), uint32_t(seed));
  std::chrono::milliseconds worst{0};
  int restarts = 0;
  for (int i = 0; i < steps; ++i) {
    if (i % 25 == 0 && !window_->any_running() && window_->train_button()->isEnabled()) {
      QTest::mouseClick(window_->train_button(), Qt::LeftButton);
      ++restarts;
    }
    monkey.step();
    const auto latency = test::event_loop_latency();
    worst = std::max(worst, latency);
    ASSERT_LT(latency, bound) << "the window stopped answering after interaction " << i << " (seed "
                              << seed << "): " << monkey.last_action().toStdString();
    if (!window_->isVisible()) window_->show();
  }
  std::cout << "monkey: seed " << seed << ", " << monkey.interactions() << " interactions, "
            << monkey.popup_actions() << " in popups, " << closer.closed() << " dialogs closed, "
            << restarts << " runs started, slowest answer " << worst.count() << " ms\n";
  RecordProperty("seed", seed);
  RecordProperty("interactions", monkey.interactions());
  EXPECT_EQ(monkey.interactions(), steps);
  // Still whole: the list matches the store, and a tick by mouse still works.
  EXPECT_EQ(runs_tree()->topLevelItemCount(), int(window_->store()->entries().size()));
}

}  // namespace
}  // namespace gpulab::ui

int main(int argc, char** argv) {
  return gpulab::test::run_window_tests(argc, argv, /*qt_dialogs=*/true);
}
