// Runs on their own threads, and the MNIST cache they share.
#include "ui/runs/run_controller.hpp"

#include "datasets/idx.hpp"

namespace gpulab::ui {

std::shared_ptr<const data::MnistData> DataCache::get(const std::filesystem::path& dir) {
  // One lock for the whole load: two runs of a race wait for one load instead of doing two.
  std::lock_guard lock(mutex_);
  auto& slot = loaded_[dir];
  if (!slot) slot = std::make_shared<const data::MnistData>(data::load_mnist(dir));
  return slot;
}

void DataCache::forget(const std::filesystem::path& dir) {
  std::lock_guard lock(mutex_);
  loaded_.erase(dir);
}

RunController::RunController(RunRequest request, std::shared_ptr<DataCache> cache, QObject* parent)
    : QObject(parent), request_(std::move(request)), cache_(std::move(cache)) {}

RunController::~RunController() {
  control_.cancel.store(true);
  if (thread_.joinable()) thread_.join();
}

void RunController::start() {
  if (started_) return;
  started_ = true;
  thread_ = std::thread([this] { run(); });
}

void RunController::set_paused(bool paused) { control_.pause.store(paused); }

void RunController::stop() { control_.cancel.store(true); }

void RunController::run() {
  std::shared_ptr<const data::MnistData> data;
  bool missing = false;
  try {
    data = cache_->get(data::default_data_dir(request_.data_dir));
  } catch (...) {
    // execute_run loads again without the cache and records the failure with its message.
    missing = true;
  }
  RunSummary summary;
  try {
    summary = execute_run(request_, feed_, control_, data.get());
  } catch (const std::exception& e) {  // the run folder itself could not be made
    summary.status = RunStatus::Failed;
    summary.message = e.what();
  } catch (...) {  // nothing may leave a thread: that would end the window
    summary.status = RunStatus::Failed;
    summary.message = "the run stopped on an error of unknown type";
  }
  // Handed over on the window's thread; the posted call dies with this object if it goes first.
  QMetaObject::invokeMethod(
      this,
      [this, summary = std::move(summary), missing] {
        summary_ = summary;
        data_missing_ = missing && summary_.status == RunStatus::Failed;
        done_ = true;
        if (thread_.joinable()) thread_.join();
        emit finished();
      },
      Qt::QueuedConnection);
}

}  // namespace gpulab::ui
