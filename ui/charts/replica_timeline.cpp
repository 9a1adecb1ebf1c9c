// The per-replica timeline.
#include "ui/charts/replica_timeline.hpp"

#include "ui/charts/chart_view.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <QLabel>
#include <QToolButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "engine/analysis/run_figures.hpp"

namespace gpulab::ui {
namespace {

// A replica's step drawn in the order it runs: its compute, then waiting for the slowest, then
// its part of the exchange (the update after the exchange is counted in compute).
constexpr int kDrawOrder[] = {0, 2, 1};  // compute, waiting, communication in kReplicaPhases

}  // namespace

QColor replica_phase_color(int replica_phase) {
  switch (replica_phase) {
    case 0:
      return phase_color(phase_index("backward"));
    case 1:
      return phase_color(phase_index("all-reduce"));
    default:
      return QColor(0xD4, 0xD4, 0xD4);
  }
}

ReplicaTimeline::ReplicaTimeline(QWidget* parent) : QWidget(parent), overlap_(kNoValue) {
  setObjectName("replica-timeline");
  hint_ = new QLabel(tr("Per-replica timeline: tick a run with 2 or more replicas (Device: "
                        "replicas) to see each replica's compute, communication and waiting."),
                     this);
  hint_->setObjectName("replica-timeline-hint");
  hint_->setStyleSheet("color: palette(mid)");
  hint_->setWordWrap(true);  // one line where there is room; never what widens the Live tab
  title_ = new QLabel(this);
  title_->setObjectName("replica-timeline-title");
  title_->setWordWrap(true);  // a long run name and the key never widen the window
  export_ = export_button(this, {ExportFormat::Png, ExportFormat::Pdf, ExportFormat::Svg},
                          [this](ExportFormat format) { emit export_requested(format); });
  export_->setObjectName("replica-timeline-export");
  overlap_label_ = new QLabel(this);
  overlap_label_->setObjectName("replica-overlap");
  overlap_label_->setToolTip(
      tr("Communication hidden under computation, over the steps shown: of the time the "
         "gradients spent being reduced, the share that ran while the replicas' backward passes "
         "still went on.\nGradients are reduced in buckets (--bucket-mb) as soon as every replica "
         "has finished one; a bucket as large as the model (25 MB, PyTorch's default, is larger "
         "than these models) waits for the whole backward pass, so nothing is hidden.\nThe bars "
         "show only what the replicas waited for."));
  plot_ = new QCustomPlot(this);
  plot_->setMinimumSize(200, 120);
  plot_->setNotAntialiasedElements(QCP::aeAll);
  plot_->yAxis->setRangeReversed(true);  // replica 0 on top
  plot_->yAxis->grid()->setVisible(false);
  auto* header = new QHBoxLayout;
  header->addWidget(title_, 1);
  header->addWidget(overlap_label_);
  header->addWidget(export_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(hint_);
  layout->addLayout(header);
  layout->addWidget(plot_, 1);
  set_runs({}, {});
}

// A lane a replica, high enough to tell its phases apart, and no more: the charts above keep the
// rest of the height.
QSize ReplicaTimeline::sizeHint() const {
  const int text = QFontMetrics(plot_->yAxis->tickLabelFont()).height();
  const int lanes = std::max(2, lanes_);
  if (plot_->isHidden()) return {600, hint_height()};
  return {600, std::clamp(title_->sizeHint().height() + 3 * text + lanes * 2 * text, 160, 420)};
}

// The hint whole at the width it has: two lines of presenter type on a 1024-pixel screen, which a
// fixed line's height cut in half.
QSize ReplicaTimeline::minimumSizeHint() const {
  return plot_->isHidden() ? QSize(200, hint_height()) : QWidget::minimumSizeHint();
}

int ReplicaTimeline::hint_height() const {
  const int width = std::max(200, this->width());
  return std::max(hint_->heightForWidth(width), hint_->sizeHint().height());
}

void ReplicaTimeline::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (plot_->isHidden() && height() != hint_height()) updateGeometry();  // wrapped anew
}

void ReplicaTimeline::set_runs(std::vector<const RunData*> runs, std::vector<QString> names) {
  runs_ = std::move(runs);
  names_ = std::move(names);
  run_ = nullptr;
  // The newest ticked run with replicas: runs come in the order they were made.
  for (size_t i = runs_.size(); i-- > 0;)
    if (replica_count(*runs_[i]) > 1) {
      run_ = runs_[i];
      run_name_ = i < names_.size() ? names_[i] : QString::fromStdString(run_->name());
      break;
    }
  const bool shown = run_ != nullptr;
  hint_->setVisible(!shown);
  title_->setVisible(shown);
  overlap_label_->setVisible(shown);
  export_->setVisible(shown);
  plot_->setVisible(shown);
  // A hint takes one line; a run's lanes the height its replicas need (sizeHint).
  setSizePolicy(QSizePolicy::Preferred, shown ? QSizePolicy::Preferred : QSizePolicy::Fixed);
  updateGeometry();
  drawn_step_ = -1;
  drawn_steps_ = 0;
  steps_.clear();
  lanes_ = 0;
  overlap_ = kNoValue;
  if (shown) refresh();
}

QString ReplicaTimeline::overlap_text() const {
  return std::isfinite(overlap_) ? tr("communication overlapped: %1 %").arg(overlap_, 0, 'f', 0)
                                 : tr("communication overlapped: –");
}

bool ReplicaTimeline::refresh() {
  if (!run_) return false;
  const int64_t newest = run_->steps.empty() ? -1 : run_->steps.back().step;
  if (newest == drawn_step_ && run_->steps.size() == drawn_steps_) return false;
  drawn_step_ = newest;
  drawn_steps_ = run_->steps.size();
  steps_ = recent_replica_steps(*run_, kSteps);
  lanes_ = replica_count(*run_);
  for (const ReplicaStepSpan& step : steps_) lanes_ = std::max(lanes_, int(step.replicas.size()));
  updateGeometry();
  overlap_ = communication_overlap_percent(steps_);
  draw();
  return true;
}

void ReplicaTimeline::draw() {
  // The colour key rides in the title line: the lanes keep every pixel of height.
  QString key;
  for (int p : kDrawOrder)
    key += QString(" <span style=\"color:%1\">■</span> %2")
               .arg(replica_phase_color(p).name(), kReplicaPhases[size_t(p)].name);
  // White is the rest of the run's time: loading the batch, test evaluations, pauses.
  key += tr(" <span style=\"color:#b0b0b0\">□</span> neither (loading data, testing)");
  const QString steps = QString::fromStdString(replica_steps_caption(steps_));
  title_->setText(tr("<b>%1</b>: %2 replicas, %3, wall clock (s):%4")
                      .arg(run_name_.toHtmlEscaped())
                      .arg(lanes_)
                      .arg(steps, key));
  overlap_label_->setText(overlap_text());
  plot_->clearItems();
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int r = 0; r < lanes_; ++r) ticker->addTick(r, tr("replica %1").arg(r));
  plot_->yAxis->setTicker(ticker);
  plot_->yAxis->setRange(-0.6, lanes_ - 0.4);
  for (const ReplicaStepSpan& step : steps_) {
    for (const ReplicaTimes& replica : step.replicas) {
      double x = step.start_s;
      for (int p : kDrawOrder) {
        const double ms = replica.*kReplicaPhases[size_t(p)].ms;
        if (!(ms > 0)) continue;
        auto* rect = new QCPItemRect(plot_);
        rect->topLeft->setCoords(x, replica.replica - 0.38);
        x += ms / 1000.0;
        rect->bottomRight->setCoords(x, replica.replica + 0.38);
        rect->setBrush(replica_phase_color(p));
        rect->setPen(Qt::NoPen);
        rect->setClipToAxisRect(true);
      }
    }
  }
  if (!steps_.empty()) {
    double end = steps_.back().end_s;
    for (const ReplicaTimes& r : steps_.back().replicas)
      end = std::max(
          end, steps_.back().start_s + (r.compute_ms + r.communication_ms + r.waiting_ms) / 1000.0);
    plot_->xAxis->setRange(steps_.front().start_s, end);
  }
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void ReplicaTimeline::set_theme(const PlotTheme& theme) {
  for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) style_axis(axis, theme);
  updateGeometry();  // its lanes' height follows the type
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool ReplicaTimeline::export_to(const QString& path, ExportFormat format, QString* error, int width,
                                int height) {
  // The window says the run, its key and the axis's unit in the line above the plot; a file says
  // them itself: a title, a key under the lanes and the time axis's label, taken off again after.
  QCustomPlot& plot = *plot_;
  const QFont font = plot.xAxis->tickLabelFont();
  QFont bold = font;
  bold.setBold(true);
  if (font.pointSizeF() > 0) bold.setPointSizeF(font.pointSizeF() * 1.15);
  auto* title = new QCPTextElement(&plot,
                                   tr("%1: %2 replicas, %3")
                                       .arg(run_name_)
                                       .arg(lanes_)
                                       .arg(QString::fromStdString(replica_steps_caption(steps_))),
                                   bold);
  plot.plotLayout()->insertRow(0);
  plot.plotLayout()->addElement(0, 0, title);
  std::vector<QCPBars*> key;
  const auto add_key = [&](const QString& name, const QColor& fill, const QPen& pen) {
    auto* bars = new QCPBars(plot.xAxis, plot.yAxis);
    bars->setName(name);
    bars->setBrush(fill);
    bars->setPen(pen);
    key.push_back(bars);
  };
  for (int p : kDrawOrder)
    add_key(kReplicaPhases[size_t(p)].name, replica_phase_color(p), Qt::NoPen);
  add_key(tr("neither (loading data, testing)"), Qt::white, QPen(QColor(0xb0, 0xb0, 0xb0)));
  plot.legend->setVisible(true);
  plot.legend->setFont(font);
  plot.legend->setBorderPen(Qt::NoPen);
  plot.legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  plot.legend->setWrap(int(key.size()));
  plot.plotLayout()->addElement(plot.plotLayout()->rowCount(), 0, plot.legend);
  plot.legend->setMaximumSize(QWIDGETSIZE_MAX, QFontMetrics(font).height() + 8);
  const QString x_label = plot.xAxis->label();
  plot.xAxis->setLabel(tr("wall clock (s)"));
  plot.xAxis->setLabelFont(font);
  const bool saved = save_plot(plot, path, format, width > 0 ? width : plot.width(),
                               height > 0 ? height : plot.height(), error);
  plot.xAxis->setLabel(x_label);
  plot.axisRect()->insetLayout()->addElement(plot.legend, Qt::AlignRight | Qt::AlignTop);
  plot.legend->setVisible(false);
  for (QCPBars* bars : key) plot.removePlottable(bars);
  plot.plotLayout()->remove(title);
  plot.plotLayout()->simplify();
  plot.replot(QCustomPlot::rpQueuedReplot);
  return saved;
}

}  // namespace gpulab::ui
