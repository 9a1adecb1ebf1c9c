// The window's runs.
#include "ui/runs/run_store.hpp"

#include <algorithm>

#include <QFileSystemWatcher>
#include <QSettings>
#include <QTimer>

#include "engine/analysis/run_figures.hpp"
#include "engine/base/errors.hpp"
#include "engine/records/run_names.hpp"
#include "ui/charts/chart_render.hpp"

namespace gpulab::ui {
namespace fs = std::filesystem;

RunStore::RunStore(fs::path runs_dir, QObject* parent)
    : QObject(parent), runs_dir_(std::move(runs_dir)) {
  // Connected before any view is: every run is named among all of them before anything that
  // hears of a change reads a name, so the list, Compare, the charts and the exports agree.
  connect(this, &RunStore::runs_changed, this, &RunStore::name_all);
  connect(this, &RunStore::run_updated, this, &RunStore::name_all);
}

void RunStore::name_all() {
  std::vector<RunData*> runs;
  for (auto& e : entries_) runs.push_back(&e->data);
  name_runs(runs);
}

RunStore::~RunStore() {
  // Results posted after this are dropped with the object; the record being read is finished.
  stop_loading_ = true;
  if (loader_.joinable()) loader_.join();
}

RunEntry* RunStore::add(RunData data) {
  auto entry = std::make_unique<RunEntry>();
  entry->id = next_id_++;
  entry->data = std::move(data);
  const auto saved = saved_colors_.find(entry->data.dir.string());
  set_color_slot(*entry,
                 saved != saved_colors_.end() ? saved->second : free_color_slot(nullptr, false));
  entries_.push_back(std::move(entry));
  return entries_.back().get();
}

int RunStore::free_color_slot(const RunEntry* except, bool among_checked) const {
  std::vector<int> users(size_t(kRunColorCount), 0);
  for (const auto& e : entries_)
    if (e.get() != except && (!among_checked || e->checked))
      ++users[size_t(e->color_slot % kRunColorCount)];
  return int(std::min_element(users.begin(), users.end()) - users.begin());
}

void RunStore::set_color_slot(RunEntry& entry, int slot) {
  entry.color_slot = ((slot % kRunColorCount) + kRunColorCount) % kRunColorCount;
  entry.color = run_color(entry.color_slot);
}

void RunStore::restore(const std::vector<std::string>& checked,
                       const std::map<std::string, int>& colors) {
  saved_colors_ = colors;
  saved_checked_ = checked;
  for (auto& e : entries_) {
    const std::string dir = e->data.dir.string();
    if (auto it = colors.find(dir); it != colors.end()) set_color_slot(*e, it->second);
    e->checked = std::find(checked.begin(), checked.end(), dir) != checked.end();
  }
  emit runs_changed();
}

std::vector<std::string> RunStore::checked_dirs() {
  std::vector<std::string> dirs;
  for (RunEntry* e : checked())
    if (!e->data.dir.empty()) dirs.push_back(e->data.dir.string());
  return dirs;
}

std::map<std::string, int> RunStore::color_slots() {
  std::map<std::string, int> by_dir = saved_colors_;  // runs not loaded this time keep theirs
  for (const auto& e : entries_)
    if (!e->data.dir.empty()) by_dir[e->data.dir.string()] = e->color_slot;
  return by_dir;
}

QStringList RunStore::load_all() {
  QStringList problems;
  std::vector<std::string> errors;
  std::vector<RunData> runs;
  std::vector<fs::path> large;
  for (const fs::path& folder : run_folders(runs_dir_, &errors)) {
    if (record_bytes(folder) > kBackgroundLoadBytes) {
      large.push_back(folder);
      continue;
    }
    try {
      runs.push_back(load_run(folder));
    } catch (const RecordError& e) {
      errors.push_back(e.what());
    }
  }
  sort_newest_first(runs);
  for (RunData& run : runs) add(std::move(run));
  for (const auto& e : errors) problems << QString::fromStdString(e);
  if (read_only()) {  // a hand-in's runs: nothing made, watched or remembered
    emit runs_changed();
    if (!large.empty()) load_in_background(std::move(large));
    return problems;
  }
  watch_runs_dir();
  QSettings settings;
  for (const QString& folder : settings.value("runs/imports").toStringList()) {
    const fs::path path = folder.toStdString();
    std::error_code missing;
    if (!fs::exists(path, missing)) continue;  // moved or deleted since: forget it quietly
    import_folder(path, &problems);
  }
  emit runs_changed();
  if (!large.empty()) load_in_background(std::move(large));
  return problems;
}

void RunStore::load_in_background(std::vector<fs::path> folders) {
  if (loader_.joinable()) loader_.join();  // a load_all before this one (never in the window)
  pending_ = int(folders.size());
  for (const fs::path& folder : folders) loading_dirs_.insert(folder.string());
  emit background_loading(pending_, {});
  loader_ = std::thread([this, folders = std::move(folders)] {
    for (const fs::path& folder : folders) {
      if (stop_loading_) return;
      auto run = std::make_shared<RunData>();
      auto problem = std::make_shared<QString>();
      try {
        *run = load_run(folder);
        thin_for_drawing(*run, kMaxDrawnSteps);
      } catch (const RecordError& e) {  // names the file
        *problem = QString::fromStdString(e.what());
      } catch (const std::exception& e) {  // memory running out
        *problem = QString::fromStdString(folder.string() + ": " + e.what());
      }
      QMetaObject::invokeMethod(
          this,
          [this, run, problem, folder] {
            --pending_;
            loading_dirs_.erase(folder.string());
            if (problem->isEmpty()) {
              RunEntry* entry = add(std::move(*run));
              const std::string dir = entry->data.dir.string();
              entry->checked = std::find(saved_checked_.begin(), saved_checked_.end(), dir) !=
                               saved_checked_.end();
              emit runs_changed();
            }
            emit background_loading(pending_, *problem);
          },
          Qt::QueuedConnection);
    }
  });
}

QString RunStore::read_only_refusal() const {
  return tr("the runs of %1 are opened read-only: nothing is renamed, deleted or added there; "
            "use Back to my runs for your own runs")
      .arg(owner_);
}

int RunStore::import_folder(const fs::path& folder, QStringList* problems) {
  if (read_only()) {
    if (problems) *problems << read_only_refusal();
    return 0;
  }
  int added = 0;
  std::vector<RunData> runs;
  if (holds_run(folder)) {
    try {
      runs.push_back(load_run(folder));
    } catch (const RecordError& e) {
      if (problems) *problems << QString::fromStdString(e.what());
    }
  } else {
    std::vector<std::string> errors;
    runs = load_runs(folder, &errors);
    if (problems)
      for (const auto& e : errors) *problems << QString::fromStdString(e);
    if (runs.empty() && errors.empty() && problems)
      *problems << QString::fromStdString(folder.string()) +
                       tr(": no gpulab runs here (a run folder holds run.json)");
  }
  for (RunData& run : runs) {
    if (find_dir(run.dir)) continue;
    add(std::move(run));
    ++added;
  }
  if (added > 0) {
    if (std::find(imports_.begin(), imports_.end(), folder) == imports_.end() &&
        folder.parent_path() != runs_dir_ && folder != runs_dir_) {
      imports_.push_back(folder);
      remember_imports();
    }
    emit runs_changed();
  }
  return added;
}

void RunStore::remember_imports() {
  QStringList folders;
  for (const auto& f : imports_) folders << QString::fromStdString(f.string());
  QSettings settings;
  QStringList kept = settings.value("runs/imports").toStringList();
  for (const QString& f : folders)
    if (!kept.contains(f)) kept << f;
  settings.setValue("runs/imports", kept);
}

RunEntry* RunStore::add_live(RunData data) {
  RunEntry* entry = add(std::move(data));
  entry->live = true;
  entry->checked = true;
  set_color_slot(*entry, free_color_slot(entry, true));
  emit runs_changed();
  return entry;
}

void RunStore::set_started(int id, const RunStart& start) {
  RunEntry* entry = find(id);
  if (!entry) return;
  entry->data.dir = start.dir;
  saved_colors_[start.dir.string()] = entry->color_slot;
  entry->data.info["plan"] = {{"epochs", start.plan.epochs},
                              {"steps_per_epoch", start.plan.steps_per_epoch},
                              {"total_steps", start.plan.total_steps}};
  if (!entry->data.info.contains("devices"))
    entry->data.info["devices"] = nlohmann::json::array({{{"description", start.device}}});
  emit run_updated(id);
}

void RunStore::append(int id, FeedBatch& batch) {
  RunEntry* entry = find(id);
  if (!entry) return;
  RunData& data = entry->data;
  data.steps.insert(data.steps.end(), batch.steps.begin(), batch.steps.end());
  data.evals.insert(data.evals.end(), batch.evals.begin(), batch.evals.end());
  data.samples.insert(data.samples.end(), batch.samples.begin(), batch.samples.end());
  data.lr_changes.insert(data.lr_changes.end(), batch.lr_changes.begin(), batch.lr_changes.end());
  if (!batch.epochs.empty()) {
    // The epoch times, so comparisons see them before the run ends.
    auto& epochs = data.info["summary"]["epochs"];
    if (!epochs.is_array()) epochs = nlohmann::json::array();
    for (const EpochSummary& e : batch.epochs)
      epochs.push_back({{"epoch", e.epoch}, {"seconds", e.seconds}, {"steps", e.steps}});
    emit run_updated(id);
  }
}

void RunStore::finish(int id, RunStatus status, const std::string& message) {
  RunEntry* entry = find(id);
  if (!entry) return;
  entry->live = false;
  entry->paused = false;
  // The record on disk is the authority for status and summary; the points already here stay,
  // so charts keep pointing at the same data.
  bool reread = false;
  if (!entry->data.dir.empty()) {
    try {
      entry->data.info = load_run_info(entry->data.dir);
      reread = true;
    } catch (const RecordError&) {
    }
  }
  if (!reread) {
    entry->data.info["status"] = run_status_name(status);
    entry->data.info["message"] = message;
  }
  emit run_updated(id);
}

bool RunStore::rename(int id, const QString& name, QString* error) {
  RunEntry* entry = find(id);
  if (!entry) return false;
  if (read_only()) {
    if (error) *error = read_only_refusal();
    return false;
  }
  const QString trimmed = name.trimmed();
  if (trimmed.isEmpty()) {
    if (error) *error = tr("a run needs a name");
    return false;
  }
  nlohmann::json info = entry->data.info;
  info["name"] = trimmed.toStdString();
  if (!entry->live && !entry->data.dir.empty()) {
    try {
      // Re-read first, so a rename never overwrites what the record gained meanwhile.
      nlohmann::json on_disk = load_run_info(entry->data.dir);
      on_disk["name"] = trimmed.toStdString();
      write_file_atomically(entry->data.dir / "run.json", on_disk.dump(2) + "\n");
      info = on_disk;
    } catch (const std::exception& e) {
      if (error) *error = QString::fromStdString(e.what());
      return false;
    }
  }
  entry->data.info = info;
  emit runs_changed();
  return true;
}

bool RunStore::remove(int id, QString* error) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e->id == id; });
  if (it == entries_.end()) return false;
  if (read_only()) {
    if (error) *error = read_only_refusal();
    return false;
  }
  if ((*it)->live) {
    if (error) *error = tr("this run is still training: stop it first");
    return false;
  }
  if ((*it)->data.written_elsewhere()) {
    if (error) *error = tr("another process is still writing this run: stop it first");
    return false;
  }
  const fs::path dir = (*it)->data.dir;
  if (!dir.empty() && holds_run(dir)) {
    std::error_code failure;
    fs::remove_all(dir, failure);
    if (failure) {
      if (error) *error = QString::fromStdString(dir.string() + ": " + failure.message());
      return false;
    }
  }
  entries_.erase(it);
  emit runs_changed();
  return true;
}

