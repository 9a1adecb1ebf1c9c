// The Inside tab driven as a learner drives it, on Qt's offscreen platform: weights opened from
// the File menu (the PyTorch-saved checkpoint of tests/data/golden), dropped on the window, and
// taken from a run the window trained; a digit drawn with the mouse on the canvas and classified;
// the confusion matrix counted on the test set and a click on a cell filtering the mistakes; and
// bad input (a picture or bytes named .safetensors, weights of another model, a missing tensor,
// no config, an empty canvas), each said on the tab while the window goes on working.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QAbstractItemView>
#include <QCheckBox>
#include <QComboBox>
#include <QDropEvent>
#include <QImage>
#include <QLabel>
#include <QListWidget>
#include <QMimeData>
#include <QProcess>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QTabBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTreeWidget>
#include <QUrl>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "bad_inputs.hpp"
#include "engine/inside/activations.hpp"
#include "engine/inside/inference_timing.hpp"
#include "engine/model/checkpoint.hpp"
#include "ui/inside/confusion_view.hpp"
#include "ui/inside/digit_canvas.hpp"
#include "ui/inside/digit_panel.hpp"
#include "ui/inside/explain_view.hpp"
#include "ui/inside/feature_maps_view.hpp"
#include "ui/inside/filters_view.hpp"
#include "ui/inside/inside_tab.hpp"
#include "ui/inside/mistakes_gallery.hpp"
#include "ui/inside/network_panel.hpp"
#include "ui/inside/speed_view.hpp"
#include "engine/base/errors.hpp"
#include "ui/inside/tile_grid.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/runs/runs_panel.hpp"
#include "ui_fixture.hpp"
#include "ui_input.hpp"

namespace gpulab::ui {
namespace {

using namespace std::chrono_literals;
using test::wait_until;
namespace fs = std::filesystem;

const fs::path kGolden = fs::path(GPULAB_TEST_DATA_DIR) / "golden";
const fs::path kPyTorch = kGolden / "pytorch-example_init.safetensors";
const fs::path kLenet = kGolden / "lenet5_init.safetensors";

int64_t preset_plan_count(const std::string& name) {
  return plan_model(preset(name)).parameter_count;
}

// A safetensors file of `checkpoint`'s tensors, with its metadata or none.
void write_safetensors(const fs::path& path, const Checkpoint& checkpoint, bool with_metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (with_metadata) header["__metadata__"] = checkpoint.metadata;
  std::string data;
  for (const auto& [name, tensor] : checkpoint.tensors) {
    const size_t bytes = tensor.data.size() * sizeof(float);
    header[name] = {{"dtype", "F32"},
                    {"shape", tensor.shape},
                    {"data_offsets", {data.size(), data.size() + bytes}}};
    data.append(reinterpret_cast<const char*>(tensor.data.data()), bytes);
  }
  const std::string text = header.dump();
  const uint64_t length = text.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&length), 8);
  out << text << data;
}

class InsideTabTest : public test::WindowTest {
 protected:
  void SetUp() override {
    WindowTest::SetUp();
    open_window();
    ASSERT_TRUE(window_->show_tab("inside"));
  }
  InsideTab* tab() { return window_->inside(); }
  // Opens `path` as the tab does from any source, and waits for the worker thread's answer.
  void open(const fs::path& path) {
    tab()->open_weights(path);
    ASSERT_TRUE(wait_until([&] { return !tab()->loading(); }, 30s));
  }
  // A stroke from `from` to `to` on the canvas, with the mouse, as a hand draws.
  void stroke(QPoint from, QPoint to) { test::drag(tab()->digits()->canvas(), from, to, 12); }
  // A click on the section's tab, where the tab bar draws it.
  void click_section(QWidget* section) {
    QTabWidget* sections = tab()->sections();
    for (int i = 0; i < sections->count(); ++i)
      if (auto* scroll = qobject_cast<QScrollArea*>(sections->widget(i));
          scroll && scroll->widget() == section) {
        QTabBar* bar = sections->tabBar();
        QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(i).center());
        ASSERT_EQ(sections->currentIndex(), i);
        return;
      }
    FAIL() << "no such section";
  }
  // Clicks value (channel, y, x) of `layer` where the Network section's maps draw it.
  void click_value(int layer, int channel, int y, int x) {
    FeatureMapsView* maps = tab()->network()->maps();
    TileGrid* grid = maps->grid_of_layer(layer);
    ASSERT_NE(grid, nullptr) << "layer " << layer;
    maps->ensureWidgetVisible(grid);
    QApplication::processEvents();
    const QPoint at = maps->value_rect(layer, channel, y, x).center();
    ASSERT_TRUE(maps->viewport()->rect().contains(at)) << "layer " << layer;
    QWidget* under = maps->viewport()->childAt(at);
    ASSERT_EQ(under, grid) << "layer " << layer;
    QTest::mouseClick(under, Qt::LeftButton, {}, under->mapFrom(maps->viewport(), at));
  }

  test::TempDir files_;
};

TEST_F(InsideTabTest, ThePyTorchCheckpointOpensFromTheFileMenu) {
  window_->show_tab("live");
  test::answer_file_dialog(QString::fromStdString(kPyTorch.string()), [&] {
    ASSERT_TRUE(test::choose_from_menu_bar(window_.get(), "File", "Open weights"));
  });
  ASSERT_TRUE(wait_until([&] { return tab()->model() != nullptr; }, 30s))
      << tab()->message().toStdString();
  EXPECT_EQ(window_->tabs()->currentWidget(), tab());
  EXPECT_EQ(tab()->model()->config.name, "pytorch-example");
  EXPECT_TRUE(tab()->model_text().contains("pytorch-example")) << tab()->model_text().toStdString();
  EXPECT_TRUE(tab()->message().isEmpty()) << tab()->message().toStdString();
  // The Network section lists its layers: conv1 first, the classes last.
  ASSERT_GT(tab()->layers()->topLevelItemCount(), 4);
  EXPECT_EQ(tab()->layers()->topLevelItem(0)->text(0), "conv1");
}

