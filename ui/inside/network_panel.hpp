// The Network section of the Inside tab: the model's layers and its filters, every layer's feature
// maps for one image (the drawn digit or a chosen test image, said above them), and a clicked
// value of a map taken apart into the sum of products that made it.
#pragma once

#include <QWidget>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "datasets/mnist.hpp"
#include "engine/inside/model_weights.hpp"
#include "ui/inside/background.hpp"

class QComboBox;
class QLabel;
class QSpinBox;
class QTreeWidget;

namespace gpulab::ui {

class DataCache;
class ExplainView;
class FeatureMapsView;
class FiltersView;

class NetworkPanel : public QWidget {
  Q_OBJECT

 public:
  // `cache` and `data_dir` give the test set, read on a worker thread when a test image is chosen.
  NetworkPanel(std::shared_ptr<DataCache> cache, std::function<std::filesystem::path()> data_dir,
               QWidget* parent = nullptr);
  ~NetworkPanel() override;

  void set_model(std::shared_ptr<const ModelWeights> model);
  // The drawn digit as the model sees it (784 bytes; empty: none), given at each stroke's end.
  void set_drawn_digit(std::vector<uint8_t> digit);
  void show_drawn();                // the maps are of the drawn digit
  void show_test_image(int index);  // the maps are of test image `index` (the test set is read)

  bool showing_drawn() const { return drawn_shown_; }
  int test_image() const;      // the test image chosen, shown when !showing_drawn()
  QString image_text() const;  // which image the maps are for
  bool reading_test_set() const { return reading_; }

  QComboBox* source_combo() { return source_; }
  QSpinBox* test_image_box() { return test_index_; }
  QTreeWidget* layers() { return layers_; }
  FiltersView* filters() { return filters_; }
  FeatureMapsView* maps() { return maps_; }
  ExplainView* explain() { return explain_; }

 private:
  void show_image(std::vector<uint8_t> digit, const QString& text);
  void show_chosen();  // the image the source combo and the spin box say
  void read_test_set();
  void fill_layers();

  std::shared_ptr<DataCache> cache_;
  std::function<std::filesystem::path()> data_dir_;
  std::shared_ptr<const ModelWeights> model_;
  std::vector<uint8_t> drawn_;
  std::shared_ptr<const data::MnistData> data_;  // the test set, once read
  bool drawn_shown_ = true;
  bool reading_ = false;
  Background reader_{this};
  QComboBox* source_;
  QSpinBox* test_index_;
  QLabel* image_label_;
  QTreeWidget* layers_;
  FiltersView* filters_;
  FeatureMapsView* maps_;
  ExplainView* explain_;
};

}  // namespace gpulab::ui
