// Loading a checkpoint on a thread of its own and reporting on the GUI thread.
#include "ui/inside/weights_loader.hpp"

#include "engine/model/checkpoint.hpp"

namespace gpulab::ui {

WeightsLoader::WeightsLoader(QObject* parent) : QObject(parent) {}

WeightsLoader::~WeightsLoader() = default;

void WeightsLoader::load(const std::filesystem::path& path, const std::string& config) {
  loading_ = true;
  loads_.run([this, path, config](const Background::Job& job) {
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
        ModelWeights weights = model_weights(checkpoint, config, path.string());
        // Everything the tab shows feeds it a 28x28 digit: another input is refused here, once.
        check_model_input(weights, kDigitShape, "the Inside tab");
        model = std::make_shared<const ModelWeights>(std::move(weights));
      }
    } catch (const std::exception& e) {
      message = QString::fromStdString(e.what());
    }
    job.post([this, model, message, needs_config, path] {  // dropped if a later load started
      loading_ = false;
      const QString file = QString::fromStdString(path.string());
      if (model)
        emit loaded(model, file);
      else
        emit failed(file, message, needs_config);
    });
  });
}

}  // namespace gpulab::ui
