// Counting the confusion matrix on a worker thread, drawing it with QCustomPlot (a colour map
// with the numbers in its cells, per-class accuracy on the right axis), and its export.
#include "ui/inside/confusion_view.hpp"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/charts/chart_view.hpp"
#include "ui/inside/mistakes_gallery.hpp"
#include "ui/runs/run_controller.hpp"

namespace gpulab::ui {

ConfusionView::ConfusionView(std::shared_ptr<DataCache> cache,
                             std::function<std::filesystem::path()> data_dir, QWidget* parent)
    : QWidget(parent), cache_(std::move(cache)), data_dir_(std::move(data_dir)) {
  compute_ = new QPushButton(tr("Count on the test set"), this);
  compute_->setObjectName("count-confusion");
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setObjectName("cancel-confusion");
  cancel_->hide();
  normalized_ = new QCheckBox(tr("Share of each true class (rows sum to 1)"), this);
  normalized_->setObjectName("row-normalized");
  export_ = export_button(
      this, {ExportFormat::Png, ExportFormat::Pdf, ExportFormat::Svg, ExportFormat::Csv},
      [this](ExportFormat format) { export_dialog(format); });
  progress_ = new QProgressBar(this);
  progress_->hide();
  status_ = new QLabel(this);
  status_->setObjectName("confusion-status");
  status_->setWordWrap(true);
  plot_ = new QCustomPlot(this);
  plot_->setObjectName("confusion-matrix");
  plot_->setMinimumSize(360, 320);
  gallery_ = new MistakesGallery(this);

  auto* controls = new QHBoxLayout;
  controls->addWidget(compute_);
  controls->addWidget(cancel_);
  controls->addWidget(progress_, 1);
  controls->addWidget(normalized_);
  controls->addWidget(export_);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(plot_);
  split->addWidget(gallery_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(status_);
  layout->addWidget(split, 1);

  connect(compute_, &QPushButton::clicked, this, &ConfusionView::compute);
  connect(cancel_, &QPushButton::clicked, this, &ConfusionView::cancel);
  connect(normalized_, &QCheckBox::toggled, this, [this] { draw(); });
  connect(plot_, &QCustomPlot::mousePress, this,
          [this](QMouseEvent* event) { clicked(event->position().toPoint()); });
  connect(gallery_, &MistakesGallery::filter_changed, this, [this] { draw(); });
  set_model(nullptr);
}

ConfusionView::~ConfusionView() = default;

void ConfusionView::set_model(std::shared_ptr<const ModelWeights> model) {
  cancel();
  model_ = std::move(model);
  confusion_.reset();
  gallery_->set(nullptr, nullptr);
  compute_->setEnabled(bool(model_));
  status_->setText(model_ ? tr("Count the confusion matrix of this model on the test set.")
                          : tr("Open a model to see what it confuses."));
  draw();
  if (model_ && isVisible()) compute();
}

void ConfusionView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (model_ && !confusion_ && !busy()) compute();
}

void ConfusionView::compute() {
  if (!model_ || busy()) return;
  counting_ = true;
  compute_->setEnabled(false);
  cancel_->show();
  progress_->setRange(0, 0);  // until the test set is read
  progress_->show();
  const std::filesystem::path dir = data_dir_();
  status_->setText(tr("Classifying the test set of %1…").arg(QString::fromStdString(dir.string())));
  counter_.run([this, model = model_, cache = cache_, dir](const Background::Job& job) {
    std::optional<Confusion> confusion;
    std::shared_ptr<const data::MnistData> data;
    QString problem;
    try {
      data = cache->get(dir);
      confusion = confusion_matrix(*model, data->test, 256, [&](int done, int total) {
        job.post([this, done, total] {
          progress_->setRange(0, total);
          progress_->setValue(done);
        });
        return !job.stopped();
      });
    } catch (const std::exception& e) {
      problem = QString::fromStdString(e.what());
    }
    job.post([this, confusion, data, problem] { finished(confusion, data, problem); });
  });
}

void ConfusionView::cancel() {
  if (!counting_) return;
  counter_.stop();  // what the stopped count sends back is dropped
  counting_ = false;
  cancel_->hide();
  progress_->hide();
  compute_->setEnabled(bool(model_));
  status_->setText(tr("Stopped; count again when you like."));
}

void ConfusionView::finished(std::optional<Confusion> confusion,
                             std::shared_ptr<const data::MnistData> data, const QString& problem) {
  counting_ = false;
  cancel_->hide();
  progress_->hide();
  compute_->setEnabled(bool(model_));
  if (!confusion) {
    status_->setText(tr("The confusion matrix could not be counted: %1").arg(problem));
    return;
  }
  confusion_ = std::move(confusion);
  data_ = std::move(data);
  status_->setText(tr("%1 test images, %2 right: accuracy %3%. Click a cell to see its mistakes.")
                       .arg(confusion_->total())
                       .arg(confusion_->correct())
                       .arg(100.0 * confusion_->accuracy(), 0, 'f', 2));
  gallery_->set(&*confusion_, std::shared_ptr<const data::ImageSet>(data_, &data_->test));
  draw();
}

void ConfusionView::set_normalized(bool rows) { normalized_->setChecked(rows); }
bool ConfusionView::normalized() const { return normalized_->isChecked(); }
QString ConfusionView::status() const { return status_->text(); }

void ConfusionView::draw() {
  plot_->clearPlottables();
  plot_->clearItems();
  export_->setEnabled(confusion_.has_value());
  if (!confusion_) {
    plot_->replot();
    return;
  }
  const int classes = confusion_->classes;
  const bool rows = normalized();
  const std::vector<double> shares = confusion_->row_normalized();
  auto* map = new QCPColorMap(plot_->xAxis, plot_->yAxis);
  map->data()->setSize(classes, classes);
  map->data()->setRange(QCPRange(0, classes - 1), QCPRange(0, classes - 1));
  // Shares colour the cells in both views, so a large class does not outshine the rest.
  for (int t = 0; t < classes; ++t)
    for (int p = 0; p < classes; ++p) map->data()->setCell(p, t, shares[size_t(t) * classes + p]);
  QCPColorGradient gradient;
  gradient.setColorStopAt(0, QColor(255, 255, 255));
  gradient.setColorStopAt(0.05, QColor(222, 235, 247));
  gradient.setColorStopAt(1, QColor(8, 48, 107));
  map->setGradient(gradient);
  map->setDataRange(QCPRange(0, 1));
  map->setInterpolate(false);
  const auto filter = gallery_->filter();
  std::vector<QCPItemText*> texts;
  for (int t = 0; t < classes; ++t)
    for (int p = 0; p < classes; ++p) {
      const double share = shares[size_t(t) * classes + p];
      auto* text = new QCPItemText(plot_);
      text->position->setCoords(p, t);
      text->setText(rows ? QString::number(share, 'f', 2)
                         : QString::number(confusion_->count(t, p)));
      text->setColor(share > 0.5 ? Qt::white : Qt::black);
      texts.push_back(text);
      if (filter && filter->first == t && filter->second == p) {
        text->setPen(QPen(QColor(214, 39, 40), 2));  // the cell the gallery shows
        text->setPadding(QMargins(4, 2, 4, 2));
      }
    }
  auto ticker = [&](const std::vector<double>* accuracy) {
    auto labels = QSharedPointer<QCPAxisTickerText>::create();
    for (int c = 0; c < classes; ++c)
      labels->addTick(c, accuracy ? QString::number(100.0 * (*accuracy)[size_t(c)], 'f', 1) + "%"
                                  : QString::number(c));
    return labels;
  };
  const std::vector<double> per_class = confusion_->class_accuracy();
  plot_->xAxis->setTicker(ticker(nullptr));
  plot_->yAxis->setTicker(ticker(nullptr));
  plot_->yAxis2->setVisible(true);
  plot_->yAxis2->setTicker(ticker(&per_class));
  for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis, plot_->yAxis2}) {
    axis->setRange(-0.5, classes - 0.5);
    axis->grid()->setVisible(false);
    axis->setSubTicks(false);
    axis->setTickLength(0, 0);
  }
  plot_->yAxis->setRangeReversed(true);  // true class 0 at the top, as the matrix is read
  plot_->yAxis2->setRangeReversed(true);
  plot_->xAxis->setLabel(tr("predicted class"));
  plot_->yAxis->setLabel(tr("true class"));
  plot_->yAxis2->setLabel(tr("per-class accuracy"));
  plot_->replot();
  // The numbers shrink to their cells (four digits in a small window), once the axes are laid out.
  const double cell = std::abs(plot_->xAxis->coordToPixel(1) - plot_->xAxis->coordToPixel(0));
  QFont font = plot_->font();
  int widest = 1;
  for (const QCPItemText* text : texts)
    widest = std::max(widest, QFontMetrics(font).horizontalAdvance(text->text()));
  if (widest > 0.85 * cell && cell > 0) {
    font.setPointSizeF(std::max(4.0, font.pointSizeF() * 0.85 * cell / widest));
    for (QCPItemText* text : texts) text->setFont(font);
    plot_->replot();
  }
}

