// The confusion matrix of the open model on the test set (counts or each row's shares), its
// per-class accuracy, export as PNG/SVG/PDF/CSV, and the gallery of mistakes that a click on a
// cell filters. The test set is classified on a worker thread, with progress and a Cancel button.
#pragma once

#include <QWidget>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "datasets/mnist.hpp"
#include "engine/inside/confusion.hpp"
#include "ui/charts/chart_render.hpp"
#include "ui/inside/background.hpp"

class QCheckBox;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QToolButton;

namespace gpulab::ui {

class DataCache;
class MistakesGallery;

class ConfusionView : public QWidget {
  Q_OBJECT

 public:
  // `data_dir` says where the window looks for MNIST now; `cache` holds what was loaded.
  ConfusionView(std::shared_ptr<DataCache> cache, std::function<std::filesystem::path()> data_dir,
                QWidget* parent = nullptr);
  ~ConfusionView() override;  // stops the count under way and waits for its thread

  // A new model (or none): the matrix is counted again when the view is shown.
  void set_model(std::shared_ptr<const ModelWeights> model);
  // Classifies the test set on a worker thread; progress and the result come back here.
  void compute();
  void cancel();
  bool busy() const { return counting_; }

  const Confusion* confusion() const { return confusion_ ? &*confusion_ : nullptr; }
  void set_normalized(bool rows);
  bool normalized() const;
  // The rectangle of cell (true class, predicted class) in plot() coordinates.
  QRect cell_rect(int truth, int predicted) const;
  QCustomPlot* plot() { return plot_; }
  MistakesGallery* gallery() { return gallery_; }
  QPushButton* compute_button() { return compute_; }
  QPushButton* cancel_button() { return cancel_; }
  QCheckBox* normalized_box() { return normalized_; }
  QString status() const;
  // The matrix as drawn (PNG, SVG, PDF) or its numbers (CSV, counts or shares as shown).
  bool export_to(const QString& path, ExportFormat format, QString* error);

 signals:
  void saved(const QString& path);
  void export_failed(const QString& message);

 protected:
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void finished(std::optional<Confusion> confusion, std::shared_ptr<const data::MnistData> data,
                const QString& problem);
  void draw();
  void clicked(QPoint pos);
  void export_dialog(ExportFormat format);

  std::shared_ptr<DataCache> cache_;
  std::function<std::filesystem::path()> data_dir_;
  std::shared_ptr<const ModelWeights> model_;
  std::optional<Confusion> confusion_;
  std::shared_ptr<const data::MnistData> data_;
  bool counting_ = false;  // a count is under way
  bool redraw_queued_ = false;
  QPushButton* compute_;
  QPushButton* cancel_;
  QCheckBox* normalized_;
  QToolButton* export_;
  QProgressBar* progress_;
  QLabel* status_;
  QCustomPlot* plot_;
  MistakesGallery* gallery_;
  QString export_dir_;
  Background counter_{this};
};

}  // namespace gpulab::ui
