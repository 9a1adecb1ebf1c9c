// A bar floating over the bottom of a widget.
#include "ui/widgets/floating_bar.hpp"

#include <QEvent>
#include <QWidget>
#include <algorithm>

namespace gpulab::ui {

namespace {
constexpr int kMargin = 6;
}

FloatingBar::FloatingBar(QWidget* bar, QWidget* area, QWidget* reserve)
    : QObject(bar), bar_(bar), area_(area), reserve_(reserve) {
  bar_->setParent(area_);
  bar_->setAutoFillBackground(true);  // the charts under it must not show through its text
  area_->installEventFilter(this);
  bar_->installEventFilter(this);
  place();
}

bool FloatingBar::eventFilter(QObject* watched, QEvent* event) {
  const QEvent::Type type = event->type();
  if ((watched == area_ && type == QEvent::Resize) ||
      (watched == bar_ && (type == QEvent::Show || type == QEvent::LayoutRequest ||
                           type == QEvent::FontChange || type == QEvent::StyleChange)))
    place();
  if (watched == bar_ && type == QEvent::Hide && reserve_) reserve_->setFixedHeight(0);
  return QObject::eventFilter(watched, event);
}

void FloatingBar::place() {
  const int width = std::max(1, area_->width() - 2 * kMargin);
  int height = bar_->hasHeightForWidth() ? bar_->heightForWidth(width) : bar_->sizeHint().height();
  height = std::clamp(std::max(height, bar_->minimumSizeHint().height()), 1,
                      std::max(1, area_->height() - 2 * kMargin));
  bar_->setGeometry(kMargin, area_->height() - height - kMargin, width, height);
  bar_->raise();
  if (reserve_) reserve_->setFixedHeight(bar_->isVisibleTo(area_) ? height + 2 * kMargin : 0);
}

}  // namespace gpulab::ui
