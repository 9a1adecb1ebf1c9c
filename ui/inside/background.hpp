// Work the Inside tab does off the GUI thread (loading a checkpoint, counting the confusion
// matrix, reading the test set, timing a model): each job on a thread of its own, its answer
// handed back on the GUI thread, dropped when a later job has started since; the owner's
// destruction stops the jobs (they see stopped()) and waits for them.
#pragma once

#include <QObject>
#include <atomic>
#include <functional>
#include <memory>
#include <vector>

class QThread;

namespace gpulab::ui {

class Background {
 public:
  // What a job gets: a way to send a step back to the GUI thread (dropped when the job is no
  // longer the latest), and whether it should stop early.
  struct Job {
    std::function<void(std::function<void()>)> post;
    std::shared_ptr<const std::atomic<bool>> stop;
    bool stopped() const { return *stop; }
  };

  explicit Background(QObject* owner) : owner_(owner) {}
  ~Background();  // stops every job and waits for its thread
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  // Starts `work` on a new thread; the job before it, if still running, is told to stop and its
  // posts are dropped.
  void run(std::function<void(const Job&)> work);
  void stop();  // the latest job stops and its posts are dropped

 private:
  void reap();  // joins the threads that have finished
  QObject* owner_;
  int generation_ = 0;
  std::shared_ptr<std::atomic<bool>> stop_;
  std::vector<QThread*> threads_;
};

}  // namespace gpulab::ui
