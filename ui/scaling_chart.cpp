// The scaling chart.
#include "ui/scaling_chart.hpp"

#include <cmath>
#include <fstream>

#include <QFileDialog>
#include <QStringList>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

namespace gpulab::ui {
namespace {

const QColor kMeasured(0x4E, 0x79, 0xA7), kIdeal(0x79, 0x70, 0x6E), kPredicted(0xF2, 0x8E, 0x2B);

QCPGraph* add_graph(QCPAxisRect* rect, const QString& name, const QColor& color, Qt::PenStyle style,
                    bool markers) {
  auto* graph = new QCPGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
  graph->setName(name);
  graph->setPen(QPen(color, markers ? 2.0 : 1.5, style));
  if (markers) graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 8));
  return graph;
}

}  // namespace

ScalingChart::ScalingChart(QWidget* parent) : QWidget(parent) {
  setObjectName("scaling-chart");
  title_ = new QLabel(this);
  title_->setObjectName("scaling-title");
  model_ = new QLabel(this);
  model_->setObjectName("scaling-model");
  model_->setWordWrap(true);
  model_->setStyleSheet("color: palette(dark)");
  auto* save = new QToolButton(this);
  save->setText(tr("Export"));
  save->setPopupMode(QToolButton::InstantPopup);
  auto* menu = new QMenu(save);
  for (ExportFormat format :
       {ExportFormat::Png, ExportFormat::Svg, ExportFormat::Pdf, ExportFormat::Csv})
    menu->addAction(export_format_name(format).toUpper(), this,
                    [this, format] { export_dialog(format); });
  save->setMenu(menu);
  plot_ = new QCustomPlot(this);
  plot_->setMinimumSize(280, 260);
  auto* header = new QHBoxLayout;
  header->addWidget(title_, 1);
  header->addWidget(save);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(header);
  layout->addWidget(plot_, 1);
  layout->addWidget(model_);
  setVisible(false);
}

void ScalingChart::set_runs(const std::vector<const RunData*>& runs,
                            std::vector<std::string> names) {
  runs_ = runs;
  names_ = std::move(names);
  refresh();
}

void ScalingChart::refresh() {
  auto studies = scaling_studies(runs_);
  if (studies.empty())
    study_.reset();
  else
    study_ = std::move(studies.front());
  setVisible(study_.has_value());
  if (study_) draw();
}

QString ScalingChart::model_text() const {
  if (!study_) return {};
  const ScalingModel& m = study_->model;
  // H(R), the hardware at R replicas over the base's, as the records give it.
  const QString unit = study_->label.find("cuda") != std::string::npos ? tr("GPUs") : tr("cores");
  const QString base = QString::number(m.base_replicas);
  QString ideal, shard;
  switch (m.hardware_growth()) {
    case ScalingModel::HardwareGrowth::Shared:
      ideal = tr("the %1-replica images/s: every run has the same %2 %3, which more replicas "
                 "only split")
                  .arg(base)
                  .arg(m.hardware.front().second)
                  .arg(unit);
      shard = tr("%1 ms").arg(m.shard_ms, 0, 'f', 2);
      break;
    case ScalingModel::HardwareGrowth::Unknown:
    case ScalingModel::HardwareGrowth::PerReplica:
      ideal = tr("R / %1 × the %1-replica images/s, each replica with its own %2%3")
                  .arg(base, unit,
                       m.hardware_growth() == ScalingModel::HardwareGrowth::Unknown
                           ? tr(" (taken: the records do not say)")
                           : QString());
      shard = tr("%1 ms × %2 / R").arg(m.shard_ms, 0, 'f', 2).arg(base);
      break;
    case ScalingModel::HardwareGrowth::Measured: {
      QStringList at, ratio;
      for (const auto& [replicas, units] : m.hardware) {
        at << QString::number(replicas);
        ratio << QString::number(m.hardware_ratio(replicas), 'g', 3);
      }
      ideal = tr("H × the %1-replica images/s, H = the %2 of a run over the %1-replica run's: %3 "
                 "at R = %4")
                  .arg(base, unit, ratio.join(", "), at.join(", "));
      shard = tr("%1 ms / H").arg(m.shard_ms, 0, 'f', 2);
      break;
    }
  }
  QString text = tr("Ideal: %1. Predicted step: %2 (shards) + %3 ms (optimizer, loop) + "
                    "2 (R − 1) / R × %4 ms (all-reduce)")
                     .arg(ideal, shard)
                     .arg(m.fixed_ms, 0, 'f', 2)
                     .arg(m.transfer_ms, 0, 'f', 3);
  if (std::isfinite(m.bandwidth_gb_per_s()))
    text += tr(": %1 GB/s for %2 MB of gradients")
                .arg(m.bandwidth_gb_per_s(), 0, 'f', 2)
                .arg(m.gradient_bytes / 1e6, 0, 'f', 2);
  return text + ".";
}

