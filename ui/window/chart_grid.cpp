// The Live tab's chart grid: the columns follow the width it is given.
#include "ui/window/chart_grid.hpp"

#include <QGridLayout>
#include <QResizeEvent>
#include <algorithm>

namespace gpulab::ui {

ChartGrid::ChartGrid(std::vector<QWidget*> charts, QWidget* parent)
    : QWidget(parent), grid_(new QGridLayout(this)), charts_(std::move(charts)) {
  grid_->setContentsMargins(0, 0, 0, 0);
  grid_->setSpacing(4);
  for (QWidget* chart : charts_) chart->setParent(this);
  arrange(kMostColumns);
}

int ChartGrid::columns_for(int width) const {
  const QMargins margins = grid_->contentsMargins();
  const int room = width - margins.left() - margins.right();
  int columns = kMostColumns;
  while (columns > 1 && columns * kReadableWidth + (columns - 1) * grid_->spacing() > room)
    --columns;
  return columns;
}

QSize ChartGrid::minimumSizeHint() const {
  int widest = 0;
  for (QWidget* chart : charts_)  // the least width a layout gives it: its own minimum, or its hint
    widest = std::max(widest, chart->minimumWidth() > 0 ? chart->minimumWidth()
                                                        : chart->minimumSizeHint().width());
  const QMargins margins = grid_->contentsMargins();
  return {widest + margins.left() + margins.right(), grid_->minimumSize().height()};
}

void ChartGrid::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  arrange(columns_for(event->size().width()));
}

void ChartGrid::arrange(int columns) {
  if (columns == columns_) return;
  columns_ = columns;
  for (QWidget* chart : charts_) grid_->removeWidget(chart);
  // Rows and columns left over from a wider grid hold nothing and take no room, but keep
  // their stretch: every row and column stretches alike.
  const int n = int(charts_.size());
  for (int i = 0; i < n; ++i) {
    const int row = i / columns, column = i % columns;
    const int span = i == n - 1 ? columns - column : 1;
    grid_->addWidget(charts_[size_t(i)], row, column, 1, span);
  }
  for (int c = 0; c < kMostColumns; ++c) grid_->setColumnStretch(c, c < columns ? 1 : 0);
  for (int r = 0; r < n; ++r) grid_->setRowStretch(r, 1);
  updateGeometry();  // the minimum height changed: the scroll area around the tab hears it
}

}  // namespace gpulab::ui
