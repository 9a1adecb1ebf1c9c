// Timing the model device by device and batch by batch on a worker thread, the table it fills and
// its CSV.
#include "ui/inside/speed_view.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <sstream>

#include "engine/base/text.hpp"
#include "engine/records/outside_load.hpp"
#include "engine/session/outside_load.hpp"
#include "ui/charts/chart_render.hpp"

namespace gpulab::ui {

SpeedView::SpeedView(QWidget* parent) : QWidget(parent) {
  setObjectName("inside-speed");
  time_ = new QPushButton(tr("Time inference"), this);
  time_->setObjectName("time-inference");
  time_->setToolTip(tr("Time the model on the CPU and on each GPU for batches of 1, 64 and 1000"));
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setObjectName("cancel-timing");
  cancel_->hide();
  export_ = new QPushButton(tr("Export CSV…"), this);
  export_->setObjectName("export-timing");
  progress_ = new QProgressBar(this);
  progress_->hide();
  status_ = new QLabel(this);
  status_->setObjectName("timing-status");
  status_->setWordWrap(true);
  note_ = new QLabel(this);
  note_->setObjectName("timing-note");
  note_->setWordWrap(true);
  table_ = new QTableWidget(0, 5, this);
  table_->setObjectName("timing-table");
  table_->setHorizontalHeaderLabels({tr("device"), tr("batch"), tr("latency per batch (ms)"),
                                     tr("ms per image"), tr("images/s")});
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setMinimumHeight(180);

  auto* controls = new QHBoxLayout;
  controls->addWidget(time_);
  controls->addWidget(cancel_);
  controls->addWidget(progress_, 1);
  controls->addStretch();
  controls->addWidget(export_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(status_);
  layout->addWidget(note_);  // above the table, which takes the rest of the height
  layout->addWidget(table_, 1);

  connect(time_, &QPushButton::clicked, this, &SpeedView::time_model);
  connect(cancel_, &QPushButton::clicked, this, &SpeedView::cancel);
  connect(export_, &QPushButton::clicked, this, &SpeedView::export_dialog);
  set_gpus({}, {});
  set_model(nullptr);
}

SpeedView::~SpeedView() = default;

QString SpeedView::status() const { return status_->text(); }
QString SpeedView::note() const { return note_->text(); }

void SpeedView::set_model(std::shared_ptr<const ModelWeights> model) {
  cancel();
  model_ = std::move(model);
  timings_.clear();
  table_->setRowCount(0);
  status_->setText(model_ ? tr("Time this model's inference: the median of repeated forward "
                               "passes, from images in memory to the class scores back in it.")
                          : tr("Open a model to time its inference."));
  refresh_controls();
}

void SpeedView::set_gpus(const QStringList& devices, const QString& no_gpu_reason) {
  gpus_ = devices;
  no_gpu_reason_ = no_gpu_reason;
  QString text =
      tr("A GPU pays fixed costs on every batch: the copy of the images to it and of "
         "the results back, and a kernel launch per layer. On one image those costs are "
         "most of the time and the CPU can win; on 1000 images its many cores have work "
         "enough to pay them back, as in training. A model with convolutions is timed on a "
         "GPU twice: with im2col (the input unfolded into a matrix in GPU memory, then one "
         "cuBLAS product) and with implicit GEMM (tiles multiplied where they are loaded, "
         "nothing unfolded).");
  if (gpus_.isEmpty())
    text = tr("No GPU on this machine, so only the CPU is timed: %1.")
               .arg(no_gpu_reason_.isEmpty() ? tr("none found") : no_gpu_reason_) +
           "\n" + text;
  note_->setText(text);
}

void SpeedView::refresh_controls() {
  time_->setEnabled(model_ && !busy_);
  cancel_->setVisible(busy_);
  progress_->setVisible(busy_);
  export_->setEnabled(!timings_.empty() && !busy_);
}

namespace {

bool has_convolutions(const ModelWeights* model) {
  if (!model) return false;
  return std::any_of(model->config.layers.begin(), model->config.layers.end(),
                     [](const LayerSpec& layer) { return layer.type == LayerType::Conv2d; });
}

}  // namespace

std::vector<SpeedView::Pass> SpeedView::passes() const {
  std::vector<Pass> passes{{"cpu", ConvAlgorithm::Im2col}};
  for (const QString& gpu : gpus_) {
    passes.push_back({gpu.toStdString(), ConvAlgorithm::Im2col});
    if (has_convolutions(model_.get())) passes.push_back({gpu.toStdString(), ConvAlgorithm::Implicit});
  }
  return passes;
}

QString SpeedView::label(const std::string& device, const std::string& conv) const {
  const QString name = QString::fromStdString(device);
  if (device == "cpu" || conv.empty() || !has_convolutions(model_.get())) return name;
  return name + " · " +
         (conv == conv_name(ConvAlgorithm::Implicit) ? tr("implicit GEMM") : tr("im2col"));
}

void SpeedView::time_model() {
  if (!model_ || busy_) return;
  timings_.clear();
  load_caveats_.clear();
  table_->setRowCount(0);
  busy_ = true;
  const std::vector<Pass> passes = this->passes();
  QStringList names;
  for (const Pass& pass : passes)
    names << label(pass.device, conv_name(pass.conv));
  const int total = int(passes.size()) * int(std::size(kBatches));
  progress_->setRange(0, total);
  progress_->setValue(0);
  status_->setText(tr("Timing on %1…").arg(names.join(", ")));
  refresh_controls();
  worker_.run([this, model = model_, passes, names](const Background::Job& job) {
    QString problem;
    int done_count = 0;
    try {
      for (size_t p = 0; p < passes.size(); ++p) {
        // Other programs' share of the CPU while this pass is timed: a busy machine's figures
        // are marked, never shown as clean.
        OutsideLoadMeter load;
        for (int batch : kBatches) {
          if (job.stopped()) return;
          const InferenceTiming timing =
              time_inference(*model, passes[p].device, {batch}, 0, passes[p].conv).front();
          ++done_count;
          job.post([this, timing, done_count] {
            add_row(timing);
            progress_->setValue(done_count);
          });
        }
        const QString caveat = QString::fromStdString(outside_load_caveat(load.measure()));
        if (!caveat.isEmpty())
          job.post([this, name = names[int(p)], caveat] { mark_load(name, caveat); });
      }
    } catch (const std::exception& e) {
      problem = QString::fromStdString(e.what());
    }
    job.post([this, problem] { done(problem); });
  });
}

void SpeedView::cancel() {
  if (!busy_) return;
  worker_.stop();
  busy_ = false;
  status_->setText(tr("Stopped; the rows measured so far stay."));
  refresh_controls();
}

void SpeedView::add_row(const InferenceTiming& timing) {
  timings_.push_back(timing);
  const int row = table_->rowCount();
  table_->insertRow(row);
  const auto cell = [&](int column, const QString& text, bool number) {
    auto* item = new QTableWidgetItem(text);
    if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    table_->setItem(row, column, item);
  };
  cell(0, label(timing.device, timing.conv), false);
  cell(1, QString::number(timing.batch), true);
  cell(2, QString::number(timing.batch_ms, 'f', 3), true);
  cell(3, QString::number(timing.ms_per_image(), 'f', 4), true);
  cell(4, QString::number(timing.images_per_second(), 'f', 0), true);
}

void SpeedView::mark_load(const QString& name, const QString& caveat) {
  if (caveat.isEmpty()) return;
  load_caveats_[name] = caveat;
  for (int row = 0; row < table_->rowCount(); ++row) {
    QTableWidgetItem* item = table_->item(row, 0);
    if (!item || size_t(row) >= timings_.size() ||
        label(timings_[size_t(row)].device, timings_[size_t(row)].conv) != name)
      continue;
    item->setText(name + " ⚠");
    for (int column = 0; column < table_->columnCount(); ++column)
      if (QTableWidgetItem* cell = table_->item(row, column)) cell->setToolTip("⚠ " + caveat);
  }
}

void SpeedView::done(const QString& problem) {
  busy_ = false;
  QString text = problem.isEmpty()
                     ? tr("Timed: each figure is the median of repeated runs after a warm-up.")
                     : tr("Timing stopped: %1").arg(problem);
  for (const auto& [name, caveat] : load_caveats_) text += tr(" ⚠ %1: %2.").arg(name, caveat);
  status_->setText(text);
  refresh_controls();
}

bool SpeedView::export_csv(const QString& path, QString* error) const {
  std::ostringstream out;
  out << "device,batch,batch_ms,ms_per_image,images_per_second,flags,conv\n";
  for (const InferenceTiming& t : timings_) {
    const auto caveat = load_caveats_.find(label(t.device, t.conv));
    out << csv_field(t.device) << ',' << t.batch << ',' << t.batch_ms << ',' << t.ms_per_image()
        << ',' << t.images_per_second() << ','
        << (caveat == load_caveats_.end() ? std::string()
                                          : csv_field("⚠ " + caveat->second.toStdString()))
        << ',' << t.conv << '\n';
  }
  return save_text(path, out.str(), error);
}

void SpeedView::export_dialog() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export the timings"),
                                                    "inference-timing.csv", tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  QString error;
  if (!export_csv(path, &error))
    status_->setText(error);
  else
    status_->setText(tr("Saved %1").arg(path));
}

}  // namespace gpulab::ui