void ScalingChart::draw() {
  const ScalingStudy& study = *study_;
  const ScalingModel& m = study.model;
  title_->setText(
      tr("<b>Scaling</b>: %1").arg(QString::fromStdString(study.label).toHtmlEscaped()));
  model_->setText(model_text());
  plot_->clearPlottables();
  plot_->plotLayout()->clear();
  auto* speed = new QCPAxisRect(plot_);
  auto* efficiency = new QCPAxisRect(plot_);
  plot_->plotLayout()->addElement(0, 0, speed);
  plot_->plotLayout()->addElement(1, 0, efficiency);
  auto* group = new QCPMarginGroup(plot_);
  speed->setMarginGroup(QCP::msLeft | QCP::msRight, group);
  efficiency->setMarginGroup(QCP::msLeft | QCP::msRight, group);
  connect(speed->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged),
          efficiency->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::setRange));
  speed->axis(QCPAxis::atLeft)->setLabel(tr("images/s"));
  efficiency->axis(QCPAxis::atLeft)->setLabel(tr("scaling efficiency (%)"));
  efficiency->axis(QCPAxis::atBottom)->setLabel(tr("replicas"));
  auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
  ticker->setTickStep(1);
  ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  for (QCPAxisRect* rect : {speed, efficiency}) rect->axis(QCPAxis::atBottom)->setTicker(ticker);

  const int max_replicas = study.points.back().replicas;
  const int last = std::max(max_replicas * 2, max_replicas + 2);  // the prediction looks ahead
  QVector<double> r, ideal, ideal_eff, predicted, predicted_eff;
  for (int replicas = m.base_replicas; replicas <= last; ++replicas) {
    r << replicas;
    ideal << m.ideal_images_per_second(replicas);
    ideal_eff << 100.0;
    predicted << m.predicted_images_per_second(replicas);
    predicted_eff << 100.0 * m.predicted_efficiency(replicas);
  }
  QVector<double> measured_r, measured, measured_eff;
  for (const ScalingPoint& p : study.points) {
    measured_r << p.replicas;
    measured << p.images_per_second;
    measured_eff << 100.0 * p.efficiency;
  }
  add_graph(speed, tr("ideal"), kIdeal, Qt::DashLine, false)->setData(r, ideal, true);
  add_graph(speed, tr("predicted"), kPredicted, Qt::DotLine, false)->setData(r, predicted, true);
  add_graph(speed, tr("measured"), kMeasured, Qt::SolidLine, true)
      ->setData(measured_r, measured, true);
  add_graph(efficiency, tr("ideal"), kIdeal, Qt::DashLine, false)->setData(r, ideal_eff, true);
  add_graph(efficiency, tr("predicted"), kPredicted, Qt::DotLine, false)
      ->setData(r, predicted_eff, true);
  add_graph(efficiency, tr("measured"), kMeasured, Qt::SolidLine, true)
      ->setData(measured_r, measured_eff, true);

  // The key in a row of its own below the panels, so it never covers a point.
  auto* legend = new QCPLegend;
  plot_->plotLayout()->addElement(2, 0, legend);
  plot_->plotLayout()->setRowStretchFactor(2, 0.001);
  legend->setLayer("legend");
  legend->setFillOrder(QCPLegend::foColumnsFirst);
  legend->setBorderPen(Qt::NoPen);
  for (int g = 0; g < 3; ++g) legend->addItem(new QCPPlottableLegendItem(legend, plot_->graph(g)));

  speed->axis(QCPAxis::atBottom)->setRange(m.base_replicas - 0.3, last + 0.3);
  double top = ideal.back();
  for (double v : measured)
    if (std::isfinite(v)) top = std::max(top, v);
  speed->axis(QCPAxis::atLeft)->setRange(0, top * 1.08);
  double eff_top = 110;
  for (double v : measured_eff)
    if (std::isfinite(v)) eff_top = std::max(eff_top, v * 1.08);
  efficiency->axis(QCPAxis::atLeft)->setRange(0, eff_top);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool ScalingChart::export_to(const QString& path, ExportFormat format, QString* error, int width,
                             int height) {
  if (!study_) {
    if (error) *error = tr("No scaling study: tick runs that differ only in their replicas.");
    return false;
  }
  if (format == ExportFormat::Csv) {
    std::ofstream out(path.toStdString());
    write_scaling_csv(*study_, names_, out);
    out.close();
    if (!out && error) *error = path + tr(": could not be written");
    return bool(out);
  }
  return save_plot(*plot_, path, format, width > 0 ? width : plot_->width(),
                   height > 0 ? height : plot_->height(), error);
}

void ScalingChart::export_dialog(ExportFormat format) {
  const QString suffix = export_format_name(format);
  const QString path = QFileDialog::getSaveFileName(this, tr("Export the scaling chart"),
                                                    "scaling." + suffix, "*." + suffix);
  if (path.isEmpty()) return;
  QString error;
  if (!export_to(path, format, &error)) QMessageBox::warning(this, tr("Export failed"), error);
}

}  // namespace gpulab::ui
