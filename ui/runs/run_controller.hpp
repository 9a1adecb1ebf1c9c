// One run on its own thread, started from the window: the controller owns the thread, the feed
// the window drains on its timer, and the pause and cancel flags, and says when the run is over.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <QObject>

#include "datasets/mnist.hpp"
#include "engine/session/session.hpp"
#include "ui/runs/run_feed.hpp"

namespace gpulab::ui {

// MNIST loaded once per folder and shared by every run of the window (about 55 MB).
class DataCache {
 public:
  // Loads on first use; throws data::DataError (naming the file) when it cannot.
  std::shared_ptr<const data::MnistData> get(const std::filesystem::path& dir);
  void forget(const std::filesystem::path& dir);

 private:
  std::mutex mutex_;
  std::map<std::filesystem::path, std::shared_ptr<const data::MnistData>> loaded_;
};

class RunController : public QObject {
  Q_OBJECT

 public:
  RunController(RunRequest request, std::shared_ptr<DataCache> cache, QObject* parent = nullptr);
  ~RunController() override;  // cancels the run and waits for its thread

  void start();
  void set_paused(bool paused);
  void stop();
  // The learning rate from the run's next step on (RunControl::request_lr); throws ConfigError
  // with the reason for a value it cannot take.
  void set_learning_rate(double lr) { control_.request_lr(lr); }
  bool is_running() const { return started_ && !done_; }
  bool is_paused() const { return control_.pause.load(); }
  const RunRequest& request() const { return request_; }
  RunFeed& feed() { return feed_; }

  // Valid once finished() was emitted.
  const RunSummary& summary() const { return summary_; }
  bool data_missing() const { return data_missing_; }

 signals:
  void finished();

 private:
  void run();

  RunRequest request_;
  std::shared_ptr<DataCache> cache_;
  RunFeed feed_;
  RunControl control_;
  std::thread thread_;
  bool started_ = false;
  bool done_ = false;          // GUI thread only
  RunSummary summary_;         // written by the thread before it signals
  bool data_missing_ = false;
};

}  // namespace gpulab::ui
