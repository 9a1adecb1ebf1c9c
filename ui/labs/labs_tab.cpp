// The Labs tab: loading labs, starting their experiments, and keeping what came of them.
#include "ui/labs/labs_tab.hpp"

#include <QDialogButtonBox>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QShowEvent>
#include <QStackedWidget>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/analysis/chart_builder.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/classkit/hand_in_zip.hpp"
#include "engine/classkit/run_consistency.hpp"
#include "engine/labs/hand_in_manifest.hpp"
#include "engine/labs/lab_hand_in.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/labs/reference_runs.hpp"
#include "engine/records/run_record.hpp"
#include "ui/charts/chart_export.hpp"
#include "ui/charts/chart_render.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/labs/lab_page.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/widgets/floating_bar.hpp"
#include "ui/widgets/status_widgets.hpp"

namespace gpulab::ui {
namespace fs = std::filesystem;
namespace {

// Where the learner's name is kept between starts of gpulab.
const char* kLearnerSetting = "labs/learner";

// A folder chooser that takes a new folder's name too: Qt's own dialog, in folder mode, greys
// its button for a name that does not exist yet and says "Directory not found" on Enter, where
// a hand-in wants a new folder. Here the name typed decides (its list's selection may still hold
// a folder the name passed through as it was typed): a new folder in a folder that exists keeps
// the button enabled, and is made, then chosen. (A platform's own dialog makes new folders itself
// and chooses through selectedFiles().)
class NewFolderDialog : public QFileDialog {
 public:
  NewFolderDialog(QWidget* parent, const QString& caption, const QString& dir)
      : QFileDialog(parent, caption, dir) {
    setFileMode(QFileDialog::Directory);
    setOption(QFileDialog::ShowDirsOnly, true);
    name_ = findChild<QLineEdit*>("fileNameEdit");
    auto* buttons = findChild<QDialogButtonBox*>("buttonBox");
    if (!name_ || !buttons) return;
    // After the dialog's own update of its button (queued: it runs on the same signal first).
    connect(
        name_, &QLineEdit::textChanged, this,
        [this, buttons] {
          const QFileInfo folder(typed());
          if (!folder.filePath().isEmpty() && !folder.exists() &&
              QFileInfo(folder.absolutePath()).isDir())
            if (QPushButton* ok = buttons->button(QDialogButtonBox::Open)) ok->setEnabled(true);
        },
        Qt::QueuedConnection);
  }
  // The folder chosen: the one typed, else the dialog's own choice.
  QString chosen() const {
    if (!chosen_.isEmpty()) return chosen_;
    const QStringList files = selectedFiles();
    return files.size() == 1 ? files.front() : QString();
  }
  void accept() override {
    const QString folder = typed();
    if (!folder.isEmpty()) {
      const QFileInfo info(folder);
      if (!info.exists() && QFileInfo(info.absolutePath()).isDir())
        QDir().mkdir(info.absoluteFilePath());  // what cannot be made, Qt's check then says
      if (QFileInfo(folder).isDir()) {
        chosen_ = QFileInfo(folder).absoluteFilePath();
        QDialog::accept();
        return;
      }
    }
    QFileDialog::accept();
  }