TEST_F(InsideTabTest, ADigitDrawnWithTheMouseIsClassified) {
  open(kLenet);
  ASSERT_NE(tab()->model(), nullptr) << tab()->message().toStdString();
  tab()->show_section(tab()->digits());
  DigitPanel* digits = tab()->digits();
  EXPECT_EQ(digits->predicted(), -1);
  EXPECT_TRUE(digits->status().contains("Draw a digit")) << digits->status().toStdString();
  // A seven: the bar, then the stem. While the pen is down the model answers (at most every
  // kThrottleMs); the passes that time it wait for the stroke's end.
  DigitCanvas* canvas = digits->canvas();
  QTest::mousePress(canvas, Qt::LeftButton, {}, {70, 60});
  for (int x = 80; x <= 210; x += 10) {
    QMouseEvent move(QEvent::MouseMove, QPoint(x, 60), canvas->mapToGlobal(QPoint(x, 60)),
                     Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(canvas, &move);
  }
  ASSERT_TRUE(wait_until([&] { return digits->predicted() >= 0; }, 10s));
  EXPECT_TRUE(digits->cpu_time_text().isEmpty()) << digits->cpu_time_text().toStdString();
  QTest::mouseRelease(canvas, Qt::LeftButton, {}, {210, 60});
  EXPECT_TRUE(digits->cpu_time_text().contains("ms")) << digits->cpu_time_text().toStdString();
  // The first stroke's time is a median of several passes after a warm-up, never of one cold pass.
  EXPECT_TRUE(digits->cpu_time_text().contains("after a warm-up"))
      << digits->cpu_time_text().toStdString();
  EXPECT_FALSE(digits->cpu_time_text().contains("median of 1 "))
      << digits->cpu_time_text().toStdString();
  stroke({210, 60}, {120, 230});
  ASSERT_TRUE(wait_until([&] { return digits->predicted() >= 0; }, 10s));
  const std::vector<float>& p = digits->probabilities();
  ASSERT_EQ(p.size(), 10u);
  EXPECT_NEAR(std::accumulate(p.begin(), p.end(), 0.0), 1.0, 1e-4);
  EXPECT_EQ(digits->predicted(), int(std::max_element(p.begin(), p.end()) - p.begin()));
  EXPECT_TRUE(digits->status().contains(QString::number(digits->predicted())));
  EXPECT_TRUE(digits->cpu_time_text().contains("ms")) << digits->cpu_time_text().toStdString();
  // The image the model sees has ink in it.
  auto* seen = digits->findChild<QLabel*>("model-input");
  ASSERT_NE(seen, nullptr);
  const QImage image = seen->pixmap().toImage().convertToFormat(QImage::Format_Grayscale8);
  int lit = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) lit += image.pixelColor(x, y).value() > 128;
  EXPECT_GT(lit, 0);

  // Clear: the canvas is empty and asks for a digit instead of showing a prediction.
  QTest::mouseClick(digits->clear_button(), Qt::LeftButton);
  EXPECT_TRUE(digits->canvas()->is_empty());
  EXPECT_EQ(digits->predicted(), -1);
  EXPECT_TRUE(digits->probabilities().empty());
  EXPECT_TRUE(digits->status().contains("Draw a digit")) << digits->status().toStdString();
}

TEST_F(InsideTabTest, TheConfusionMatrixCountsTheTestSetAndACellFiltersTheMistakes) {
  open(kLenet);  // untrained: wrong on most of the test set, in many cells
  tab()->show_section(tab()->confusion());
  ConfusionView* view = tab()->confusion();
  ASSERT_TRUE(wait_until([&] { return view->confusion() != nullptr; }, 60s))
      << view->status().toStdString();
  const Confusion& confusion = *view->confusion();
  EXPECT_EQ(confusion.total(), 128);  // the fixture's test set
  EXPECT_EQ(int64_t(confusion.mistakes.size()), confusion.total() - confusion.correct());
  MistakesGallery* gallery = view->gallery();
  EXPECT_EQ(gallery->shown(), int(confusion.mistakes.size()));

  // The off-diagonal cell with the most mistakes, clicked where it is drawn.
  int truth = -1, predicted = -1;
  for (int t = 0; t < 10; ++t)
    for (int p = 0; p < 10; ++p)
      if (t != p && (truth < 0 || confusion.count(t, p) > confusion.count(truth, predicted))) {
        truth = t;
        predicted = p;
      }
  ASSERT_GT(confusion.count(truth, predicted), 0);
  QCustomPlot* plot = view->plot();
  QTest::mouseClick(plot, Qt::LeftButton, {}, view->cell_rect(truth, predicted).center());
  ASSERT_TRUE(gallery->filter().has_value());
  EXPECT_EQ(*gallery->filter(), std::pair(truth, predicted));
  EXPECT_EQ(gallery->shown(), confusion.count(truth, predicted));
  EXPECT_TRUE(gallery->list()->item(0)->text().startsWith(
      QString("true %1 → %2, p ").arg(truth).arg(predicted)))
      << gallery->list()->item(0)->text().toStdString();
  // Clicked again: all the mistakes; a cell, then Show all: all of them too.
  QTest::mouseClick(plot, Qt::LeftButton, {}, view->cell_rect(truth, predicted).center());
  EXPECT_FALSE(gallery->filter().has_value());
  EXPECT_EQ(gallery->shown(), int(confusion.mistakes.size()));
  QTest::mouseClick(plot, Qt::LeftButton, {}, view->cell_rect(truth, predicted).center());
  QTest::mouseClick(gallery->show_all_button(), Qt::LeftButton);
  EXPECT_EQ(gallery->shown(), int(confusion.mistakes.size()));

  // Counts and row shares export as every chart does.
  QString error;
  const QString dir = QString::fromStdString(files_.path().string());
  ASSERT_TRUE(view->export_to(dir + "/counts.csv", ExportFormat::Csv, &error))
      << error.toStdString();
  for (ExportFormat format : {ExportFormat::Png, ExportFormat::Svg, ExportFormat::Pdf})
    ASSERT_TRUE(view->export_to(dir + "/matrix." + export_format_name(format), format, &error))
        << error.toStdString();
  QTest::mouseClick(view->normalized_box(), Qt::LeftButton);
  ASSERT_TRUE(view->normalized());
  ASSERT_TRUE(view->export_to(dir + "/shares.csv", ExportFormat::Csv, &error))
      << error.toStdString();
  std::ifstream counts(files_.path() / "counts.csv"), shares(files_.path() / "shares.csv");
  std::string line;
  std::getline(counts, line);
  EXPECT_EQ(line, "true\\predicted,0,1,2,3,4,5,6,7,8,9");
  std::getline(shares, line);
  std::getline(shares, line);
  EXPECT_NE(line.find('.'), std::string::npos) << line;
  for (const char* file : {"matrix.png", "matrix.svg", "matrix.pdf"})
    EXPECT_GT(fs::file_size(files_.path() / file), 100u) << file;
}

