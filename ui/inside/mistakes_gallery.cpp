// Filling the gallery's list with the mistakes' pictures and captions.
#include "ui/inside/mistakes_gallery.hpp"

#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QListWidget>
#include <QPixmap>
#include <QPushButton>
#include <QVBoxLayout>

namespace gpulab::ui {

namespace {
constexpr int kScale = 3;  // 28x28 shown at 84x84, nearest neighbour
}

MistakesGallery::MistakesGallery(QWidget* parent) : QWidget(parent) {
  caption_ = new QLabel(this);
  caption_->setObjectName("mistakes-caption");
  caption_->setWordWrap(true);
  show_all_ = new QPushButton(tr("Show all"), this);
  show_all_->setObjectName("show-all-mistakes");
  show_all_->setEnabled(false);
  list_ = new QListWidget(this);
  list_->setObjectName("mistakes");
  list_->setViewMode(QListView::IconMode);
  list_->setIconSize(QSize(28 * kScale, 28 * kScale));
  list_->setGridSize(QSize(28 * kScale + 60, 28 * kScale + 40));
  list_->setResizeMode(QListView::Adjust);
  list_->setMovement(QListView::Static);
  list_->setUniformItemSizes(true);
  list_->setSelectionMode(QAbstractItemView::NoSelection);
  list_->setMinimumHeight(28 * kScale + 60);
  auto* top = new QHBoxLayout;
  top->addWidget(caption_, 1);
  top->addWidget(show_all_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(list_, 1);
  connect(show_all_, &QPushButton::clicked, this, [this] { set_filter(std::nullopt); });
  connect(list_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
    emit mistake_clicked(item->data(Qt::UserRole).toInt());
  });
  fill();
}

void MistakesGallery::set(const Confusion* confusion,
                          std::shared_ptr<const data::ImageSet> images) {
  confusion_ = confusion;
  images_ = std::move(images);
  filter_.reset();
  fill();
  emit filter_changed();
}

void MistakesGallery::set_filter(std::optional<Cell> cell) {
  if (cell == filter_) return;
  filter_ = cell;
  fill();
  emit filter_changed();
}

int MistakesGallery::shown() const { return list_->count(); }
QString MistakesGallery::caption() const { return caption_->text(); }
int MistakesGallery::test_index(int row) const {
  return list_->item(row)->data(Qt::UserRole).toInt();
}

void MistakesGallery::fill() {
  list_->clear();
  show_all_->setEnabled(filter_.has_value());
  if (!confusion_ || !images_) {
    caption_->setText(tr("The test digits the model gets wrong show here."));
    return;
  }
  int matching = 0;
  const int side = images_->cols;
  for (const Mistake& m : confusion_->mistakes) {
    if (filter_ && (m.truth != filter_->first || m.predicted != filter_->second)) continue;
    if (++matching > kMostShown) continue;  // counted, not listed
    const QImage digit(images_->pixels.data() + size_t(m.index) * images_->image_size(), side,
                       images_->rows, side, QImage::Format_Grayscale8);
    const QPixmap picture = QPixmap::fromImage(digit.scaled(
        side * kScale, images_->rows * kScale, Qt::IgnoreAspectRatio, Qt::FastTransformation));
    auto* item = new QListWidgetItem(QIcon(picture), tr("true %1 → %2, p %3")
                                                         .arg(m.truth)
                                                         .arg(m.predicted)
                                                         .arg(double(m.p_predicted), 0, 'f', 2));
    item->setToolTip(tr("Test image %1: true %2, predicted %3 with p %4 (p of the true class %5)")
                         .arg(m.index)
                         .arg(m.truth)
                         .arg(m.predicted)
                         .arg(double(m.p_predicted), 0, 'f', 3)
                         .arg(double(m.p_truth), 0, 'f', 3) +
                     "\n" + tr("Click to see it inside the network."));
    item->setData(Qt::UserRole, m.index);
    list_->addItem(item);
  }
  QString text = filter_ ? tr("%n test digit(s) of true class %1 predicted as %2", "", matching)
                               .arg(filter_->first)
                               .arg(filter_->second)
                         : tr("%n misclassified test digit(s); click a cell of the matrix to see "
                              "one kind of mistake",
                              "", matching);
  if (matching > kMostShown) text += tr(" (the first %1 shown)").arg(kMostShown);
  caption_->setText(text);
}

}  // namespace gpulab::ui