 private:
  // The name field's text as a path (relative to the folder shown), or "" when empty.
  QString typed() const {
    if (!name_ || name_->text().trimmed().isEmpty()) return {};
    const QString text = name_->text().trimmed();
    return QDir::isAbsolutePath(text) ? QDir::cleanPath(text)
                                      : QDir::cleanPath(directory().absoluteFilePath(text));
  }
  QLineEdit* name_ = nullptr;
  QString chosen_;
};

enum LabColumn { kTitle, kMinutes, kHardware, kProgress };
constexpr int kMostProblemLines = 8;  // of one lab file; the rest are counted
// A reference run's line in a lab's charts: a colour of the runs' palette that none of the
// learner's runs in that chart has, each reference its own, beside its legend's "(reference,
// recorded on ...)". (One grey for all of them made a chart of four references four lines that
// no one could tell apart.)
std::vector<QColor> reference_colors(const std::vector<QColor>& taken, size_t count) {
  std::vector<QColor> colors;
  for (int slot = 0; colors.size() < count; ++slot) {
    const QColor color = run_color(slot);
    if (slot >= 64 || std::find(taken.begin(), taken.end(), color) == taken.end())
      colors.push_back(color);
  }
  return colors;
}

// A lab's problems as the engine words them, one a line.
QString problems_text(const Lab& lab) {
  QStringList lines;
  for (const LabProblem& p : lab.problems) {
    if (lines.size() == kMostProblemLines) {
      lines << QObject::tr("… and %n more (gpulab-cli lab check lists them all)", "",
                           int(lab.problems.size()) - kMostProblemLines);
      break;
    }
    lines << QString::fromStdString(p.to_string());
  }
  return lines.join("\n");
}

QString status_text(const LabRunResult& r) {
  const RunSummary& s = *r.summary;
  switch (s.status) {
    case RunStatus::Running:
      return QObject::tr("running… (listed with your runs; the Live tab shows it)");
    case RunStatus::Finished:
      return QObject::tr("finished: %1 steps in %2 s; its row is in the table below")
          .arg(s.steps)
          .arg(s.train_seconds, 0, 'f', 1);
    case RunStatus::Cancelled:
      return QObject::tr("stopped at step %1; run it again to fill its row").arg(s.steps);
    case RunStatus::Failed:
      return QObject::tr("failed: %1").arg(QString::fromStdString(s.message));
  }
  return {};
}

}  // namespace

LabsTab::LabsTab(LabsContext context, QWidget* parent)
    : QWidget(parent), context_(std::move(context)) {
  setObjectName("labs");
  message_ = new Banner(this);
  message_->setObjectName("labs-message");
  list_ = new QTreeWidget(this);
  list_->setObjectName("lab-list");
  list_->setRootIsDecorated(false);
  list_->setHeaderLabels({tr("Lab"), tr("Minutes"), tr("Hardware"), tr("Your progress")});
  list_->header()->setStretchLastSection(true);
  list_->setSelectionMode(QAbstractItemView::SingleSelection);
  stack_ = new QStackedWidget(this);
  // The learner's name, asked once by the first Hand in… and kept in the settings: every
  // hand-in's manifest.json and report give it.
  learner_ = new QLineEdit(QSettings().value(kLearnerSetting).toString(), this);
  learner_->setObjectName("lab-learner");
  learner_->setPlaceholderText(tr("your name, as your hand-ins give it"));
  connect(learner_, &QLineEdit::textEdited, this,
          [](const QString& name) { QSettings().setValue(kLearnerSetting, name.trimmed()); });
  auto* name_row = new QHBoxLayout;
  name_row->addWidget(new QLabel(tr("Your name:"), this));
  name_row->addWidget(learner_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(name_row);
  layout->addWidget(list_);
  layout->addWidget(stack_, 1);
  // The tab's messages (a benchmark's progress, "Handed in: …") float at its bottom, over room the
  // lab's page gives up: at the top they pushed the list and the Run and Hand in buttons down.
  auto* message_room = new QWidget(this);
  message_room->setFixedHeight(0);
  layout->addWidget(message_room);
  new FloatingBar(message_, this, message_room);
  connect(list_, &QTreeWidget::currentItemChanged, this, &LabsTab::show_chosen);

  std::string problem;
  progress_ = load_lab_progress(context_.store->runs_dir(), &problem);
  if (!problem.empty()) report(QString::fromStdString(problem), false);
  // Where the reference runs are is said now; they are read when a lab's page first shows.
  try {
    references_dir_ = reference_runs_dir();
  } catch (const ConfigError& error) {
    report(QString::fromStdString(error.what()), true);
  }
  for (Lab& lab : builtin_labs()) {
    if (lab.ok())
      add_lab(std::move(lab));
    else
      report(tr("A built-in lab could not be loaded:\n") + problems_text(lab), true);
  }
  // The lab files opened before, as they are now; one that went or broke is said once, then
  // forgotten.
  std::vector<std::string> files;
  for (const std::string& file : progress_.files) {
    Lab lab = load_lab_file(file);
    if (!lab.ok()) {
      report(tr("A lab opened before is left out:\n") + problems_text(lab), true);
      continue;
    }
    files.push_back(file);
    add_lab(std::move(lab));
  }
  if (files != progress_.files) {
    progress_.files = files;
    save();
  }
  fit_list();
  list_->installEventFilter(this);  // fitted again to presenter mode's type
  if (list_->topLevelItemCount() > 0) list_->setCurrentItem(list_->topLevelItem(0));

  // Deferred, and coalesced: a run's end reaches the store before the window forgets the run, so
  // whether runs are still training is known only once that is done.
  auto* pending = new QTimer(this);
  pending->setSingleShot(true);
  pending->setInterval(0);
  connect(pending, &QTimer::timeout, this, &LabsTab::refresh);
  // A removed run must leave the charts at once (they point at the runs), and again later.
  connect(context_.store, &RunStore::runs_changed, this, &LabsTab::refresh);
  connect(context_.store, &RunStore::runs_changed, pending, qOverload<>(&QTimer::start));
  connect(context_.store, &RunStore::run_updated, pending, qOverload<>(&QTimer::start));
  // Other programs' load over the last second, for the notice before a lab starts: measured only
  // while the tab is on screen (showEvent, hideEvent), so that an idle window wakes for nothing.
  load_timer_ = new QTimer(this);
  load_timer_->setInterval(1000);
  connect(load_timer_, &QTimer::timeout, this, [this] { recent_load_ = load_meter_.measure(); });
  refresh();
}

LabsTab::~LabsTab() {
  if (bench_.joinable()) bench_.join();
}

void LabsTab::fit_list() {
  // As tall as its labs, up to nine (then it scrolls); the page takes the rest.
  list_->resizeColumnToContents(kTitle);
  const int rows = std::clamp(list_->topLevelItemCount(), 1, 9);
  list_->setFixedHeight(list_->header()->sizeHint().height() +
                        rows * std::max(list_->sizeHintForRow(0), 16) + 2 * list_->frameWidth() +
                        2);
}

bool LabsTab::eventFilter(QObject* watched, QEvent* event) {
  if (watched == list_ &&
      (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange))
    QTimer::singleShot(0, this, &LabsTab::fit_list);  // once the rows know their new height
  return QWidget::eventFilter(watched, event);
}

void LabsTab::report(const QString& text, bool error) {
  message_->add_message(error ? Banner::Kind::Error : Banner::Kind::Warning, text);
}

QString LabsTab::message() const { return message_->text(); }

void LabsTab::add_lab(Lab lab) {
  auto same = std::find_if(labs_.begin(), labs_.end(),
                           [&](const Lab& l) { return l.source == lab.source; });
  const size_t index = size_t(same - labs_.begin());
  QTreeWidgetItem* item;
  if (same != labs_.end()) {  // opened again: the file as it is now, its page made afresh
    *same = std::move(lab);
    if (LabPage* old = pages_[index]) {
      stack_->removeWidget(old);
      old->deleteLater();
      pages_[index] = nullptr;
    }
    item = list_->topLevelItem(int(index));
  } else {
    labs_.push_back(std::move(lab));
    pages_.push_back(nullptr);
    stale_.push_back(false);
    item = new QTreeWidgetItem(list_);
  }
  const Lab& added = labs_[index];
  fit_list();
  item->setText(kTitle, QString::fromStdString(added.title));
  item->setToolTip(kTitle, QString::fromStdString(added.source));
  item->setText(kMinutes, QString::number(added.minutes));
  item->setTextAlignment(kMinutes, Qt::AlignRight | Qt::AlignVCenter);
  item->setText(kHardware, QString::fromStdString(added.hardware_text()));
  refresh_lab(index);
  if (list_->currentItem() == item) show_chosen();
}

void LabsTab::read_references() {
  if (references_read_) return;
  references_read_ = true;
  if (references_dir_.empty()) return;
  references_ = load_reference_runs(references_dir_);
  for (const std::string& left_out : references_.problems)
    report(tr("A reference run is left out: %1").arg(QString::fromStdString(left_out)), false);
}

LabPage* LabsTab::page_at(size_t index) {
  if (pages_[index]) {
    if (stale_[index]) refresh_lab(index, true);
    return pages_[index];
  }
  read_references();  // the page's rows of GPU experiments may show one
  auto* page = new LabPage(labs_[index], stack_);
  const std::string source = labs_[index].source;
  connect(page, &LabPage::run_requested, this, [this, source](const QString& experiment) {
    run_experiments(source, experiment.toStdString());
  });
  connect(page, &LabPage::hand_in_requested, this,
          [this, source](bool zip) { hand_in_dialog(source, zip); });
  connect(page, &LabPage::live_requested, this, [this] {
    if (context_.show_live) context_.show_live();
  });
  connect(page, &LabPage::written, this, [this, source](const QString& q, const QString& text) {
    progress_.labs[source].written[q.toStdString()] = text.toStdString();
    save();
  });
  connect(page, &LabPage::answered, this, [this, source](int question, int choice) {
    for (size_t i = 0; i < labs_.size(); ++i)
      if (labs_[i].source == source) answer(i, question, choice);
  });
  stack_->addWidget(page);
  pages_[index] = page;
  refresh_lab(index, true);
  return page;
}

void LabsTab::show_chosen() {
  if (isVisible()) current_page();
}

void LabsTab::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  load_meter_ = OutsideLoadMeter();  // from now on, not since the tab was last on screen
  recent_load_ = nlohmann::json();
  load_timer_->start();
  show_chosen();
}

void LabsTab::hideEvent(QHideEvent* event) {
  QWidget::hideEvent(event);
  load_timer_->stop();
}

bool LabsTab::open_lab(const fs::path& path) {
  std::error_code error;
  const fs::path file = fs::absolute(path, error);
  // A copy of a built-in lab (the source tree's resources/labs/NAME.md) is that lab, chosen: it
  // was listed twice under one title.
  if (const std::string builtin = builtin_lab_source_of(error ? path : file); !builtin.empty()) {
    select_lab(builtin);
    return true;
  }
  Lab lab = load_lab_file(error ? path : file);
  if (!lab.ok()) {
    report(tr("The lab file could not be loaded; the other labs are still here:\n") +
               problems_text(lab),
           true);
    return false;
  }
  const std::string source = lab.source;
  add_lab(std::move(lab));
  if (std::find(progress_.files.begin(), progress_.files.end(), source) == progress_.files.end()) {
    progress_.files.push_back(source);
    save();
  }
  select_lab(source);
  return true;
}

void LabsTab::open_lab_dialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open a lab"), open_dir_,
                                                    tr("Labs (*.md);;All files (*)"));
  if (path.isEmpty()) return;
  open_dir_ = QFileInfo(path).absolutePath();
  open_lab(path.toStdString());
}

