// Drawing strokes into the canvas's picture and telling, throttled, that it changed.
#include "ui/inside/digit_canvas.hpp"

#include <QMouseEvent>
#include <QPainter>
#include <QTimer>

namespace gpulab::ui {

namespace {
// About the width of MNIST's pen at 10x: a digit drawn across the canvas ends up with strokes
// two to three pixels wide in the 20x20 box.
constexpr double kPenWidth = 22;
}  // namespace

DigitCanvas::DigitCanvas(QWidget* parent)
    : QWidget(parent), picture_(kSide, kSide, QImage::Format_Grayscale8) {
  setObjectName("digit-canvas");
  setFixedSize(kSide, kSide);
  setCursor(Qt::CrossCursor);
  setToolTip(tr("Draw a digit with the mouse (or a finger on a touch screen)"));
  picture_.fill(Qt::black);
  throttle_ = new QTimer(this);
  throttle_->setSingleShot(true);
  throttle_->setInterval(kThrottleMs);
  connect(throttle_, &QTimer::timeout, this, &DigitCanvas::drawn);
}

void DigitCanvas::clear() {
  picture_.fill(Qt::black);
  empty_ = true;
  drawing_ = false;
  throttle_->stop();
  update();
  emit drawn();
  emit finished();
}

void DigitCanvas::stroke_to(QPoint to) {
  QPainter painter(&picture_);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(QPen(Qt::white, kPenWidth, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  if (to == last_)
    painter.drawPoint(QPointF(to));  // a dot: a round cap alone
  else
    painter.drawLine(last_, to);
  last_ = to;
  empty_ = false;
  update();
  // The model runs at most every kThrottleMs while the pen moves.
  if (!throttle_->isActive()) throttle_->start();
}

void DigitCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  drawing_ = true;
  last_ = event->position().toPoint();
  stroke_to(last_);
}

void DigitCanvas::mouseMoveEvent(QMouseEvent* event) {
  if (drawing_ && (event->buttons() & Qt::LeftButton)) stroke_to(event->position().toPoint());
}

void DigitCanvas::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !drawing_) return;
  drawing_ = false;
  stroke_to(event->position().toPoint());
  throttle_->stop();
  emit drawn();  // the stroke's end is always classified
  emit finished();
}

void DigitCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.drawImage(0, 0, picture_);
  if (empty_) {
    painter.setPen(QColor(150, 150, 150));
    painter.drawText(rect(), Qt::AlignCenter, tr("draw a digit"));
  }
}

}  // namespace gpulab::ui
