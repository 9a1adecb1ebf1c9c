// The layer table: add, remove and reorder layers and edit their settings, with each layer's
// output shape and parameter count shown as you edit, and what is wrong explained on its row.
#pragma once

#include <QString>
#include <QWidget>

#include "engine/model/model_config.hpp"

class QLabel;
class QTableWidget;

namespace gpulab::ui {

class LayerEditor : public QWidget {
  Q_OBJECT

 public:
  explicit LayerEditor(QWidget* parent = nullptr);

  void set_model(const ModelConfig& model);  // rebuilds the rows
  ModelConfig model() const;                 // the rows as a config
  // Empty when every layer fits; else the first problem, naming the layer.
  QString problem() const { return problem_; }
  int64_t parameter_count() const { return parameters_; }

  void insert_layer(int row, LayerType type);
  void remove_layer(int row);
  void move_layer(int row, int delta);
  // Sets one value of a row (as typing into it would): column names are "out", "kernel",
  // "stride", "padding", "p".
  void set_value(int row, const QString& column, double value);
  QTableWidget* table() { return table_; }

 signals:
  void changed();
  void message(const QString& text);  // a value typed out of range and clamped

 private:
  void add_row(int row, const LayerSpec& spec);
  void apply_type(int row);
  void recheck();

  QTableWidget* table_;
  QLabel* status_;
  ModelConfig base_;  // name, input and classes; the rows hold the layers
  QString problem_;
  int64_t parameters_ = 0;
  bool building_ = false;
};

}  // namespace gpulab::ui
