// What the window says of runs, driven as a person drives it: one name per run in the runs list,
// the Baseline list, Compare's table and charts, the legends, the key, the headline, the exports
// and the lab report; ⚠ on a flagged run in every key and legend, also one flagged after its chart
// was made; exported charts drawn for their own size, with whole titles and their bar values.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QRegularExpression>
#include <QTabBar>
#include <QTableWidget>
#include <QToolButton>
#include <QTreeWidget>
#include <QtTest/QTest>
#include <filesystem>
#include <fstream>

#include "engine/records/run_record.hpp"
#include "recorded_runs.hpp"
#include "ui/charts/chart_export.hpp"
#include "ui/charts/chart_legend.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/compare/compare_view.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/window/main_window.hpp"
#include "ui_fixture.hpp"
#include "ui_input.hpp"

namespace gpulab::ui {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::wait_until;

// Changes a recorded run's run.json as another program (or an older gpulab) could have written it.
void edit_run(const fs::path& dir, const std::function<void(nlohmann::json&)>& change) {
  nlohmann::json info = nlohmann::json::parse(std::ifstream(dir / "run.json"));
  change(info);
  std::ofstream(dir / "run.json") << info.dump(2);
}

// A run measured while other programs kept the CPU busy: one of the flags ⚠ marks.
void flag_run(const fs::path& dir) {
  edit_run(dir, [](nlohmann::json& info) {
    info["outside_load"] = {{"under_load", true}, {"mean_cores", 3.5}, {"cores", 8}};
  });
}

// The text an SVG file shows: each <text> element's content, one a line.
QStringList svg_text(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  const QString svg = QString::fromUtf8(file.readAll());
  QStringList texts;
  static const QRegularExpression element("<text[^>]*>([^<]*)</text>");
  for (auto it = element.globalMatch(svg); it.hasNext();) {
    QString text = it.next().captured(1).trimmed();
    text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&amp;", "&");
    if (!text.isEmpty()) texts << text;
  }
  return texts;
}

// The names a plot's legend shows, in order.
QStringList legend_entries(QCustomPlot* plot) {
  QStringList entries;
  for (QCPLayoutElement* element : plot->plotLayout()->elements(true))
    if (auto* legend = qobject_cast<QCPLegend*>(element))
      for (int i = 0; i < legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i)))
          entries << item->plottable()->name();
  return entries;
}

// The chart's title as the window shows it.
QString title_of(QCustomPlot* plot) {
  return qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(0))->text();
}

class Names : public test::WindowTest {
 protected:
  QTreeWidget* runs_list() { return window_->findChild<QTreeWidget*>("runs"); }
  // The runs list's names, top (newest) first, without the baseline's note.
  QStringList listed() {
    QStringList names;
    for (int i = 0; i < runs_list()->topLevelItemCount(); ++i)
      names << runs_list()->topLevelItem(i)->text(0).remove(
          QRegularExpression("  \\(baseline\\)$"));
    return names;
  }
  // Unticks every run from the Show menu, then ticks the runs of the folders named by their rows'
  // check boxes (a row's tip starts with its folder).
  void tick_only(const std::vector<std::string>& folders) {
    auto* show = window_->findChild<QToolButton*>("runs-show");
    ASSERT_TRUE(test::choose_from_button_menu(show, show->menu(), "Untick all"));
    ASSERT_TRUE(wait_until([&] { return window_->store()->checked().empty(); }, 5s));
    for (const std::string& folder : folders) {
      const QString dir = QString::fromStdString((runs_.path() / folder).string());
      int row = -1;
      for (int i = 0; i < runs_list()->topLevelItemCount(); ++i)
        if (runs_list()->topLevelItem(i)->toolTip(0).section('\n', 0, 0) == dir) row = i;
      ASSERT_GE(row, 0) << folder;
      runs_list()->scrollToItem(runs_list()->topLevelItem(row));  // as a person scrolls to it
      const size_t before = window_->store()->checked().size();
      test::click_check_box(runs_list(), runs_list()->model()->index(row, 0));
      ASSERT_TRUE(wait_until([&] { return window_->store()->checked().size() == before + 1; }, 5s))
          << folder;
    }
  }
  void click_tab(const QString& title) {
    QTabBar* bar = window_->tabs()->tabBar();
    for (int i = 0; i < bar->count(); ++i)
      if (bar->tabText(i).remove('&') == title)
        QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(i).center());
    ASSERT_EQ(window_->tabs()->tabText(window_->tabs()->currentIndex()).remove('&'), title);
  }
  // Exports `view` as a person does: its Export button, the format, a name in the file dialog.
  QString export_svg(ChartView* view, const std::string& name) {
    QToolButton* button = nullptr;
    for (auto* b : view->findChildren<QToolButton*>())
      if (b->text() == "Export") button = b;
    EXPECT_NE(button, nullptr);
    if (!button) return {};
    const QString path = QString::fromStdString((data_.path() / name).string());
    test::answer_file_dialog(
        path, [&] { EXPECT_TRUE(test::choose_from_button_menu(button, button->menu(), "SVG")); });
    EXPECT_TRUE(wait_until([&] { return QFileInfo(path).size() > 1000; }, 10s)) << name;
    return path;
  }
};

