// The drawing through mnist_digit() and the model's CPU network, what the panel shows of it, and
// one inference timed on the GPU.
#include "ui/inside/digit_panel.hpp"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QResizeEvent>
#include <QVBoxLayout>
#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "engine/devices/matmul_bench.hpp"
#include "engine/inside/digit_image.hpp"
#include "engine/inside/inference_timing.hpp"
#include "ui/inside/digit_canvas.hpp"

namespace gpulab::ui {

// Ten bars, one per class, the predicted one highlighted, each with its probability.
class ProbabilityBars : public QWidget {
 public:
  explicit ProbabilityBars(QWidget* parent) : QWidget(parent) {
    setObjectName("probability-bars");
    setMinimumSize(220, 160);
  }
  void set(std::vector<float> probabilities, int predicted) {
    probabilities_ = std::move(probabilities);
    predicted_ = predicted;
    update();
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const int classes = 10;
    const QFontMetrics metrics(font());
    const int label_h = metrics.height() + 4;
    const double slot = double(width()) / classes;
    const double top = label_h, bottom = height() - label_h;
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawLine(QPointF(0, bottom), QPointF(width(), bottom));
    for (int c = 0; c < classes; ++c) {
      const QRectF column(c * slot, 0, slot, height());
      painter.setPen(palette().color(QPalette::WindowText));
      painter.drawText(QRectF(column.left(), bottom, slot, label_h), Qt::AlignCenter,
                       QString::number(c));
      if (size_t(c) >= probabilities_.size()) continue;
      const double p = probabilities_[size_t(c)];
      const double h = p * (bottom - top);
      const QRectF bar(column.left() + slot * 0.15, bottom - h, slot * 0.7, h);
      painter.fillRect(bar, c == predicted_ ? QColor(31, 119, 180) : QColor(160, 174, 192));
      painter.drawText(QRectF(column.left(), bottom - h - label_h, slot, label_h), Qt::AlignCenter,
                       QString::number(p, 'f', 2));
    }
  }

 private:
  std::vector<float> probabilities_;
  int predicted_ = -1;
};

DigitPanel::DigitPanel(QWidget* parent) : QWidget(parent) {
  canvas_ = new DigitCanvas(this);
  clear_ = new QPushButton(tr("Clear"), this);
  clear_->setObjectName("clear-canvas");
  seen_ = new QLabel(this);
  seen_->setObjectName("model-input");
  seen_->setFixedSize(kDigitSide * 5, kDigitSide * 5);
  seen_->setStyleSheet("background: black");
  seen_->setToolTip(
      tr("The 28x28 image the model sees: the ink fit into 20x20 keeping its "
         "aspect ratio, centred by its centre of mass, as MNIST's digits were made"));
  digit_ = new QLabel(this);
  digit_->setObjectName("predicted-digit");
  // A style sheet, not setFont: presenter mode gives every widget its parent's font back.
  digit_->setStyleSheet("QLabel { font-size: 60pt; font-weight: bold; }");
  digit_->setAlignment(Qt::AlignCenter);
  digit_->setMinimumWidth(120);
  status_ = new QLabel(this);
  status_->setObjectName("digit-status");
  status_->setWordWrap(true);
  cpu_time_ = new QLabel(this);
  cpu_time_->setObjectName("cpu-time");
  cpu_time_->setWordWrap(true);
  gpu_time_ = new QLabel(this);
  gpu_time_->setObjectName("gpu-time");
  gpu_time_->setWordWrap(true);
  gpu_time_->hide();  // until set_gpu says where the window has one, or that it has none
  bars_ = new ProbabilityBars(this);

  auto* canvas_column = new QVBoxLayout;
  canvas_column->addWidget(canvas_);
  canvas_column->addWidget(clear_, 0, Qt::AlignLeft);
  canvas_column->addStretch();
  auto* seen_column = new QVBoxLayout;
  seen_column->addWidget(new QLabel(tr("What the model sees (28x28):"), this));
  seen_column->addWidget(seen_);
  seen_column->addWidget(digit_);
  seen_column->addStretch();
  // The timings above the bars, which give up the height they take: under the bars they were
  // below the fold of a 1280x720 screen, and under the canvas they made the panel taller than
  // the canvas, so the bars' digits were.
  for (QLabel* timing : {cpu_time_, gpu_time_})  // wrapped to the bars' width, never widening it
    timing->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  auto* result_column = new QVBoxLayout;
  result_column->addWidget(status_);
  result_column->addWidget(cpu_time_);
  result_column->addWidget(gpu_time_);
  result_column->addWidget(bars_, 1);
  drawing_ = new QHBoxLayout;
  drawing_->addLayout(canvas_column);
  drawing_->addLayout(seen_column);
  results_ = result_column;
  layout_ = new QBoxLayout(QBoxLayout::LeftToRight);
  layout_->setContentsMargins(0, 0, 0, 0);
  layout_->addLayout(drawing_);
  layout_->addLayout(results_, 1);
  // As tall as the drawing and the results need, at the top: the section is as tall as the
  // window's tallest tab, and the bars stretched to it put their digits below the fold.
  auto* outer = new QVBoxLayout(this);
  outer->addLayout(layout_);
  outer->addStretch(1);

  connect(canvas_, &DigitCanvas::drawn, this, &DigitPanel::classify);
  connect(canvas_, &DigitCanvas::finished, this, &DigitPanel::time_cpu);
  connect(clear_, &QPushButton::clicked, canvas_, &DigitCanvas::clear);
  classify();
}

DigitPanel::~DigitPanel() = default;

QWidget* DigitPanel::probability_bars() { return bars_; }

int DigitPanel::width_beside() const {
  const QMargins margins = layout()->contentsMargins();
  return drawing_->minimumSize().width() + layout_->spacing() + results_->minimumSize().width() +
         margins.left() + margins.right();
}

QSize DigitPanel::minimumSizeHint() const {
  // As narrow as the drawing alone, so the section's scroll area lets the results go under it.
  const QMargins margins = layout()->contentsMargins();
  const int stacked = std::max(drawing_->minimumSize().width(), results_->minimumSize().width()) +
                      margins.left() + margins.right();
  return {stacked, layout()->minimumSize().height()};
}

void DigitPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  const auto direction =
      event->size().width() >= width_beside() ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom;
  if (layout_->direction() == direction) return;
  layout_->setDirection(direction);
  updateGeometry();  // the height it needs changed
}