TEST_F(InsideTabTest, ACheckpointDroppedOnTheWindowOpensOnTheInsideTab) {
  window_->show_tab("live");
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(QString::fromStdString(kLenet.string()))});
  const QPoint at = window_->rect().center();
  QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(window_.get(), &enter);
  EXPECT_TRUE(enter.isAccepted());
  QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(window_.get(), &drop);
  ASSERT_TRUE(wait_until([&] { return tab()->model() != nullptr; }, 30s));
  EXPECT_EQ(window_->tabs()->currentWidget(), tab());
  EXPECT_EQ(tab()->model()->config.name, "lenet5");
}

TEST_F(InsideTabTest, ARunTrainedInTheWindowShowsItsModelWhenItFinishes) {
  small_setup(6);
  ASSERT_EQ(window_->start_training(), 1) << window_->message().toStdString();
  ASSERT_TRUE(wait_until([&] { return !window_->any_running(); }, 120s));
  ASSERT_TRUE(wait_until([&] { return tab()->model() != nullptr; }, 30s))
      << tab()->message().toStdString();
  EXPECT_EQ(tab()->model()->config.name, "mlp");
  const RunEntry* run = window_->store()->entries().front();
  EXPECT_TRUE(fs::exists(run->data.dir / "weights.safetensors"));
  EXPECT_TRUE(tab()->model_text().contains(QString::fromStdString(run->data.name())))
      << tab()->model_text().toStdString();
  EXPECT_EQ(tab()->run_combo()->currentData().toInt(), run->id);
  // The list of runs stays open while the runs go on updating (as a training run's do, several
  // times a second): it is filled again only when the runs with weights change.
  QComboBox* combo = tab()->run_combo();
  combo->showPopup();
  ASSERT_TRUE(wait_until([&] { return combo->view()->isVisible(); }, 5s));
  combo->view()->setCurrentIndex(combo->model()->index(0, 0));
  for (int i = 0; i < 3; ++i) emit window_->store()->run_updated(run->id);
  QTest::qWait(50);
  EXPECT_TRUE(combo->view()->isVisible());
  EXPECT_EQ(combo->view()->currentIndex().row(), 0);
  combo->hidePopup();
  // A file opened by hand replaces it; a click on the run in the runs list brings it back.
  open(kLenet);
  ASSERT_EQ(tab()->model()->config.name, "lenet5");
  QTreeWidget* list = window_->runs_panel()->tree();
  test::click_item(list, list->model()->index(0, 0));
  ASSERT_TRUE(wait_until([&] { return tab()->model()->config.name == "mlp"; }, 30s));
  EXPECT_EQ(tab()->run_combo()->currentData().toInt(), run->id);
  // Issue 40.10: the run's own weights opened as a file are that run: the Run box named "(choose
  // a run)" while the caption named the run.
  open(kLenet);
  open(run->data.dir / "weights.safetensors");
  ASSERT_EQ(tab()->model()->config.name, "mlp");
  EXPECT_EQ(tab()->run_combo()->currentData().toInt(), run->id);
  EXPECT_EQ(tab()->run_combo()->currentText(), QString::fromStdString(run->data.name()));
  EXPECT_TRUE(tab()->model_text().contains(QString::fromStdString(run->data.name())))
      << tab()->model_text().toStdString();
}

TEST_F(InsideTabTest, FilesThatAreNotCheckpointsAreSaidAndTheWindowGoesOn) {
  open(kLenet);
  ASSERT_NE(tab()->model(), nullptr);
  const fs::path picture = files_.path() / "digit.safetensors";
  QImage image(28, 28, QImage::Format_Grayscale8);
  image.fill(Qt::black);
  ASSERT_TRUE(image.save(QString::fromStdString(picture.string()), "PNG"));
  const fs::path garbage = files_.path() / "garbage.safetensors";
  std::ofstream(garbage) << "this is not a checkpoint at all, only some words in a file";
  for (const fs::path& bad : {picture, garbage}) {
    open(bad);
    const QString message = tab()->message();
    EXPECT_TRUE(message.contains(QString::fromStdString(bad.string()))) << message.toStdString();
    EXPECT_EQ(tab()->model()->config.name, "lenet5");  // the model shown before stays
  }
  // The window goes on: a good file opens, a digit is classified.
  open(kPyTorch);
  EXPECT_EQ(tab()->model()->config.name, "pytorch-example");
  EXPECT_TRUE(tab()->message().isEmpty());
  tab()->show_section(tab()->digits());
  stroke({140, 40}, {140, 240});
  EXPECT_TRUE(wait_until([&] { return tab()->digits()->predicted() >= 0; }, 10s));
}

