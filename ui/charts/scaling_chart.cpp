// The scaling chart.
#include "ui/charts/scaling_chart.hpp"

#include <qcustomplot.h>

#include <QFileDialog>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QStringList>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine/analysis/replica_timeline.hpp"
#include "engine/analysis/run_figures.hpp"
#include "ui/charts/chart_legend.hpp"

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
  // A long study name wraps rather than widen Compare past a 1024-pixel screen.
  title_->setWordWrap(true);
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
  // Narrower than the charts beside it: their three columns fit beside the setup at 1024 px.
  plot_->setMinimumSize(160, 260);
  plot_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(plot_, &QWidget::customContextMenuRequested, this, &ScalingChart::show_menu);
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
  std::erase_if(picked_, [&](const RunData* run) {
    return std::find(runs_.begin(), runs_.end(), run) == runs_.end();
  });
  refresh();
}

void ScalingChart::pick(const RunData* run) {
  const int replicas = replica_count(*run);
  std::erase_if(picked_, [&](const RunData* r) { return replica_count(*r) == replicas; });
  picked_.push_back(run);
  refresh();
}

std::vector<std::pair<QString, const RunData*>> ScalingChart::alternatives() const {
  std::vector<std::pair<QString, const RunData*>> choices;
  if (!study_) return choices;
  for (const ScalingPoint& p : study_->points)
    for (int other : p.others) {
      const RunData* run = runs_[size_t(other)];
      const QString flags = QString::fromStdString(flagged_name("", *run));
      choices.emplace_back(tr("Use %1%2 for %3 replica(s)")
                               .arg(QString::fromStdString(names_[size_t(other)]), flags)
                               .arg(p.replicas),
                           run);
    }
  return choices;
}

void ScalingChart::show_menu(const QPoint& at) {
  QMenu menu(this);
  const auto choices = alternatives();
  if (choices.empty())
    menu.addAction(tr("One run per replica count: nothing to choose"))->setEnabled(false);
  for (const auto& [text, run] : choices)
    menu.addAction(text, this, [this, run = run] { pick(run); });
  menu.exec(plot_->mapToGlobal(at));
}

QString ScalingChart::runs_text() const {
  if (!study_) return {};
  // Only what the plot cannot say: flagged points, and where a run was chosen among several.
  QStringList parts;
  for (const ScalingPoint& p : study_->points) {
    if (p.flags.empty() && p.others.empty()) continue;
    QString part = tr("R = %1").arg(p.replicas);
    if (!p.flags.empty()) {
      QStringList flags;
      for (const std::string& flag : p.flags) flags << QString::fromStdString(flag_headline(flag));
      part += tr(" ⚠ %1").arg(flags.join("; "));
    }
    if (!p.others.empty())
      part += p.picked ? tr(" (%1, picked over %2 other run(s))")
                             .arg(QString::fromStdString(names_[size_t(p.run)]))
                             .arg(p.others.size())
                       : tr(" (%1 of %2 runs: %3; right-click to pick another)")
                             .arg(QString::fromStdString(names_[size_t(p.run)]))
                             .arg(p.others.size() + 1)
                             .arg(QString::fromStdString(p.chosen_because));
    parts << part;
  }
  return parts.isEmpty() ? QString() : parts.join("; ") + ".";
}

void ScalingChart::set_theme(const PlotTheme& theme) {
  theme_ = theme;
  if (study_) draw();
}

void ScalingChart::refresh() {
  std::vector<int> picked;
  for (size_t i = 0; i < runs_.size(); ++i)
    if (std::find(picked_.begin(), picked_.end(), runs_[i]) != picked_.end())
      picked.push_back(int(i));
  auto studies = scaling_studies(runs_, picked);
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

void ScalingChart::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (!legend_) return;
  wrap_legend(legend_, plot_->width());
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void ScalingChart::draw() {
  const ScalingStudy& study = *study_;
  const ScalingModel& m = study.model;
  title_->setText(
      tr("<b>Scaling</b>: %1").arg(QString::fromStdString(study.label).toHtmlEscaped()));
  model_->setText((runs_text().isEmpty() ? QString() : runs_text() + " ") + model_text());
  plot_->clearPlottables();
  plot_->clearItems();
  plot_->plotLayout()->clear();
  legend_ = nullptr;
  // A flagged baseline is said inside the plot, so an exported file says it too.
  const QString warning = QString::fromStdString(study.baseline_warning());
  int row = 0;
  if (!warning.isEmpty()) {
    // Each line wrapped to the plot's width, so a narrow chart shows all of it.
    const QFont note_font = scaled_font(theme_.font_scale * 0.9);
    const QFontMetricsF metrics(note_font);
    QStringList lines;
    for (const QString& line : warning.split('\n')) {
      QString wrapped;
      for (const QString& word : line.split(' ')) {
        const QString longer = wrapped.isEmpty() ? word : wrapped + ' ' + word;
        const int last = int(longer.lastIndexOf('\n')) + 1;
        wrapped = metrics.horizontalAdvance(longer.mid(last)) <= std::max(120, plot_->width() - 12)
                      ? longer
                      : wrapped + '\n' + word;
      }
      lines << wrapped;
    }
    auto* note = new QCPTextElement(plot_, lines.join('\n'), note_font);
    note->setTextColor(QColor(0xA0, 0x40, 0x00));
    note->setObjectName("scaling-baseline-warning");
    plot_->plotLayout()->addElement(row++, 0, note);
  }
  auto* speed = new QCPAxisRect(plot_);
  auto* efficiency = new QCPAxisRect(plot_);
  plot_->plotLayout()->addElement(row, 0, speed);
  plot_->plotLayout()->addElement(row + 1, 0, efficiency);
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
  for (QCPAxisRect* rect : {speed, efficiency}) {
    rect->axis(QCPAxis::atBottom)->setTicker(ticker);
    for (QCPAxis* axis : rect->axes()) style_axis(axis, theme_);
  }

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
  // Each flagged measurement carries a ⚠ over its point, in both panels.
  for (const ScalingPoint& p : study.points) {
    if (p.flags.empty()) continue;
    for (auto [rect, value] :
         {std::pair{speed, p.images_per_second}, std::pair{efficiency, 100.0 * p.efficiency}}) {
      if (!std::isfinite(value)) continue;
      auto* mark = new QCPItemText(plot_);
      mark->setClipAxisRect(rect);
      mark->position->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
      mark->position->setCoords(p.replicas, value);
      mark->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
      mark->setPadding(QMargins(0, 0, 0, 6));
      mark->setText(QStringLiteral("⚠"));
      mark->setColor(QColor(0xA0, 0x40, 0x00));
      mark->setFont(scaled_font(theme_.font_scale * 1.2, true));
    }
  }

  // Wrapped to the plot's width (and again when it is resized): at 1024x768 one row cut off
  // "predicted" and "measured".
  legend_ = add_legend(*plot_, row + 2, {plot_->graph(0), plot_->graph(1), plot_->graph(2)},
                       theme_);
  plot_->plotLayout()->setRowStretchFactor(row + 2, 0.001);
  if (row > 0) plot_->plotLayout()->setRowStretchFactor(0, 0.001);

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
    std::ostringstream out;
    write_scaling_csv(*study_, names_, out);
    return save_text(path, out.str(), error);
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
