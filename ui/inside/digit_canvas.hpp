// A square canvas a learner draws a digit on with the mouse: thick, round, anti-aliased white
// strokes on black, as MNIST's digits are. A touch screen draws through the mouse events Qt
// makes of touches the widget leaves unhandled (Qt::AA_SynthesizeMouseForUnhandledTouchEvents,
// on by default), so one path serves both.
#pragma once

#include <QImage>
#include <QPoint>
#include <QWidget>

class QTimer;

namespace gpulab::ui {

class DigitCanvas : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kSide = 280;  // pixels: MNIST's 28 at 10x
  explicit DigitCanvas(QWidget* parent = nullptr);

  const QImage& picture() const { return picture_; }  // (kSide, kSide) grayscale
  bool is_empty() const { return empty_; }
  QSize sizeHint() const override { return {kSide, kSide}; }

 public slots:
  void clear();

 signals:
  // The picture changed: while drawing at most every kThrottleMs, and at each stroke's end.
  void drawn();
  // The picture is as the learner left it: a stroke ended, or the canvas was cleared. What is too
  // slow to follow the pen (every layer's feature maps) waits for this.
  void finished();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

 private:
  static constexpr int kThrottleMs = 40;
  void stroke_to(QPoint to);

  QImage picture_;
  QPoint last_;
  bool drawing_ = false;
  bool empty_ = true;
  QTimer* throttle_;
};

}  // namespace gpulab::ui
