// The Labs tab driven as a learner drives it, on Qt's offscreen platform: the tab and the lab
// chosen with clicks, an experiment started with its Run button and its row filled when the run
// ends, the quiz answered with clicks on its radio buttons, progress and answers kept across a
// restart, a damaged progress file set aside, and a lab file with an error reported at its line.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QContextMenuEvent>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QInputDialog>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QRadioButton>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QStyleOptionButton>
#include <QTabBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QTreeWidget>
#include <QWindow>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bad_inputs.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/base/sha256.hpp"
#include "engine/classkit/hand_in_verify.hpp"
#include "engine/classkit/hand_in_zip.hpp"
#include "engine/labs/lab.hpp"
#include "engine/labs/lab_progress.hpp"
#include "engine/labs/reference_runs.hpp"
#include "recorded_runs.hpp"
#include "reference_run_fixture.hpp"
#include "test_support.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/classboard/class_board.hpp"
#include "ui/compare/compare_view.hpp"
#include "ui/labs/lab_page.hpp"
#include "ui/labs/lab_progress.hpp"
#include "ui/labs/lab_quiz.hpp"
#include "ui/labs/lab_written.hpp"
#include "ui/labs/labs_tab.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/runs/runs_panel.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/widgets/status_widgets.hpp"
#include "ui/window/hand_in_view.hpp"
#include "ui/window/main_window.hpp"
#include "ui_fixture.hpp"
#include "ui_input.hpp"

namespace gpulab::ui {
namespace {

using namespace std::chrono_literals;
using test::wait_until;

// A lab small enough to run inside the test: one CPU experiment of a few steps, its table and
// chart, and two questions.
const char* kTinyLab = R"(---
title: A tiny lab
minutes: 5
hardware: cpu
---

# A tiny lab

Train the small **MLP** for a few steps.

```experiment
name: mlp cpu
model: mlp
device: cpu
threads: 1
batch: 32
steps: 12
```

```bash
gpulab-cli lab run tiny-lab.md --out results
```

```table
columns: experiment, device, steps, images/s, ms per step, test accuracy
```

```chart
kind: loss
title: Its loss
```

```quiz
question: A GPU has many cores, so it can handle many computations in parallel.
answer: true
why: Thousands of simple cores each take a piece of a large product at once.
```

```quiz
question: What dominates training?
- [ ] Printing progress
  why: Printing is a little CPU work now and then.
- [x] Matrix multiplication
  why: The forward and backward passes are mostly matrix products.
```
)";

class Labs : public test::WindowTest {
 protected:
  std::filesystem::path write_lab(const std::string& name, const std::string& text) {
    const auto path = labs_dir_.path() / name;
    std::ofstream(path) << text;
    return path;
  }
  LabsTab* tab() { return window_->labs(); }
  // A learner's hand-in made on the command line, as a learner without the window makes one:
  // `gpulab-cli lab run LAB --learner LEARNER --out OUT` on the fixture's data, `more` added.
  test::CliResult lab_run(const std::filesystem::path& lab, const std::string& learner,
                          const std::filesystem::path& out, const std::string& more = "") {
    return test::run_command(std::string(GPULAB_CLI_PATH) + " lab run '" + lab.string() +
                             "' --quiet --learner " + learner + more + " --out '" + out.string() +
                             "' --data-dir '" + data_.path().string() + "'");
  }
  // File → Open class folder… by the menu bar, `folder` typed into its dialog: the board, once
  // shown; null (the test failing) where none opened.
  ClassBoard* open_class_folder(const std::filesystem::path& folder) {
    test::answer_file_dialog(QString::fromStdString(folder.string()), [&] {
      EXPECT_TRUE(test::choose_from_menu_bar(window_.get(), "File", "Open class folder"));
    });
    ClassBoard* board = window_->class_board();
    EXPECT_NE(board, nullptr);
    if (board) {
      EXPECT_TRUE(wait_until([&] { return board->isVisible(); }, 5s));
    }
    return board && board->isVisible() ? board : nullptr;
  }
  // The class board's Lab file… then "A lab file…" in its menu, `lab` typed into the dialog.
  static void choose_lab_file(ClassBoard* board, const QString& lab) {
    test::answer_file_dialog(lab, [&] {
      EXPECT_TRUE(test::choose_from_button_menu(board->lab_button(), board->lab_button()->menu(),
                                                "A lab file"));
    });
  }
  // The row of the first lab opened from a file: after the built-in labs.
  QTreeWidgetItem* opened_lab_row() {
    return tab()->list()->topLevelItem(int(builtin_lab_names().size()));
  }
  // Clicks the Labs tab, then the lab's row in the list, as a person does.
  LabPage* choose_lab(const std::string& name) {
    QTabBar* bar = window_->tabs()->tabBar();
    const int index = window_->tabs()->indexOf(tab());
    QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(index).center());
    EXPECT_EQ(window_->tabs()->currentWidget(), tab());
    QTreeWidget* list = tab()->list();
    for (int row = 0; row < list->topLevelItemCount(); ++row)
      if (tab()->labs()[size_t(row)].name == name) {
        list->scrollToItem(list->topLevelItem(row));  // as a person scrolls the list to it
        test::click_item(list, list->model()->index(row, 0));
      }
    EXPECT_EQ(tab()->current_page(), tab()->page(name));
    return tab()->current_page();
  }
  // Scrolls the page to `widget` and clicks it at its middle, or a radio button at its circle.
  static void click(LabPage* page, QWidget* widget) {
    page->ensureWidgetVisible(widget);
    QApplication::processEvents();
    ASSERT_TRUE(widget->isVisible());
    QPoint at = widget->rect().center();
    if (auto* radio = qobject_cast<QRadioButton*>(widget)) {
      QStyleOptionButton option;
      option.initFrom(radio);
      at = radio->style()->subElementRect(QStyle::SE_RadioButtonIndicator, &option, radio).center();
    }
    QTest::mouseClick(widget, Qt::LeftButton, {}, at);
  }
  // Types the learner's name into "Your name" above the labs, as a person does: every hand-in
  // needs one.
  void give_name(const QString& name) {
    QLineEdit* field = tab()->learner();
    QTest::mouseClick(field, Qt::LeftButton);
    field->selectAll();
    // A letter outside ASCII arrives as a keyboard layout sends it: a key event carrying its text
    // (QTest::keyClicks knows only ASCII keys).
    for (const QChar letter : name) {
      if (letter.unicode() < 0x80) {
        QTest::keyClicks(field, QString(letter));
        continue;
      }
      QKeyEvent press(QEvent::KeyPress, Qt::Key_unknown, Qt::NoModifier, QString(letter));
      QKeyEvent release(QEvent::KeyRelease, Qt::Key_unknown, Qt::NoModifier, QString(letter));
      QApplication::sendEvent(field, &press);
      QApplication::sendEvent(field, &release);
    }
  }
  // A row's experiment as the table names it, less the ⚠ a run measured under other programs'
  // load carries (its note then says so, after a reference run's "recorded on ..."): that depends
  // on the machine, not on the lab.
  static QString experiment(QTableWidget* table, int row) {
    QString name = cell(table, row, "experiment");
    const bool flagged = name.startsWith("⚠ ");
    const QString note = cell(table, row, "note");
    EXPECT_EQ(note.startsWith("⚠ ") || note.contains("; ⚠ "), flagged) << name.toStdString();
    return flagged ? name.mid(2) : name;
  }
  static std::string read(const std::filesystem::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  static QString cell(QTableWidget* table, int row, const QString& column) {
    for (int c = 0; c < table->columnCount(); ++c)
      if (table->horizontalHeaderItem(c)->text() == column)
        return table->item(row, c) ? table->item(row, c)->text() : QString();
    return "(no column " + column + ")";
  }

  test::TempDir labs_dir_;
};

// Issue 40: `gpulab --lab resources/labs/cnn-on-gpu.md` (the source tree's copy of a built-in
// lab) listed "A CNN on the GPU" twice; the copy is the built-in lab, chosen. An edited copy is a
// lab of its own.
TEST_F(Labs, ABuiltInLabsOwnFileOpensThatLabNotASecondOne) {
  open_window();
  const int listed = tab()->list()->topLevelItemCount();
  const std::filesystem::path copy =
      std::filesystem::path(GPULAB_SOURCE_DIR) / "resources/labs/cnn-on-gpu.md";
  ASSERT_TRUE(tab()->open_lab(copy)) << tab()->message().toStdString();
  EXPECT_EQ(tab()->list()->topLevelItemCount(), listed);
  ASSERT_NE(tab()->current_page(), nullptr);
  EXPECT_EQ(tab()->current_page(), tab()->page("cnn-on-gpu"));
  std::ifstream in(copy);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(tab()->open_lab(write_lab("cnn-on-gpu.md", text + "\nOne more line.\n")))
      << tab()->message().toStdString();
  EXPECT_EQ(tab()->list()->topLevelItemCount(), listed + 1);
}

TEST_F(Labs, RunButtonStartsTheExperimentAndItsRowFillsWhenItEnds) {
  open_window();
  ASSERT_TRUE(tab()->open_lab(write_lab("tiny-lab.md", kTinyLab)))
      << tab()->message().toStdString();
  LabPage* page = choose_lab("tiny-lab");
  ASSERT_NE(page, nullptr);
  QTableWidget* table = page->table(0);
  ASSERT_EQ(table->rowCount(), 1);
  EXPECT_EQ(cell(table, 0, "note"), "not run yet");

  click(page, page->run_button("mlp cpu"));
  // Through the window's own run path: listed with every run, under the lab's name.
  ASSERT_EQ(window_->store()->entries().size(), 1u);
  EXPECT_EQ(window_->store()->entries()[0]->data.name(), "mlp cpu · tiny-lab");
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }, 60s));
  ASSERT_TRUE(wait_until([&] { return cell(table, 0, "steps") == "12"; }, 10s))
      << cell(table, 0, "note").toStdString();
  EXPECT_EQ(experiment(table, 0), "mlp cpu");
  EXPECT_GT(cell(table, 0, "images/s").toDouble(), 0);
  EXPECT_GT(cell(table, 0, "ms per step").toDouble(), 0);
  EXPECT_FALSE(cell(table, 0, "test accuracy").isEmpty());
  EXPECT_EQ(page->chart(0)->chart().runs.size(), 1u);
  EXPECT_TRUE(page->experiment_text("mlp cpu").startsWith("finished: 12 steps"));
  EXPECT_TRUE(page->run_button("mlp cpu")->isEnabled());
  EXPECT_TRUE(opened_lab_row()->text(3).startsWith("1 of 1 experiments run"));
  // Handed in: its row, and its chart drawn as the page shows it.
  const auto folder = labs_dir_.path() / "hand-in";
  give_name("Ada");
  ASSERT_TRUE(tab()->hand_in("tiny-lab", folder)) << tab()->message().toStdString();
  EXPECT_NE(read(folder / "README.md").find("mlp cpu | cpu | 12 |"), std::string::npos)
      << read(folder / "README.md");
  EXPECT_NE(read(folder / "README.md").find("![Its loss](chart-1-loss.png)"), std::string::npos);
  EXPECT_GT(std::filesystem::file_size(folder / "chart-1-loss.png"), 1000u);
  EXPECT_GT(std::filesystem::file_size(folder / "chart-1-loss.svg"), 1000u);
  // The run the window trained travels with the hand-in, and an instructor's check passes.
  EXPECT_TRUE(std::filesystem::exists(folder / "runs" / "mlp-cpu" / "metrics.csv"));
  VerifyOptions check;
  check.lab = (labs_dir_.path() / "tiny-lab.md").string();
  const HandInVerdict verdict = verify_hand_in(folder, check);
  for (const HandInProblem& p : verdict.problems) ADD_FAILURE() << p.to_string();
  EXPECT_EQ(verdict.runs, 1);

  // A restart: the lab file is opened again by itself, and its row comes from the recorded run.
  close_window();
  open_window();
  ASSERT_NE(tab()->page("tiny-lab"), nullptr) << tab()->message().toStdString();
  EXPECT_EQ(cell(tab()->page("tiny-lab")->table(0), 0, "steps"), "12");
}

