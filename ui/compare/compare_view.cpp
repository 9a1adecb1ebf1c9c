// The comparison view.
#include "ui/compare/compare_view.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/analysis/run_figures.hpp"
#include "engine/records/run_names.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/charts/scaling_chart.hpp"
#include "ui/runs/run_store.hpp"

namespace gpulab::ui {
namespace {

QString or_dash(double value, int decimals, const QString& suffix = "") {
  return std::isfinite(value) ? QString::number(value, 'f', decimals) + suffix : QStringLiteral("–");
}

}  // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
  baseline_ = new QComboBox(this);
  baseline_->setObjectName("baseline");
  baseline_->setMinimumContentsLength(24);
  target_ = new QDoubleSpinBox(this);
  target_->setObjectName("compare-target");
  target_->setRange(0.0, 100.0);
  target_->setDecimals(1);
  target_->setValue(98.0);
  target_->setSuffix(" %");
  target_->setSpecialValueText(tr("none"));
  target_->setToolTip(
      tr("Time to target: training seconds (evaluations left out) to the first test "
         "evaluation at or above it. The same value as the setup's target."));

  speedup_ = new ChartView(ChartKind::Speedup, this);
  step_time_ = new ChartView(ChartKind::StepTime, this);
  scaling_ = new ScalingChart(this);
  table_ = new QTableWidget(0, 13, this);
  table_->setObjectName("summary-table");
  // Two-word titles on two lines: with thirteen columns, the titles set the width of most.
  table_->setHorizontalHeaderLabels({tr("Run"), tr("Device"), tr("Batch"), tr("Precision"),
                                     tr("Epoch\ntime"), tr("Images/s"), tr("Test\nacc."),
                                     tr("Time to\ntarget"), tr("Speedup"), tr("Energy"),
                                     tr("Images/J"), tr("All-\nreduce"), tr("Matmul\nshare")});
  table_->horizontalHeaderItem(9)->setToolTip(
      tr("Energy to solution: joules the run's devices used while it trained (NVML's energy "
         "counter or its power samples on a GPU, RAPL on the CPU); a dash where it could not be "
         "measured, the reason in the cell's tip."));
  table_->horizontalHeaderItem(11)->setToolTip(
      tr("Data parallel runs: the median all-reduce a step waited for, and how much more ran "
         "hidden under the backward pass (buckets reduced while it went on, --bucket-mb), with "
         "the hidden share of all communication."));
  table_->horizontalHeaderItem(12)->setToolTip(
      tr("How much of a step's forward and backward time went to matrix products (the "
         "convolutions' and fully connected layers' GEMMs), as the CPU measures each step; a dash "
         "for a GPU run, whose kernels run out of the host's sight."));
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setTextElideMode(Qt::ElideRight);
  table_->setWordWrap(false);  // one line a row, elided: a wrapped cell was cut at its row's foot
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Baseline:"), this));
  controls->addWidget(baseline_);
  controls->addSpacing(16);
  controls->addWidget(new QLabel(tr("Target accuracy:"), this));
  controls->addWidget(target_);
  controls->addStretch();

  charts_ = new QSplitter(Qt::Horizontal, this);
  charts_->addWidget(speedup_);
  charts_->addWidget(step_time_);
  charts_->addWidget(scaling_);
  for (int i = 0; i < charts_->count(); ++i) charts_->setStretchFactor(i, 1);  // equal widths
  // Columns no run shown has a figure in are left out, and named under the table: a column of
  // dashes took the room the runs' names and epoch times needed at 1280x720.
  left_out_ = new QLabel(this);
  left_out_->setObjectName("summary-left-out");
  left_out_->setWordWrap(true);
  left_out_->hide();
  auto* table_box = new QWidget(this);
  auto* table_layout = new QVBoxLayout(table_box);
  table_layout->setContentsMargins(0, 0, 0, 0);
  table_layout->addWidget(table_);
  table_layout->addWidget(left_out_);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(charts_);
  split->addWidget(table_box);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(split, 1);

  connect(baseline_, &QComboBox::activated, this, [this](int index) {
    if (index >= 0) emit baseline_chosen(baseline_->itemData(index).toInt());
  });
  connect(target_, &QDoubleSpinBox::valueChanged, this, &CompareView::apply_options);
  for (ChartView* view : {speedup_, step_time_})
    connect(view, &ChartView::export_requested, this,
            [this](ChartView* v, ExportFormat f) { emit export_requested(v, int(f)); });
}

double CompareView::target_accuracy() const { return target_->value() / 100.0; }

