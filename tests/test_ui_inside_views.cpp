// The Inside tab's views on their own, driven as a person drives them: a click on a feature map's
// value (at the rectangle it is drawn in) explains that value, and the sum shown is the value the
// map holds; the filters are drawn in the colour of their weights; bad input gets a line.
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollBar>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/inside/activations.hpp"
#include "engine/model/init.hpp"
#include "test_support.hpp"
#include "ui/inside/explain_view.hpp"
#include "ui/inside/feature_maps_view.hpp"
#include "ui/inside/filters_view.hpp"
#include "ui/inside/tile_grid.hpp"
#include "ui_fixture.hpp"

namespace gpulab {
namespace {

using ui::ExplainView;
using ui::FeatureMapsView;
using ui::FiltersView;
using ui::TileGrid;

std::shared_ptr<const ModelWeights> lenet5() {
  auto model = std::make_shared<ModelWeights>();
  model->config = preset("lenet5");
  model->plan = plan_model(model->config);
  model->params.resize(size_t(model->plan.parameter_count));
  init_parameters(model->params, model->plan, 7);
  return model;
}

std::vector<uint8_t> digit() { return test::synthetic_set(1, 3).pixels; }

// With GPULAB_SCREENSHOTS=DIR, the widget as drawn is saved there as NAME.png, to look at.
void save_screenshot(QWidget& widget, const char* name) {
  const QByteArray dir = qgetenv("GPULAB_SCREENSHOTS");
  if (dir.isEmpty()) return;
  QTest::qWait(200);  // widgets added to a shown layout show and settle at the next turns
  widget.grab().save(QString::fromUtf8(dir) + "/" + name + ".png");
}

// The maps and the explanation side by side at 1280x720, wired as the tab wires them.
class InsideViews : public ::testing::Test {
 protected:
  void SetUp() override {
    host_.resize(1280, 720);
    auto* row = new QHBoxLayout(&host_);
    maps_ = new FeatureMapsView(&host_);
    explain_ = new ExplainView(&host_);
    row->addWidget(maps_, 1);
    row->addWidget(explain_, 1);
    QObject::connect(maps_, &FeatureMapsView::value_clicked, explain_, &ExplainView::explain);
    const ForwardPass pass = forward_pass(model_, digit());
    maps_->set_pass(pass);
    explain_->set_pass(pass);
    host_.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&host_));
  }

  // Clicks value (channel, y, x) of `layer` where the maps view draws it, after scrolling it into
  // view, through whatever widget is really under that point.
  void click_value(int layer, int channel, int y, int x) {
    TileGrid* grid = maps_->grid_of_layer(layer);
    ASSERT_NE(grid, nullptr) << "layer " << layer;
    maps_->ensureWidgetVisible(grid);
    QApplication::processEvents();
    const QRect rect = maps_->value_rect(layer, channel, y, x);
    ASSERT_TRUE(maps_->viewport()->rect().contains(rect.center())) << "layer " << layer;
    QWidget* under = maps_->viewport()->childAt(rect.center());
    ASSERT_EQ(under, grid) << "layer " << layer;
    QTest::mouseClick(under, Qt::LeftButton, {}, under->mapFrom(maps_->viewport(), rect.center()));
  }

  std::shared_ptr<const ModelWeights> model_ = lenet5();
  QWidget host_;
  FeatureMapsView* maps_ = nullptr;
  ExplainView* explain_ = nullptr;
};

