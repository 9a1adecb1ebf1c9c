// The layer table.
#include "ui/setup/layer_editor.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QSpinBox>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/setup/limited_spin_box.hpp"

namespace gpulab::ui {
namespace {

enum LayerColumn { kType, kOut, kKernel, kStride, kPadding, kP, kShape, kParams, kLayerColumns };
const char* const kColumnNames[] = {"type", "out", "kernel", "stride", "padding", "p"};
const LayerType kTypes[] = {LayerType::Conv2d,  LayerType::MaxPool2d, LayerType::ReLU,
                            LayerType::Tanh,    LayerType::Dropout,   LayerType::Flatten,
                            LayerType::Linear};

bool uses(LayerType type, int column) {
  switch (column) {
    case kOut: return type == LayerType::Conv2d || type == LayerType::Linear;
    case kKernel:
    case kStride: return type == LayerType::Conv2d || type == LayerType::MaxPool2d;
    case kPadding: return type == LayerType::Conv2d;
    case kP: return type == LayerType::Dropout;
    default: return true;
  }
}

// The editor's own form (9 for a flat 9x1x1), called as ui::shape_text: the engine's
// gpulab::shape_text ("9x1x1") is found too by argument-dependent lookup.
QString shape_text(const ActivationShape& s) {
  if (s.height == 1 && s.width == 1) return QString::number(s.channels);
  return QString("%1×%2×%3").arg(s.channels).arg(s.height).arg(s.width);
}

}  // namespace

LayerEditor::LayerEditor(QWidget* parent) : QWidget(parent) {
  table_ = new QTableWidget(0, kLayerColumns, this);
  table_->setObjectName("layers");
  table_->setHorizontalHeaderLabels({tr("Layer"), tr("Out"), tr("Kernel"), tr("Stride"),
                                     tr("Padding"), tr("Drop p"), tr("Output"), tr("Params")});
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  // What each layer makes (shape, parameters) next to its type, as a model summary reads: in the
  // setup column's width the settings may scroll, the results may not.
  table_->horizontalHeader()->moveSection(kShape, kType + 1);
  table_->horizontalHeader()->moveSection(kParams, kType + 2);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 10);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setMinimumHeight(220);
  table_->setToolTip(tr("Out: channels of a conv2d or features of a linear layer"));

  auto* add = new QToolButton(this);
  add->setText(tr("Add layer"));
  add->setPopupMode(QToolButton::InstantPopup);
  auto* menu = new QMenu(add);
  for (LayerType type : kTypes)
    menu->addAction(layer_type_name(type), this, [this, type] {
      const int row = table_->currentRow();
      insert_layer(row < 0 ? table_->rowCount() : row + 1, type);
    });
  add->setMenu(menu);
  auto button = [this](const QString& text, const QString& tip, auto action) {
    auto* b = new QToolButton(this);
    b->setText(text);
    b->setToolTip(tip);
    connect(b, &QToolButton::clicked, this, action);
    return b;
  };
  auto* remove = button(tr("Remove"), tr("Remove the selected layer"),
                        [this] { remove_layer(table_->currentRow()); });
  auto* up = button(tr("Up"), tr("Move the selected layer up"),
                    [this] { move_layer(table_->currentRow(), -1); });
  auto* down = button(tr("Down"), tr("Move the selected layer down"),
                      [this] { move_layer(table_->currentRow(), +1); });

  status_ = new QLabel(this);
  status_->setObjectName("layer-status");
  status_->setWordWrap(true);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(add);
  buttons->addWidget(remove);
  buttons->addWidget(up);
  buttons->addWidget(down);
  buttons->addStretch();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(table_, 1);
  layout->addLayout(buttons);
  layout->addWidget(status_);
}

void LayerEditor::set_model(const ModelConfig& model) {
  base_ = model;
  building_ = true;
  table_->setRowCount(0);
  for (const LayerSpec& spec : model.layers) add_row(table_->rowCount(), spec);
  building_ = false;
  recheck();
}

