// Each convolution as a title, a legend of its range and a grid: a row per filter, a tile per input
// channel, all on the layer's one symmetric scale so tiles compare.
#include "ui/inside/filters_view.hpp"

#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/inside/activations.hpp"

namespace gpulab::ui {
namespace {

constexpr int kFilterPixels = 40;   // a filter's drawn size, whatever its kernel
constexpr int kFiltersPerRow = 16;  // input channels per row before it wraps

}  // namespace

FiltersView::FiltersView(QWidget* parent) : QScrollArea(parent), content_(new QWidget) {
  setWidgetResizable(true);
  column_ = new QVBoxLayout(content_);
  empty_ = new QLabel(tr("No model loaded: open a checkpoint to see its filters."), content_);
  empty_->setWordWrap(true);
  column_->addWidget(empty_);
  column_->addStretch(1);
  setWidget(content_);
}

void FiltersView::clear() {
  for (const TileSection& layer : layers_) delete layer.box;
  layers_.clear();
}

void FiltersView::set_model(std::shared_ptr<const ModelWeights> model) {
  clear();
  model_ = std::move(model);
  const std::vector<int> convs = model_ ? conv_layer_indices(model_->plan) : std::vector<int>{};
  empty_->setText(model_ ? tr("This model has no convolution layers: it has no filters to show.")
                         : tr("No model loaded: open a checkpoint to see its filters."));
  empty_->setVisible(convs.empty());
  int at = 0;
  for (int index : convs) {
    const ConvFilters f = conv_filters(*model_, index);
    const ColorScale scale{ColorScale::Kind::Signed, -f.max_abs, f.max_abs};
    // A filter on several channels takes whole rows: its channels spread evenly over as few rows
    // of at most kFiltersPerRow as hold them, the last row's spare places left blank.
    const int rows_each = (f.in_channels + kFiltersPerRow - 1) / kFiltersPerRow;
    const int columns = f.in_channels == 1 ? std::min(f.out_channels, kFiltersPerRow)
                                           : (f.in_channels + rows_each - 1) / rows_each;
    std::vector<QImage> images;
    std::vector<QString> captions;
    for (int o = 0; o < f.out_channels; ++o) {
      for (int i = 0; i < f.in_channels; ++i) {
        images.push_back(
            scale_image(f.weights.data() + (size_t(o) * f.in_channels + i) * f.kernel * f.kernel,
                        f.kernel, f.kernel, scale));
        captions.push_back(f.in_channels == 1 ? QString::number(o + 1) : QString());
      }
      if (f.in_channels > 1)
        for (int blank = f.in_channels; blank < rows_each * columns; ++blank) {
          images.emplace_back();
          captions.emplace_back();
        }
    }
    const QString title =
        f.in_channels == 1
            ? tr("<b>%1</b>: %2 filters of %3×%3 on the image")
                  .arg(QString::fromStdString(f.name))
                  .arg(f.out_channels)
                  .arg(f.kernel)
            : tr("<b>%1</b>: %2 filters of %3×%4×%4, a tile per input channel, %5")
                  .arg(QString::fromStdString(f.name))
                  .arg(f.out_channels)
                  .arg(f.in_channels)
                  .arg(f.kernel)
                  .arg(rows_each == 1 ? tr("a row each") : tr("%1 rows each").arg(rows_each));
    TileSection section = make_tile_section(title, scale, content_);
    section.grid->set_tiles(std::move(images), std::move(captions), QSize(kFilterPixels, kFilterPixels),
                            columns);
    section.legend->setToolTip(
        tr("weights from −|w| to +|w|: blue negative, white 0, red positive"));
    column_->insertWidget(at++, section.box);
    layers_.push_back(section);
  }
}

}  // namespace gpulab::ui