void CompareView::set_runs(const std::vector<RunEntry*>& runs, const std::vector<RunEntry*>& every,
                           int baseline_id) {
  runs_ = runs;
  data_.clear();
  std::vector<QColor> colors;
  baseline_index_ = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    data_.push_back(&runs[i]->data);
    colors.push_back(runs[i]->color);
    if (runs[i]->id == baseline_id) baseline_index_ = int(i);
  }
  // Every run may be the baseline, ticked or not: it then joins the comparison.
  const QSignalBlocker block(baseline_);
  baseline_->clear();
  std::vector<const RunData*> all;
  for (RunEntry* r : every) all.push_back(&r->data);
  const auto names = display_run_names(all);
  for (size_t i = 0; i < every.size(); ++i) {
    // With its ⚠, as every chart names a flagged run: a baseline is chosen for its figures.
    baseline_->addItem(QString::fromStdString(flagged_name(names[i], *all[i])), every[i]->id);
    if (every[i]->id == baseline_id) baseline_->setCurrentIndex(int(i));
  }
  speedup_->set_runs(data_, colors);
  step_time_->set_runs(data_, colors);
  // The scaling chart's names are the ticked runs', index for index.
  const bool scaling_shown = scaling_->isVisibleTo(this);
  scaling_->set_runs(data_, display_run_names(data_));
  if (scaling_->isVisibleTo(this) != scaling_shown) share_chart_widths();
  apply_options();
}

void CompareView::share_chart_widths() {
  charts_->setSizes(QList<int>(charts_->count(), 1000));  // shares: hidden ones take none
}

void CompareView::apply_options() {
  ChartOptions options;
  options.baseline = baseline_index_;
  options.target_accuracy = target_accuracy();
  speedup_->set_options(options);
  step_time_->set_options(options);
  fill_table();
}

void CompareView::refresh(bool refresh_bars) {
  speedup_->refresh(refresh_bars);
  step_time_->refresh(refresh_bars);
  if (refresh_bars) {
    fill_table();
    scaling_->refresh();
  }
  replot_if_dirty();
}

bool CompareView::replot_if_dirty() {
  const bool a = speedup_->replot_if_dirty();
  const bool b = step_time_->replot_if_dirty();
  return a || b;
}

std::vector<RunComparison> CompareView::rows() const {
  return compare_runs(data_, baseline_index_, target_accuracy());
}

namespace {

// "0.42 ms + 0.31 hidden (43 %)"; a dash for a run on one replica.
QString allreduce_text(const RunComparison& row) {
  if (!std::isfinite(row.allreduce_ms)) return QStringLiteral("–");
  QString text = QString::number(row.allreduce_ms, 'f', 2) + " ms";
  if (std::isfinite(row.allreduce_hidden_ms) && std::isfinite(row.overlap_percent) &&
      row.overlap_percent > 0)
    text += QObject::tr(" + %1 hidden (%2 %)")
                .arg(row.allreduce_hidden_ms, 0, 'f', 2)
                .arg(row.overlap_percent, 0, 'f', 0);
  return text;
}

}  // namespace

