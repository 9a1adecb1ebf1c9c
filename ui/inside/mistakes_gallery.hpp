// The test digits a model gets wrong, each as its picture and "true 4 → 9, p 0.87", all of them
// or only those of one cell of the confusion matrix (a true class predicted as another). A click on
// one says which test image it is.
#pragma once

#include <QWidget>
#include <memory>
#include <optional>
#include <utility>

#include "datasets/mnist.hpp"
#include "engine/inside/confusion.hpp"

class QLabel;
class QListWidget;
class QPushButton;

namespace gpulab::ui {

class MistakesGallery : public QWidget {
  Q_OBJECT

 public:
  // More than this many mistakes are listed as the first kMostShown, and said so.
  static constexpr int kMostShown = 1000;
  explicit MistakesGallery(QWidget* parent = nullptr);

  // The mistakes of `confusion` (kept alive by the caller until the next call) among `images`;
  // null clears the gallery. Shows them all.
  void set(const Confusion* confusion, std::shared_ptr<const data::ImageSet> images);
  using Cell = std::pair<int, int>;  // (true class, predicted class)
  // Only the mistakes of `cell`, or all of them.
  void set_filter(std::optional<Cell> cell);
  std::optional<Cell> filter() const { return filter_; }

  int shown() const;  // digits listed
  QListWidget* list() { return list_; }
  QPushButton* show_all_button() { return show_all_; }
  QString caption() const;
  // The test set index of the mistake listed at `row`.
  int test_index(int row) const;

 signals:
  void filter_changed();
  void mistake_clicked(int test_index);

 private:
  void fill();

  const Confusion* confusion_ = nullptr;
  std::shared_ptr<const data::ImageSet> images_;
  std::optional<Cell> filter_;
  QLabel* caption_;
  QPushButton* show_all_;
  QListWidget* list_;
};

}  // namespace gpulab::ui
