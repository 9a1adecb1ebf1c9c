// The Live tab's charts, controls and run key.
#include "ui/window/live_tab.hpp"

#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include "engine/records/run_names.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/charts/replica_timeline.hpp"
#include "ui/window/chart_grid.hpp"

namespace gpulab::ui {

LiveTab::LiveTab(QWidget* parent) : QWidget(parent) {
  x_axis_ = new QComboBox(this);
  x_axis_->setObjectName("x-axis");
  for (XAxis axis : {XAxis::Step, XAxis::Time, XAxis::Epoch})
    x_axis_->addItem(x_axis_label(axis), int(axis));
  smoothing_ = new QSlider(Qt::Horizontal, this);
  smoothing_->setObjectName("smoothing");
  smoothing_->setRange(1, 200);
  smoothing_->setValue(25);
  smoothing_->setMaximumWidth(220);
  smoothing_label_ = new QLabel(this);  // its length changes, but the stretch after it moves
  auto* fit = new QPushButton(tr("Fit all"), this);
  fit->setToolTip(tr("Show all the data in every plot and follow new points again"));
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel(tr("X axis:"), this));
  row->addWidget(x_axis_);
  row->addSpacing(16);
  row->addWidget(new QLabel(tr("Smoothing:"), this));
  row->addWidget(smoothing_);
  row->addWidget(smoothing_label_);
  row->addStretch();
  row->addWidget(fit);

  const ChartKind kinds[] = {ChartKind::Loss, ChartKind::Accuracy, ChartKind::Throughput,
                             ChartKind::StepTime, ChartKind::Gpu};
  for (ChartKind kind : kinds) {
    auto* view = new ChartView(kind, this);
    connect(view, &ChartView::export_requested, this, &LiveTab::export_requested);
    charts_.push_back(view);
  }
  grid_ = new ChartGrid(std::vector<QWidget*>(charts_.begin(), charts_.end()), this);
  timeline_ = new ReplicaTimeline(this);
  connect(timeline_, &ReplicaTimeline::export_requested, this, &LiveTab::timeline_export_requested);
  run_key_ = new QLabel(this);
  run_key_->setObjectName("run-key");
  run_key_->setTextFormat(Qt::RichText);
  run_key_->setWordWrap(true);
  run_key_->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(row);
  layout->addWidget(run_key_);
  layout->addWidget(grid_, 2);
  layout->addWidget(timeline_);  // the height its lanes need when it shows a run

  connect(x_axis_, &QComboBox::currentIndexChanged, this, &LiveTab::apply_options);
  connect(smoothing_, &QSlider::valueChanged, this, &LiveTab::apply_options);
  connect(fit, &QPushButton::clicked, this, &LiveTab::fit_all);
  apply_options();
}

ChartView* LiveTab::chart(ChartKind kind) const {
  for (ChartView* view : charts_)
    if (view->kind() == kind) return view;
  return nullptr;
}

ChartOptions LiveTab::options() const {
  ChartOptions options;
  options.x = XAxis(x_axis_->currentData().toInt());
  options.smoothing = smoothing_->value();
  return options;
}

void LiveTab::apply_options() {
  const ChartOptions options = this->options();
  smoothing_label_->setText(options.smoothing <= 1
                                ? tr("off (raw values)")
                                : tr("trailing mean of %1 steps").arg(options.smoothing));
  for (ChartView* view : charts_) view->set_options(options);
}

void LiveTab::set_runs(const std::vector<const RunData*>& runs, const std::vector<QColor>& colors) {
  colors_ = colors;
  for (ChartView* view : charts_) view->set_runs(runs, colors);
  std::vector<QString> names;
  for (const std::string& name : display_run_names(runs))
    names.push_back(QString::fromStdString(name));
  timeline_->set_runs(runs, names);
  update_key();
  show_key();
}

void LiveTab::set_presenter(bool on) {
  presenter_ = on;
  show_key();
}

void LiveTab::show_key() {
  const size_t runs = charts_.front()->chart().runs.size();
  run_key_->setVisible(runs >= kFoldLegendRuns || (presenter_ && runs > 0));
}

void LiveTab::update_key() {
  // Many runs are named once, above the charts, rather than in a legend in each of them: as the
  // charts name them, ⚠ included (a run flagged when it finished is marked here then too).
  const std::vector<std::string>& runs = charts_.front()->chart().runs;
  QStringList key;
  for (size_t i = 0; i < runs.size(); ++i)
    key << QString("%1&nbsp;<span style='color:%2'>■</span>&nbsp;%3")  // numbered as in bars
               .arg(i + 1)
               .arg(i < colors_.size() ? colors_[i].name() : run_color(int(i)).name(),
                    QString::fromStdString(runs[i]).toHtmlEscaped().replace(' ', "&nbsp;"));
  const QString text = key.join(" &nbsp; ");
  if (run_key_->text() != text) run_key_->setText(text);
}

bool LiveTab::run_key_shown() const { return !run_key_->isHidden(); }

void LiveTab::set_theme(const PlotTheme& theme) {
  for (ChartView* view : charts_) view->set_theme(theme);
  timeline_->set_theme(theme);
}

void LiveTab::fit_all() {
  for (ChartView* view : charts_) view->fit_view();
}

void LiveTab::refresh(bool refresh_bars) {
  for (ChartView* view : charts_) view->refresh(refresh_bars);
  if (refresh_bars) update_key();
}

void LiveTab::replot() {
  for (ChartView* view : charts_) view->replot_if_dirty();
  timeline_->refresh();
}

}  // namespace gpulab::ui