TEST_F(InsideViews, ClickingAConvolutionsValueShowsTheSumThatMadeIt) {
  ASSERT_NE(maps_->activations(), nullptr) << maps_->message().toStdString();
  const int conv2 = 3;
  click_value(conv2, 5, 3, 7);
  const ProductSum* shown = explain_->shown();
  ASSERT_NE(shown, nullptr) << explain_->message().toStdString();
  EXPECT_EQ(shown->layer, conv2);
  EXPECT_EQ(shown->channel, 5);
  EXPECT_EQ(shown->y, 3);
  EXPECT_EQ(shown->x, 7);
  const float held = maps_->activations()->layers[size_t(conv2)].at(5, 3, 7);
  EXPECT_EQ(shown->activation, held);
  EXPECT_NEAR(shown->sum, held, 1e-5f);
  // "Σ 150 products … + bias … = value (the map holds value)", with the numbers the map holds.
  const QString text = explain_->sum_text();
  EXPECT_TRUE(text.startsWith("Σ 150 products")) << text.toStdString();
  EXPECT_TRUE(text.contains("= " + ui::number_text(held))) << text.toStdString();
  EXPECT_TRUE(text.contains(ui::number_text(shown->bias))) << text.toStdString();
  // A row per input channel, the window on its 14x14 map where the filter sits: rows 3..7,
  // columns 7..11 (stride 1, no padding).
  ASSERT_EQ(explain_->channel_rows(), 6);
  const QRect window = explain_->window_rect(0);
  ASSERT_FALSE(window.isEmpty());
  EXPECT_EQ(window.width(), window.height());
  EXPECT_EQ(window.width() % 5, 0);
  const QRect next_row = explain_->window_rect(1);
  EXPECT_EQ(next_row.size(), window.size());
  EXPECT_EQ(next_row.left(), window.left());  // each row's map at the same place
  EXPECT_EQ(next_row.top() - window.top(), explain_->window_rect(2).top() - next_row.top());
  save_screenshot(host_, "inside_maps_explain");
  // The box moves with the value clicked: from (3, 7) to (0, 0) it moves 7 cells left, 3 up.
  click_value(conv2, 5, 0, 0);
  ASSERT_NE(explain_->shown(), nullptr);
  EXPECT_EQ(explain_->shown()->y, 0);
  const QRect corner = explain_->window_rect(0);
  const int cell = window.width() / 5;
  EXPECT_EQ(window.left() - corner.left(), 7 * cell);
  EXPECT_EQ(window.top() - corner.top(), 3 * cell);
}

// The heading wraps to what the view shows, not to the rows, which may be wider than the view
// (they scroll sideways): its end is read without scrolling.
TEST_F(InsideViews, TheExplanationsHeadingWrapsToWhatIsInView) {
  host_.resize(1000, 720);  // the rows of a 5x5 filter are wider than half of it
  const int conv2 = 3;
  click_value(conv2, 5, 3, 7);
  ASSERT_NE(explain_->shown(), nullptr) << explain_->message().toStdString();
  QTest::qWait(100);  // the rows added show and lay out at the next turns
  ASSERT_GT(explain_->horizontalScrollBar()->maximum(), 0) << "the rows fit: nothing to wrap";
  QLabel* heading = nullptr;
  for (QLabel* label : explain_->widget()->findChildren<QLabel*>())
    if (label->text().contains("input channels")) heading = label;
  ASSERT_NE(heading, nullptr);
  const QRect in_view(heading->mapTo(explain_->viewport(), QPoint()), heading->size());
  EXPECT_GE(in_view.left(), 0);
  EXPECT_LE(in_view.right(), explain_->viewport()->rect().right())
      << "the heading is " << heading->width() << " px wide in a view of "
      << explain_->viewport()->width();
  EXPECT_GT(heading->height(), heading->fontMetrics().height());  // wrapped, not cut
}

TEST_F(InsideViews, AClickOnTheFirstConvolutionAtTheEdgeShowsThePadding) {
  click_value(0, 2, 0, 27);
  const ProductSum* shown = explain_->shown();
  ASSERT_NE(shown, nullptr) << explain_->message().toStdString();
  EXPECT_EQ(shown->layer, 0);
  EXPECT_EQ(shown->channel, 2);
  EXPECT_EQ(shown->y, 0);
  EXPECT_EQ(shown->x, 27);
  EXPECT_EQ(shown->top, -2);  // padding 2 on a 5x5 filter
  int padded = 0;
  for (uint8_t p : shown->padding) padded += p;
  EXPECT_EQ(padded, 25 - 3 * 3);  // only the 3x3 corner of the window lies on the image
  EXPECT_NEAR(shown->sum, maps_->activations()->layers[0].at(2, 0, 27), 1e-5f);
}

TEST_F(InsideViews, AClickOnALinearLayersStripExplainsThatOutput) {
  const int fc2 = 9;
  click_value(fc2, 41, 0, 0);
  const ProductSum* shown = explain_->shown();
  ASSERT_NE(shown, nullptr) << explain_->message().toStdString();
  EXPECT_EQ(shown->type, LayerType::Linear);
  EXPECT_EQ(shown->channel, 41);
  EXPECT_NEAR(shown->sum, maps_->activations()->layers[size_t(fc2)].values[41], 1e-5f);
  EXPECT_TRUE(explain_->sum_text().startsWith("Σ 120 products"))
      << explain_->sum_text().toStdString();
  EXPECT_EQ(explain_->channel_rows(), 1);  // a flat input: one strip
}