// Issue 40.3: one run read 324 images/s in its lab table and 219 in the runs list. One figure,
// the pace at the median step (run_images_per_second), follows the run through the runs list,
// its status line, Compare, the lab table, the hand-in, the class's grade and the command line.
TEST_F(Labs, OneRunReadsOnePaceEverywhere) {
  open_window();
  ASSERT_TRUE(tab()->open_lab(write_lab("tiny-lab.md", kTinyLab)))
      << tab()->message().toStdString();
  LabPage* page = choose_lab("tiny-lab");
  ASSERT_NE(page, nullptr);
  click(page, page->run_button("mlp cpu"));
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }, 60s));
  QTableWidget* table = page->table(0);
  ASSERT_TRUE(wait_until([&] { return cell(table, 0, "steps") == "12"; }, 10s));
  ASSERT_EQ(window_->store()->entries().size(), 1u);
  RunEntry* entry = window_->store()->entries()[0];
  const RunData run = load_run(entry->data.dir);
  // By hand: the images of a step over the median step's time.
  const double per_step =
      run.info["summary"]["images"].get<double>() / run.info["summary"]["steps"].get<double>();
  const double pace = 1000.0 * per_step / median_step(run).step_ms;
  EXPECT_NEAR(run_images_per_second(run), pace, 1e-9 * pace);
  const QString text = QString::number(pace, 'f', 0);

  EXPECT_EQ(cell(table, 0, "images/s"), text);
  window_->store()->set_checked(entry->id, true);
  QTreeWidgetItem* listed = window_->runs_panel()->tree()->topLevelItem(0);
  ASSERT_NE(listed, nullptr);
  EXPECT_EQ(listed->text(5), text);  // the images/s column
  EXPECT_TRUE(window_->progress()->text(entry->id).contains(", " + text + " images/s"))
      << window_->progress()->text(entry->id).toStdString();
  const std::vector<RunComparison> rows = window_->compare()->rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(QString::number(rows[0].images_per_second, 'f', 0), text);

  const auto folder = labs_dir_.path() / "hand-in";
  give_name("Ada");
  ASSERT_TRUE(tab()->hand_in("tiny-lab", folder)) << tab()->message().toStdString();
  EXPECT_NE(read(folder / "README.md").find(" " + text.toStdString() + " |"), std::string::npos)
      << read(folder / "README.md");
  const auto graded = labs_dir_.path() / "graded";
  const test::CliResult grade =
      test::run_command(std::string(GPULAB_CLI_PATH) + " lab grade " + folder.string() + " --out " +
                        graded.string() + " --lab " + (labs_dir_.path() / "tiny-lab.md").string());
  ASSERT_EQ(grade.exit_code, 0) << grade.output;
  EXPECT_NE(read(graded / "class.csv").find("," + text.toStdString()), std::string::npos)
      << read(graded / "class.csv");
  // The command line's comparison of the same run.
  const auto csv = labs_dir_.path() / "speedup.csv";
  const test::CliResult exported =
      test::run_command(std::string(GPULAB_CLI_PATH) + " export --runs " +
                        entry->data.dir.string() + " --chart speedup --out " + csv.string());
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  std::istringstream lines(read(csv));
  std::string header, values;
  std::getline(lines, header);
  std::getline(lines, values);
  const auto column = [](const std::string& line, size_t index) {
    std::istringstream fields(line);
    std::string field;
    for (size_t i = 0; i <= index; ++i) std::getline(fields, field, ',');
    return field;
  };
  size_t at = 0;
  for (std::istringstream names(header);
       std::getline(names, header, ',') && header != "images_per_second";)
    ++at;
  EXPECT_NEAR(std::stod(column(values, at)), pace, 1e-6 * pace);
}

// Issue 40.5: "Handed in: …" above the Labs tab pushed "Hand in as .zip…" down 14 px (a click
// missed it), and a benchmark's busy bar pushed the list and the Run buttons down 46 px. The tab's
// messages float at its bottom over room the page gives up: the list, the Run and Hand in buttons
// stay where they were, and no message covers them.
TEST_F(Labs, AMessageOnTheLabsTabMovesNoButtonOrTheList) {
  open_window();
  window_->showNormal();
  window_->resize(1280, 720);
  wait_until([] { return false; }, 150ms);
  ASSERT_TRUE(tab()->open_lab(write_lab("tiny-lab.md", kTinyLab)))
      << tab()->message().toStdString();
  LabPage* page = choose_lab("tiny-lab");
  ASSERT_NE(page, nullptr);
  auto where = [&](QWidget* w) { return QRect(w->mapTo(window_.get(), QPoint()), w->size()); };
  QWidget* watched[] = {tab()->list(), page->run_button("mlp cpu"), page->hand_in_button(),
                        page->hand_in_zip_button(), tab()->learner()};
  std::vector<QRect> before;
  for (QWidget* w : watched) before.push_back(where(w));
  give_name("Ada");
  ASSERT_TRUE(tab()->hand_in("tiny-lab", labs_dir_.path() / "hand-in"))
      << tab()->message().toStdString();
  wait_until([] { return false; }, 150ms);
  QWidget* message = tab()->findChild<QWidget*>("labs-message");
  ASSERT_NE(message, nullptr);
  ASSERT_TRUE(message->isVisible());
  EXPECT_TRUE(tab()->message().contains("Handed in")) << tab()->message().toStdString();
  for (size_t i = 0; i < std::size(watched); ++i) {
    EXPECT_EQ(where(watched[i]), before[i]) << watched[i]->objectName().toStdString();
    EXPECT_FALSE(where(message).intersects(where(watched[i])))
        << "the message covers " << watched[i]->objectName().toStdString();
  }
}

// While a lab's experiment trains, the Setup panel's target and test interval are the
// experiment's own (90 %, every 3 steps), greyed, not the window's (50 %, every 7 steps typed in),
// which the lab's run does not use; the window's come back when it ends, and were never lost.
TEST_F(Labs, TheSetupPanelShowsTheRunningExperimentsTargetAndTestInterval) {
  std::string lab = kTinyLab;
  lab.replace(lab.find("steps: 12"), 9, "steps: 1000000\ntarget-accuracy: 90\neval-every: 3");
  open_window();
  auto* target = window_->findChild<QDoubleSpinBox*>("setup-target");
  ASSERT_NE(target, nullptr);
  QSpinBox* eval_every = nullptr;
  for (QSpinBox* box : window_->experiment()->findChildren<QSpinBox*>())
    if (box->specialValueText() == "epoch ends") eval_every = box;
  ASSERT_NE(eval_every, nullptr);
  test::type_into(target, "50");
  test::type_into(eval_every, "7");
  ASSERT_DOUBLE_EQ(target->value(), 50.0);
  ASSERT_EQ(eval_every->value(), 7);
  ASSERT_TRUE(tab()->open_lab(write_lab("long-lab.md", lab))) << tab()->message().toStdString();
  LabPage* page = choose_lab("long-lab");
  click(page, page->run_button("mlp cpu"));
  ASSERT_TRUE(window_->any_running()) << tab()->message().toStdString();
  EXPECT_DOUBLE_EQ(target->value(), 90.0);
  EXPECT_EQ(eval_every->value(), 3);
  EXPECT_FALSE(target->isEnabled());
  EXPECT_FALSE(eval_every->isEnabled());
  EXPECT_DOUBLE_EQ(window_->experiment()->experiment().train.target_accuracy, 0.5);
  EXPECT_EQ(window_->experiment()->experiment().train.eval_every, 7);
  QTest::mouseClick(window_->stop_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }, 60s));
  EXPECT_DOUBLE_EQ(target->value(), 50.0);
  EXPECT_EQ(eval_every->value(), 7);
  EXPECT_TRUE(target->isEnabled());
  EXPECT_TRUE(eval_every->isEnabled());
}

// ▶ Run leaves the learner on the lab, and the running experiment's card offers the Live tab on
// its own status line (nothing below it moves), reached by keyboard as by the mouse.
TEST_F(Labs, RunningAnExperimentStaysOnTheLabAndOffersTheLiveTab) {
  std::string long_lab = kTinyLab;
  long_lab.replace(long_lab.find("steps: 12"), 9, "steps: 1000000");
  open_window();
  ASSERT_TRUE(tab()->open_lab(write_lab("tiny-lab.md", long_lab)));
  LabPage* page = choose_lab("tiny-lab");
  ASSERT_NE(page, nullptr);
  click(page, page->run_button("mlp cpu"));
  ASSERT_TRUE(window_->any_running()) << tab()->message().toStdString();
  const auto shown = [&] { return window_->tabs()->tabText(window_->tabs()->currentIndex()); };
  EXPECT_EQ(shown(), "Labs");
  ASSERT_TRUE(wait_until(
      [&] { return page->experiment_text("mlp cpu").contains("watch it on the Live tab"); }, 10s))
      << page->experiment_text("mlp cpu").toStdString();
  QLabel* status = page->findChild<QLabel*>("lab-experiment-status");
  ASSERT_NE(status, nullptr);
  status->setFocus();
  QTest::keyClick(status, Qt::Key_Tab);  // onto the link
  QTest::keyClick(status, Qt::Key_Return);
  EXPECT_TRUE(wait_until([&] { return shown() == "Live"; }, 2s)) << shown().toStdString();
  QTest::mouseClick(window_->stop_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }, 30s));
}

TEST_F(Labs, RunAllStartsTheExperimentsAsAFairRaceOneAfterAnother) {
  std::string two = kTinyLab;
  const std::string second =
      "```experiment\nname: mlp cpu again\nmodel: mlp\ndevice: cpu\n"
      "threads: 1\nbatch: 16\nsteps: 12\n```\n\n";
  two.insert(two.find("```bash"), second);
  open_window();
  ASSERT_TRUE(tab()->open_lab(write_lab("two.md", two))) << tab()->message().toStdString();
  LabPage* page = choose_lab("two");
  click(page, page->run_all_button());
  // Both share the CPU: the second waits for the first, so each is measured alone.
  ASSERT_EQ(window_->store()->entries().size(), 1u);
  EXPECT_FALSE(page->run_button("mlp cpu again")->isEnabled());
  ASSERT_TRUE(wait_until([&] { return window_->store()->entries().size() == 2; }, 60s));
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }, 60s));
  QTableWidget* table = page->table(0);
  ASSERT_TRUE(wait_until([&] { return cell(table, 1, "steps") == "12"; }, 10s));
  EXPECT_EQ(cell(table, 0, "steps"), "12");
  EXPECT_EQ(experiment(table, 1), "mlp cpu again");
  for (RunEntry* entry : window_->store()->entries())
    EXPECT_FALSE(entry->data.info.contains("shared_hardware")) << entry->data.name();
}