TEST_F(InsideTabTest, WeightsOfAnotherModelNameTheTensorAndBothShapes) {
  open(kPyTorch);
  test::choose_in_combo(tab()->config_combo(), "lenet5");
  ASSERT_TRUE(wait_until([&] { return !tab()->loading(); }, 30s));
  const QString message = tab()->message();
  EXPECT_TRUE(
      message.contains("conv1.weight has shape [32, 1, 3, 3] but the model needs [6, 1, 5, 5]"))
      << message.toStdString();
  EXPECT_EQ(tab()->model()->config.name, "pytorch-example");
}

// A checkpoint of a model of other images than 28x28 digits is refused on opening, naming both
// shapes (a stroke on the Draw pad or the confusion matrix overflowed the heap with a 1x4x4
// model), a FIFO is refused saying so rather than holding the loader, and the window goes on.
TEST_F(InsideTabTest, AModelOfOtherImagesAndAFifoAreRefusedAndTheWindowGoesOn) {
  open(kLenet);
  int tried = 0;
  for (const test::BadCheckpoint& bad :
       test::shape_mismatch_checkpoints(files_.path() / "bad", preset("mlp"))) {
    if (!bad.loads) continue;
    ++tried;
    open(bad.path);
    const std::string input = bad.what.substr(bad.what.rfind(' ') + 1);
    EXPECT_TRUE(tab()->message().contains(QString::fromStdString(
        "the model takes " + input + " images, but the Inside tab needs 1x28x28")))
        << tab()->message().toStdString();
    EXPECT_EQ(tab()->model()->config.name, "lenet5");  // the model shown before stays
  }
  EXPECT_EQ(tried, 5);
  const fs::path fifo = test::make_fifo(files_.path() / "fifo.safetensors");
  tab()->open_weights(fifo);
  const bool answered = wait_until([&] { return !tab()->loading(); }, 10s);
  if (!answered)
    test::ends_in_time(
        fifo, [] {}, 0);  // frees a loader blocked on it
  ASSERT_TRUE(answered) << "the loader waited on a FIFO";
  EXPECT_TRUE(tab()->message().contains("is a FIFO, where a checkpoint is a regular file"))
      << tab()->message().toStdString();
  tab()->show_section(tab()->digits());
  stroke({140, 40}, {140, 240});
  EXPECT_TRUE(wait_until([&] { return tab()->digits()->predicted() >= 0; }, 10s));
}

TEST_F(InsideTabTest, AMissingTensorIsNamed) {
  Checkpoint checkpoint = load_checkpoint(kLenet);
  checkpoint.tensors.erase("fc3.bias");
  const fs::path file = files_.path() / "no-fc3-bias.safetensors";
  write_safetensors(file, checkpoint, true);
  open(file);
  EXPECT_EQ(tab()->model(), nullptr);
  EXPECT_TRUE(tab()->message().contains("missing fc3.bias [10]")) << tab()->message().toStdString();
}

TEST_F(InsideTabTest, ACheckpointWithoutConfigOpensAsTheModelChosen) {
  const fs::path file = files_.path() / "no-metadata.safetensors";
  write_safetensors(file, load_checkpoint(kLenet), false);
  open(file);
  EXPECT_EQ(tab()->model(), nullptr);
  EXPECT_TRUE(tab()->message().contains("holds no model config")) << tab()->message().toStdString();
  test::choose_in_combo(tab()->config_combo(), "lenet5");
  ASSERT_TRUE(wait_until([&] { return tab()->model() != nullptr; }, 30s))
      << tab()->message().toStdString();
  EXPECT_EQ(tab()->model()->config.name, "lenet5");
  EXPECT_TRUE(tab()->message().isEmpty());
}

TEST_F(InsideTabTest, ACheckpointWithoutConfigOpensWithAConfigFileChosen) {
  const fs::path file = files_.path() / "no-metadata.safetensors";
  write_safetensors(file, load_checkpoint(kPyTorch), false);
  const fs::path config = files_.path() / "my-model.json";
  std::ofstream(config) << model_to_json(preset("pytorch-example")).dump();
  open(file);
  ASSERT_EQ(tab()->model(), nullptr);
  // The entry opens a file dialog: its list is clicked as choose_in_combo does, and the dialog
  // answered.
  QComboBox* combo = tab()->config_combo();
  test::answer_file_dialog(QString::fromStdString(config.string()), [&] {
    QTest::mouseClick(combo, Qt::LeftButton);
    QAbstractItemView* list = combo->view();
    ASSERT_TRUE(wait_until([&] { return list->isVisible(); }, 5s));
    QTest::qWait(QApplication::doubleClickInterval() + 50);
    const QModelIndex entry = list->model()->index(combo->findText("Config file…"), 0);
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualRect(entry).center());
    // The dialog may have come and been answered inside the click already.
    wait_until(
        [&] { return QApplication::activeModalWidget() != nullptr || tab()->model() != nullptr; },
        5s);
  });
  ASSERT_TRUE(wait_until([&] { return tab()->model() != nullptr; }, 30s))
      << tab()->message().toStdString();
  EXPECT_EQ(tab()->model()->plan.parameter_count, preset_plan_count("pytorch-example"));
  EXPECT_EQ(tab()->config_combo()->currentText(), "my-model.json");
}

