// Jobs on their own QThreads, their answers queued to the owner's thread.
#include "ui/inside/background.hpp"

#include <QThread>

namespace gpulab::ui {

Background::~Background() {
  if (stop_) *stop_ = true;
  ++generation_;
  for (QThread* thread : threads_) {  // they post to the owner: none may outlive it
    thread->wait();
    delete thread;
  }
}

void Background::stop() {
  if (stop_) *stop_ = true;
  stop_.reset();
  ++generation_;
}

void Background::reap() {
  std::erase_if(threads_, [](QThread* t) {
    if (!t->isFinished()) return false;
    t->wait();
    delete t;
    return true;
  });
}

void Background::run(std::function<void(const Job&)> work) {
  stop();
  reap();
  const int generation = ++generation_;
  stop_ = std::make_shared<std::atomic<bool>>(false);
  Job job;
  job.stop = stop_;
  job.post = [this, owner = owner_, generation](std::function<void()> step) {
    QMetaObject::invokeMethod(
        owner,
        [this, generation, step = std::move(step)] {
          if (generation == generation_) step();
        },
        Qt::QueuedConnection);
  };
  QThread* thread = QThread::create([work = std::move(work), job] { work(job); });
  threads_.push_back(thread);
  thread->start();
}

}  // namespace gpulab::ui