TEST_F(InsideViews, ALayerWithoutWeightsSaysSoInsteadOfASum) {
  click_value(2, 0, 4, 4);  // the first pooling
  EXPECT_EQ(explain_->shown(), nullptr);
  EXPECT_TRUE(explain_->message().contains("has no weights")) << explain_->message().toStdString();
  // A new digit keeps the value asked for, explained again for the new image.
  click_value(3, 1, 2, 2);
  ASSERT_NE(explain_->shown(), nullptr);
  std::vector<uint8_t> other = test::synthetic_set(2, 9).pixels;
  other.resize(784);
  const ForwardPass pass = forward_pass(model_, other);
  maps_->set_pass(pass);
  explain_->set_pass(pass);
  ASSERT_NE(explain_->shown(), nullptr);
  EXPECT_EQ(explain_->shown()->activation, maps_->activations()->layers[3].at(1, 2, 2));
}

TEST(InsideViewsInput, BadImagesAndModelsGetALineNotACrash) {
  FeatureMapsView maps;
  ExplainView explain;
  EXPECT_TRUE(maps.message().contains("No model")) << maps.message().toStdString();
  const auto model = lenet5();
  const ForwardPass wrong_size = forward_pass(model, std::vector<uint8_t>(100, 0));
  maps.set_pass(wrong_size);
  explain.set_pass(wrong_size);
  EXPECT_TRUE(maps.message().contains("28x28")) << maps.message().toStdString();
  EXPECT_TRUE(explain.message().contains("28x28")) << explain.message().toStdString();
  EXPECT_EQ(maps.activations(), nullptr);
  explain.explain(3, 0, 0, 0);
  EXPECT_EQ(explain.shown(), nullptr);
  const ForwardPass pass = forward_pass(model, digit());
  maps.set_pass(pass);
  explain.set_pass(pass);
  explain.explain(3, 99, 0, 0);  // no channel 99
  EXPECT_EQ(explain.shown(), nullptr);
  EXPECT_TRUE(explain.message().contains("channel 99")) << explain.message().toStdString();
  maps.set_pass(forward_pass(nullptr, digit()));
  EXPECT_EQ(maps.activations(), nullptr);
  EXPECT_TRUE(maps.message().contains("No model")) << maps.message().toStdString();
  EXPECT_EQ(maps.grid_of_layer(0), nullptr);
}

// Filter k makes feature map k, and both say so: numbered from 1 (filters said 1 to 6 while the
// maps they make said 0 to 5), in the explanation's heading too.
TEST_F(InsideViews, FeatureMapsAreNumberedAsTheFiltersThatMakeThem) {
  FiltersView filters;
  filters.set_model(model_);
  const std::vector<QString>& made_by = filters.grid(0)->captions();  // conv1's 6 filters
  ASSERT_EQ(made_by.size(), 6u);
  EXPECT_EQ(made_by.front(), "1");
  EXPECT_EQ(made_by.back(), "6");
  EXPECT_EQ(maps_->grid_of_layer(0)->captions(), made_by);
  click_value(0, 3, 10, 10);  // the fourth map
  ASSERT_NE(explain_->shown(), nullptr) << explain_->message().toStdString();
  bool said = false;
  for (QLabel* label : explain_->widget()->findChildren<QLabel*>())
    said |= label->text().contains("channel 4, at row 10, column 10");
  EXPECT_TRUE(said);
}