void RunStore::set_checked(int id, bool checked) {
  RunEntry* entry = find(id);
  if (!entry || entry->checked == checked) return;
  entry->checked = checked;
  // Shown runs keep their colour unless another shown run has it.
  if (checked && std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) {
        return e.get() != entry && e->checked && e->color_slot == entry->color_slot;
      }))
    set_color_slot(*entry, free_color_slot(entry, true));
  emit runs_changed();
}

void RunStore::show_only_latest(int count) {
  bool changed = false;
  for (RunEntry* entry : entries()) {  // newest first
    const bool checked = count-- > 0;
    if (entry->checked == checked) continue;
    entry->checked = checked;
    changed = true;
    if (checked && std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) {
          return e.get() != entry && e->checked && e->color_slot == entry->color_slot;
        }))
      set_color_slot(*entry, free_color_slot(entry, true));
  }
  if (changed) emit runs_changed();
}

void RunStore::watch_runs_dir() {
  if (watcher_) return;
  std::error_code ignored;
  fs::create_directories(runs_dir_, ignored);  // so that it can be watched before the first run
  watcher_ = new QFileSystemWatcher(this);
  watcher_->addPath(QString::fromStdString(runs_dir_.string()));
  rescan_timer_ = new QTimer(this);
  rescan_timer_->setSingleShot(true);
  rescan_timer_->setInterval(300);
  connect(rescan_timer_, &QTimer::timeout, this, &RunStore::rescan);
  connect(watcher_, &QFileSystemWatcher::directoryChanged, rescan_timer_,
          qOverload<>(&QTimer::start));
}