TEST_F(Labs, AMatrixMultiplyExperimentFillsARowPerSize) {
  const std::string lab =
      "---\ntitle: Matmul\nminutes: 5\nhardware: cpu\n---\n\n"
      "```experiment\nname: cpu\nbench: matmul\ndevice: cpu\nsizes: 16, 32\n```\n\n"
      "```table\ncolumns: experiment, size, ms, GFLOP/s\n```\n";
  open_window();
  ASSERT_TRUE(tab()->open_lab(write_lab("matmul.md", lab))) << tab()->message().toStdString();
  LabPage* page = choose_lab("matmul");
  click(page, page->run_button("cpu"));
  QTableWidget* table = page->table(0);
  ASSERT_TRUE(wait_until([&] { return table->rowCount() == 2; }, 30s));
  EXPECT_EQ(cell(table, 0, "size"), "16");
  EXPECT_EQ(cell(table, 1, "size"), "32");
  EXPECT_GT(cell(table, 1, "GFLOP/s").toDouble(), 0);
  EXPECT_TRUE(page->experiment_text("cpu").startsWith("timed 2 size(s)"));
  // Kept with the lab's progress, so the rows are there after a restart.
  close_window();
  open_window();
  EXPECT_EQ(tab()->page("matmul")->table(0)->rowCount(), 2);
}

// With two other programs spinning on the CPU, the Run button says first, in the tab's message
// bar, that the machine is busy, and the benchmark's rows, timed under that load, carry ⚠ and
// say why.
TEST_F(Labs, RunSaysTheMachineIsBusyAndMarksTheRowsTimedUnderLoad) {
  const std::string lab =
      "---\ntitle: Matmul\nminutes: 5\nhardware: cpu\n---\n\n"
      "```experiment\nname: cpu\nbench: matmul\ndevice: cpu\nsizes: 16, 32\n```\n\n"
      "```table\ncolumns: experiment, size, ms\n```\n";
  open_window();
  ASSERT_TRUE(tab()->open_lab(write_lab("matmul.md", lab))) << tab()->message().toStdString();
  LabPage* page = choose_lab("matmul");
  QTableWidget* table = page->table(0);
  {
    const test::OtherProgramsSpinning spinning(2);
    ASSERT_EQ(spinning.count(), 2u);
    QTest::qWait(2500);  // the tab takes the load each second
    click(page, page->run_button("cpu"));
    const QString message = tab()->message();
    EXPECT_TRUE(message.contains("The machine is busy: other programs keep "))
        << message.toStdString();
    EXPECT_TRUE(
        message.contains(QString(" of %1 cores busy, so figures measured now will be marked "
                                 "⚠ measured under outside load; wait for them to finish "
                                 "for clean figures")
                             .arg(sysconf(_SC_NPROCESSORS_ONLN))))
        << message.toStdString();
    ASSERT_TRUE(wait_until([&] { return table->rowCount() == 2; }, 30s));
  }
  for (int row = 0; row < 2; ++row) {
    EXPECT_EQ(cell(table, row, "experiment"), "⚠ cpu");
    EXPECT_TRUE(
        cell(table, row, "note").startsWith("⚠ measured under outside load: other programs kept "))
        << cell(table, row, "note").toStdString();
  }
}

TEST_F(Labs, TheWheelOverALabsChartScrollsThePageAndLeavesTheChartAlone) {
  open_window();
  ASSERT_TRUE(tab()->open_lab(write_lab("tiny-lab.md", kTinyLab)));
  LabPage* page = choose_lab("tiny-lab");
  QCustomPlot* plot = page->chart(0)->plot();
  page->ensureWidgetVisible(plot);
  QApplication::processEvents();
  const int scrolled = page->verticalScrollBar()->value();
  const QCPRange x = plot->xAxis->range();
  // The middle of what shows of it: a small window shows only part of the chart.
  const QRect shown = plot->visibleRegion().boundingRect();
  ASSERT_FALSE(shown.isEmpty());
  const QPoint at = plot->mapTo(window_.get(), shown.center());
  ASSERT_EQ(window_->childAt(at), plot);
  test::turn_wheel(window_.get(), at, -1);
  EXPECT_GT(page->verticalScrollBar()->value(), scrolled);
  EXPECT_EQ(plot->xAxis->range().lower, x.lower);
  EXPECT_EQ(plot->xAxis->range().upper, x.upper);
}

// Hand in… refuses a shipped reference run copied into the learner's runs, as `lab hand-in`
// does, naming it, and writes nothing: it was taken as the learner's own (only the CLI refused).
TEST_F(Labs, HandInRefusesAShippedReferenceRunAsTheLearnersOwn) {
  std::filesystem::copy(reference_runs_dir() / "cnn-on-gpu.lenet5-gpu", runs_.path() / "lenet5-gpu",
                        std::filesystem::copy_options::recursive);
  open_window();
  ASSERT_NE(choose_lab("cnn-on-gpu"), nullptr);
  give_name("Eve");
  const auto folder = labs_dir_.path() / "hand-in";
  EXPECT_FALSE(tab()->hand_in("cnn-on-gpu", folder));
  const QString said = tab()->message();
  EXPECT_TRUE(said.contains("The lab was not handed in: the run " +
                            QString::fromStdString((runs_.path() / "lenet5-gpu").string()) +
                            " of \"lenet5 gpu\" is the reference run \"cnn-on-gpu.lenet5-gpu\"") &&
              said.contains("a hand-in never takes a reference run as the learner's own"))
      << said.toStdString();
  EXPECT_FALSE(std::filesystem::exists(folder));
}

// A long answer wraps under its radio button instead of widening the page past a 1024-pixel
// screen, and a click on its text picks it.
TEST_F(Labs, LongChoicesWrapAndAClickOnTheirTextPicksThem) {
  open_window();
  LabPage* page = choose_lab("cnn-on-gpu");
  ASSERT_NE(page, nullptr);
  QuizQuestionView* question = page->question(3);  // choices of about 90 characters
  EXPECT_LT(question->minimumSizeHint().width(), 400);
  EXPECT_LT(page->widget()->minimumSizeHint().width(), 560);
  click(page, question->choice_label(1));
  EXPECT_TRUE(question->choice_button(1)->isChecked());
  EXPECT_TRUE(question->feedback().contains("Right.")) << question->feedback().toStdString();
}

// A question's feedback appears in room kept for it from the start: the next question stays
// under the pointer (it moved down mid-click, and the click chose the answer under it).
TEST_F(Labs, FeedbackAppearingMovesNoQuestionUnderThePointer) {
  open_window();
  window_->resize(1024, 768);
  LabPage* page = choose_lab("cnn-on-gpu");
  ASSERT_NE(page, nullptr);
  const size_t questions = page->answers().size();
  ASSERT_GE(questions, 2u);
  for (size_t q = 0; q + 1 < questions; ++q) {
    QuizQuestionView* next = page->question(q + 1);
    page->ensureWidgetVisible(page->question(q)->choice_button(0));
    QApplication::processEvents();
    const QRect before(next->mapTo(page->widget(), QPoint()), next->size());
    const QRect own = page->question(q)->geometry();
    click(page, page->question(q)->choice_button(0));
    ASSERT_FALSE(page->question(q)->feedback().isEmpty()) << "question " << q + 1;
    QApplication::processEvents();
    EXPECT_EQ(QRect(next->mapTo(page->widget(), QPoint()), next->size()), before)
        << "question " << q + 2 << " moved when question " << q + 1 << " was answered";
    EXPECT_EQ(page->question(q)->geometry(), own) << "question " << q + 1 << " changed size";
  }
}

TEST_F(Labs, QuizAnsweredWithClicksIsGradedWithReasonsAndKeptAcrossARestart) {
  open_window();
  ASSERT_TRUE(tab()->open_lab(write_lab("tiny-lab.md", kTinyLab)));
  LabPage* page = choose_lab("tiny-lab");
  EXPECT_TRUE(page->score_text().contains("answer the questions"));

  click(page, page->question(0)->choice_button(1));  // False: wrong
  EXPECT_TRUE(page->question(0)->feedback().contains("Not quite."));
  EXPECT_TRUE(page->question(0)->feedback().contains("Thousands of simple cores"));
  EXPECT_TRUE(page->score_text().contains("0 of 2 right")) << page->score_text().toStdString();
  click(page, page->question(1)->choice_button(1));  // Matrix multiplication: right
  EXPECT_TRUE(page->question(1)->feedback().contains("Right."));
  EXPECT_TRUE(page->question(1)->feedback().contains("mostly matrix products"));
  EXPECT_TRUE(page->score_text().contains("1 of 2 right"));
  click(page, page->question(0)->choice_button(0));  // changed to True: right
  EXPECT_TRUE(page->question(0)->feedback().contains("Right."));
  EXPECT_TRUE(page->score_text().contains("2 of 2 right (2 of 2 answered)"));

  close_window();
  open_window();
  page = choose_lab("tiny-lab");
  ASSERT_NE(page, nullptr);
  EXPECT_TRUE(page->question(0)->choice_button(0)->isChecked());
  EXPECT_TRUE(page->question(1)->choice_button(1)->isChecked());
  EXPECT_TRUE(page->question(1)->feedback().contains("Right."));
  EXPECT_TRUE(page->score_text().contains("2 of 2 right"));
  EXPECT_TRUE(opened_lab_row()->text(3).contains("quiz 2 of 2 right"));
}

// Hand in…: a folder typed into the dialog gets the report with the answer given and the score;
// a folder holding something else is refused, said in the tab's message bar.
TEST_F(Labs, HandInWritesTheReportWithTheAnswersIntoTheFolderChosen) {
  open_window();
  ASSERT_TRUE(tab()->open_lab(write_lab("tiny-lab.md", kTinyLab)));
  LabPage* page = choose_lab("tiny-lab");
  click(page, page->question(1)->choice_button(1));  // Matrix multiplication: right
  give_name("Ada");
  const auto folder = labs_dir_.path() / "for the teacher";
  std::filesystem::create_directories(folder);
  test::answer_file_dialog(QString::fromStdString(folder.string()),
                           [&] { click(page, page->hand_in_button()); });
  const std::string readme = read(folder / "README.md");
  EXPECT_NE(readme.find("# A tiny lab\n"), std::string::npos) << readme;
  EXPECT_NE(readme.find("from the gpulab window"), std::string::npos) << readme;
  EXPECT_NE(readme.find("- CPU: "), std::string::npos) << readme;
  EXPECT_NE(readme.find("| mlp cpu | cpu |"), std::string::npos) << readme;
  EXPECT_NE(readme.find("## Quiz: 1 of 2 right (1 of 2 answered)"), std::string::npos) << readme;
  EXPECT_NE(readme.find("Answer: Matrix multiplication — **right**"), std::string::npos) << readme;
  EXPECT_NE(readme.find("Not drawn: no finished runs to draw."), std::string::npos) << readme;
  EXPECT_TRUE(std::filesystem::exists(folder / "answers.json"));
  EXPECT_TRUE(std::filesystem::exists(folder / "machine.json"));
  EXPECT_TRUE(std::filesystem::exists(folder / "results.csv"));
  auto* said = page->findChild<QLabel*>("lab-hand-in-text");
  ASSERT_NE(said, nullptr);
  EXPECT_TRUE(said->isVisible());
  EXPECT_TRUE(said->text().contains(QString::fromStdString(folder.string())))
      << said->text().toStdString();

  // A new folder's name typed in: made and handed in to, not "Directory not found".
  const auto fresh = labs_dir_.path() / "a new folder";
  test::answer_file_dialog(QString::fromStdString(fresh.string()),
                           [&] { click(page, page->hand_in_button()); });
  EXPECT_NE(read(fresh / "README.md").find("# A tiny lab\n"), std::string::npos)
      << tab()->message().toStdString();

  std::ofstream(folder / "notes.txt") << "mine";
  test::answer_file_dialog(QString::fromStdString(folder.string()),
                           [&] { click(page, page->hand_in_button()); });
  EXPECT_TRUE(tab()->message().contains("holds notes.txt")) << tab()->message().toStdString();
  EXPECT_EQ(read(folder / "notes.txt"), "mine");
}

