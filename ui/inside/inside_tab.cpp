// The Inside tab's model: where it comes from (runs, files, drops), its config, and the sections
// that show it.
#include "ui/inside/inside_tab.hpp"

#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMimeData>
#include <QPushButton>
#include <QScrollArea>
#include <QTabWidget>
#include <QVBoxLayout>
#include <utility>
#include <vector>

#include "engine/model/model_config.hpp"
#include "ui/inside/confusion_view.hpp"
#include "ui/inside/digit_canvas.hpp"
#include "ui/inside/digit_panel.hpp"
#include "ui/inside/mistakes_gallery.hpp"
#include "ui/inside/network_panel.hpp"
#include "ui/inside/speed_view.hpp"
#include "ui/inside/weights_loader.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/widgets/status_widgets.hpp"

namespace gpulab::ui {

namespace {

const QString kConfigFile = QStringLiteral("\x01file");  // the "Config file…" entry's data

// The one local .safetensors file a drag carries, or an empty path.
std::filesystem::path dropped_weights(const QMimeData* mime) {
  if (!mime || !mime->hasUrls() || mime->urls().size() != 1) return {};
  const QUrl url = mime->urls().front();
  if (!url.isLocalFile() || !url.toLocalFile().endsWith(".safetensors", Qt::CaseInsensitive))
    return {};
  return url.toLocalFile().toStdString();
}

}  // namespace

InsideTab::InsideTab(InsideContext context, QWidget* parent)
    : QWidget(parent), context_(std::move(context)), loader_(new WeightsLoader(this)) {
  model_label_ = new QLabel(tr("No model open."), this);
  model_label_->setObjectName("inside-model");
  model_label_->setWordWrap(true);
  model_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  runs_ = new QComboBox(this);
  runs_->setObjectName("inside-run");
  runs_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  runs_->setMinimumContentsLength(12);  // long run names do not widen the tab
  runs_->setToolTip(tr("The model a run trained (runs started in this window keep their weights)"));
  open_ = new QPushButton(tr("Open weights…"), this);
  open_->setObjectName("open-weights");
  config_ = new QComboBox(this);
  config_->setObjectName("inside-config");
  config_->setToolTip(
      tr("The model the weights belong to: from the checkpoint's metadata, a "
         "preset, or a config file"));
  config_->addItem(tr("from the checkpoint"), QString());
  for (const std::string& name : preset_names())
    config_->addItem(QString::fromStdString(name), QString::fromStdString(name));
  config_->addItem(tr("Config file…"), kConfigFile);
  message_ = new Banner(this);
  message_->setObjectName("inside-message");

  sections_ = new QTabWidget(this);
  sections_->setObjectName("inside-sections");
  // Each section scrolls where the window is narrower than it (a 1024x768 projector), so the
  // tab never asks the window for more room than the others do.
  const auto add_section = [this](QWidget* section, const QString& title) {
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(section);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    sections_->addTab(scroll, title);
  };
  digits_ = new DigitPanel(this);
  add_section(digits_, tr("Draw a digit"));
  confusion_ = new ConfusionView(context_.cache, context_.data_dir, this);
  add_section(confusion_, tr("Confusion and mistakes"));
  network_ = new NetworkPanel(context_.cache, context_.data_dir, this);
  add_section(network_, tr("Network"));
  speed_ = new SpeedView(this);
  add_section(speed_, tr("Inference speed"));
  QStringList gpus;
  for (const GpuInfo& gpu : context_.devices.gpus) gpus << QString("cuda:%1").arg(gpu.index);
  const QString no_gpu = QString::fromStdString(context_.devices.no_gpu_reason);
  speed_->set_gpus(gpus, no_gpu);
  digits_->set_gpu(gpus.value(0), no_gpu);

  auto* source = new QHBoxLayout;
  source->addWidget(new QLabel(tr("Run:"), this));
  source->addWidget(runs_, 1);
  source->addWidget(open_);
  source->addWidget(new QLabel(tr("Config:"), this));
  source->addWidget(config_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(source);
  layout->addWidget(model_label_);
  layout->addWidget(message_);
  layout->addWidget(sections_, 1);

  connect(open_, &QPushButton::clicked, this, &InsideTab::open_weights_dialog);
  connect(config_, &QComboBox::activated, this, &InsideTab::config_chosen);
  connect(runs_, &QComboBox::activated, this, [this](int index) {
    if (const int id = runs_->itemData(index).toInt(); id != 0) show_run(id);
  });
  connect(loader_, &WeightsLoader::loaded, this, &InsideTab::loaded);
  connect(loader_, &WeightsLoader::failed, this, &InsideTab::failed);
  if (context_.store) {
    connect(context_.store, &RunStore::runs_changed, this, &InsideTab::fill_runs);
    connect(context_.store, &RunStore::run_updated, this, &InsideTab::fill_runs);
  }
  // The maps follow the drawing at each stroke's end; a mistake clicked is shown inside.
  connect(digits_->canvas(), &DigitCanvas::finished, this,
          [this] { network_->set_drawn_digit(digits_->seen_digit()); });
  connect(confusion_->gallery(), &MistakesGallery::mistake_clicked, this, [this](int index) {
    network_->show_test_image(index);
    show_section(network_);
  });
  fill_runs();
}

QTreeWidget* InsideTab::layers() { return network_->layers(); }

void InsideTab::show_section(QWidget* section) {
  for (int i = 0; i < sections_->count(); ++i)
    if (auto* scroll = qobject_cast<QScrollArea*>(sections_->widget(i));
        scroll && scroll->widget() == section)
      sections_->setCurrentIndex(i);
}

bool InsideTab::loading() const { return loader_->busy(); }
QString InsideTab::model_text() const { return model_label_->text(); }
QString InsideTab::message() const { return message_->text(); }

void InsideTab::open_weights(const std::filesystem::path& path) {
  opening_run_ = 0;
  config_->setCurrentIndex(0);  // a new file brings its own config, where it has one
  load(path);
}

void InsideTab::open_weights_dialog() {
  const QString dir =
      file_.empty() ? QString() : QString::fromStdString(file_.parent_path().string());
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open weights"), dir, tr("Checkpoints (*.safetensors);;All files (*)"));
  if (!path.isEmpty()) open_weights(path.toStdString());
}

bool InsideTab::show_run(int id) {
  RunEntry* entry = context_.store ? context_.store->find(id) : nullptr;
  const auto weights = entry ? run_weights(entry->data) : std::nullopt;
  if (!weights) return false;
  opening_run_ = id;
  config_->setCurrentIndex(0);
  runs_->setCurrentIndex(std::max(0, runs_->findData(id)));
  load(*weights);
  return true;
}

void InsideTab::load(const std::filesystem::path& path) {
  file_ = path;
  message_->show_message(Banner::Kind::Info,
                         tr("Opening %1…").arg(QString::fromStdString(path.string())));
  loader_->load(path, config_->currentData().toString().toStdString());
}

void InsideTab::config_chosen(int index) {
  // The file dialog opens once the combo box's list has closed, not inside its click.
  if (config_->itemData(index).toString() == kConfigFile)
    QMetaObject::invokeMethod(this, &InsideTab::choose_config_file, Qt::QueuedConnection);
  else if (!file_.empty())
    load(file_);
}

void InsideTab::choose_config_file() {
  const QString path = QFileDialog::getOpenFileName(this, tr("The model's config"), QString(),
                                                    tr("Model configs (*.json);;All files (*)"));
  if (path.isEmpty()) {
    config_->setCurrentIndex(0);
    return;
  }
  int at = config_->findData(path);
  if (at < 0) {
    at = config_->count() - 1;  // before "Config file…"
    config_->insertItem(at, QFileInfo(path).fileName(), path);
  }
  config_->setCurrentIndex(at);
  if (!file_.empty()) load(file_);
}

void InsideTab::loaded(std::shared_ptr<const ModelWeights> model, const QString& path) {
  model_ = std::move(model);
  message_->dismiss();
  shown_run_ = opening_run_;
  // A file that is a listed run's own weights is that run: the Run box and the caption say so.
  if (!shown_run_ && context_.store) {
    std::error_code error;
    for (RunEntry* entry : context_.store->entries())
      if (const auto weights = run_weights(entry->data);
          weights && std::filesystem::equivalent(*weights, path.toStdString(), error))
        shown_run_ = entry->id;
  }
  const RunEntry* run = shown_run_ && context_.store ? context_.store->find(shown_run_) : nullptr;
  const QString from = run ? tr("run %1").arg(QString::fromStdString(run->data.name())) : path;
  model_label_->setText(tr("%1 (%2 parameters), from %3")
                            .arg(QString::fromStdString(model_->config.name))
                            .arg(model_->plan.parameter_count)
                            .arg(from));
  // The Run box names the run the caption names (it said "(choose a run)" where the list was
  // filled before the model arrived).
  runs_->setCurrentIndex(run ? std::max(0, runs_->findData(shown_run_)) : 0);
  digits_->set_model(model_);
  confusion_->set_model(model_);
  network_->set_model(model_);
  speed_->set_model(model_);
  emit model_changed();
}

void InsideTab::failed(const QString& path, const QString& message, bool needs_config) {
  QString text = message;
  if (!needs_config && !message.contains(path)) text = path + ": " + message;
  if (model_) text += "\n" + tr("Still showing the model opened before.");
  message_->show_message(needs_config ? Banner::Kind::Warning : Banner::Kind::Error, text);
  if (needs_config) config_->setFocus();
  runs_->setCurrentIndex(std::max(0, runs_->findData(shown_run_)));
}

void InsideTab::fill_runs() {
  if (!context_.store) return;
  std::set<int> with_weights;
  int newest_new = 0;
  std::vector<std::pair<int, QString>> items{{0, tr("(choose a run)")}};
  for (RunEntry* entry : context_.store->entries()) {  // newest first
    if (entry->live || !run_weights(entry->data)) continue;
    with_weights.insert(entry->id);
    items.emplace_back(entry->id, QString::fromStdString(entry->data.name()));
    if (!newest_new && !runs_with_weights_.count(entry->id)) newest_new = entry->id;
  }
  // Filled again only when it changes: the store updates a training run several times a second,
  // and a list filled anew loses the place of someone choosing in it.
  bool same = runs_->count() == int(items.size());
  for (int i = 0; same && i < runs_->count(); ++i)
    same = runs_->itemData(i).toInt() == items[size_t(i)].first &&
           runs_->itemText(i) == items[size_t(i)].second;
  if (!same) {
    runs_->clear();
    for (const auto& [id, name] : items) runs_->addItem(name, id);
  }
  const bool first_fill = !runs_listed_;
  runs_listed_ = true;
  runs_with_weights_ = std::move(with_weights);
  runs_->setCurrentIndex(std::max(0, runs_->findData(shown_run_)));
  // A run that just finished brings its model, unless a file opened by hand is shown.
  if (newest_new && !first_fill && (shown_run_ != 0 || !model_) && !loading()) show_run(newest_new);
}

void InsideTab::accept_drops_on(QWidget* window, std::function<void()> opened) {
  dropped_ = std::move(opened);
  window->setAcceptDrops(true);
  window->installEventFilter(this);
}

bool InsideTab::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove) {
    auto* drag = static_cast<QDragMoveEvent*>(event);
    if (!dropped_weights(drag->mimeData()).empty()) {
      drag->acceptProposedAction();
      return true;
    }
  } else if (event->type() == QEvent::Drop) {
    auto* drop = static_cast<QDropEvent*>(event);
    const std::filesystem::path path = dropped_weights(drop->mimeData());
    if (!path.empty()) {
      drop->acceptProposedAction();
      open_weights(path);
      if (dropped_) dropped_();
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace gpulab::ui