TEST_F(InsideTabTest, ConfusionWithoutTheTestSetSaysWhichFileIsMissing) {
  close_window();
  test::TempDir empty;
  options_.data_dir = empty.path();
  open_window();
  window_->show_tab("inside");
  open(kLenet);
  tab()->show_section(tab()->confusion());
  ConfusionView* view = tab()->confusion();
  ASSERT_TRUE(wait_until([&] { return !view->busy(); }, 30s));
  EXPECT_EQ(view->confusion(), nullptr);
  EXPECT_TRUE(view->status().contains("could not be counted")) << view->status().toStdString();
  EXPECT_TRUE(view->status().contains(QString::fromStdString(empty.path().string())))
      << view->status().toStdString();
  EXPECT_TRUE(view->compute_button()->isEnabled());  // once the data is there, count again
}

// A test image asked for where there is no test set: the Network section says which folder it
// could not read, shows no maps, and the drawn digit can still be chosen.
TEST_F(InsideTabTest, ATestImageWithoutTheTestSetSaysWhichFolderItCouldNotRead) {
  close_window();
  test::TempDir empty;
  options_.data_dir = empty.path();
  open_window();
  window_->show_tab("inside");
  open(kLenet);
  NetworkPanel* network = tab()->network();
  click_section(network);
  QSpinBox* box = network->test_image_box();
  box->setFocus();
  box->selectAll();
  QTest::keyClicks(box, "3");
  QTest::keyClick(box, Qt::Key_Return);
  EXPECT_FALSE(network->showing_drawn());
  ASSERT_TRUE(wait_until([&] { return !network->reading_test_set(); }, 30s));
  EXPECT_TRUE(network->image_text().startsWith("The test set could not be read: "))
      << network->image_text().toStdString();
  EXPECT_TRUE(network->image_text().contains(QString::fromStdString(empty.path().string())))
      << network->image_text().toStdString();
  EXPECT_EQ(network->maps()->activations(), nullptr);
  network->show_drawn();
  EXPECT_TRUE(network->image_text().contains("draw one")) << network->image_text().toStdString();
}

// Timings exported where no file can be written: the section says so and keeps the table.
TEST_F(InsideTabTest, TimingsExportedWhereNothingCanBeWrittenAreSaidAndKept) {
  open(kLenet);
  SpeedView* speed = tab()->speed();
  click_section(speed);
  QTest::mouseClick(speed->time_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !speed->busy(); }, 120s)) << speed->status().toStdString();
  ASSERT_EQ(speed->timings().size(), 3u);
  const QString nowhere =
      QString::fromStdString((files_.path() / "no such folder" / "timing.csv").string());
  test::answer_file_dialog(nowhere,
                           [&] { QTest::mouseClick(speed->export_button(), Qt::LeftButton); });
  // Checked and written as every export is (ui/charts/chart_render's save_text): the reason named.
  EXPECT_TRUE(speed->status().contains(nowhere + ": the folder ")) << speed->status().toStdString();
  EXPECT_TRUE(speed->status().contains("does not exist; create it first"))
      << speed->status().toStdString();
  EXPECT_EQ(speed->table()->rowCount(), 3);
  EXPECT_TRUE(speed->export_button()->isEnabled());
}

// The Network section follows the drawing: every layer's maps are of the digit the model saw,
// the filters are the model's, and a value clicked in a map is taken apart into its products.
TEST_F(InsideTabTest, TheNetworkSectionShowsTheDrawnDigitInsideAndTakesAValueApart) {
  open(kLenet);
  ASSERT_NE(tab()->model(), nullptr) << tab()->message().toStdString();
  NetworkPanel* network = tab()->network();
  click_section(network);
  EXPECT_TRUE(network->showing_drawn());
  EXPECT_EQ(network->maps()->activations(), nullptr);  // nothing drawn yet
  EXPECT_TRUE(network->image_text().contains("draw one")) << network->image_text().toStdString();
  // The filters: one row per convolution of LeNet-5, each filter a tile.
  ASSERT_EQ(network->filters()->layer_count(), 2);

  click_section(tab()->digits());
  stroke({70, 60}, {210, 60});
  stroke({210, 60}, {120, 230});
  ASSERT_TRUE(wait_until([&] { return tab()->digits()->predicted() >= 0; }, 10s));
  click_section(network);
  const NetworkActivations* shown = network->maps()->activations();
  ASSERT_NE(shown, nullptr) << network->maps()->message().toStdString();
  const NetworkActivations expected =
      layer_activations(*tab()->model(), tab()->digits()->seen_digit());
  EXPECT_EQ(shown->input, expected.input);
  ASSERT_EQ(shown->layers.size(), expected.layers.size());
  for (size_t i = 0; i < expected.layers.size(); ++i)
    EXPECT_EQ(shown->layers[i].values, expected.layers[i].values) << "layer " << i;
  // The maps' prediction is the drawing's.
  EXPECT_EQ(predicted_class(shown->probabilities.data(), 10), tab()->digits()->predicted());
  EXPECT_TRUE(network->image_text().contains("drawn digit")) << network->image_text().toStdString();

  // conv1's channel 2 at (12, 14): the sum of its products and its bias, as the layer computed.
  click_value(0, 2, 12, 14);
  const ProductSum* sum = network->explain()->shown();
  ASSERT_NE(sum, nullptr) << network->explain()->message().toStdString();
  EXPECT_EQ(sum->layer, 0);
  EXPECT_EQ(sum->channel, 2);
  double total = sum->bias;
  for (float product : sum->products) total += product;
  EXPECT_NEAR(total, expected.layers[0].at(2, 12, 14), 1e-4);
  EXPECT_NEAR(sum->activation, expected.layers[0].at(2, 12, 14), 1e-6);

  // A new stroke moves the maps with it.
  click_section(tab()->digits());
  stroke({60, 150}, {220, 150});
  click_section(network);
  ASSERT_NE(network->maps()->activations(), nullptr);
  EXPECT_EQ(network->maps()->activations()->input,
            layer_activations(*tab()->model(), tab()->digits()->seen_digit()).input);
  // Cleared: the maps say to draw again.
  click_section(tab()->digits());
  QTest::mouseClick(tab()->digits()->clear_button(), Qt::LeftButton);
  EXPECT_TRUE(network->image_text().contains("draw one")) << network->image_text().toStdString();
}