// Hand in as .zip…: the folder as Hand in… writes it, and beside it LEARNER-LAB.zip holding that
// folder as its one entry, which unpacks to a hand-in that verifies; the page says where it is.
TEST_F(Labs, HandInAsZipWritesTheFolderAndItsZipBesideIt) {
  open_window();
  ASSERT_TRUE(tab()->open_lab(write_lab("tiny-lab.md", kTinyLab)));
  LabPage* page = choose_lab("tiny-lab");
  click(page, page->question(1)->choice_button(1));
  give_name("Ada Lovelace");
  const auto folder = labs_dir_.path() / "hand-in";
  test::answer_file_dialog(QString::fromStdString(folder.string()),
                           [&] { click(page, page->hand_in_zip_button()); });
  const auto zip = labs_dir_.path() / "Ada-Lovelace-tiny-lab.zip";
  ASSERT_TRUE(std::filesystem::is_regular_file(zip)) << tab()->message().toStdString();
  EXPECT_TRUE(std::filesystem::exists(folder / "README.md"));
  const auto unpacked = labs_dir_.path() / "unpacked";
  EXPECT_EQ(unpack_hand_in_zip(zip, unpacked), "");
  EXPECT_EQ(read(unpacked / "hand-in" / "answers.json"), read(folder / "answers.json"));
  VerifyOptions check;
  check.lab = (labs_dir_.path() / "tiny-lab.md").string();
  const HandInVerdict verdict = verify_hand_in(unpacked / "hand-in", check);
  for (const HandInProblem& p : verdict.problems) ADD_FAILURE() << p.to_string();
  auto* said = page->findChild<QLabel*>("lab-hand-in-text");
  ASSERT_NE(said, nullptr);
  EXPECT_TRUE(said->text().contains("Packed into " + QString::fromStdString(zip.string())))
      << said->text().toStdString();
}

// File → Open class folder…: a class graded by `gpulab-cli lab grade` (two hand-ins from this
// window, one of them edited afterwards) shows as its table; clicking a learner's row shows their
// hand-in and its problems; grading the class again with a third hand-in updates the open board.
// A class folder whose class.csv is a FIFO (or a device) put there: the board says so in one line
// at once; reading it would have hung the window.
TEST_F(Labs, ClassBoardRefusesAClassCsvThatIsNoFile) {
  open_window();
  const auto folder = labs_dir_.path() / "class";
  std::filesystem::create_directories(folder);
  test::make_fifo(folder / "class.csv");
  ClassBoard* board = open_class_folder(folder);
  ASSERT_NE(board, nullptr);
  EXPECT_EQ(board->table()->rowCount(), 0);
  EXPECT_TRUE(board->summary().contains((folder / "class.csv").string().c_str()) &&
              board->summary().contains("FIFO"))
      << board->summary().toStdString();
}

TEST_F(Labs, ClassBoardShowsTheGradedClassAndFollowsTheFolder) {
  open_window();
  const auto lab = write_lab("tiny-lab.md", kTinyLab);
  ASSERT_TRUE(tab()->open_lab(lab));
  choose_lab("tiny-lab");
  const auto hand_ins = labs_dir_.path() / "hand-ins";
  // Bob's name is not ASCII (issue 46.3): typed, handed in, graded and shown as it is.
  const std::string bob = "Bøb Ωμέγα 李";
  for (const std::string& learner : {std::string("Ada"), bob}) {
    give_name(QString::fromStdString(learner));
    ASSERT_TRUE(tab()->hand_in("tiny-lab", hand_ins / learner)) << tab()->message().toStdString();
  }
  std::ofstream(hand_ins / bob / "README.md", std::ios::app) << "\nan extra line\n";
  const auto graded = labs_dir_.path() / "graded";
  const auto grade = [&] {
    const test::CliResult r =
        test::run_command(std::string(GPULAB_CLI_PATH) + " lab grade '" + hand_ins.string() +
                          "' --out '" + graded.string() + "' --lab '" + lab.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  };
  grade();
  ClassBoard* board = open_class_folder(graded);
  ASSERT_NE(board, nullptr);
  QTableWidget* table = board->table();
  ASSERT_EQ(table->rowCount(), 2);
  EXPECT_EQ(cell(table, 0, "learner"), "Ada");
  EXPECT_EQ(cell(table, 0, "verified"), "yes");
  EXPECT_EQ(cell(table, 1, "learner"), QString::fromStdString(bob));
  EXPECT_EQ(cell(table, 1, "verified"), "no");
  EXPECT_TRUE(board->summary().startsWith("2 learner-lab rows, 1 verified, 1 with problems"))
      << board->summary().toStdString();
  // A click on Bob's row: his problems, then his report, read-only.
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                    table->visualItemRect(table->item(1, 0)).center());
  const QString shown = board->hand_in_view()->toPlainText();
  EXPECT_TRUE(shown.contains("README.md: changed after the hand-in was written"))
      << shown.toStdString();
  EXPECT_TRUE(shown.contains("A tiny lab")) << shown.toStdString();
  EXPECT_TRUE(board->hand_in_view()->isReadOnly());
  EXPECT_TRUE(board->chart()->pixmap().isNull());  // no runs yet: no figures to chart
  // A third hand-in arrives, with its run (`lab run` on the command line), and the class is
  // graded again: the open board follows, with the class chart of Cy's figures.
  const test::CliResult ran = lab_run(lab, "Cy", hand_ins / "Cy");
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  grade();
  EXPECT_TRUE(wait_until([&] { return table->rowCount() == 3; }, 10s)) << table->rowCount();
  EXPECT_EQ(cell(table, 2, "learner"), "Cy");
  EXPECT_EQ(cell(table, 2, "verified"), "yes");
  EXPECT_FALSE(cell(table, 2, "mlp cpu images/s").isEmpty());
  EXPECT_TRUE(wait_until([&] { return !board->chart()->pixmap().isNull(); }, 10s));
  // With GPULAB_SCREENSHOTS=DIR: the board at 1280x720 and 1920x1080, its chart and Bob's
  // hand-in shown.
  if (const QString shots = qEnvironmentVariable("GPULAB_SCREENSHOTS"); !shots.isEmpty())
    for (const QSize size : {QSize(1280, 720), QSize(1920, 1080)}) {
      board->resize(size);
      QTest::qWait(100);
      board->grab().save(shots +
                         QString("/class-board-%1x%2.png").arg(size.width()).arg(size.height()));
    }
}

// File → Open class folder… on a class's hand-ins (no lab grade run): the board grades them itself
// into the folder's graded/, and again by itself as each new hand-in arrives (one from the
// window's Hand in…, one from `lab run` with its run, whose figures make the class chart); Lab
// file… checks them against the instructor's copy from then on. Closing the board while it
// grades stops the grade.
TEST_F(Labs, ClassBoardGradesAClassFolderAsHandInsArrive) {
  open_window();
  const auto lab = write_lab("tiny-lab.md", kTinyLab);
  ASSERT_TRUE(tab()->open_lab(lab));
  choose_lab("tiny-lab");
  const auto hand_ins = labs_dir_.path() / "class";
  give_name("Ada");
  ASSERT_TRUE(tab()->hand_in("tiny-lab", hand_ins / "Ada")) << tab()->message().toStdString();
  ClassBoard* board = open_class_folder(hand_ins);
  ASSERT_NE(board, nullptr);
  EXPECT_TRUE(board->grades());
  EXPECT_EQ(board->report_folder(), hand_ins / "graded");
  QTableWidget* table = board->table();
  ASSERT_TRUE(wait_until([&] { return table->rowCount() == 1 && !board->grading(); }, 20s))
      << board->summary().toStdString();
  EXPECT_EQ(cell(table, 0, "learner"), "Ada");
  EXPECT_EQ(cell(table, 0, "verified"), "yes");
  EXPECT_TRUE(std::filesystem::exists(hand_ins / "graded" / "class.csv"));
  EXPECT_TRUE(board->summary().contains("graded again as they arrive"))
      << board->summary().toStdString();
  EXPECT_TRUE(board->summary().contains("the built-in labs")) << board->summary().toStdString();
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                    table->visualItemRect(table->item(0, 0)).center());
  EXPECT_TRUE(board->hand_in_view()->toPlainText().contains("Ada"));

  // Bob hands in from the window, Cy with `lab run`: the board grades each without being asked,
  // and Ada, being read, stays selected.
  give_name("Bob");
  ASSERT_TRUE(tab()->hand_in("tiny-lab", hand_ins / "Bob")) << tab()->message().toStdString();
  ASSERT_TRUE(wait_until([&] { return table->rowCount() == 2 && !board->grading(); }, 20s))
      << board->summary().toStdString();
  EXPECT_EQ(cell(table, 1, "learner"), "Bob");
  EXPECT_EQ(table->currentRow(), 0);
  EXPECT_TRUE(board->compare_button()->isEnabled());
  EXPECT_TRUE(board->hand_in_view()->toPlainText().contains("Ada"));
  const test::CliResult ran = lab_run(lab, "Cy", hand_ins / "Cy");
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  ASSERT_TRUE(wait_until([&] { return table->rowCount() == 3 && !board->grading(); }, 20s))
      << board->summary().toStdString();
  EXPECT_EQ(cell(table, 2, "learner"), "Cy");
  EXPECT_EQ(cell(table, 2, "verified"), "yes");

  // The instructor's copy of the lab, chosen with Lab file…: named above the table, and the key
  // figures recomputed from each hand-in's runs against it make the class chart.
  choose_lab_file(board, QString::fromStdString(lab.string()));
  ASSERT_TRUE(wait_until(
      [&] { return !board->grading() && board->summary().contains(lab.string().c_str()); }, 20s))
      << board->summary().toStdString();
  EXPECT_EQ(table->rowCount(), 3);
  EXPECT_EQ(cell(table, 2, "verified"), "yes");
  EXPECT_FALSE(cell(table, 2, "mlp cpu images/s").isEmpty());
  EXPECT_FALSE(board->chart()->pixmap().isNull());
  EXPECT_TRUE(std::filesystem::exists(hand_ins / "graded" / "class-tiny-lab.png"));
  // Grade again, then close at once: the grade under way stops, and nothing is left unpacked.
  QTest::mouseClick(board->grade_button(), Qt::LeftButton);
  EXPECT_TRUE(board->grading());
  board->close();
  ASSERT_TRUE(wait_until([&] { return window_->class_board() == nullptr; }, 10s));
  for (const auto& entry : std::filesystem::directory_iterator(hand_ins / "graded"))
    EXPECT_NE(entry.path().filename().string().rfind(".grading-", 0), 0u) << entry.path();
}

