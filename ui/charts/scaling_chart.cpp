// The scaling chart.
#include "ui/charts/scaling_chart.hpp"

#include <qcustomplot.h>

#include <QFileDialog>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QScrollArea>
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
  // Which run stands for each replica count, and every ⚠: whole at any width, above the plot.
  caption_ = new QLabel(this);
  caption_->setObjectName("scaling-runs");
  caption_->setWordWrap(true);
  caption_->setTextFormat(Qt::RichText);
  // The model behind the lines, in a box of fixed height that scrolls: wrapped whole in a third
  // of a 1024-pixel screen it took eight lines and crushed the panels into each other. Whole in
  // its tip and in the exported files.
  model_ = new QLabel;
  model_->setObjectName("scaling-model");
  model_->setWordWrap(true);
  model_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  model_->setStyleSheet("color: palette(dark)");
  details_ = new QScrollArea(this);
  details_->setObjectName("scaling-details");
  details_->setWidget(model_);
  details_->setWidgetResizable(true);
  details_->setFrameShape(QFrame::NoFrame);
  details_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  details_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
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
  plot_->installEventFilter(this);
  model_->installEventFilter(this);
  auto* header = new QHBoxLayout;
  header->addWidget(title_, 1);
  header->addWidget(save);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(header);
  layout->addWidget(caption_);
  layout->addWidget(plot_, 1);
  layout->addWidget(details_);
  size_details();
  setVisible(false);
}

QSize ScalingChart::sizeHint() const {
  // As wide as a chart beside it asks, whatever its text: the wrapped labels' own hints, long
  // lines, made Compare's splitter give this chart most of a 1024-pixel screen.
  return {2 * plot_->minimumWidth(), QWidget::sizeHint().height()};
}

void ScalingChart::size_details() {
  details_->setFixedHeight(kDetailLines * model_->fontMetrics().lineSpacing());  // whole lines
}

bool ScalingChart::eventFilter(QObject* watched, QEvent* event) {
  if (watched == model_ && event->type() == QEvent::FontChange) size_details();
  if (watched == plot_ && event->type() == QEvent::Resize && study_ && plot_->size() != drawn_size_)
    draw();
  return QWidget::eventFilter(watched, event);
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

void ScalingChart::draw(bool file) {
  const ScalingStudy& study = *study_;
  const ScalingModel& m = study.model;
  const QSize size = drawn_size_ = plot_->size();
  title_->setText(
      tr("<b>Scaling</b>: %1").arg(QString::fromStdString(study.label).toHtmlEscaped()));
  caption_->setText(caption_html());
  caption_->setVisible(!caption_->text().isEmpty());
  model_->setText(model_text());
  details_->setToolTip(model_->text());
  plot_->clearPlottables();
  plot_->clearItems();
  plot_->plotLayout()->clear();
  legend_ = nullptr;
  marks_.clear();
  // A file has no caption beside it: a flagged baseline is said above the plot, and what the
  // window's caption and details say below it, each wrapped to the file's width.
  const QString warning = file ? QString::fromStdString(study.baseline_warning()) : QString();
  const double text_width = std::max(120, size.width() - 12);
  int row = 0;
  if (!warning.isEmpty()) {
    const QFont note_font = scaled_font(theme_.font_scale * 0.9);
    auto* note = new QCPTextElement(plot_, wrap_words(warning, note_font, text_width), note_font);
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
  // The panels share their x axis: its numbers once, under the lower one, leave the upper one a
  // line taller in a low chart (a third of a 1024x768 screen in presenter mode).
  speed->axis(QCPAxis::atBottom)->setTickLabels(false);
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
      marks_.push_back(mark);
    }
  }

  // Wrapped to the plot's width (and again when it is resized): at 1024x768 one row cut off
  // "predicted" and "measured".
  legend_ =
      add_legend(*plot_, row + 2, {plot_->graph(0), plot_->graph(1), plot_->graph(2)}, theme_);
  wrap_legend(legend_, size.width());
  plot_->plotLayout()->setRowStretchFactor(row + 2, 0.001);
  if (row > 0) plot_->plotLayout()->setRowStretchFactor(0, 0.001);
  if (file) {
    const QFont font = scaled_font(theme_.font_scale * 0.8);
    const QString said = (runs_text().isEmpty() ? QString() : runs_text() + " ") + model_text();
    auto* caption = new QCPTextElement(plot_, wrap_words(said, font, text_width), font);
    caption->setTextFlags(Qt::AlignLeft | Qt::AlignTop);
    caption->setTextColor(QColor(0x50, 0x50, 0x50));
    caption->setObjectName("scaling-caption");
    plot_->plotLayout()->addElement(row + 3, 0, caption);
    plot_->plotLayout()->setRowStretchFactor(row + 3, 0.001);
  }

  speed->axis(QCPAxis::atBottom)->setRange(m.base_replicas - 0.3, last + 0.3);
  double top = ideal.back();
  for (double v : measured)
    if (std::isfinite(v)) top = std::max(top, v);
  double eff_top = 110;
  for (double v : measured_eff)
    if (std::isfinite(v)) eff_top = std::max(eff_top, v * 1.08);
  tops_ = {{speed->axis(QCPAxis::atLeft), top * 1.08},
           {efficiency->axis(QCPAxis::atLeft), eff_top}};
  // Ticks, and axis labels too long for a low panel, fitted as every chart's are.
  DrawnChart drawn;
  drawn.rects = {speed, efficiency};
  fit_text(*plot_, drawn);
  // Every replica count where the labels, a digit or two, have room: fit_text allows for longer
  // numbers and left R = 1, the baseline, without its tick in a third of a 1024-pixel screen.
  const double label_w = QFontMetricsF(speed->axis(QCPAxis::atBottom)->tickLabelFont())
                             .horizontalAdvance(QString::number(last) + "  ");
  ticker->setTickCount(
      std::clamp(int(speed->width() / std::max(1.0, label_w)), 2, last - m.base_replicas + 1));
  keep_marks_inside();
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void ScalingChart::keep_marks_inside() {
  for (const auto& [axis, top] : tops_) axis->setRange(0, top);
  if (marks_.empty()) return;
  // As laid out now, each panel's top is raised until the ⚠ over a flagged point fits under it:
  // over the highest point it was clipped in a low panel.
  plot_->setViewport(plot_->rect());
  plot_->plotLayout()->setOuterRect(plot_->viewport());
  for (auto pass :
       {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
    plot_->plotLayout()->update(pass);
  for (QCPItemText* mark : marks_) {
    QCPAxis* y = mark->clipAxisRect()->axis(QCPAxis::atLeft);
    const double value = mark->position->coords().y(), high = mark->clipAxisRect()->height();
    const double mark_px = QFontMetricsF(mark->font()).height() + mark->padding().bottom() + 2;
    // Values start at 0: `value` sits at value / top of the height, the mark above it.
    const double top = high > 2 * mark_px ? value * high / (high - mark_px) : 2 * value;
    if (top > y->range().upper) y->setRange(0, top);
  }
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
  // Drawn for the file's size, with what the window says beside the plot; then for the window
  // again.
  const QSize shown = plot_->size();
  const QSize size(width > 0 ? width : shown.width(), height > 0 ? height : shown.height());
  plot_->removeEventFilter(this);
  plot_->resize(size);
  draw(true);
  const bool saved = save_plot(*plot_, path, format, size.width(), size.height(), error);
  plot_->resize(shown);
  plot_->installEventFilter(this);
  draw();
  return saved;
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