// 1 thread against 2, raced fairly and then at once: each name twice. Worked out by hand, numbered
// by start time over every run, whichever are ticked and in whatever order a view lists them.
TEST_F(Names, ARaceRunTwiceIsNamedAlikeByEveryViewAndFile) {
  const QString fair_1 = "lenet5 cpu, 1 thread, b64 (1)", fair_2 = "lenet5 cpu, 2 threads, b64 (1)",
                once_1 = "lenet5 cpu, 1 thread, b64 (2)", once_2 = "lenet5 cpu, 2 threads, b64 (2)";
  test::write_run(runs_.path() / "fair-1", 1, 64, 40, 6, "2026-01-01T10:00:00Z");
  test::write_run(runs_.path() / "fair-2", 2, 64, 40, 4, "2026-01-01T10:01:00Z");
  test::write_run(runs_.path() / "once-1", 1, 64, 40, 8, "2026-01-01T10:02:00Z");
  test::write_run(runs_.path() / "once-2", 2, 64, 40, 5, "2026-01-01T10:02:01Z");
  open_window();
  EXPECT_EQ(listed().join(" | "), QStringList({once_2, once_1, fair_2, fair_1}).join(" | "));
  QComboBox* baseline = window_->compare()->baseline_box();
  QStringList offered;
  for (int i = 0; i < baseline->count(); ++i) offered << baseline->itemText(i);
  EXPECT_EQ(offered.join(" | "), QStringList({once_2, once_1, fair_2, fair_1}).join(" | "));

  // The 2-thread run of the fair race against the 1-thread run of the race at once.
  tick_only({"fair-2", "once-1"});
  click_tab("Compare");
  test::choose_in_combo(baseline, once_1);
  CompareView* compare = window_->compare();
  ASSERT_EQ(compare->runs().size(), 2u);
  ASSERT_TRUE(wait_until([&] { return compare->baseline_index() == 1; }, 5s));
  QTableWidget* table = compare->table();
  EXPECT_EQ(table->item(0, 0)->text(), fair_2);
  EXPECT_EQ(table->item(1, 0)->text(), once_1 + " (baseline)");
  EXPECT_EQ(table->item(1, 8)->text(), "1.00×");
  const Chart& speedup = compare->speedup_chart()->chart();
  EXPECT_EQ(speedup.runs, (std::vector<std::string>{fair_2.toStdString(), once_1.toStdString()}));
  EXPECT_EQ(speedup.title, "Compared with " + once_1.toStdString());
  EXPECT_EQ(compare->step_time_chart()->chart().runs, speedup.runs);
  for (ChartView* view : window_->live_charts()) {
    EXPECT_EQ(view->chart().runs, speedup.runs) << chart_kind_name(view->kind());
    // Legends may leave out what both runs share, never the number.
    const QStringList legend = legend_entries(view->plot());
    for (int r = 0; r < legend.size() && view->kind() == ChartKind::Loss; ++r) {
      const QString full = r == 0 ? fair_2 : once_1;
      EXPECT_TRUE(legend[r].endsWith(full.right(3))) << legend[r].toStdString();
      for (const QString& word : legend[r].split(' '))
        EXPECT_TRUE(full.contains(word)) << legend[r].toStdString();
    }
  }
  EXPECT_EQ(legend_entries(window_->chart(ChartKind::Loss)->plot()).size(), 2);

  // The exported chart names the baseline and both bars as the window does.
  const QStringList svg = svg_text(export_svg(compare->speedup_chart(), "speedup.svg"));
  EXPECT_TRUE(svg.contains("Compared with " + once_1)) << svg.join(" | ").toStdString();
  EXPECT_TRUE(svg.contains(fair_2)) << svg.join(" | ").toStdString();
  EXPECT_TRUE(svg.contains(once_1)) << svg.join(" | ").toStdString();

  // The lab report of what Compare shows.
  test::TempDir report;
  std::vector<const RunData*> compared;
  for (RunEntry* entry : compare->runs()) compared.push_back(&entry->data);
  ChartOptions options;
  options.baseline = compare->baseline_index();
  QString error;
  ASSERT_TRUE(write_lab_report(QString::fromStdString(report.path().string()), compared, {},
                               options, &error))
      << error.toStdString();
  std::ifstream summary(report.path() / "summary.md");
  const std::string md((std::istreambuf_iterator<char>(summary)), {});
  for (const QString& name : {fair_2, once_1})
    EXPECT_NE(md.find("### " + name.toStdString() + "\n"), std::string::npos) << md;
  EXPECT_NE(md.find("relative to the baseline, " + once_1.toStdString() + "."), std::string::npos)
      << md;
  EXPECT_TRUE(svg_text(QString::fromStdString((report.path() / "speedup.svg").string()))
                  .contains("Compared with " + once_1));

  // The presenter's headline.
  window_->set_presenter(true);
  EXPECT_TRUE(window_->key_numbers().contains(fair_2 + ":"))
      << window_->key_numbers().toStdString();
  EXPECT_TRUE(window_->key_numbers().contains(once_1 + ":"))
      << window_->key_numbers().toStdString();
  window_->set_presenter(false);
}