// A learner's README naming /dev/zero, a link to it and a file out of the hand-in, re-hashed so
// the manifest agrees: the board opened on that one hand-in grades it elsewhere (a graded/ folder
// in it would break it), names each image as a problem, and shows the report at once, loading
// none of them (the window went from 6 to 11 GB in 30 s and ignored SIGTERM).
TEST_F(Labs, ClassBoardOnOneHandInLoadsNoImageFromOutsideIt) {
  open_window();
  const auto lab = write_lab("tiny-lab.md", kTinyLab);
  ASSERT_TRUE(tab()->open_lab(lab));
  choose_lab("tiny-lab");
  const auto h = labs_dir_.path() / "Ada";
  give_name("Ada");
  ASSERT_TRUE(tab()->hand_in("tiny-lab", h)) << tab()->message().toStdString();
  std::filesystem::create_symlink("/dev/zero", h / "zero.png");
  std::ofstream(h / "README.md", std::ios::app)
      << "\n![zero](/dev/zero)\n![link](zero.png)\n![up](../../../../dev/zero)\n";
  nlohmann::json manifest = nlohmann::json::parse(std::ifstream(h / "manifest.json"));
  manifest["files"]["README.md"] = sha256_file(h / "README.md");
  std::ofstream(h / "manifest.json") << manifest.dump(2);
  ClassBoard* board = open_class_folder(h);
  ASSERT_NE(board, nullptr);
  QTableWidget* table = board->table();
  ASSERT_TRUE(wait_until([&] { return table->rowCount() == 1 && !board->grading(); }, 20s))
      << board->summary().toStdString();
  EXPECT_FALSE(std::filesystem::exists(h / "graded"));
  EXPECT_TRUE(board->summary().contains("is a hand-in, which a graded/ folder in it would break"))
      << board->summary().toStdString();
  EXPECT_EQ(cell(table, 0, "verified"), "no");
  EXPECT_TRUE(cell(table, 0, "problems").contains("the image \"/dev/zero\" is an absolute path"))
      << cell(table, 0, "problems").toStdString();
  const auto start = std::chrono::steady_clock::now();
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                    table->visualItemRect(table->item(0, 0)).center());
  QApplication::processEvents();
  EXPECT_TRUE(board->hand_in_view()->toPlainText().contains("Ada"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  board->close();
}

// Lab file… offers the built-in labs by title before a file: an instructor who handed out one
// has no file of it. Chosen, it is named above the table and a hand-in of another lab is told so.
TEST_F(Labs, ClassBoardLabFileOffersTheBuiltInLabs) {
  open_window();
  const auto lab = write_lab("tiny-lab.md", kTinyLab);
  const auto hand_ins = labs_dir_.path() / "class";
  const test::CliResult ran = lab_run(lab, "Ada", hand_ins / "Ada");
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  ClassBoard* board = open_class_folder(hand_ins);
  ASSERT_NE(board, nullptr);
  QTableWidget* table = board->table();
  ASSERT_TRUE(wait_until([&] { return table->rowCount() == 1 && !board->grading(); }, 20s))
      << board->summary().toStdString();
  EXPECT_EQ(cell(table, 0, "verified"), "yes");
  EXPECT_TRUE(board->summary().contains("the built-in labs (Lab file… for yours)"))
      << board->summary().toStdString();

  QMenu* menu = board->lab_button()->menu();
  ASSERT_NE(menu, nullptr);
  ASSERT_TRUE(test::choose_from_button_menu(board->lab_button(), menu,
                                            "A CNN on the GPU (built in: cnn-on-gpu)"));
  QStringList entries;
  for (QAction* action : menu->actions())
    if (!action->isSeparator()) entries << action->text();
  EXPECT_EQ(entries.size(), int(builtin_lab_names().size()) + 1)
      << entries.join(" | ").toStdString();
  EXPECT_EQ(entries.back(), "A lab file…");
  ASSERT_TRUE(wait_until(
      [&] {
        return !board->grading() &&
               board->summary().contains("checked against the built-in lab cnn-on-gpu");
      },
      20s))
      << board->summary().toStdString();
  EXPECT_NE(cell(table, 0, "verified"), "yes") << "Ada handed in tiny-lab, not cnn-on-gpu";

  // A file again, through the same menu.
  choose_lab_file(board, QString::fromStdString(lab.string()));
  ASSERT_TRUE(wait_until(
      [&] { return !board->grading() && board->summary().contains(lab.string().c_str()); }, 20s))
      << board->summary().toStdString();
  EXPECT_EQ(cell(table, 0, "verified"), "yes");
}

// A class folder whose graded/ cannot be made (a file of that name stands there; a permission
// would not stop root, as CI runs) is graded into a temporary folder, said above the table, and
// that folder goes when the board closes. Lab file… given a file that is no lab names the file and
// its first problem, and the board keeps grading with the lab it had.
TEST_F(Labs, ClassBoardGradesElsewhereWhereGradedCannotBeWrittenAndKeepsItsLabOverANonLab) {
  open_window();
  const auto lab = write_lab("tiny-lab.md", kTinyLab);
  const auto hand_ins = labs_dir_.path() / "class";
  const test::CliResult ran = lab_run(lab, "Ada", hand_ins / "Ada");
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  std::ofstream(hand_ins / "graded") << "not a folder\n";
  ClassBoard* board = open_class_folder(hand_ins);
  ASSERT_NE(board, nullptr);
  const std::filesystem::path temporary = board->report_folder();
  EXPECT_NE(temporary, hand_ins / "graded");
  QTableWidget* table = board->table();
  ASSERT_TRUE(wait_until([&] { return table->rowCount() == 1 && !board->grading(); }, 20s))
      << board->summary().toStdString();
  EXPECT_EQ(cell(table, 0, "verified"), "yes");
  const QString said = board->summary();
  EXPECT_TRUE(said.contains((hand_ins / "graded").string().c_str()) &&
              said.contains("cannot be written") && said.contains(temporary.string().c_str()) &&
              said.contains("until the board closes"))
      << said.toStdString();
  EXPECT_TRUE(std::filesystem::exists(temporary / "class.csv"));
  EXPECT_EQ(read(hand_ins / "graded"), "not a folder\n");

  choose_lab_file(board, QString::fromStdString(lab.string()));
  ASSERT_TRUE(wait_until(
      [&] { return !board->grading() && board->summary().contains(lab.string().c_str()); }, 20s))
      << board->summary().toStdString();
  ASSERT_FALSE(cell(table, 0, "mlp cpu images/s").startsWith("(no column"));
  const auto not_a_lab = write_lab("notes.md", "Remember to bring the projector.\n");
  choose_lab_file(board, QString::fromStdString(not_a_lab.string()));
  const QString refused = board->summary();
  EXPECT_TRUE(refused.contains(not_a_lab.string().c_str()) &&
              refused.contains("is not used to check the hand-ins"))
      << refused.toStdString();
  EXPECT_FALSE(board->grading());
  // Graded again, the class is checked against the lab it had.
  QTest::mouseClick(board->grade_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until(
      [&] { return !board->grading() && board->summary().contains(lab.string().c_str()); }, 20s))
      << board->summary().toStdString();
  EXPECT_FALSE(board->summary().contains(not_a_lab.string().c_str()));
  EXPECT_FALSE(cell(table, 0, "mlp cpu images/s").isEmpty());
  board->close();
  ASSERT_TRUE(wait_until([&] { return window_->class_board() == nullptr; }, 10s));
  EXPECT_FALSE(std::filesystem::exists(temporary));
}

// Every file under `dir` with its bytes: a folder's contents, to see that nothing changed.
std::map<std::string, std::string> files_under(const std::filesystem::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    files[entry.path().string()] = std::move(bytes).str();
  }
  return files;
}

// The class board opens a learner's hand-in read-only: a click on their row shows answers.json's
// answers; a double-click on a zip's row (unpacked again into the board's own folder) or Open in
// Compare on a folder's shows their runs in Compare, ticked, under a line naming the learner,
// never mixed into the user's runs; rename and delete are refused and the hand-in's files stay
// as they were; Back to my runs is one click. A hand-in with a damaged run.json shows its other
// run and says which; one without runs/ says so and leaves the window as it was. Closing the
// board removes what it unpacked.
// Export all charts… while a learner's hand-in is shown exports the hand-in's charts, its scaling
// chart and replica timeline too (they were drawn from the user's own ticked runs), and the
// user's again once Back to my runs is chosen.
TEST_F(Labs, ExportAllChartsExportsTheHandInShown) {
  test::write_run(runs_.path() / "mine", 1, 64, 60, 10, "2026-01-01T10:00:00Z", 1);
  test::TempDir hand_in;
  test::write_run(hand_in.path() / "runs" / "two", 6, 64, 120, 13, "2026-01-01T10:05:00Z", 2);
  test::write_run(hand_in.path() / "runs" / "one", 6, 64, 120, 14, "2026-01-01T09:59:00Z", 1);
  open_window();
  QStringList problems;
  ASSERT_EQ(window_->hand_in()->open(hand_in.path(), "Ada", "two-cpus", &problems), 2)
      << problems.join("\n").toStdString();
  const auto exported = [&](const test::TempDir& dir, const char* file) {
    return QFileInfo(QString::fromStdString((dir.path() / file).string())).size() > 0;
  };
  test::TempDir ada;
  QString error;
  ASSERT_TRUE(window_->export_all(QString::fromStdString(ada.path().string()), &error))
      << error.toStdString();
  for (const char* file : {"scaling.png", "scaling.csv", "replica-timeline.png", "loss.png"})
    EXPECT_TRUE(exported(ada, file)) << file << " of the hand-in";
  window_->hand_in()->close();
  test::TempDir mine;
  ASSERT_TRUE(window_->export_all(QString::fromStdString(mine.path().string()), &error))
      << error.toStdString();
  EXPECT_TRUE(exported(mine, "loss.png"));
  for (const char* file : {"scaling.png", "replica-timeline.png"})
    EXPECT_FALSE(exported(mine, file)) << file << ": the user's one run has no replicas";
}