void LayerEditor::add_row(int row, const LayerSpec& spec) {
  table_->insertRow(row);
  auto* type = new QComboBox;
  for (LayerType t : kTypes) type->addItem(layer_type_name(t), int(t));
  type->setCurrentIndex(type->findData(int(spec.type)));
  table_->setCellWidget(row, kType, type);
  // A clamped value is reported with the row it is in when it happens (rows move).
  auto report_for = [this](QWidget* box, const QString& column) {
    return [this, box, column](const QString&, const QString& typed, const QString& used,
                               ClampWhy why) {
      for (int r = 0; r < table_->rowCount(); ++r)
        for (int c = kOut; c <= kP; ++c)
          if (table_->cellWidget(r, c) == box)
            emit message(
                clamp_message(tr("Layer %1, %2").arg(r + 1).arg(column), typed, used, why));
    };
  };
  auto spin = [&](int column, int value, int minimum, int maximum) {
    auto* box = new LimitedSpinBox(QString(), {});
    box->set_report(report_for(box, table_->horizontalHeaderItem(column)->text()));
    box->setRange(minimum, maximum);
    box->setValue(value);
    box->setProperty("column", kColumnNames[column]);
    table_->setCellWidget(row, column, box);
    connect(box, &QSpinBox::valueChanged, this, &LayerEditor::recheck);
  };
  spin(kOut, spec.type == LayerType::Linear ? spec.out_features : spec.out_channels, 1, 65536);
  spin(kKernel, std::max(1, spec.kernel), 1, 64);
  spin(kStride, std::max(1, spec.stride), 1, 64);
  spin(kPadding, spec.padding, 0, 64);
  auto* p = new LimitedDoubleSpinBox(QString(), {});
  p->set_report(report_for(p, table_->horizontalHeaderItem(kP)->text()));
  p->setRange(0.0, 0.95);
  p->setSingleStep(0.05);
  p->setDecimals(2);
  p->setValue(spec.p);
  table_->setCellWidget(row, kP, p);
  connect(p, &QDoubleSpinBox::valueChanged, this, &LayerEditor::recheck);
  for (int c : {kShape, kParams}) {
    auto* item = new QTableWidgetItem;
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    table_->setItem(row, c, item);
  }
  connect(type, &QComboBox::currentIndexChanged, this, [this, type] {
    for (int r = 0; r < table_->rowCount(); ++r)
      if (table_->cellWidget(r, kType) == type) apply_type(r);
    recheck();
  });
  apply_type(row);
}

// Enables the settings the row's type has; gives sensible values to those that were unset.
void LayerEditor::apply_type(int row) {
  const auto type = LayerType(static_cast<QComboBox*>(table_->cellWidget(row, kType))->currentData().toInt());
  for (int c = kOut; c <= kP; ++c) table_->cellWidget(row, c)->setEnabled(uses(type, c));
  if (building_) return;
  auto* out = static_cast<QSpinBox*>(table_->cellWidget(row, kOut));
  auto* kernel = static_cast<QSpinBox*>(table_->cellWidget(row, kKernel));
  auto* stride = static_cast<QSpinBox*>(table_->cellWidget(row, kStride));
  QSignalBlocker a(out), b(kernel), c(stride);
  if (type == LayerType::Conv2d) {
    if (out->value() <= 1) out->setValue(16);
    if (kernel->value() <= 1) kernel->setValue(3);
  } else if (type == LayerType::MaxPool2d) {
    kernel->setValue(2);
    stride->setValue(2);
  } else if (type == LayerType::Linear && out->value() <= 1) {
    out->setValue(10);
  }
}

ModelConfig LayerEditor::model() const {
  ModelConfig model = base_;
  model.layers.clear();
  for (int r = 0; r < table_->rowCount(); ++r) {
    LayerSpec s;
    s.type = LayerType(static_cast<QComboBox*>(table_->cellWidget(r, kType))->currentData().toInt());
    const int out = static_cast<QSpinBox*>(table_->cellWidget(r, kOut))->value();
    if (s.type == LayerType::Conv2d) s.out_channels = out;
    if (s.type == LayerType::Linear) s.out_features = out;
    if (uses(s.type, kKernel)) {
      s.kernel = static_cast<QSpinBox*>(table_->cellWidget(r, kKernel))->value();
      s.stride = static_cast<QSpinBox*>(table_->cellWidget(r, kStride))->value();
    }
    if (s.type == LayerType::Conv2d)
      s.padding = static_cast<QSpinBox*>(table_->cellWidget(r, kPadding))->value();
    s.p = float(static_cast<QDoubleSpinBox*>(table_->cellWidget(r, kP))->value());
    model.layers.push_back(s);
  }
  return model;
}