RunEntry* RunStore::find_dir(const fs::path& dir) {
  // The same spelling first: a rescan looks up every folder of the runs folder, and asking the
  // file system (two stats a run) is only needed for a folder reached another way.
  for (auto& e : entries_)
    if (e->data.dir == dir) return e.get();
  for (auto& e : entries_) {
    std::error_code ignored;
    if (fs::equivalent(e->data.dir, dir, ignored)) return e.get();
  }
  return nullptr;
}

void RunStore::rescan() {
  if (!watcher_) return;  // a hand-in's runs, never watched: they do not change
  // A run whose folder was deleted or moved away (by hand, by another program) leaves the list,
  // as a deleted import is forgotten at start; one still training here stays.
  bool changed = false;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const fs::path& dir = (*it)->data.dir;
    std::error_code ignored;
    if ((*it)->live || dir.empty() || loading_dirs_.count(dir.string()) ||
        fs::exists(dir / "run.json", ignored)) {
      ++it;
      continue;
    }
    if (watched_runs_.erase(dir.string()) > 0)
      watcher_->removePath(QString::fromStdString(dir.string()));
    it = entries_.erase(it);
    changed = true;
  }
  std::vector<std::string> unreadable;  // reported at start; here they wait for their next change
  std::vector<fs::path> large;
  for (const fs::path& dir : run_folders(runs_dir_, &unreadable)) {
    if (loading_dirs_.count(dir.string())) continue;  // the background load adds it
    RunEntry* known = find_dir(dir);
    if (known && (known->live || !watched_runs_.count(dir.string()))) continue;
    // A large record is read as at start, on the loader's thread, never on the window's.
    if (!known && record_bytes(dir) > kBackgroundLoadBytes) {
      large.push_back(dir);
      continue;
    }
    RunData run;
    try {
      run = load_run(dir);
    } catch (const RecordError&) {
      continue;  // being written: looked at again at its next change
    }
    // A run still going is read again when its folder changes (run.json is replaced at its end).
    const bool running = run.status() == "running";
    if (running && watched_runs_.insert(dir.string()).second)
      watcher_->addPath(QString::fromStdString(dir.string()));
    if (!running && watched_runs_.erase(dir.string()) > 0)
      watcher_->removePath(QString::fromStdString(dir.string()));
    if (known) {
      known->data = std::move(run);
      emit run_updated(known->id);
    } else {
      add(std::move(run));
    }
    changed = true;
  }
  if (changed) emit runs_changed();
  // One background load at a time: with one under way, the next change of the folder asks again.
  if (!large.empty() && pending_ == 0) load_in_background(std::move(large));
}

void RunStore::set_paused(int id, bool paused) {
  RunEntry* entry = find(id);
  if (!entry || entry->paused == paused) return;
  entry->paused = paused;
  emit run_updated(id);
}

RunEntry* RunStore::find(int id) {
  for (auto& e : entries_)
    if (e->id == id) return e.get();
  return nullptr;
}

namespace {

// The order runs were made in: by creation time, then as they were listed.
bool made_earlier(const RunEntry* a, const RunEntry* b) {
  const std::string ta = a->data.info.value("created", ""), tb = b->data.info.value("created", "");
  return ta != tb ? ta < tb : a->id < b->id;
}

}  // namespace

std::vector<RunEntry*> RunStore::entries() {
  std::vector<RunEntry*> all;
  for (auto& e : entries_) all.push_back(e.get());
  std::stable_sort(all.begin(), all.end(), [](RunEntry* a, RunEntry* b) { return made_earlier(b, a); });
  return all;
}

std::vector<RunEntry*> RunStore::checked() {
  std::vector<RunEntry*> ticked;
  for (auto& e : entries_)
    if (e->checked) ticked.push_back(e.get());
  std::stable_sort(ticked.begin(), ticked.end(), made_earlier);
  return ticked;
}

}  // namespace gpulab::ui