// A mistake clicked in the gallery opens the Network section on that test digit: its maps end
// in the probabilities the gallery gave.
TEST_F(InsideTabTest, AMistakeClickedInTheGalleryIsShownInsideTheNetwork) {
  open(kLenet);
  click_section(tab()->confusion());
  ConfusionView* view = tab()->confusion();
  ASSERT_TRUE(wait_until([&] { return view->confusion() != nullptr; }, 60s))
      << view->status().toStdString();
  const Mistake mistake = view->confusion()->mistakes.at(0);
  QListWidget* list = view->gallery()->list();
  qobject_cast<QScrollArea*>(tab()->sections()->currentWidget())->ensureWidgetVisible(list);
  list->scrollToItem(list->item(0));
  QApplication::processEvents();
  QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                    list->visualItemRect(list->item(0)).center());
  NetworkPanel* network = tab()->network();
  EXPECT_EQ(tab()->sections()->currentWidget()->findChild<NetworkPanel*>(), network);
  EXPECT_FALSE(network->showing_drawn());
  EXPECT_EQ(network->test_image(), mistake.index);
  ASSERT_TRUE(wait_until([&] { return !network->reading_test_set(); }, 30s));
  EXPECT_TRUE(network->image_text().contains(QString("test image %1 ").arg(mistake.index)))
      << network->image_text().toStdString();
  const NetworkActivations* shown = network->maps()->activations();
  ASSERT_NE(shown, nullptr) << network->maps()->message().toStdString();
  EXPECT_NEAR(shown->probabilities.at(size_t(mistake.predicted)), mistake.p_predicted, 1e-5);
  EXPECT_NEAR(shown->probabilities.at(size_t(mistake.truth)), mistake.p_truth, 1e-5);

  // Another test image typed into the box; then back to the drawn digit.
  QSpinBox* box = network->test_image_box();
  box->setFocus();
  box->selectAll();
  QTest::keyClicks(box, "5");
  QTest::keyClick(box, Qt::Key_Return);
  EXPECT_EQ(network->test_image(), 5);
  EXPECT_TRUE(network->image_text().contains("test image 5 "))
      << network->image_text().toStdString();
}

// Time inference: a row per device and batch (the CPU's 1, 64 and 1000 here), each row's
// per-image figures recomputed from its batch time, the sentence for a machine without a GPU,
// and the CSV export of the same figures.
TEST_F(InsideTabTest, TimingInferenceFillsARowPerBatchAndExportsThem) {
  open(kLenet);
  SpeedView* speed = tab()->speed();
  click_section(speed);
  EXPECT_FALSE(speed->export_button()->isEnabled());
  QTest::mouseClick(speed->time_button(), Qt::LeftButton);
  EXPECT_TRUE(speed->busy());
  ASSERT_TRUE(wait_until([&] { return !speed->busy(); }, 120s)) << speed->status().toStdString();
  ASSERT_EQ(speed->timings().size(), 3u) << speed->status().toStdString();
  QTableWidget* table = speed->table();
  ASSERT_EQ(table->rowCount(), 3);
  const int batches[] = {1, 64, 1000};
  for (int row = 0; row < 3; ++row) {
    const InferenceTiming& t = speed->timings()[size_t(row)];
    EXPECT_EQ(t.device, "cpu");
    EXPECT_EQ(t.batch, batches[row]);
    EXPECT_GT(t.batch_ms, 0);
    // "cpu ⚠" where other programs (a build beside the test) loaded the machine meanwhile.
    EXPECT_TRUE(table->item(row, 0)->text() == "cpu" || table->item(row, 0)->text() == "cpu ⚠")
        << table->item(row, 0)->text().toStdString();
    EXPECT_EQ(table->item(row, 1)->text().toInt(), batches[row]);
    const double batch_ms = table->item(row, 2)->text().toDouble();
    EXPECT_NEAR(batch_ms, t.batch_ms, 0.0005 + 1e-9);
    EXPECT_NEAR(table->item(row, 3)->text().toDouble(), t.batch_ms / batches[row], 0.00005 + 1e-9);
    EXPECT_NEAR(table->item(row, 4)->text().toDouble(), batches[row] * 1000.0 / t.batch_ms,
                0.5 + 1e-9);
  }
  // The fixture's machine has no GPU, and says why.
  EXPECT_TRUE(
      speed->note().startsWith("No GPU on this machine, so only the CPU is timed: no NVIDIA "
                               "driver found (test)."))
      << speed->note().toStdString();
  EXPECT_FALSE(speed->note().contains("))")) << "parentheses doubled";
  EXPECT_TRUE(speed->note().contains("kernel launch")) << speed->note().toStdString();

  ASSERT_TRUE(speed->export_button()->isEnabled());
  const fs::path csv = files_.path() / "inference.csv";
  test::answer_file_dialog(QString::fromStdString(csv.string()),
                           [&] { QTest::mouseClick(speed->export_button(), Qt::LeftButton); });
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "device,batch,batch_ms,ms_per_image,images_per_second,flags,conv");
  for (int row = 0; row < 3; ++row) {
    ASSERT_TRUE(std::getline(in, line));
    double batch_ms = 0, per_image = 0, per_second = 0;
    int batch = 0;
    ASSERT_EQ(
        std::sscanf(line.c_str(), "cpu,%d,%lf,%lf,%lf", &batch, &batch_ms, &per_image, &per_second),
        4)
        << line;
    EXPECT_EQ(batch, batches[row]);
    // Six significant digits in each field: within 1e-5 of each other.
    EXPECT_NEAR(per_image, batch_ms / batch, 2e-5 * per_image);
    EXPECT_NEAR(per_second, batch * 1000.0 / batch_ms, 2e-5 * per_second);
  }
  // Without a GPU, the drawing panel says so where the GPU's time would be.
  EXPECT_TRUE(tab()->digits()->gpu_time_label()->text().contains(
      "no GPU on this machine, no NVIDIA driver found (test)."))
      << tab()->digits()->gpu_time_label()->text().toStdString();
}

