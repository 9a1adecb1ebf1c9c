// Loading a checkpoint on a thread of its own and reporting on the GUI thread.
#include "ui/inside/weights_loader.hpp"

#include <QThread>

#include "engine/model/checkpoint.hpp"

namespace gpulab::ui {

WeightsLoader::WeightsLoader(QObject* parent) : QObject(parent) {}

WeightsLoader::~WeightsLoader() {
  // The threads report to this object: none may outlive it.
  for (QThread* thread : threads_) {
    thread->wait();
    delete thread;
  }
}

void WeightsLoader::load(const std::filesystem::path& path, const std::string& config) {
  const int generation = ++generation_;
  ++pending_;
  QThread* thread = QThread::create([this, path, config, generation] {
    std::shared_ptr<const ModelWeights> model;
    QString message;
    bool needs_config = false;
    try {
      const Checkpoint checkpoint = load_checkpoint(path);
      if (config.empty() && !checkpoint.model()) {
        needs_config = true;
        message = tr("%1 holds no model config in its metadata: choose the model it was trained "
                     "as under Config (a preset, or a config file).")
                      .arg(QString::fromStdString(path.string()));
      } else {
        model =
            std::make_shared<const ModelWeights>(model_weights(checkpoint, config, path.string()));
      }
    } catch (const std::exception& e) {
      message = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, model, message, needs_config, generation, path] {
          --pending_;
          if (generation != generation_) return;  // a later load replaced this one
          const QString file = QString::fromStdString(path.string());
          if (model)
            emit loaded(model, file);
          else
            emit failed(file, message, needs_config);
        },
        Qt::QueuedConnection);
  });
  // Finished threads are let go at the next load; the rest are waited for by the destructor.
  std::erase_if(threads_, [](QThread* t) {
    if (!t->isFinished()) return false;
    t->wait();
    delete t;
    return true;
  });
  threads_.push_back(thread);
  thread->start();
}

}  // namespace gpulab::ui