void ConfusionView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // Drawn again once the layout has given the plot its new size, one draw for many resizes.
  if (!confusion_ || redraw_queued_) return;
  redraw_queued_ = true;
  QMetaObject::invokeMethod(
      this,
      [this] {
        redraw_queued_ = false;
        draw();
      },
      Qt::QueuedConnection);
}

QRect ConfusionView::cell_rect(int truth, int predicted) const {
  const QCPAxis* x = plot_->xAxis;
  const QCPAxis* y = plot_->yAxis;
  return QRectF(QPointF(x->coordToPixel(predicted - 0.5), y->coordToPixel(truth - 0.5)),
                QPointF(x->coordToPixel(predicted + 0.5), y->coordToPixel(truth + 0.5)))
      .normalized()
      .toRect();
}

void ConfusionView::clicked(QPoint pos) {
  if (!confusion_ || !plot_->axisRect()->rect().contains(pos)) return;
  const int predicted = int(std::lround(plot_->xAxis->pixelToCoord(pos.x())));
  const int truth = int(std::lround(plot_->yAxis->pixelToCoord(pos.y())));
  if (predicted < 0 || truth < 0 || predicted >= confusion_->classes ||
      truth >= confusion_->classes)
    return;
  const MistakesGallery::Cell cell{truth, predicted};
  // A second click on the cell shown (or on the diagonal, which holds no mistakes) shows all.
  gallery_->set_filter(gallery_->filter() == cell || truth == predicted ? std::nullopt
                                                                        : std::optional(cell));
}

bool ConfusionView::export_to(const QString& path, ExportFormat format, QString* error) {
  if (!confusion_) {
    if (error) *error = tr("%1: no confusion matrix to export yet").arg(path);
    return false;
  }
  if (format != ExportFormat::Csv) return save_plot(*plot_, path, format, 800, 700, error);
  return save_text(path, confusion_csv(*confusion_, normalized()), error);
}

void ConfusionView::export_dialog(ExportFormat format) {
  const QString ext = export_format_name(format);
  const QString name = normalized() ? "confusion-shares." : "confusion-counts.";
  const QString suggested =
      QDir(export_dir_.isEmpty() ? QDir::homePath() : export_dir_).filePath(name + ext);
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export the confusion matrix"), suggested,
                                   tr("%1 files (*.%2)").arg(ext.toUpper(), ext));
  if (path.isEmpty()) return;
  export_dir_ = QFileInfo(path).absolutePath();
  QString error;
  if (export_to(path, format, &error))
    emit saved(path);
  else
    emit export_failed(error);
}

}  // namespace gpulab::ui