// Eight runs all measured under outside load: the Live tab names them in its key, and each name
// there, in Compare's charts and in the exported speedup chart carries its ⚠, also where the
// names are shortened to what differs.
TEST_F(Names, EveryKeyAndLegendMarksAFlaggedRun) {
  std::vector<std::string> folders;
  for (int threads = 1; threads <= 8; ++threads) {
    const fs::path dir =
        test::write_run(runs_.path() / ("r" + std::to_string(threads)), threads, 64, 40,
                        4 + threads, "2026-01-01T10:0" + std::to_string(threads) + ":00Z");
    // The last was cancelled, a flag of its own (the key and the runs list once left it out).
    if (threads < 8)
      flag_run(dir);
    else
      edit_run(dir, [](nlohmann::json& info) { info["status"] = "cancelled"; });
    folders.push_back("r" + std::to_string(threads));
  }
  open_window();
  tick_only(folders);
  auto* key = window_->findChild<QLabel*>("run-key");
  ASSERT_TRUE(key->isVisible());
  EXPECT_EQ(key->text().count("⚠"), 8) << key->text().toStdString();
  QTreeWidget* list = runs_list();
  int cancelled = 0;
  for (int i = 0; i < list->topLevelItemCount(); ++i) {
    const QString status = list->topLevelItem(i)->text(3);
    EXPECT_TRUE(status.endsWith(" ⚠")) << status.toStdString();
    cancelled += status == "cancelled ⚠";
  }
  EXPECT_EQ(cancelled, 1);
  for (const std::string& run : window_->compare()->speedup_chart()->chart().runs)
    EXPECT_TRUE(QString::fromStdString(run).endsWith(" ⚠")) << run;
  click_tab("Compare");
  // Eight bars a third of the window wide have no room for their values there; the file has.
  int shown = 0;
  QCustomPlot* plot = window_->compare()->speedup_chart()->plot();
  for (int i = 0; i < plot->itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)))
      shown += text->visible() && text->text().endsWith("×");
  const QStringList svg = svg_text(export_svg(window_->compare()->speedup_chart(), "speedup.svg"));
  EXPECT_GE(svg.join("\n").count("⚠"), 8) << svg.join(" | ").toStdString();
  const QStringList values = svg.filter(QRegularExpression("^[0-9]+\\.[0-9]{2}×$"));
  EXPECT_GE(values.size(), 8) << svg.join(" | ").toStdString();
  EXPECT_LT(shown, values.size());  // else this proves nothing
  // The file gpulab-cli and the lab report write.
  std::vector<const RunData*> runs;
  for (RunEntry* entry : window_->store()->checked()) runs.push_back(&entry->data);
  const QString cli = QString::fromStdString((data_.path() / "cli-speedup.svg").string());
  QString error;
  ASSERT_TRUE(export_chart(ChartKind::Speedup, runs, {}, {}, cli, ExportFormat::Svg, &error))
      << error.toStdString();
  EXPECT_GE(svg_text(cli).join("\n").count("⚠"), 8) << svg_text(cli).join(" | ").toStdString();
}