// Issue 40.4: timings taken while other programs kept the CPU busy were shown as clean. Two busy
// loops of another process load this machine's cores while the CPU is timed: every row says ⚠,
// with the sentence a run's figures carry, in the table, the status line and the CSV.
// On a GPU the speed view times a model with convolutions twice, im2col and implicit GEMM side by
// side (issue 44.2); a model without any once. The GPU here is a name only: the passes are what
// Time inference would time, and the labels its rows and marks would carry.
TEST_F(InsideTabTest, AGpuTimesAConvolutionalModelWithIm2colAndWithImplicitGemm) {
  open(kLenet);
  SpeedView* speed = tab()->speed();
  speed->set_gpus({"cuda:0"}, "");
  std::vector<std::string> passes;
  for (const SpeedView::Pass& p : speed->passes())
    passes.push_back(p.device + " " + conv_name(p.conv));
  EXPECT_EQ(passes, (std::vector<std::string>{"cpu im2col", "cuda:0 im2col", "cuda:0 implicit"}));
  EXPECT_EQ(speed->label("cpu", "").toStdString(), "cpu");
  EXPECT_EQ(speed->label("cpu", "im2col").toStdString(), "cpu");
  EXPECT_EQ(speed->label("cuda:0", "im2col").toStdString(), "cuda:0 · im2col");
  EXPECT_EQ(speed->label("cuda:0", "implicit").toStdString(), "cuda:0 · implicit GEMM");
  EXPECT_TRUE(speed->note().contains("implicit GEMM")) << speed->note().toStdString();

  // An MLP has no convolution to compute two ways.
  auto mlp = std::make_shared<ModelWeights>();
  mlp->config = preset("mlp");
  speed->set_model(mlp);
  EXPECT_EQ(speed->passes().size(), 2u);
  EXPECT_EQ(speed->label("cuda:0", "im2col").toStdString(), "cuda:0");

  // On the CPU the choice does not exist: asked for, it is refused naming why.
  try {
    time_inference(*mlp, "cpu", {1}, 1, ConvAlgorithm::Implicit);
    ADD_FAILURE() << "the CPU timed an implicit GEMM";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--conv implicit: chooses how a GPU computes its "
                                         "convolutions; the CPU has its own kernels"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(InsideTabTest, InferenceTimedUnderOutsideLoadIsMarked) {
  open(kLenet);
  SpeedView* speed = tab()->speed();
  click_section(speed);
  const int cores = std::max(1, cpu_info().logical_cores);
  std::string loops;
  for (int i = 0; i < cores; ++i) loops += "while :; do :; done & ";
  const std::string pid_file = (files_.path() / "load.pid").string();
  ASSERT_EQ(std::system(("sh -c '" + loops + "wait' & echo $! > " + pid_file).c_str()), 0);
  struct StopLoad {
    std::string pid_file;
    ~StopLoad() {
      const std::string pid = "$(cat " + pid_file + ")";
      if (std::system(("pkill -P " + pid + "; kill " + pid).c_str()) != 0) {
      }  // gone already
    }
  } stop{pid_file};
  QTest::mouseClick(speed->time_button(), Qt::LeftButton);
  ASSERT_TRUE(wait_until([&] { return !speed->busy(); }, 120s)) << speed->status().toStdString();
  QTableWidget* table = speed->table();
  ASSERT_EQ(table->rowCount(), 3);
  for (int row = 0; row < 3; ++row) {
    EXPECT_EQ(table->item(row, 0)->text(), "cpu ⚠");
    EXPECT_TRUE(table->item(row, 4)->toolTip().contains("measured under outside load"))
        << table->item(row, 4)->toolTip().toStdString();
  }
  EXPECT_TRUE(speed->status().contains("⚠ cpu: measured under outside load"))
      << speed->status().toStdString();
  const fs::path csv = files_.path() / "loaded.csv";
  QString error;
  ASSERT_TRUE(speed->export_csv(QString::fromStdString(csv.string()), &error))
      << error.toStdString();
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  for (int row = 0; row < 3; ++row) {
    ASSERT_TRUE(std::getline(in, line));
    EXPECT_NE(line.find(",⚠ measured under outside load"), std::string::npos) << line;
  }
}

// Issue 40.9: on a 1280x720 screen (a window of 1280x690 inside its title bar) the Draw section
// is whole without scrolling: the canvas, Clear, both timings and the bars down to their digits
// (the digits were 15 px below the fold, and the timings under the bars further still).
TEST_F(InsideTabTest, TheDrawSectionIsWholeOnA1280x720ScreenWithoutScrolling) {
  window_->showNormal();  // offscreen, "full screen" is whatever size it had
  window_->resize(1280, 690);
  wait_until([] { return false; }, 150ms);
  open(kLenet);
  ASSERT_NE(tab()->model(), nullptr) << tab()->message().toStdString();
  click_section(tab()->digits());
  stroke({70, 60}, {210, 60});
  stroke({210, 60}, {120, 230});
  ASSERT_TRUE(wait_until([&] { return tab()->digits()->predicted() >= 0; }, 10s));
  QApplication::processEvents();
  DigitPanel* panel = tab()->digits();
  const std::vector<QWidget*> parts = {panel->canvas(), panel->clear_button(),
                                       panel->cpu_time_label(), panel->gpu_time_label(),
                                       panel->probability_bars()};
  for (QWidget* part : parts) {
    ASSERT_TRUE(part->isVisible()) << part->metaObject()->className();
    for (QWidget* at = part->parentWidget(); at; at = at->parentWidget())
      if (auto* area = qobject_cast<QAbstractScrollArea*>(at)) {
        const QRect shown = QRect(part->mapTo(area->viewport(), QPoint()), part->size());
        EXPECT_TRUE(area->viewport()->rect().contains(shown))
            << part->metaObject()->className() << " \"" << part->objectName().toStdString()
            << "\" ends at y " << shown.bottom() << " in a view " << area->viewport()->height()
            << " px high, the panel " << panel->width() << "x" << panel->height() << " px high ("
            << area->objectName().toStdString() << ")";
      }
  }
}

// With GPULAB_SCREENSHOTS=DIR: the tab at 1280x720 mid-drawing, with the digit drawn, and the
// confusion matrix with one cell's mistakes, as PNG files in DIR. GPULAB_SCREENSHOT_WEIGHTS and
// GPULAB_SCREENSHOT_DATA give a trained model and the real MNIST folder; the fixture's otherwise.
TEST_F(InsideTabTest, Screenshots) {
  const QString shots = qEnvironmentVariable("GPULAB_SCREENSHOTS");
  if (shots.isEmpty()) GTEST_SKIP() << "GPULAB_SCREENSHOTS is not set";
  const QString weights = qEnvironmentVariable("GPULAB_SCREENSHOT_WEIGHTS");
  const QString data = qEnvironmentVariable("GPULAB_SCREENSHOT_DATA");
  if (!data.isEmpty()) {
    close_window();
    options_.data_dir = data.toStdString();
    open_window();
    window_->show_tab("inside");
  }
  window_->resize(1280, 720);
  open(weights.isEmpty() ? kLenet : fs::path(weights.toStdString()));
  ASSERT_NE(tab()->model(), nullptr) << tab()->message().toStdString();
  const auto shoot = [&](const QString& name) {
    QApplication::processEvents();
    ASSERT_TRUE(window_->grab().save(shots + "/" + name));
  };
  tab()->show_section(tab()->digits());
  stroke({70, 60}, {210, 60});
  wait_until([&] { return tab()->digits()->predicted() >= 0; }, 10s);
  shoot("inside-draw-mid-1280x720.png");
  stroke({210, 60}, {120, 230});
  wait_until([&] { return tab()->digits()->predicted() >= 0; }, 10s);
  shoot("inside-draw-1280x720.png");
  tab()->show_section(tab()->confusion());
  ConfusionView* view = tab()->confusion();
  ASSERT_TRUE(wait_until([&] { return view->confusion() != nullptr; }, 300s));
  const Confusion& confusion = *view->confusion();
  int truth = 1, predicted = 0;
  for (int t = 0; t < 10; ++t)
    for (int p = 0; p < 10; ++p)
      if (t != p && confusion.count(t, p) > confusion.count(truth, predicted)) {
        truth = t;
        predicted = p;
      }
  QApplication::processEvents();
  QTest::mouseClick(view->plot(), Qt::LeftButton, {}, view->cell_rect(truth, predicted).center());
  shoot("inside-confusion-1280x720.png");
}

TEST(InsideCommandLine, WeightsThatAreNotThereStopTheStart) {
  test::TempDir runs;
  QProcess gpulab;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  gpulab.setProcessEnvironment(env);
  gpulab.start(GPULAB_GUI_PATH, {"--runs-dir", QString::fromStdString(runs.path().string()),
                                 "--weights", "/no/such/weights.safetensors"});
  ASSERT_TRUE(gpulab.waitForFinished(60000));
  EXPECT_EQ(gpulab.exitCode(), 2);
  EXPECT_TRUE(gpulab.readAllStandardError().contains("--weights /no/such/weights.safetensors"));
}

// A FIFO or a folder given as --weights stops the start saying what it is: a FIFO was "no such
// file".
TEST(InsideCommandLine, WeightsThatAreNoFileStopTheStartSayingWhatTheyAre) {
  test::TempDir runs;
  const fs::path fifo = test::make_fifo(runs.path() / "fifo.safetensors");
  fs::create_directory(runs.path() / "folder.safetensors");
  for (const auto& [path, kind] :
       {std::pair{fifo, "a FIFO"}, std::pair{runs.path() / "folder.safetensors", "a folder"}}) {
    QProcess gpulab;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    gpulab.setProcessEnvironment(env);
    gpulab.start(GPULAB_GUI_PATH, {"--runs-dir", QString::fromStdString(runs.path().string()),
                                   "--weights", QString::fromStdString(path.string())});
    ASSERT_TRUE(gpulab.waitForFinished(60000));
    EXPECT_EQ(gpulab.exitCode(), 2);
    const std::string error = gpulab.readAllStandardError().toStdString();
    // Its line, after whatever Qt says on an offscreen start.
    EXPECT_NE(error.find("\ngpulab: --weights " + path.string() + ": is " + kind +
                         ", where a checkpoint is a regular file; give the path of the file "
                         "itself\n"),
              std::string::npos)
        << error;
  }
}

}  // namespace
}  // namespace gpulab::ui

int main(int argc, char** argv) {
  return gpulab::test::run_window_tests(argc, argv, /*qt_dialogs=*/true);
}
