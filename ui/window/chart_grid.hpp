// The Live tab's grid of charts: three columns where there is room, two or one in a narrow
// column (beside the setup on a 1024x768 screen), so that no chart is squeezed below a readable
// width; the charts keep their height and the window scrolls down instead of sideways.
#pragma once

#include <QWidget>
#include <vector>

class QGridLayout;

namespace gpulab::ui {

class ChartGrid : public QWidget {
  Q_OBJECT

 public:
  // A chart at least this wide shows its title, ticks and axis label whole: below it the grid
  // takes a column away.
  static constexpr int kReadableWidth = 250;
  static constexpr int kMostColumns = 3;

  // The charts in reading order; the last spans what is left of its row.
  explicit ChartGrid(std::vector<QWidget*> charts, QWidget* parent = nullptr);
  int columns() const { return columns_; }
  // The columns that fit `width` pixels, each chart kReadableWidth wide (one at least).
  int columns_for(int width) const;
  // As narrow as one column, so the scroll area around it lets it take fewer; as high as the
  // charts need in the columns they are in now.
  QSize minimumSizeHint() const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void arrange(int columns);

  QGridLayout* grid_;
  std::vector<QWidget*> charts_;
  int columns_ = 0;
};

}  // namespace gpulab::ui