TEST_F(Labs, ClassBoardOpensALearnersRunsInCompareReadOnly) {
  using std::filesystem::path;
  // The user's own run, ticked in the list with a click, as Compare's one run.
  test::write_run(runs_.path() / "mine", 1, 64, 20, 5, "2026-01-01T10:00:00Z");
  open_window();
  QTreeWidget* own_list = window_->runs_panel()->tree();
  ASSERT_EQ(own_list->topLevelItemCount(), 1);
  test::click_check_box(own_list, own_list->model()->index(0, 0));
  ASSERT_TRUE(wait_until([&] { return window_->compare()->runs().size() == 1u; }, 5s));
  const auto own_runs = run_folders(runs_.path());

  // A lab of two experiments; Ada and Bob hand it in with real runs (Bob as a zip, as a course
  // platform takes it); Cy's run.json of one run is damaged; Dee's runs/ is gone.
  std::string text = kTinyLab;
  text.insert(text.find("```bash"),
              "```experiment\nname: mlp b64\nmodel: mlp\ndevice: cpu\nthreads: 1\nbatch: 64\n"
              "steps: 6\n```\n\n");
  const auto lab = write_lab("tiny-lab.md", text);
  const auto hand_ins = labs_dir_.path() / "hand-ins";
  const path given = labs_dir_.path() / "given.json";
  std::ofstream(given) << R"({"answers": [{"question": "What dominates training?",
                               "answer": "Matrix multiplication"}]})";
  for (const char* learner : {"Ada", "Bob"}) {
    const test::CliResult ran =
        lab_run(lab, learner, hand_ins / learner, " --answers '" + given.string() + "'");
    ASSERT_EQ(ran.exit_code, 0) << ran.output;
  }
  write_hand_in_zip(hand_ins / "Bob", hand_ins / "Bob.zip");
  std::filesystem::remove_all(hand_ins / "Bob");
  for (const char* learner : {"Cy", "Dee"}) {
    std::filesystem::copy(hand_ins / "Ada", hand_ins / learner,
                          std::filesystem::copy_options::recursive);
    nlohmann::json manifest = nlohmann::json::parse(read(hand_ins / learner / "manifest.json"));
    manifest["learner"] = learner;
    std::ofstream(hand_ins / learner / "manifest.json") << manifest.dump(2);
  }
  std::ofstream(hand_ins / "Cy" / "runs" / "mlp-cpu" / "run.json") << "{\"created\": ";
  std::filesystem::remove_all(hand_ins / "Dee" / "runs");
  const auto graded = labs_dir_.path() / "graded";
  const test::CliResult r =
      test::run_command(std::string(GPULAB_CLI_PATH) + " lab grade '" + hand_ins.string() +
                        "' --out '" + graded.string() + "' --lab '" + lab.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ClassBoard* board = open_class_folder(graded);
  ASSERT_NE(board, nullptr);
  QTableWidget* table = board->table();
  ASSERT_EQ(table->rowCount(), 4);
  const auto row_of = [&](const QString& learner) {
    for (int row = 0; row < table->rowCount(); ++row)
      if (cell(table, row, "learner") == learner) return row;
    ADD_FAILURE() << "no row of " << learner.toStdString();
    return 0;
  };
  // A click on a learner's row, or a double-click as a mouse makes one: press and release, then
  // the second press (Qt's double-click event) and its release. QTest's mouseDClick alone sends
  // only the second press, which a view takes as a double-click only after a first.
  const auto click_row = [&](const QString& learner, bool twice) {
    const QPoint at = table->visualItemRect(table->item(row_of(learner), 0)).center();
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, at);
    if (!twice) return;
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, at);
    QTest::mouseRelease(table->viewport(), Qt::LeftButton, {}, at);
  };
  const auto ada_files = files_under(hand_ins / "Ada");
  HandInView* hand_in = window_->hand_in();
  auto* line = window_->findChild<Banner*>("hand-in-line");
  ASSERT_NE(line, nullptr);
  EXPECT_FALSE(line->isVisible());
  EXPECT_FALSE(board->compare_button()->isEnabled());  // no row chosen yet

  // A click on Bob's row (a zip): his answers, read from the zip unpacked again.
  click_row("Bob", false);
  const QString shown = board->hand_in_view()->toPlainText();
  for (const char* part :
       {"Answers (answers.json)", "Quiz: 1 of 2 right in the end",
        "Final answer: Matrix multiplication ✓", "attempts in order: Matrix multiplication ✓"})
    EXPECT_TRUE(shown.contains(part)) << part << " in " << shown.toStdString();
  // A double-click on it: his runs in Compare, ticked, his name over them.
  click_row("Bob", true);
  ASSERT_NE(hand_in->store(), nullptr) << board->runs_line().toStdString();
  EXPECT_EQ(window_->tabs()->currentWidget(), window_->compare());
  EXPECT_TRUE(line->isVisible());
  EXPECT_TRUE(line->text().startsWith("Bob's hand-in (read-only): tiny-lab, 2 runs"))
      << line->text().toStdString();
  EXPECT_EQ(board->runs_line(), "Bob's hand-in: 2 runs in the window's Compare tab, read-only.");
  ASSERT_EQ(window_->compare()->runs().size(), 2u);
  const path unpacked = window_->compare()->runs()[0]->data.dir;
  EXPECT_FALSE(unpacked.string().starts_with(hand_ins.string())) << unpacked;
  EXPECT_EQ(window_->shown_runs_panel(), hand_in->panel());
  EXPECT_TRUE(hand_in->panel()->isVisible());
  EXPECT_FALSE(window_->runs_panel()->isVisible());
  const auto series = [&] {
    window_->compare()->refresh(true);
    std::vector<std::string> names = window_->compare()->speedup_chart()->chart().runs;
    for (std::string& name : names)  // a run measured under other programs' load is marked
      if (name.ends_with(" ⚠")) name.resize(name.size() - std::string(" ⚠").size());
    std::sort(names.begin(), names.end());
    return names;
  };
  EXPECT_EQ(series(), (std::vector<std::string>{"mlp b64 · tiny-lab", "mlp cpu · tiny-lab"}));

  // Ada's row chosen with a click, then Open in Compare.
  click_row("Ada", false);
  ASSERT_TRUE(board->compare_button()->isEnabled());
  QTest::mouseClick(board->compare_button(), Qt::LeftButton);
  // The window comes forward with Compare, and the board stays in sight above it: it is a window
  // of the main one's, which window managers keep above it (it was hidden behind).
  EXPECT_TRUE(board->isVisible());
  ASSERT_NE(board->windowHandle(), nullptr);
  EXPECT_EQ(board->windowHandle()->transientParent(), window_->windowHandle());
  EXPECT_EQ(window_->tabs()->currentWidget(), window_->compare());
  EXPECT_TRUE(line->text().startsWith("Ada's hand-in (read-only): tiny-lab, 2 runs"))
      << line->text().toStdString();
  ASSERT_EQ(window_->compare()->runs().size(), 2u);
  for (RunEntry* run : window_->compare()->runs())
    EXPECT_EQ(run->data.dir.parent_path(), hand_ins / "Ada" / "runs");
  EXPECT_EQ(series(), (std::vector<std::string>{"mlp b64 · tiny-lab", "mlp cpu · tiny-lab"}));
  QTreeWidget* list = hand_in->panel()->tree();
  ASSERT_EQ(list->topLevelItemCount(), 2);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(list->topLevelItem(i)->checkState(0), Qt::Checked);

  // Read-only: the list's Rename… and Delete… are there but disabled, and clicking them does
  // nothing; the store refuses both too. Not a byte of the hand-in changes.
  QStringList entries;
  int tried = 0;
  QTimer::singleShot(300, [&] {
    auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
    if (!menu) return;
    for (QAction* action : menu->actions()) {
      if (action->isSeparator()) continue;
      entries << test::plain_text(action->text()) + (action->isEnabled() ? "" : " [off]");
      if (action->text().startsWith("Rename") || action->text().startsWith("Delete")) {
        QTest::mouseClick(menu, Qt::LeftButton, {}, menu->actionGeometry(action).center());
        ++tried;
      }
    }
    menu->close();
  });
  const QPoint at = list->visualItemRect(list->topLevelItem(0)).center();
  QContextMenuEvent right_click(QContextMenuEvent::Mouse, at, list->viewport()->mapToGlobal(at));
  QApplication::sendEvent(list->viewport(), &right_click);
  ASSERT_TRUE(wait_until([&] { return tried == 2; }, 5s)) << entries.join(", ").toStdString();
  EXPECT_TRUE(entries.contains("Rename (read-only: Ada's hand-in) [off]"))
      << entries.join(", ").toStdString();
  EXPECT_TRUE(entries.contains("Delete (read-only: Ada's hand-in) [off]"))
      << entries.join(", ").toStdString();
  test::DialogCloser closer;  // a rename or delete dialog would be a failure: closed, counted
  QString error;
  RunEntry* first = hand_in->store()->entries().front();
  EXPECT_FALSE(hand_in->store()->rename(first->id, "renamed", &error));
  EXPECT_EQ(error,
            "the runs of Ada's hand-in are opened read-only: nothing is renamed, deleted "
            "or added there; use Back to my runs for your own runs");
  EXPECT_FALSE(hand_in->store()->remove(first->id, &error));
  QStringList import_problems;
  EXPECT_EQ(hand_in->store()->import_folder(runs_.path(), &import_problems), 0);
  QTest::qWait(100);
  EXPECT_EQ(closer.closed(), 0);
  EXPECT_EQ(files_under(hand_ins / "Ada"), ada_files);
  EXPECT_EQ(hand_in->store()->entries().size(), 2u);
  // Not mixed into the user's runs: their folder, their list and the remembered imports.
  EXPECT_EQ(run_folders(runs_.path()), own_runs);
  EXPECT_EQ(window_->store()->entries().size(), 1u);
  EXPECT_FALSE(QSettings()
                   .value("runs/imports")
                   .toStringList()
                   .join("\n")
                   .contains(QString::fromStdString(hand_ins.string())));

  // Back to my runs: one click (on the line's button of the hand-in shown now).
  const auto back = [&] {
    auto* button = line->findChild<QPushButton*>("back-to-my-runs");
    ASSERT_NE(button, nullptr);
    ASSERT_TRUE(wait_until([&] { return button->isVisible(); }, 5s));
    QTest::mouseClick(button, Qt::LeftButton);
  };
  back();
  EXPECT_EQ(hand_in->store(), nullptr);
  EXPECT_FALSE(line->isVisible());
  ASSERT_EQ(window_->compare()->runs().size(), 1u);
  EXPECT_EQ(window_->compare()->runs()[0]->data.dir, runs_.path() / "mine");
  EXPECT_TRUE(window_->runs_panel()->isVisible());

  // Cy: one run.json damaged: the other run is shown and the board names the damaged file.
  click_row("Cy", true);
  ASSERT_NE(hand_in->store(), nullptr) << board->runs_line().toStdString();
  EXPECT_EQ(window_->compare()->runs().size(), 1u);
  const QString cy = board->runs_line();
  EXPECT_TRUE(cy.startsWith("Cy's hand-in: 1 run in the window's Compare tab, read-only.\n⚠ "))
      << cy.toStdString();
  EXPECT_TRUE(cy.contains(
      QString::fromStdString((hand_ins / "Cy" / "runs" / "mlp-cpu" / "run.json").string())))
      << cy.toStdString();
  EXPECT_EQ(cy.count('\n'), 1) << cy.toStdString();
  back();
  // Dee: no runs/: said in one line, and the window keeps the user's runs.
  click_row("Dee", true);
  EXPECT_EQ(hand_in->store(), nullptr);
  EXPECT_EQ(board->runs_line(),
            "Dee's runs are not shown; the window shows its runs as before:\n⚠ " +
                QString::fromStdString((hand_ins / "Dee" / "runs").string()) +
                ": missing: Dee's hand-in holds no runs to compare (lab verify names what else "
                "is missing)");
  ASSERT_EQ(window_->compare()->runs().size(), 1u);
  EXPECT_EQ(window_->compare()->runs()[0]->data.dir, runs_.path() / "mine");

  // Bob's again; a run of the user's started meanwhile brings their runs back, to watch it train.
  click_row("Bob", true);
  ASSERT_NE(hand_in->store(), nullptr);
  EXPECT_EQ(window_->compare()->runs()[0]->data.dir.parent_path(), unpacked.parent_path());
  small_setup(6);
  ASSERT_EQ(window_->start_training(), 1) << window_->message().toStdString();
  EXPECT_TRUE(wait_until([&] { return hand_in->store() == nullptr; }, 30s));
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  EXPECT_EQ(window_->store()->entries().size(), 2u);
  EXPECT_EQ(run_folders(runs_.path()).size(), 2u);  // the new run, in the user's folder
  // Bob's once more, then the board closes: his runs leave the window, his unpacked zip is gone.
  click_row("Bob", true);
  ASSERT_NE(hand_in->store(), nullptr);
  board->close();
  ASSERT_TRUE(wait_until([&] { return window_->class_board() == nullptr; }, 5s));
  EXPECT_EQ(hand_in->store(), nullptr);
  EXPECT_FALSE(std::filesystem::exists(unpacked));
  EXPECT_EQ(window_->shown_runs_panel(), window_->runs_panel());
  for (RunEntry* run : window_->compare()->runs())
    EXPECT_EQ(run->data.dir.parent_path(), runs_.path());
}