void CompareView::fill_table() {
  const auto rows = this->rows();
  table_->setRowCount(int(rows.size()));
  for (int r = 0; r < int(rows.size()); ++r) {
    const RunComparison& row = rows[r];
    const QStringList cells = {
        QString::fromStdString(row.name) + (r == baseline_index_ ? tr(" (baseline)") : ""),
        QString::fromStdString(row.device),
        row.batch > 0 ? QString::number(row.batch) : QStringLiteral("–"),
        QString::fromStdString(row.precision),
        QString::fromStdString(epoch_time_text(row)),
        or_dash(row.images_per_second, 0),
        std::isfinite(row.test_accuracy) ? or_dash(100 * row.test_accuracy, 2, " %") : "–",
        or_dash(row.time_to_target_s, 2, " s"),
        or_dash(row.speedup, 2, "×"),
        or_dash(row.energy_j, 0, " J"),
        or_dash(row.images_per_joule, 1),
        allreduce_text(row),
        or_dash(row.matmul_percent, 0, " %")};
    // A flagged run (its times not its own alone, cut short, diverged) is marked on its name,
    // the reasons in the tip.
    QStringList flags;
    for (const std::string& flag : row.flags) flags << QString::fromStdString(flag);
    if (row.status == "diverged") flags << QString::fromStdString(row.note);
    for (int c = 0; c < cells.size(); ++c) {
      // The epoch time shows its figure ("≈ 11.92 s"); how it was worked out is in its tip.
      const QString shown = c == 4 ? cells[c].section(',', 0, 0) : cells[c];
      auto* item = new QTableWidgetItem(c == 0 && !flags.isEmpty() ? "⚠ " + shown : shown);
      if (c >= 2) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      if (c == 0) item->setForeground(runs_[r]->color.darker(120));
      if (c == 0 && row.status == "diverged") item->setText(item->text() + tr(" ⚠ diverged"));
      QStringList tip = flags;
      if (c == 4 && row.epoch_extrapolated)
        tip.prepend(tr("No full epoch: its mean step time × the steps of an epoch"));
      if (c == 4 && row.full_epochs > 0)
        tip.prepend(
            tr("Mean of %n full epoch(s); an epoch cut short is left out", "", row.full_epochs));
      if ((c == 9 || c == 10) && !row.energy_note.empty())
        tip.prepend(QString::fromStdString(row.energy_note));
      if (c == 12 && !row.matmul_note.empty()) tip.prepend(QString::fromStdString(row.matmul_note));
      // The texts that may be elided where the table is narrow, whole in the tip.
      if (c == 0 || c == 1 || c == 4 || c == 11) tip.prepend(cells[c]);
      if (!tip.isEmpty()) item->setToolTip(tip.join("\n"));
      table_->setItem(r, c, item);
    }
  }
  QStringList left_out;
  for (int c : {7, 9, 10, 11, 12}) {
    bool figures = false;
    for (int r = 0; r < table_->rowCount(); ++r)
      figures |= table_->item(r, c)->text() != QStringLiteral("–");
    table_->setColumnHidden(c, !figures && table_->rowCount() > 0);
    if (!figures && table_->rowCount() > 0)
      left_out << table_->horizontalHeaderItem(c)->text().replace("-\n", "-").replace('\n', ' ');
  }
  left_out_->setText(tr("Left out, as no run shown has a figure for it: %1.")
                         .arg(left_out.join(QStringLiteral(", "))));
  left_out_->setVisible(!left_out.isEmpty());
  fit_table_columns();
  // Every row in view: the tab scrolls instead, not a box of 2½ rows inside it.
  int height = table_->horizontalHeader()->sizeHint().height() + 2 * table_->frameWidth();
  for (int r = 0; r < table_->rowCount(); ++r) height += table_->rowHeight(r);
  if (table_->horizontalScrollBar()->isVisible())
    height += table_->horizontalScrollBar()->sizeHint().height();
  table_->setMinimumHeight(height);
}

void CompareView::fit_table_columns() {
  QHeaderView* header = table_->horizontalHeader();
  // sizeHintForColumn is public where QAbstractItemView declares it.
  const QAbstractItemView* view = table_;
  int excess = -table_->viewport()->width();
  std::vector<int> widths(size_t(table_->columnCount()));
  for (int c = 0; c < table_->columnCount(); ++c) {
    if (table_->isColumnHidden(c)) continue;
    widths[size_t(c)] = std::max(view->sizeHintForColumn(c), header->sectionSizeHint(c));
    excess += widths[size_t(c)];
  }
  const QFontMetrics metrics = table_->fontMetrics();
  const int eight = metrics.horizontalAdvance(QString(8, QChar('x')));
  // The epoch time keeps its figure, which is all its cell shows ("≈ 15.12 s").
  int figure = eight;
  for (int r = 0; r < table_->rowCount(); ++r)
    if (const QTableWidgetItem* item = table_->item(r, 4))
      figure = std::max(figure, metrics.horizontalAdvance(item->text()) +
                                    2 * metrics.averageCharWidth() + metrics.height());
  // The device (its run's name says most of it) and the all-reduce give way first; the run's
  // name and the epoch time only where the table is narrower still.
  for (int c : {1, 11, 0, 4}) {
    int& width = widths[size_t(c)];
    const int least = c == 4 ? figure : eight;
    if (excess <= 0 || width <= least) continue;
    const int given = std::min(excess, width - least);
    width -= given, excess -= given;
  }
  for (int c = 0; c < table_->columnCount(); ++c)
    if (!table_->isColumnHidden(c)) header->resizeSection(c, widths[size_t(c)]);
}

void CompareView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fit_table_columns();
}

void CompareView::set_theme(PlotTheme theme) {
  theme.run_legend = true;
  speedup_->set_theme(theme);
  step_time_->set_theme(theme);
  scaling_->set_theme(theme);
  share_chart_widths();
}

}  // namespace gpulab::ui