void LabsTab::hand_in_dialog(const std::string& lab_name, bool zip) {
  if (learner_->text().trimmed().isEmpty()) {
    bool given = false;
    const QString name = QInputDialog::getText(
        this, tr("Hand in"),
        tr("Your name, as your hand-ins give it (asked once; change it above the labs):"),
        QLineEdit::Normal, {}, &given);
    if (!given || name.trimmed().isEmpty()) return;
    learner_->setText(name.trimmed());
    QSettings().setValue(kLearnerSetting, name.trimmed());
  }
  NewFolderDialog dialog(this,
                         tr("Hand in: choose or name an empty folder (or the lab's earlier "
                            "hand-in)"),
                         hand_in_dir_);
  if (dialog.exec() != QDialog::Accepted) return;
  const QString dir = dialog.chosen();
  if (dir.isEmpty()) return;
  hand_in_dir_ = dir;
  hand_in(lab_name, dir.toStdString(), zip);
}

bool LabsTab::hand_in(const std::string& lab_name, const fs::path& dir, bool zip) {
  LabPage* lab_page = page(lab_name);
  if (!lab_page) return false;
  const Lab& lab = lab_page->lab();
  fs::path zip_file;
  std::vector<std::string> warnings;
  try {
    if (learner_->text().trimmed().isEmpty())
      throw ConfigError(tr("type your name in \"Your name\" above the labs first: a hand-in "
                           "says whose it is")
                            .toStdString());
    LabHandIn h;
    h.learner = checked_learner(learner_->text().toStdString(), tr("Your name").toStdString());
    // Held to the end: a second hand-in into the folder is refused, never mixed with this one.
    const FolderWriteLock dir_lock(dir, tr("Hand in to").toStdString());
    check_hand_in_folder(dir, lab, tr("Hand in to").toStdString());
    h.results = lab_page->results();
    // As `lab hand-in` does: a shipped reference run copied into the runs is refused before
    // anything is written, and a run of other settings than its experiment's is said.
    std::vector<RunData> runs;
    for (const LabRunResult& r : h.results)
      if (r.recorded_on.empty() && !r.run_dir.empty()) try {
          runs.push_back(load_run(r.run_dir));
        } catch (const std::exception&) {  // a damaged record: lab verify names it
        }
    std::vector<std::string> gpus;
    for (const GpuInfo& gpu : context_.devices.gpus) gpus.push_back(gpu.name);
    if (const std::string problem = shipped_run_problem(h.results, runs, gpus); !problem.empty())
      throw ConfigError(problem);
    warnings = setting_warnings(lab, h.results, runs);
    const auto kept = progress_.labs.find(lab.source);
    add_record_answers(h, lab, kept == progress_.labs.end() ? nullptr : &kept->second);
    h.answers = lab_page->answers();
    h.machine = context_.devices;
    h.host = this_process_json().value("host", "");
    h.date = iso_time_now();
    h.made_by = "the gpulab window";
    // Written beside the folder and swapped in whole: a reader finds the earlier hand-in or this.
    replace_folder_atomically(dir, [&](const fs::path& staging) {
      // The charts as the page shows them, at the size `gpulab-cli export` draws.
      for (size_t c = 0; c < lab.charts.size(); ++c) {
        ChartView* view = lab_page->chart(c);
        QString error;
        if (view->chart().runs.empty())
          error = tr("no finished runs to draw");
        else
          for (const auto& [format, name] :
               {std::pair{ExportFormat::Png, "png"}, std::pair{ExportFormat::Svg, "svg"}})
            if (error.isEmpty())
              view->export_to(
                  QString::fromStdString((staging / hand_in_chart_file(lab, c, name)).string()),
                  format, &error, kExportWidth, kExportHeight);
        h.charts_missing.push_back(error.toStdString());
      }
      write_hand_in(staging, lab, h);
    });
    if (zip) {
      // Beside the folder, never in it: the folder is the zip's one top-level entry.
      fs::path folder = dir.lexically_normal();
      if (folder.filename().empty()) folder = folder.parent_path();
      zip_file = folder.parent_path() / hand_in_zip_name(h.learner, lab.name);
      write_hand_in_zip(folder, zip_file);
    }
  } catch (const std::exception& e) {
    report(tr("The lab was not handed in: %1").arg(QString::fromStdString(e.what())), true);
    return false;
  }
  const QString readme = QString::fromStdString((dir / "README.md").string());
  lab_page->set_hand_in_text(
      tr("Handed in to %1: open README.md there for the report; answers.json, machine.json, "
         "manifest.json, the tables, charts and runs are beside it.%2")
          .arg(QString::fromStdString(dir.string()),
               zip_file.empty() ? QString()
                                : tr(" Packed into %1 to upload.")
                                      .arg(QString::fromStdString(zip_file.string()))));
  message_->add_message(Banner::Kind::Info, tr("Handed in: %1").arg(readme));
  for (const std::string& warning : warnings)
    message_->add_message(Banner::Kind::Warning,
                          tr("Handed in, but %1").arg(QString::fromStdString(warning)));
  return true;
}