// The learner's side of a checkable hand-in in the window: a wrong answer then the right one are
// both kept, a written answer typed into its box is there after a restart, and the first Hand in…
// asks the learner's name, which the next start of gpulab still knows.
TEST_F(Labs, HandInAsksTheNameOnceAndKeepsEveryAttemptAndTheWrittenAnswers) {
  QSettings().remove("labs/learner");  // a learner who never handed in
  const auto lab = write_lab(
      "tiny-lab.md", std::string(kTinyLab) + "\n## Questions\n\n1. Why is the GPU faster?\n");
  open_window();
  ASSERT_TRUE(tab()->open_lab(lab));
  LabPage* page = choose_lab("tiny-lab");
  click(page, page->question(0)->choice_button(1));  // False: wrong
  click(page, page->question(0)->choice_button(0));  // True: right
  EXPECT_TRUE(opened_lab_row()->text(3).endsWith(
      "quiz 1 of 2 right (1 answered), 0 right at the first attempt"))
      << opened_lab_row()->text(3).toStdString();
  ASSERT_NE(page->written_view(), nullptr);
  QPlainTextEdit* box = page->written_view()->editor(0);
  page->ensureWidgetVisible(box);
  QTest::mouseClick(box->viewport(), Qt::LeftButton);
  QTest::keyClicks(box, "Many cores at once.");

  // With GPULAB_SCREENSHOTS=DIR: the page with its answers, at 1280x720.
  if (const QString shots = qEnvironmentVariable("GPULAB_SCREENSHOTS"); !shots.isEmpty()) {
    window_->resize(1280, 720);
    for (int i = 0; i < 3; ++i) {  // the page lays out again as it grows
      QTest::qWait(50);
      page->verticalScrollBar()->setValue(page->verticalScrollBar()->maximum());
    }
    window_->grab().save(shots + "/labs-written-answers-1280x720.png");
    page->grab().save(shots + "/labs-written-answers-page.png");
  }
  // A restart: the written answer is still there.
  close_window();
  open_window();
  ASSERT_TRUE(tab()->open_lab(lab));
  page = choose_lab("tiny-lab");
  EXPECT_EQ(page->written_view()->editor(0)->toPlainText(), "Many cores at once.");
  EXPECT_TRUE(tab()->learner()->text().isEmpty());

  // Hand in…: the name is asked first, typed into its dialog as a person types it.
  bool asked = false;
  QTimer name_dialog;
  name_dialog.setInterval(50);
  QObject::connect(&name_dialog, &QTimer::timeout, [&] {
    auto* dialog = qobject_cast<QInputDialog*>(QApplication::activeModalWidget());
    auto* field = dialog ? dialog->findChild<QLineEdit*>() : nullptr;
    if (!field || !field->isVisible() || asked) return;
    asked = true;
    QTest::keyClicks(field, "Ada Lovelace");
    for (QAbstractButton* b : dialog->findChild<QDialogButtonBox*>()->buttons())
      if (dialog->findChild<QDialogButtonBox*>()->buttonRole(b) == QDialogButtonBox::AcceptRole)
        QTest::mouseClick(b, Qt::LeftButton);
  });
  name_dialog.start();
  const auto folder = labs_dir_.path() / "hand-in";
  test::answer_file_dialog(QString::fromStdString(folder.string()),
                           [&] { click(page, page->hand_in_button()); });
  name_dialog.stop();
  EXPECT_TRUE(asked);
  const auto answers = nlohmann::json::parse(read(folder / "answers.json"));
  EXPECT_EQ(answers["learner"], "Ada Lovelace");
  const auto& first = answers["answers"][0];
  ASSERT_EQ(first["attempts"].size(), 2u) << first.dump();
  EXPECT_EQ(first["attempts"][0]["answer"], "False");
  EXPECT_EQ(first["first_correct"], false);
  EXPECT_EQ(first["correct"], true);
  EXPECT_EQ(answers["first_attempt_score"], 0);
  EXPECT_EQ(answers["written"][0]["answer"], "Many cores at once.");
  EXPECT_EQ(nlohmann::json::parse(read(folder / "manifest.json"))["learner"], "Ada Lovelace");

  // The next start knows the name: Hand in… asks only for the folder.
  close_window();
  open_window();
  ASSERT_TRUE(tab()->open_lab(lab));
  page = choose_lab("tiny-lab");
  EXPECT_EQ(tab()->learner()->text(), "Ada Lovelace");
  const auto again = labs_dir_.path() / "again";
  test::answer_file_dialog(QString::fromStdString(again.string()),
                           [&] { click(page, page->hand_in_button()); });
  EXPECT_EQ(nlohmann::json::parse(read(again / "manifest.json"))["learner"], "Ada Lovelace");
}

// quiz-attempts: 1 takes one answer per question: the question closes after it.
TEST_F(Labs, OneAttemptPerQuestionClosesTheQuestionAfterItsAnswer) {
  std::string once = kTinyLab;
  once.replace(once.find("hardware: cpu"), 13, "hardware: cpu\nquiz-attempts: 1");
  open_window();
  ASSERT_TRUE(tab()->open_lab(write_lab("tiny-lab.md", once)));
  LabPage* page = choose_lab("tiny-lab");
  EXPECT_TRUE(page->question(0)->choice_button(0)->isEnabled());
  click(page, page->question(0)->choice_button(1));  // False: wrong, and final
  EXPECT_FALSE(page->question(0)->choice_button(0)->isEnabled());
  EXPECT_TRUE(page->question(0)->feedback().contains("Not quite."))
      << page->question(0)->feedback().toStdString();
  EXPECT_TRUE(page->question(1)->choice_button(0)->isEnabled());
}

TEST_F(Labs, ALabFileWithAnErrorIsReportedAtItsLineAndTheOthersLoad) {
  std::string broken = kTinyLab;
  broken.replace(broken.find("batch: 32"), 9, "batchsize: 32");  // line 16
  const auto path = write_lab("broken.md", broken);
  open_window();
  test::answer_file_dialog(QString::fromStdString(path.string()), [&] {
    ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "File", "Open lab"));
  });
  ASSERT_TRUE(wait_until([&] { return !tab()->message().isEmpty(); }, 5s));
  const std::string message = tab()->message().toStdString();
  EXPECT_NE(message.find(path.string() + ":16: unknown key \"batchsize\""), std::string::npos)
      << message;
  // The built-in labs are all there, and the broken one is not listed.
  EXPECT_EQ(tab()->labs().size(), builtin_lab_names().size());
  EXPECT_EQ(tab()->list()->topLevelItemCount(), int(builtin_lab_names().size()));
  EXPECT_NE(choose_lab("cnn-on-gpu"), nullptr);
}

// A lab's page is made when it is first shown (the window starts with none of them), and a lab
// file opened again while its page is shown is shown as the file is now, in a page made afresh.
TEST_F(Labs, APageIsMadeWhenShownAndALabOpenedAgainIsShownAsItIsNow) {
  const auto path = write_lab("tiny-lab.md", kTinyLab);
  open_window();
  EXPECT_TRUE(tab()->findChildren<LabPage*>().isEmpty());
  LabPage* first = choose_lab("cnn-on-gpu");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(tab()->findChildren<LabPage*>().size(), 1);
  test::answer_file_dialog(QString::fromStdString(path.string()), [&] {
    ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "File", "Open lab"));
  });
  LabPage* before = tab()->current_page();
  ASSERT_NE(before, nullptr);
  EXPECT_EQ(before->lab().title, "A tiny lab");
  const QPointer<LabPage> old = before;

  std::string edited = kTinyLab;
  edited.replace(edited.find("title: A tiny lab"), 17, "title: A tiny lab, edited");
  std::ofstream(path) << edited;
  // Opened again as File → Open lab opens it (the dialog, answered above, is not asked again: in
  // its own folder, with the file chosen before, it keeps every folder of the typed path selected
  // on a slow machine, and the test would be testing the dialog).
  ASSERT_TRUE(tab()->open_lab(path));
  // The old page goes once the event loop deletes what was left to it.
  QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
  EXPECT_TRUE(old.isNull());
  // The page on screen is the file as it is now.
  LabPage* after = nullptr;
  for (LabPage* page : tab()->findChildren<LabPage*>())
    if (page->isVisible()) after = page;
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->lab().title, "A tiny lab, edited");
  EXPECT_EQ(tab()->current_page(), after);
  EXPECT_EQ(tab()->labs().size(), builtin_lab_names().size() + 1);
  EXPECT_EQ(opened_lab_row()->text(0), "A tiny lab, edited");
}

// A remembered lab file that grew past the limits (2 MB of one-line paragraphs froze the window
// for minutes inside Qt's Markdown layout, at every start) is left out unread, said on the tab
// with the limits, and the window starts at once; a lab at the limits, one paragraph of 1000
// short lines, is shown within a few seconds (10.6 s when Qt laid it out as Markdown, 1.7 s as
// the HTML it is converted to once).
TEST_F(Labs, ARememberedHugeLabFileDoesNotStopTheWindowFromStarting) {
  std::string huge = std::string(kTinyLab) + "\n";
  while (huge.size() < (size_t(2) << 20)) huge += "x\n";
  const auto big = write_lab("huge.md", huge);
  std::string most = "---\ntitle: Long\nminutes: 5\nhardware: cpu\n---\n";
  while (std::count(most.begin(), most.end(), '\n') < kMaxLabLines) most += "a few words\n";
  const auto longest = write_lab("longest.md", most);
  ASSERT_TRUE(load_lab_file(longest).ok());
  LabProgress progress;
  progress.files = {big.string(), longest.string()};
  std::string problem;
  ASSERT_TRUE(save_lab_progress(runs_.path(), progress, &problem)) << problem;

  const auto start = std::chrono::steady_clock::now();
  open_window();
  window_->show_tab("labs");
  QApplication::processEvents();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, 6s) << std::chrono::duration<double>(took).count() << " s";  // 1.7 s here
  const std::string message = tab()->message().toStdString();
  EXPECT_NE(message.find(big.string() + ": the file has " + std::to_string(huge.size()) +
                         " bytes; a lab file has at most 65536 bytes and 1000 lines: split it "
                         "into smaller labs"),
            std::string::npos)
      << message;
  EXPECT_NE(tab()->page("longest"), nullptr);
  EXPECT_EQ(tab()->page("huge"), nullptr);
  // Forgotten, so the next start does not meet it again.
  EXPECT_EQ(load_lab_progress(runs_.path(), &problem).files,
            std::vector<std::string>{longest.string()});
}

// A Latin-1 lab opened in the window is refused at its line and byte, so no ▶ Run is shown that
// would do nothing; the other labs stay.
TEST_F(Labs, ALatin1LabIsRefusedAtItsLineAndByte) {
  std::string latin1 = kTinyLab;
  latin1.replace(latin1.find("name: mlp cpu"), 13, "name: caf\xe9");  // line 12
  const auto path = write_lab("latin1.md", latin1);
  open_window();
  EXPECT_FALSE(tab()->open_lab(path));
  const std::string message = tab()->message().toStdString();
  EXPECT_NE(message.find(path.string() + ":12: byte 0xE9 at column 10 is not UTF-8: save the "
                                         "file as UTF-8"),
            std::string::npos)
      << message;
  EXPECT_EQ(tab()->labs().size(), builtin_lab_names().size());
}

