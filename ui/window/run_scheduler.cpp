// Run scheduling: waves, fair races, pause and stop.
#include "ui/window/run_scheduler.hpp"

#include <QStringList>
#include <algorithm>
#include <map>

#include "engine/analysis/race_verdict.hpp"
#include "engine/records/run_record.hpp"
#include "engine/session/hardware_share.hpp"
#include "engine/training/experiment.hpp"
#include "ui/runs/run_controller.hpp"
#include "ui/runs/run_store.hpp"

namespace gpulab::ui {

RunScheduler::RunScheduler(RunStore* store, std::shared_ptr<DataCache> cache, QObject* parent)
    : QObject(parent), store_(store), cache_(std::move(cache)) {}

int RunScheduler::start(std::vector<RunRequest> requests, bool at_once) {
  // A fair race: runs that share hardware go one after another, so each is measured alone.
  std::vector<std::string> devices;
  for (const RunRequest& r : requests) devices.push_back(r.backend.device);
  const auto waves = race_waves(devices, at_once);
  for (size_t i = 0; at_once && i < requests.size(); ++i)
    for (size_t j = 0; j < requests.size(); ++j)
      if (j != i && share_hardware(devices[i], devices[j]))
        requests[i].concurrent_with.push_back(requests[j].name);
  queued_waves_.clear();
  for (size_t w = 1; w < waves.size(); ++w) {
    queued_waves_.emplace_back();
    for (size_t index : waves[w]) queued_waves_.back().push_back(requests[index]);
  }
  std::vector<RunRequest> first;
  for (size_t index : waves.front()) first.push_back(requests[index]);
  fair_race_ = waves.size() > 1;
  race_ids_.clear();
  verdict_.clear();
  racing_ = requests.size() >= 2;
  race_one_after_another_ = fair_race_;
  const int started = start_wave(std::move(first));
  if (started == 0) fair_race_ = false;
  emit changed();
  return started;
}

int RunScheduler::start_wave(std::vector<RunRequest> requests) {
  int started = 0;
  for (RunRequest& request : requests) {
    try {
      request.out_dir = new_run_dir(store_->runs_dir(), run_label(request));
      // The trained model stays with its run, so the Inside tab can open it.
      if (!request.save_weights) request.save_weights = request.out_dir / "weights.safetensors";
    } catch (const std::exception& e) {
      emit error(QString::fromStdString(e.what()));
      break;
    }
    RunData data;
    data.dir = request.out_dir;
    data.info = {{"format", kRunFormat},
                 {"name", request.name},
                 {"created", iso_time_now()},
                 {"status", "running"},
                 {"model", model_to_json(request.model)},
                 {"config", train_config_to_json(request.train, request.backend)}};
    RunEntry* entry = store_->add_live(std::move(data));
    if (racing_) race_ids_.push_back(entry->id);
    auto* controller = new RunController(request, cache_, this);
    connect(controller, &RunController::finished, this,
            [this, controller] { on_finished(controller); });
    active_.push_back({entry->id, controller});
    emit run_started(entry->id, QString::fromStdString(request.name));
    controller->start();
    ++started;
  }
  paused_ = false;
  if (started > 0) emit wave_started();
  return started;
}

void RunScheduler::on_finished(RunController* controller) {
  const auto listed = [&] {
    return std::find_if(active_.begin(), active_.end(),
                        [&](const Active& a) { return a.controller == controller; });
  };
  if (listed() == active_.end()) return;
  const int id = listed()->id;
  emit run_ending(id, controller);
  active_.erase(listed());
  controller->deleteLater();
  emit run_ended(id);
  if (active_.empty() && !queued_waves_.empty()) {
    std::vector<RunRequest> next = std::move(queued_waves_.front());
    queued_waves_.erase(queued_waves_.begin());
    if (start_wave(std::move(next)) > 0) {
      emit changed();
      return;
    }
    queued_waves_.clear();
  }
  if (active_.empty()) {
    paused_ = false;
    fair_race_ = false;  // the race is over: its line goes, and says its verdict
    if (racing_) {
      std::vector<const RunData*> runs;
      for (int race_id : race_ids_)
        if (const RunEntry* entry = store_->find(race_id)) runs.push_back(&entry->data);
      verdict_ = QString::fromStdString(race_verdict(runs, race_one_after_another_));
      racing_ = false;
    }
  }
  emit changed();
}

void RunScheduler::set_paused(bool paused) {
  if (active_.empty()) return;
  paused_ = paused;
  for (const Active& a : active_) {
    a.controller->set_paused(paused);
    store_->set_paused(a.id, paused);
  }
  emit paused_changed();
}

void RunScheduler::stop_all() {
  queued_waves_.clear();  // a race stopped midway does not go on with its next runs
  for (const Active& a : active_) a.controller->stop();
}

int RunScheduler::queued_runs() const {
  int count = 0;
  for (const auto& wave : queued_waves_) count += int(wave.size());
  return count;
}

QString RunScheduler::race_line() const {
  if (fair_race_ && queued_runs() > 0)
    return tr("Fair race: these runs share hardware, so they run one after another and each is "
              "measured alone (%1 more to go). Tick \"Run at once\" under Race to run them side "
              "by side instead.")
        .arg(queued_runs());
  if (fair_race_ && !active_.empty())
    return tr("Fair race: its last run is running, measured alone.");
  if (!verdict_.isEmpty() && active_.empty()) return tr("Race: %1").arg(verdict_);
  return {};
}

QString RunScheduler::share_warning(const DeviceList& devices) const {
  int cpu_runs = 0, gpu_runs = 0;
  std::map<std::string, int> per_gpu;
  for (const Active& a : active_) {
    const std::string& device = a.controller->request().backend.device;
    if (device == "cpu") {
      ++cpu_runs;
      continue;
    }
    ++gpu_runs;
    // A run on several GPUs shares each of them ("cuda:0,1" and "cuda:1" share cuda:1).
    for (const GpuInfo& gpu : devices.gpus)
      if (share_hardware(device, "cuda:" + std::to_string(gpu.index)))
        ++per_gpu["cuda:" + std::to_string(gpu.index)];
  }
  QStringList notes;
  if (cpu_runs > 1)
    notes << tr("%1 runs share the CPU's %2 cores: each slows the others down, so their times are "
                "not what each would get alone.")
                 .arg(cpu_runs)
                 .arg(devices.cpu.logical_cores);
  if (cpu_runs > 0 && gpu_runs > 0)
    notes << tr(
        "The GPU runs need CPU time to feed their GPUs, taken from the CPU run beside "
        "them.");
  for (const auto& [gpu, count] : per_gpu)
    if (count > 1)
      notes << tr("%1 runs share %2 and slow each other down.")
                   .arg(count)
                   .arg(QString::fromStdString(gpu));
  return notes.isEmpty() ? QString() : tr("Shared hardware: ") + notes.join(" ");
}

}  // namespace gpulab::ui