void DigitPanel::set_model(std::shared_ptr<const ModelWeights> model) {
  classifier_.reset();  // it holds a reference to the model it was built for
  model_ = std::move(model);
  if (model_) classifier_ = std::make_unique<Classifier>(*model_, 1);
  classify();
  time_cpu();
  time_gpu();
}

void DigitPanel::set_gpu(const QString& device, const QString& no_gpu_reason) {
  gpu_ = device;
  no_gpu_reason_ = no_gpu_reason;
  time_gpu();
}

// The timing API's median of repeated inferences of one image, from the image in host memory to
// the probabilities back in it: a few hundred milliseconds of work, so on a worker thread.
void DigitPanel::time_gpu() {
  gpu_timing_.stop();
  if (gpu_.isEmpty()) {
    gpu_time_->setText(tr("One inference on a GPU: no GPU on this machine, %1.")
                           .arg(no_gpu_reason_.isEmpty() ? tr("none found") : no_gpu_reason_));
    gpu_time_->setVisible(!no_gpu_reason_.isEmpty());
    return;
  }
  gpu_time_->show();
  if (!model_) {
    gpu_time_->setText(tr("One inference on %1: open a model to time it.").arg(gpu_));
    return;
  }
  gpu_time_->setText(tr("One inference on %1: timing…").arg(gpu_));
  gpu_timing_.run([this, model = model_, device = gpu_](const Background::Job& job) {
    QString text;
    try {
      const InferenceTiming t = time_inference(*model, device.toStdString(), {1}).front();
      text = tr("One inference on %1: %2 ms (median of repeats, with the copies to and from the "
                "GPU)")
                 .arg(device)
                 .arg(t.batch_ms, 0, 'f', 3);
    } catch (const std::exception& e) {
      text = tr("One inference on %1 could not be timed: %2").arg(device, e.what());
    }
    job.post([this, text] { gpu_time_->setText(text); });
  });
}

QString DigitPanel::status() const { return status_->text(); }
QString DigitPanel::cpu_time_text() const { return cpu_time_->text(); }

void DigitPanel::show_none(const QString& why) {
  predicted_ = -1;
  probabilities_.clear();
  digit_->clear();
  status_->setText(why);
  bars_->set({}, -1);
}

void DigitPanel::classify() {
  seen_digit_.clear();
  if (canvas_->is_empty()) {
    seen_->clear();
    return show_none(model_ ? tr("Draw a digit.")
                            : tr("Draw a digit; open a model to classify it."));
  }
  const QImage& picture = canvas_->picture();
  std::vector<uint8_t> pixels(size_t(picture.width()) * picture.height());
  for (int y = 0; y < picture.height(); ++y)
    std::copy_n(picture.constScanLine(y), picture.width(),
                pixels.begin() + size_t(y) * picture.width());
  std::vector<uint8_t> digit;
  try {
    digit = mnist_digit(gray_image(picture.width(), picture.height(), pixels));
  } catch (const std::invalid_argument&) {  // ink too faint to be a digit
    seen_->clear();
    return show_none(tr("Draw a digit: the strokes are too faint to read."));
  }
  const QImage seen(digit.data(), kDigitSide, kDigitSide, kDigitSide, QImage::Format_Grayscale8);
  seen_->setPixmap(QPixmap::fromImage(
      seen.scaled(seen_->size(), Qt::IgnoreAspectRatio, Qt::FastTransformation)));
  seen_digit_ = digit;
  if (!model_) return show_none(tr("Open a model (File → Open weights…) to classify the digit."));
  probabilities_ = classifier_->probabilities(digit, 1);
  predicted_ = predicted_class(probabilities_.data(), int(probabilities_.size()));
  digit_->setText(QString::number(predicted_));
  status_->setText(tr("The model says %1 (p %2).")
                       .arg(predicted_)
                       .arg(double(probabilities_[size_t(predicted_)]), 0, 'f', 2));
  bars_->set(probabilities_, predicted_);
}

// Timed once a stroke ends, not at each move of the pen, which would repeat the passes every
// kThrottleMs. The first passes after a pause pay for cold caches and sleeping threads: the time
// shown is the median of at least 5 passes after a warm-up (time_repeats, as the Inference speed
// section and bench inference time), up to 15 within a few milliseconds.
void DigitPanel::time_cpu() {
  if (!classifier_ || seen_digit_.empty()) return cpu_time_->clear();
  using Clock = std::chrono::steady_clock;
  const RepeatedTiming timing = time_repeats(
      [&] {
        const auto start = Clock::now();
        classifier_->probabilities(seen_digit_, 1);
        return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      },
      5, 15, 5.0);
  cpu_time_->setText(tr("One inference on the CPU: %1 ms (the median of %n forward passes of "
                        "the drawing at its last stroke's end, after a warm-up)",
                        "", timing.passes)
                         .arg(timing.median_ms, 0, 'f', 3));
}

}  // namespace gpulab::ui