// `gpulab --lab FILE.md`, once per file: a broken file is named with its line on stderr, and the
// others load (the good one is remembered with the labs' progress).
TEST_F(Labs, TheLabFlagReportsABrokenFileAndLoadsTheOthers) {
  std::string broken = kTinyLab;
  broken.replace(broken.find("batch: 32"), 9, "batchsize: 32");
  const auto bad = write_lab("broken.md", broken);
  const auto good = write_lab("tiny-lab.md", kTinyLab);
  const std::string command =
      "QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME=" + labs_dir_.path().string() +
      " timeout -s TERM 3 " + GPULAB_GUI_PATH + " --runs-dir " + runs_.path().string() + " --lab " +
      bad.string() + " --lab " + good.string() + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  pclose(pipe);
  EXPECT_NE(output.find("--lab " + bad.string() + ": not loaded"), std::string::npos) << output;
  EXPECT_NE(output.find(bad.string() + ":16: unknown key \"batchsize\""), std::string::npos)
      << output;
  std::string problem;
  const LabProgress kept = load_lab_progress(runs_.path(), &problem);
  EXPECT_EQ(kept.files, std::vector<std::string>{good.string()}) << problem;
}

// Presenter mode's larger type: the list of labs grows with it, so every lab stays in view.
TEST_F(Labs, TheListOfLabsShowsEveryLabInPresenterMode) {
  open_window();
  QTreeWidget* list = tab()->list();
  auto all_shown = [&] {
    for (int row = 0; row < list->topLevelItemCount(); ++row)
      if (list->visualItemRect(list->topLevelItem(row)).bottom() >= list->viewport()->height())
        return false;
    return true;
  };
  window_->show_tab("labs");
  ASSERT_TRUE(wait_until(all_shown, 5s));
  const int normal = list->height();
  window_->set_presenter(true);
  EXPECT_TRUE(wait_until([&] { return list->height() > normal && all_shown(); }, 5s))
      << list->height() << " px for " << list->topLevelItemCount() << " labs";
  window_->set_presenter(false);
}

TEST_F(Labs, AGpuExperimentOnAMachineWithoutOneSaysSoAndShowsNothingInvented) {
  test::TempDir no_references;  // the shipped ones fill these rows: AGpuExperimentShows... below
  test::ScopedEnv env(kReferenceRunsVariable, no_references.path().string());
  open_window();
  LabPage* page = choose_lab("cnn-on-gpu");
  ASSERT_NE(page, nullptr);
  EXPECT_FALSE(page->run_button("lenet5 gpu")->isEnabled());
  EXPECT_TRUE(page->run_button("lenet5 cpu")->isEnabled());
  const QString says = page->experiment_text("lenet5 gpu");
  EXPECT_TRUE(says.contains("needs a GPU, and this machine has none")) << says.toStdString();
  EXPECT_TRUE(says.contains("No reference run recorded on a GPU ships with gpulab for it"))
      << says.toStdString();
  QTableWidget* table = page->table(0);
  for (int row = 0; row < table->rowCount(); ++row) {
    if (cell(table, row, "device") != "cuda:0") continue;
    EXPECT_EQ(cell(table, row, "note"), "skipped: no GPU on this machine");
    EXPECT_EQ(cell(table, row, "images/s"), "");
    EXPECT_EQ(cell(table, row, "speedup"), "");
  }
}

// A reference run (recorded on a GPU elsewhere) fills the row of the GPU experiment this machine
// cannot run, marked "recorded on ..." in the row and on the experiment's card, and goes into the
// hand-in marked; the learner's own run of it, once in the runs folder, replaces it.
TEST_F(Labs, AGpuExperimentShowsTheReferenceRunMarkedUntilTheLearnersOwn) {
  test::TempDir refs;
  const Lab lab = load_lab("cnn-on-gpu");
  const std::string name = lab_run_name(lab, *lab.experiment("lenet5 gpu"));
  test::write_reference_run(refs.path() / "lenet5-gpu", name);
  test::ScopedEnv env(kReferenceRunsVariable, refs.path().string());
  open_window();
  LabPage* page = choose_lab("cnn-on-gpu");
  ASSERT_NE(page, nullptr);
  QTableWidget* table = page->table(0);
  int row = -1;
  for (int r = 0; r < table->rowCount(); ++r)
    if (experiment(table, r) == "lenet5 gpu") row = r;
  ASSERT_GE(row, 0);
  const QString mark = "recorded on NVIDIA H200 (fixture), 2026-11-20";
  EXPECT_TRUE(cell(table, row, "note")
                  .startsWith(mark + " (a reference run, not measured on this machine)"))
      << cell(table, row, "note").toStdString();
  EXPECT_GT(cell(table, row, "images/s").toDouble(), 0);
  EXPECT_FALSE(cell(table, row, "ms per step").isEmpty());
  EXPECT_EQ(cell(table, row, "speedup"), "");  // no CPU run of the learner's to take it over
  EXPECT_FALSE(page->run_button("lenet5 gpu")->isEnabled());
  const QString says = page->experiment_text("lenet5 gpu");
  EXPECT_TRUE(says.contains("Its row shows a reference run " + mark)) << says.toStdString();
  EXPECT_TRUE(says.contains("not a measurement of yours")) << says.toStdString();
  // Drawn in the lab's chart, its name marked; not counted as the learner's progress.
  const std::vector<std::string> drawn = page->chart(0)->chart().runs;
  ASSERT_EQ(drawn.size(), 1u);
  EXPECT_NE(drawn[0].find("(reference, " + mark.toStdString() + ")"), std::string::npos)
      << drawn[0];
  const auto names = builtin_lab_names();
  const int lab_row = int(std::find(names.begin(), names.end(), "cnn-on-gpu") - names.begin());
  const QString progress = tab()->list()->topLevelItem(lab_row)->text(3);
  EXPECT_TRUE(progress.startsWith("0 of 9 experiments run")) << progress.toStdString();
  const auto folder = labs_dir_.path() / "hand-in";
  give_name("Ada");
  ASSERT_TRUE(tab()->hand_in("cnn-on-gpu", folder)) << tab()->message().toStdString();
  EXPECT_NE(read(folder / "README.md").find("reference run, " + mark.toStdString()),
            std::string::npos)
      << read(folder / "README.md");

  // The learner's own run of it, recorded on their GPU and kept in their runs folder.
  close_window();
  test::write_reference_run(runs_.path() / "mine", name, "NVIDIA RTX 4090", "2026-11-25T10:00:00Z");
  open_window();
  table = tab()->page("cnn-on-gpu")->table(0);
  EXPECT_FALSE(cell(table, row, "note").contains("recorded on"))
      << cell(table, row, "note").toStdString();
  EXPECT_GT(cell(table, row, "images/s").toDouble(), 0);
  const QString own = tab()->page("cnn-on-gpu")->experiment_text("lenet5 gpu");
  EXPECT_TRUE(own.contains("Its row shows your own run of it: finished: ")) << own.toStdString();
  EXPECT_FALSE(own.contains("reference run")) << own.toStdString();
}

// Several reference runs in one chart: each its own colour, none the colour of a learner's run in
// it, so that a chart of four references reads as four lines.
TEST_F(Labs, ReferenceRunsInOneChartAreDrawnInColoursOfTheirOwn) {
  test::TempDir refs;
  const Lab lab = load_lab("cnn-on-gpu");
  for (const char* gpu_experiment : {"lenet5 gpu", "lenet5 gpu graphs off", "vgg-small gpu"})
    test::write_reference_run(refs.path() / std::string(gpu_experiment),
                              lab_run_name(lab, *lab.experiment(gpu_experiment)));
  test::ScopedEnv env(kReferenceRunsVariable, refs.path().string());
  open_window();
  LabPage* page = choose_lab("cnn-on-gpu");
  ASSERT_NE(page, nullptr);
  QCustomPlot* plot = page->chart(0)->plot();
  // A run draws more than one graph (its raw line, light, and its smoothed one, named as the
  // legend names it, which may leave out the lab): the run is what comes before " · " or
  // " (reference", and no colour of one run is another's.
  std::map<QString, std::set<QRgb>> references;
  std::set<QRgb> own;
  QStringList names;
  for (int g = 0; g < plot->graphCount(); ++g) {
    const QString name = plot->graph(g)->name();
    const QColor color = plot->graph(g)->pen().color();
    EXPECT_TRUE(color.isValid()) << name.toStdString();
    names << name;
    if (name.contains("(reference, "))
      references[name.section(" (reference", 0, 0).section(" · ", 0, 0)].insert(color.rgb());
    else
      own.insert(color.rgb());
  }
  ASSERT_EQ(references.size(), 3u) << names.join(" | ").toStdString();
  auto shared = [](const std::set<QRgb>& a, const std::set<QRgb>& b) {
    return std::any_of(a.begin(), a.end(), [&](QRgb c) { return b.count(c) > 0; });
  };
  for (auto i = references.begin(); i != references.end(); ++i) {
    for (auto j = std::next(i); j != references.end(); ++j)
      EXPECT_FALSE(shared(i->second, j->second))
          << i->first.toStdString() << " and " << j->first.toStdString();
    EXPECT_FALSE(shared(i->second, own)) << i->first.toStdString();
  }
}

TEST_F(Labs, AReferenceRunsVariableNamingNoFolderIsReportedAndTheLabsLoad) {
  test::TempDir dir;
  const auto missing = dir.path() / "no-such-folder";
  test::ScopedEnv env(kReferenceRunsVariable, missing.string());
  open_window();
  EXPECT_TRUE(tab()->message().contains(QString::fromStdString(
      "GPULAB_REFERENCE_RUNS=" + missing.string() +
      ": not a folder; set it to a folder of reference runs (run folders recorded on a GPU), or "
      "unset it to use gpulab's own")))
      << tab()->message().toStdString();
  EXPECT_EQ(tab()->labs().size(), builtin_lab_names().size());
  LabPage* page = choose_lab("cnn-on-gpu");
  for (int row = 0; row < page->table(0)->rowCount(); ++row) {
    if (cell(page->table(0), row, "device") != "cuda:0") continue;
    EXPECT_EQ(cell(page->table(0), row, "note"), "skipped: no GPU on this machine");
  }
}

TEST_F(Labs, ADamagedProgressFileIsSetAsideAndReported) {
  std::ofstream(lab_progress_path(runs_.path())) << "{ not json";
  open_window();
  EXPECT_TRUE(tab()->message().contains("could not be read")) << tab()->message().toStdString();
  EXPECT_TRUE(std::filesystem::exists(runs_.path() / ".gpulab-labs.json.damaged"));
  // The tab works: an answer is kept in a new file.
  LabPage* page = choose_lab("cnn-on-gpu");
  click(page, page->question(0)->choice_button(0));
  std::string problem;
  const LabProgress kept = load_lab_progress(runs_.path(), &problem);
  EXPECT_EQ(problem, "");
  EXPECT_EQ(kept.labs.at(":/labs/cnn-on-gpu.md").answers.size(), 1u);
}

}  // namespace
}  // namespace gpulab::ui

int main(int argc, char** argv) {
  return gpulab::test::run_window_tests(argc, argv, /*qt_dialogs=*/true);
}