TEST(FiltersViewTest, DrawsEachWeightInItsColourWithTheLayersRange) {
  const auto model = lenet5();
  FiltersView view;
  view.resize(1280, 720);
  view.set_model(model);
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  ASSERT_EQ(view.layer_count(), 2);
  EXPECT_EQ(view.grid(0)->count(), 6);       // conv1: 6 filters on one channel
  EXPECT_EQ(view.grid(1)->count(), 16 * 6);  // conv2: 16 filters on 6 channels
  for (int i = 0; i < 2; ++i) {
    const ConvFilters f = conv_filters(*model, i == 0 ? 0 : 3);
    EXPECT_FLOAT_EQ(view.legend(i)->scale().high, f.max_abs);
    EXPECT_FLOAT_EQ(view.legend(i)->scale().low, -f.max_abs);
    // The middle pixel of the middle weight of filter 4 (input channel 1 for conv2) on screen.
    const int in = i == 0 ? 0 : 1;
    const int tile = i == 0 ? 4 : 4 * 6 + in;
    const QImage drawn = view.grid(i)->grab().toImage();
    const QRect rect = view.grid(i)->tile_rect(tile);
    const int cell = rect.width() / 5;
    const QColor at =
        drawn.pixelColor(rect.left() + 2 * cell + cell / 2, rect.top() + 2 * cell + cell / 2);
    const QColor expected = view.legend(i)->scale().color(f.at(4, in, 2, 2));
    EXPECT_NEAR(at.red(), expected.red(), 1) << "layer " << i;
    EXPECT_NEAR(at.green(), expected.green(), 1) << "layer " << i;
    EXPECT_NEAR(at.blue(), expected.blue(), 1) << "layer " << i;
  }
  save_screenshot(view, "inside_filters");
  EXPECT_TRUE(view.title(1)->text().contains("16 filters of 6×5×5"))
      << view.title(1)->text().toStdString();
  view.set_model(nullptr);
  EXPECT_EQ(view.layer_count(), 0);
}

// A filter on more input channels than a row holds takes whole rows of its own.
TEST(FiltersViewTest, AFilterOnManyChannelsTakesWholeRows) {
  auto model = std::make_shared<ModelWeights>();
  model->config = model_from_json(nlohmann::json::parse(R"({"name": "wide", "layers": [
      {"type": "conv2d", "out_channels": 17, "kernel": 3}, {"type": "relu"},
      {"type": "conv2d", "out_channels": 4, "kernel": 3}, {"type": "flatten"},
      {"type": "linear", "out_features": 10}]})"));
  model->plan = plan_model(model->config);
  model->params.assign(size_t(model->plan.parameter_count), 0.5f);
  FiltersView view;
  view.set_model(model);
  ASSERT_EQ(view.layer_count(), 2);
  TileGrid* grid = view.grid(1);
  // 17 channels: two rows of 9, one place left blank, so filter 1 starts the third row.
  EXPECT_EQ(grid->count(), 4 * 18);
  EXPECT_EQ(grid->tile_rect(18).left(), grid->tile_rect(0).left());
  EXPECT_EQ(grid->tile_rect(9).left(), grid->tile_rect(0).left());
  EXPECT_GT(grid->tile_rect(18).top(), grid->tile_rect(9).top());
  // A click on the blank place is no tile.
  int clicks = 0;
  QObject::connect(grid, &TileGrid::tile_clicked, [&](int, int, int) { ++clicks; });
  QTest::mouseClick(grid, Qt::LeftButton, {}, grid->tile_rect(17).center());
  EXPECT_EQ(clicks, 0);
  QTest::mouseClick(grid, Qt::LeftButton, {}, grid->tile_rect(16).center());
  EXPECT_EQ(clicks, 1);
  EXPECT_TRUE(view.title(1)->text().contains("2 rows each")) << view.title(1)->text().toStdString();
}

TEST(ColorScaleTest, SignedIsWhiteAtZeroAndGreyRunsBlackToWhite) {
  const ui::ColorScale diverging{ui::ColorScale::Kind::Signed, -2, 2};
  EXPECT_EQ(diverging.color(0), QColor(255, 255, 255));
  EXPECT_GT(diverging.color(2).red(), diverging.color(2).blue());
  EXPECT_GT(diverging.color(-2).blue(), diverging.color(-2).red());
  EXPECT_EQ(diverging.color(5), diverging.color(2));  // clamped at the ends
  const ui::ColorScale grey{ui::ColorScale::Kind::Grey, 0, 4};
  EXPECT_EQ(grey.color(0), QColor(0, 0, 0));
  EXPECT_EQ(grey.color(4), QColor(255, 255, 255));
  const float values[] = {-1.0f, 3.0f};
  const ui::ColorScale fitted = ui::ColorScale::fitting(values, 2);
  EXPECT_EQ(fitted.kind, ui::ColorScale::Kind::Signed);
  EXPECT_FLOAT_EQ(fitted.high, 3.0f);
}

}  // namespace
}  // namespace gpulab

int main(int argc, char** argv) { return gpulab::test::run_window_tests(argc, argv); }