bool LabsTab::select_lab(const std::string& name) {
  for (size_t i = labs_.size(); i-- > 0;)
    if (labs_[i].source == name || labs_[i].name == name) {
      list_->setCurrentItem(list_->topLevelItem(int(i)));
      return true;
    }
  return false;
}

LabPage* LabsTab::page(const std::string& name) {
  for (size_t i = labs_.size(); i-- > 0;)
    if (labs_[i].source == name || labs_[i].name == name) return page_at(i);
  return nullptr;
}

LabPage* LabsTab::current_page() {
  const int row = list_->indexOfTopLevelItem(list_->currentItem());
  if (row < 0) return nullptr;
  LabPage* page = page_at(size_t(row));
  stack_->setCurrentWidget(page);
  return page;
}

int LabsTab::run_experiments(const std::string& lab_name, const std::string& experiment) {
  const auto it = std::find_if(labs_.begin(), labs_.end(), [&](const Lab& l) {
    return l.source == lab_name || l.name == lab_name;
  });
  if (it == labs_.end()) return 0;
  const size_t index = size_t(it - labs_.begin());
  const Lab& lab = *it;
  if (context_.busy() || bench_.joinable()) {
    report(tr("Runs are training: wait for them to end, or stop them, then run the lab's "
              "experiments (a run measured beside others is not measured alone)."),
           false);
    return 0;
  }
  std::vector<const LabExperiment*> training, benches;
  for (const LabExperiment& e : lab.experiments)
    if ((experiment.empty() || e.name == experiment) &&
        missing_hardware(e, context_.devices).empty())
      (e.bench.empty() ? training : benches).push_back(&e);
  if (training.empty() && benches.empty()) return 0;
  // Said before anything starts, so that the learner may wait rather than keep marked figures.
  if (QString busy = QString::fromStdString(busy_machine_notice(recent_load_)); !busy.isEmpty())
    report(busy.replace(0, 1, busy[0].toUpper()), false);
  if (training.empty()) {
    run_matmul(index, *benches.front());
    return 1;
  }
  std::vector<RunRequest> requests;
  for (const LabExperiment* e : training) {
    requests.push_back(lab_run_request(*e));
    requests.back().name = lab_run_name(lab, *e);
  }
  const int started = context_.start(requests);
  if (started == 0) return 0;
  // The runs are in the store now, live: their folders are this lab's results from here on.
  LabRecord& record = progress_.labs[lab.source];
  for (const LabExperiment* e : training)
    for (RunEntry* entry : context_.store->entries())
      if (entry->live && entry->data.name() == lab_run_name(lab, *e)) {
        record.runs[e->name] = entry->data.dir.string();
        break;
      }
  save();
  refresh();
  return started;
}