// A run stopped while it trains is cancelled, a flag: the legend drawn while it ran, Compare's
// charts and the exported chart mark it once it has ended.
TEST_F(Names, ALegendMadeWhileARunTrainedMarksItWhenItEndsFlagged) {
  open_window();
  small_setup(1'000'000);
  ASSERT_EQ(window_->start_training(), 1);
  RunEntry* run = window_->store()->entries().front();
  ASSERT_TRUE(wait_until([&] { return run->data.steps.size() >= 20; }));
  ChartView* loss = window_->chart(ChartKind::Loss);
  ASSERT_EQ(legend_entries(loss->plot()).size(), 1);
  EXPECT_FALSE(legend_entries(loss->plot())[0].contains("⚠"));
  QTest::mouseClick(window_->stop_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }));
  ASSERT_EQ(run->data.status(), "cancelled");
  ASSERT_TRUE(wait_until([&] { return loss->chart().runs.size() == 1; }, 5s));
  EXPECT_TRUE(QString::fromStdString(loss->chart().runs[0]).endsWith(" ⚠"));
  ASSERT_EQ(legend_entries(loss->plot()).size(), 1);
  EXPECT_TRUE(legend_entries(loss->plot())[0].endsWith(" ⚠"))
      << legend_entries(loss->plot())[0].toStdString();
  for (ChartView* view :
       {window_->compare()->speedup_chart(), window_->compare()->step_time_chart()})
    EXPECT_TRUE(QString::fromStdString(view->chart().runs.at(0)).endsWith(" ⚠"))
        << chart_kind_name(view->kind());
  EXPECT_TRUE(svg_text(export_svg(loss, "loss.svg")).join("\n").contains("⚠"));
}

