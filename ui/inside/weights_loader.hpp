// Checkpoints opened on a worker thread, so reading and checking a large file never holds the
// window still; the result (a model, or the message why not) comes back on the GUI thread.
#pragma once

#include <QObject>
#include <QString>
#include <filesystem>
#include <memory>
#include <string>

#include "engine/inside/model_weights.hpp"
#include "ui/inside/background.hpp"

namespace gpulab::ui {

class WeightsLoader : public QObject {
  Q_OBJECT

 public:
  explicit WeightsLoader(QObject* parent = nullptr);
  ~WeightsLoader() override;  // waits for the loads under way

  // Loads `path` as `config` (a preset name or a config file), or where `config` is empty as the
  // config in the checkpoint's metadata. A later load replaces an earlier one still under way:
  // only the latest reports.
  void load(const std::filesystem::path& path, const std::string& config);
  bool busy() const { return loading_; }

 signals:
  void loaded(std::shared_ptr<const gpulab::ModelWeights> model, const QString& path);
  // `needs_config`: the file is a checkpoint, but holds no config and none was chosen.
  void failed(const QString& path, const QString& message, bool needs_config);

 private:
  bool loading_ = false;  // the latest load has not reported yet
  Background loads_{this};
};

}  // namespace gpulab::ui
