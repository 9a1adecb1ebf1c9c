// The Network section's layout (the image chosen above, layers and filters, then maps beside the
// explained value) and where its image comes from.
#include "ui/inside/network_panel.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "ui/inside/explain_view.hpp"
#include "ui/inside/feature_maps_view.hpp"
#include "ui/inside/filters_view.hpp"
#include "ui/runs/run_controller.hpp"

namespace gpulab::ui {

NetworkPanel::NetworkPanel(std::shared_ptr<DataCache> cache,
                           std::function<std::filesystem::path()> data_dir, QWidget* parent)
    : QWidget(parent), cache_(std::move(cache)), data_dir_(std::move(data_dir)) {
  setObjectName("inside-network");
  source_ = new QComboBox(this);
  source_->setObjectName("maps-source");
  source_->addItem(tr("the drawn digit"));
  source_->addItem(tr("a test image"));
  source_->setToolTip(tr("The image every layer's feature maps are computed for"));
  test_index_ = new QSpinBox(this);
  test_index_->setObjectName("test-image");
  test_index_->setPrefix(tr("test image "));
  test_index_->setRange(0, 9999);           // MNIST's test set; narrowed once it is read
  test_index_->setKeyboardTracking(false);  // one image per number typed, not per digit
  image_label_ = new QLabel(this);
  image_label_->setObjectName("maps-image");
  image_label_->setWordWrap(true);

  layers_ = new QTreeWidget(this);
  layers_->setObjectName("layers");
  layers_->setHeaderLabels({tr("layer"), tr("type"), tr("output (C, H, W)"), tr("parameters")});
  layers_->setRootIsDecorated(false);
  layers_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  filters_ = new FiltersView(this);
  filters_->setObjectName("filters");
  maps_ = new FeatureMapsView(this);
  maps_->setObjectName("feature-maps");
  explain_ = new ExplainView(this);
  explain_->setObjectName("explain");

  auto* choose = new QHBoxLayout;
  choose->addWidget(new QLabel(tr("Feature maps of:"), this));
  choose->addWidget(source_);
  choose->addWidget(test_index_);
  choose->addWidget(image_label_, 1);
  // Layers and filters above; the maps and the value clicked in them below, where most room is.
  auto* top = new QSplitter(Qt::Horizontal, this);
  top->addWidget(layers_);
  top->addWidget(filters_);
  auto* bottom = new QSplitter(Qt::Horizontal, this);
  bottom->addWidget(maps_);
  bottom->addWidget(explain_);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->setObjectName("network-split");
  split->addWidget(top);
  split->addWidget(bottom);
  split->setChildrenCollapsible(false);
  // The sizes shared out in these proportions whatever the window's size: the filters wider than
  // the list of layers, the maps wider than the sum explained, the maps taller than the filters.
  top->setSizes({1000, 2000});
  bottom->setSizes({3000, 2000});
  split->setSizes({1000, 2000});
  layers_->setMinimumHeight(120);
  maps_->setMinimumSize(240, 200);
  explain_->setMinimumSize(240, 200);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(choose);
  layout->addWidget(split, 1);

  connect(maps_, &FeatureMapsView::value_clicked, explain_, &ExplainView::explain);
  connect(source_, &QComboBox::activated, this, [this] { show_chosen(); });
  connect(test_index_, &QSpinBox::valueChanged, this,
          [this](int index) { show_test_image(index); });
  set_model(nullptr);
}

NetworkPanel::~NetworkPanel() = default;

void NetworkPanel::set_model(std::shared_ptr<const ModelWeights> model) {
  model_ = std::move(model);
  filters_->set_model(model_);
  fill_layers();
  show_chosen();
}

void NetworkPanel::set_drawn_digit(std::vector<uint8_t> digit) {
  drawn_ = std::move(digit);
  if (drawn_shown_) show_drawn();
}

int NetworkPanel::test_image() const { return test_index_->value(); }
QString NetworkPanel::image_text() const { return image_label_->text(); }

void NetworkPanel::show_chosen() {
  if (source_->currentIndex() == 0)
    show_drawn();
  else
    show_test_image(test_index_->value());
}

void NetworkPanel::show_drawn() {
  drawn_shown_ = true;
  source_->setCurrentIndex(0);
  show_image(drawn_, drawn_.empty() ? tr("Showing the drawn digit: draw one on the \"Draw a "
                                         "digit\" tab (the maps follow each stroke's end).")
                                    : tr("Showing the drawn digit, as the model sees it (28x28); "
                                         "the maps follow each stroke's end."));
}

void NetworkPanel::show_test_image(int index) {
  drawn_shown_ = false;
  source_->setCurrentIndex(1);
  {
    const QSignalBlocker quiet(test_index_);  // set here, not chosen by hand
    test_index_->setValue(index);
  }
  if (!data_) {
    show_image({}, {});  // not the last image's maps (perhaps of another model) while it reads
    return read_test_set();
  }
  const data::ImageSet& test = data_->test;
  index = test_index_->value();  // within the test set's range
  const auto first = test.pixels.begin() + ptrdiff_t(index) * test.image_size();
  show_image({first, first + test.image_size()},
             tr("Showing test image %1 of %2 (a %3), from %4")
                 .arg(index)
                 .arg(test.count)
                 .arg(int(test.labels[size_t(index)]))
                 .arg(QString::fromStdString(data_->dir.string())));
}

void NetworkPanel::show_image(std::vector<uint8_t> digit, const QString& text) {
  image_label_->setText(text);
  const ForwardPass pass = forward_pass(model_, digit);  // once, for the maps and the explanation
  maps_->set_pass(pass);
  explain_->set_pass(pass);
}

// Reading MNIST can take a second: on a worker thread, the maps following when it is read.
void NetworkPanel::read_test_set() {
  if (reading_) return;  // the index asked for is in the spin box when it arrives
  reading_ = true;
  const std::filesystem::path dir = data_dir_();
  image_label_->setText(
      tr("Reading the test set from %1…").arg(QString::fromStdString(dir.string())));
  reader_.run([this, cache = cache_, dir](const Background::Job& job) {
    std::shared_ptr<const data::MnistData> data;
    QString problem;
    try {
      data = cache->get(dir);
    } catch (const std::exception& e) {
      problem = QString::fromStdString(e.what());
    }
    job.post([this, data, problem] {
      reading_ = false;
      if (!data || data->test.count == 0) {
        image_label_->setText(tr("The test set could not be read: %1").arg(problem));
        return;
      }
      data_ = data;
      test_index_->setMaximum(data_->test.count - 1);
      if (!drawn_shown_) show_test_image(test_index_->value());
    });
  });
}

void NetworkPanel::fill_layers() {
  layers_->clear();
  if (!model_) return;
  for (const LayerInfo& layer : model_->plan.layers) {
    const ActivationShape& out = layer.output;
    layers_->addTopLevelItem(new QTreeWidgetItem(
        {QString::fromStdString(layer.spec.name), layer_type_name(layer.spec.type),
         QString("%1, %2, %3").arg(out.channels).arg(out.height).arg(out.width),
         QString::number(layer.parameter_count)}));
  }
}

}  // namespace gpulab::ui