// Compare's charts share the window's width three ways, so their titles are shortened and their
// bars' values left out there; the file is drawn at its own size, with both whole.
TEST_F(Names, AnExportedChartHasItsWholeTitleAndItsBarValues) {
  const std::string baseline_name =
      "baseline: LeNet-5 on one CPU thread, in the fair race of the second lab session";
  const fs::path base =
      test::write_run(runs_.path() / "base", 1, 64, 40, 8, "2026-01-01T10:00:00Z");
  edit_run(base, [&](nlohmann::json& info) { info["name"] = baseline_name; });
  test::write_run(runs_.path() / "fast", 4, 64, 40, 2, "2026-01-01T10:01:00Z");
  open_window();
  tick_only({"base", "fast"});
  click_tab("Compare");
  ChartView* speedup = window_->compare()->speedup_chart();
  ASSERT_EQ(speedup->chart().title, "Compared with " + baseline_name);
  // What the window shows: the title cut short (else this test would prove nothing).
  ASSERT_TRUE(title_of(speedup->plot()).endsWith(QChar(0x2026)))
      << title_of(speedup->plot()).toStdString();
  const QStringList svg = svg_text(export_svg(speedup, "speedup.svg"));
  const QString all = svg.join(" | ");
  EXPECT_TRUE(svg.contains(QString::fromStdString("Compared with " + baseline_name)))
      << all.toStdString();
  EXPECT_FALSE(all.contains(QChar(0x2026))) << all.toStdString();
  EXPECT_TRUE(svg.contains("1.00×")) << all.toStdString();  // the baseline's own bar
  EXPECT_TRUE(svg.contains("4.00×")) << all.toStdString();  // 4 threads at a quarter the step
}

// A legend too narrow for whole names keeps the parts that tell runs apart. Four reference runs
// of a lab, as watching-the-hardware's chart draws them at 1280x720: the names were split at every
// ", ", inside the parentheses too, and the legend read "batch 16 · watching-the-hardware
// (reference", the recording's GPU and day dropped as shared.
TEST(LegendNames, ReferenceRunsKeepTheirWholeMarkAndDropOnlyWhatEveryRunShares) {
  const std::string suffix = " · watching-the-hardware (reference, recorded on NVIDIA H100 80GB "
                             "HBM3, 2026-11-27)";
  std::vector<std::string> runs;
  for (const char* batch : {"16", "64", "256", "1024"})
    runs.push_back(std::string("gpu, batch ") + batch + suffix);
  const QFont font = QApplication::font();
  std::vector<QString> names = legend_names(runs, font, 300);
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0].toStdString(),
            "batch 16 (reference, recorded on NVIDIA H100 80GB HBM3, 2026-11-27)");
  EXPECT_EQ(names[3].toStdString(),
            "batch 1024 (reference, recorded on NVIDIA H100 80GB HBM3, 2026-11-27)");

  // Beside a learner's own runs, the reference keeps its mark and the learner's runs have none;
  // a ⚠ stays at the end of its name.
  runs = {"cpu, batch 32 · watching-the-hardware ⚠", "cpu, batch 256 · watching-the-hardware",
          "gpu, batch 16" + suffix};
  names = legend_names(runs, font, 300);
  EXPECT_EQ(names[0].toStdString(), "cpu, batch 32 ⚠");
  EXPECT_EQ(names[1].toStdString(), "cpu, batch 256");
  EXPECT_EQ(names[2].toStdString(),
            "gpu, batch 16 (reference, recorded on NVIDIA H100 80GB HBM3, 2026-11-27)");

  // Wide enough for every whole name: the names as they are.
  EXPECT_EQ(legend_names(runs, font, 1e6)[2].toStdString(), runs[2]);
  // The window's own names split at ", " as before.
  names = legend_names({"lenet5 cpu, 1 thread, b64", "lenet5 cpu, 2 threads, b64"}, font, 50);
  EXPECT_EQ(names[0].toStdString(), "1 thread");
  EXPECT_EQ(names[1].toStdString(), "2 threads");
}

}  // namespace
}  // namespace gpulab::ui

int main(int argc, char** argv) {
  return gpulab::test::run_window_tests(argc, argv, /*qt_dialogs=*/true);
}