void LayerEditor::recheck() {
  if (building_) return;
  const ModelConfig config = model();
  const std::vector<LayerCheck> checks = check_layers(config);
  problem_.clear();
  parameters_ = 0;
  const QLocale locale;
  bool broken = false;  // a layer above failed: what follows has no input shape to speak of
  for (int r = 0; r < table_->rowCount() && r < int(checks.size()); ++r) {
    const LayerCheck& check = checks[r];
    parameters_ += check.info.parameter_count;
    const QString problem = QString::fromStdString(check.problem);
    const bool after_error = broken;
    broken |= !problem.isEmpty();
    const QString dash = QStringLiteral("–");
    table_->item(r, kShape)->setText(after_error         ? dash
                                     : problem.isEmpty() ? ui::shape_text(check.info.output)
                                                         : "?");
    table_->item(r, kParams)
        ->setText(after_error || !problem.isEmpty() ? dash
                  : check.info.parameter_count
                      ? locale.toString(qlonglong(check.info.parameter_count))
                      : "");
    for (int c : {kShape, kParams})
      table_->item(r, c)->setToolTip(after_error ? tr("Fix the layer above first") : problem);
    const QColor background = problem.isEmpty() ? QColor() : QColor(0xFD, 0xE2, 0xE2);
    for (int c : {kShape, kParams})
      table_->item(r, c)->setBackground(background.isValid() ? QBrush(background) : QBrush());
    table_->cellWidget(r, kType)->setToolTip(problem);
    table_->cellWidget(r, kType)->setStyleSheet(problem.isEmpty() ? "" : "background: #fde2e2");
    if (!problem.isEmpty() && problem_.isEmpty())
      problem_ = tr("Layer %1 (%2): %3").arg(r + 1).arg(QString::fromStdString(check.info.spec.name), problem);
  }
  if (config.layers.empty()) problem_ = tr("The model has no layers: add some.");
  if (problem_.isEmpty()) {
    status_->setStyleSheet("color: #1f6f2a");
    status_->setText(tr("%n layer(s), %1 parameters, %2 class scores out.", "", int(config.layers.size()))
                         .arg(locale.toString(qlonglong(parameters_)))
                         .arg(config.classes));
  } else {
    status_->setStyleSheet("color: #b00020; font-weight: bold");
    status_->setText(problem_);
  }
  emit changed();
}

void LayerEditor::insert_layer(int row, LayerType type) {
  row = std::clamp(row, 0, table_->rowCount());
  LayerSpec spec;
  spec.type = type;
  add_row(row, spec);
  apply_type(row);
  table_->selectRow(row);
  recheck();
}

void LayerEditor::remove_layer(int row) {
  if (row < 0 || row >= table_->rowCount()) return;
  table_->removeRow(row);
  recheck();
}

void LayerEditor::move_layer(int row, int delta) {
  const int to = row + delta;
  if (row < 0 || row >= table_->rowCount() || to < 0 || to >= table_->rowCount()) return;
  ModelConfig config = model();
  std::swap(config.layers[row], config.layers[to]);
  set_model(config);
  table_->selectRow(to);
}

void LayerEditor::set_value(int row, const QString& column, double value) {
  for (int c = kOut; c <= kP; ++c) {
    if (column != kColumnNames[c]) continue;
    QWidget* cell = table_->cellWidget(row, c);
    if (auto* spin = qobject_cast<QSpinBox*>(cell)) spin->setValue(int(value));
    if (auto* spin = qobject_cast<QDoubleSpinBox*>(cell)) spin->setValue(value);
  }
}

}  // namespace gpulab::ui