void LabsTab::run_matmul(size_t index, const LabExperiment& e) {
  bench_lab_ = labs_[index].source;
  bench_experiment_ = e.name;
  bench_ = std::thread([this, e] {
    LabRunResult timed;
    std::string error;
    try {
      timed = run_lab_bench(e, e.sizes);
    } catch (const std::exception& failure) {
      error = failure.what();
    }
    QMetaObject::invokeMethod(
        this,
        [this, timed, error] {
          bench_.join();
          if (error.empty()) {
            LabRecord& record = progress_.labs[bench_lab_];
            record.matmul[bench_experiment_] = timed.matmul;
            record.matmul_load[bench_experiment_] = timed.outside_load;
          } else
            report(
                tr("The matrix-multiply benchmark failed: %1").arg(QString::fromStdString(error)),
                true);
          bench_lab_.clear();
          bench_experiment_.clear();
          save();
          refresh();
        },
        Qt::QueuedConnection);
  });
  refresh();
}

void LabsTab::refresh() {
  for (size_t i = 0; i < labs_.size(); ++i) refresh_lab(i);
}

void LabsTab::refresh_lab(size_t index, bool fill_page) {
  const Lab& lab = labs_[index];
  LabPage* page = pages_[index];
  if (page && !fill_page && stack_->currentWidget() != page) {
    stale_[index] = true;  // page_at fills it when it is wanted
    page = nullptr;
  }
  if (page) stale_[index] = false;
  const auto found = progress_.labs.find(lab.source);
  const LabRecord* record = found == progress_.labs.end() ? nullptr : &found->second;
  std::vector<LabRunResult> results;
  std::vector<ExperimentState> states;
  std::map<std::string, RunEntry*> finished_runs;  // experiment -> its run, for the charts
  // experiment -> the reference run its row shows, drawn beside them marked as recorded elsewhere
  std::map<std::string, const RunData*> reference_runs;
  int done = 0;
  const std::vector<RunEntry*> entries = context_.store->entries();  // newest first
  std::vector<const RunData*> entry_runs;
  for (RunEntry* entry : entries) entry_runs.push_back(&entry->data);
  for (const LabExperiment& e : lab.experiments) {
    ExperimentState state;
    state.missing = missing_hardware(e, context_.devices);
    state.status = tr("not run yet").toStdString();
    LabRunResult result;
    result.experiment = e.name;
    bool have = false;
    if (!e.bench.empty()) {
      const bool timing = bench_lab_ == lab.source && bench_experiment_ == e.name;
      if (record && record->matmul.count(e.name)) {
        result.matmul = record->matmul.at(e.name);
        if (const auto load = record->matmul_load.find(e.name); load != record->matmul_load.end())
          add_bench_load(result, load->second);
        have = true;
        ++done;
        state.status =
            tr("timed %n size(s); the table below has them", "", int(result.matmul.size()))
                .toStdString();
      }
      if (timing) state.status = tr("timing the products… (a few seconds)").toStdString();
      state.running = timing;
    } else {
      // Its run: the folder it last ran in, else the newest run of its name.
      const int found_run = experiment_run(lab, e, record, entry_runs);
      RunEntry* run = found_run < 0 ? nullptr : entries[size_t(found_run)];
      if (run) {
        result = lab_run_result(e.name, run->data);
        have = true;
        state.running = run->live;
        state.own_run = true;
        state.status = status_text(result).toStdString();
        if (!run->live) finished_runs[e.name] = run;
        done += result.summary->status == RunStatus::Finished;
      }
    }
    if (page && !have && !state.missing.empty()) {
      // The learner's own run always wins; without one, a run recorded on a GPU elsewhere.
      if (auto reference = reference_result(lab, e, references_)) {
        result = std::move(*reference);
        state.reference = result.recorded_on;
        for (const RunData& run : references_.runs)
          if (run.dir == result.run_dir) reference_runs[e.name] = &run;
        have = true;
      } else {
        result.skipped = skipped_note(state.missing, context_.devices);
      }
    }
    if (have || !result.skipped.empty()) results.push_back(std::move(result));
    states.push_back(std::move(state));
  }
  // Answers kept by their text, shown as the choices they name.
  const std::vector<int> answers = quiz_answers(lab, record);
  const int answered =
      int(std::count_if(answers.begin(), answers.end(), [](int a) { return a >= 0; }));
  // A lab whose page is not made yet has only its progress column to show.
  if (page) {
    page->set_states(states, context_.busy() || bench_.joinable());
    page->set_results(results);
    for (size_t c = 0; c < lab.charts.size(); ++c) {
      std::vector<const RunData*> runs;
      std::vector<QColor> colors;
      std::vector<size_t> references;  // their places in runs
      for (const LabExperiment& e : lab.experiments) {
        const auto& wanted = lab.charts[c].experiments;
        if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), e.name) == wanted.end())
          continue;
        if (const auto run = finished_runs.find(e.name); run != finished_runs.end()) {
          runs.push_back(&run->second->data);
          colors.push_back(run->second->color);
        } else if (const auto reference = reference_runs.find(e.name);
                   reference != reference_runs.end()) {
          references.push_back(runs.size());
          runs.push_back(reference->second);
          colors.emplace_back();
        }
      }
      const std::vector<QColor> free = reference_colors(colors, references.size());
      for (size_t i = 0; i < references.size(); ++i) colors[references[i]] = free[i];
      page->set_chart_runs(c, std::move(runs), std::move(colors));
    }
    page->set_answers(answers);
    std::vector<bool> open;
    for (const QuizQuestion& q : lab.quiz)
      open.push_back(quiz_attempts_left(lab, record, q.question) != 0);
    page->set_quiz_open(open);
    page->set_written(record ? record->written : std::map<std::string, std::string>{});
  }
  QString progress = tr("%1 of %2 experiments run").arg(done).arg(lab.experiments.size());
  if (!lab.quiz.empty()) {
    progress += tr(" · quiz %1 of %2 right (%3 answered)")
                    .arg(quiz_score(lab, answers))
                    .arg(lab.quiz.size())
                    .arg(answered);
    // The first-attempt score, as the hand-in reports it, once any question was answered again.
    LabHandIn kept;
    add_record_answers(kept, lab, record);
    const auto attempts = hand_in_attempts(lab, kept);
    if (std::any_of(attempts.begin(), attempts.end(), [](const auto& a) { return a.size() > 1; }))
      progress += tr(", %1 right at the first attempt").arg(first_attempt_score(lab, kept));
  }
  list_->topLevelItem(int(index))->setText(kProgress, progress);
}

void LabsTab::answer(size_t index, int question, int choice) {
  const Lab& lab = labs_[index];
  const QuizQuestion& q = lab.quiz.at(size_t(question));
  // Every answer is kept in order, so the hand-in gives the first-attempt score too.
  if (!record_quiz_answer(lab, progress_.labs[lab.source], q.question,
                          q.choices.at(size_t(choice)).text, iso_time_now()))
    report(tr("\"%1\" takes %2 answer(s) in this lab, and has them.")
               .arg(QString::fromStdString(q.question))
               .arg(lab.quiz_attempts),
           false);
  save();
  refresh_lab(index);
}

void LabsTab::save() {
  std::string problem;
  if (!save_lab_progress(context_.store->runs_dir(), progress_, &problem))
    message_->set_line(
        "save", Banner::Kind::Warning,
        tr("Your lab progress could not be saved: %1").arg(QString::fromStdString(problem)));
  else
    message_->set_line("save", Banner::Kind::Warning, {});
}

}  // namespace gpulab::ui
