// The Inside tab: a trained model opened up. Its model is a run's saved weights (chosen here or
// in the runs list, and taken again when a run finishes) or any checkpoint (File → Open weights…,
// a .safetensors dropped on the window, gpulab --weights FILE), with its config from the
// checkpoint's metadata or the one chosen here. Its sections: draw a digit, the confusion matrix
// and mistakes, the network (layers, filters, feature maps, one value taken apart), and the
// inference speed on the CPU and each GPU.
#pragma once

#include <QWidget>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "engine/devices/devices.hpp"
#include "engine/inside/model_weights.hpp"

class QComboBox;
class QLabel;
class QPushButton;
class QTabWidget;
class QTreeWidget;

namespace gpulab::ui {

class Banner;
class ConfusionView;
class DataCache;
class DigitPanel;
class NetworkPanel;
class RunStore;
class SpeedView;
class WeightsLoader;

// What the tab needs of the window.
struct InsideContext {
  RunStore* store = nullptr;
  std::shared_ptr<DataCache> cache;                 // MNIST as loaded for the runs
  std::function<std::filesystem::path()> data_dir;  // where the window looks for it now
  DeviceList devices;                               // the GPUs inference is timed on
};

class InsideTab : public QWidget {
  Q_OBJECT

 public:
  explicit InsideTab(InsideContext context, QWidget* parent = nullptr);

  // Opens a checkpoint on a worker thread, with its own config (the Config choice goes back to
  // "from the checkpoint"). What does not fit is said on the tab's message bar; the model shown
  // before stays.
  void open_weights(const std::filesystem::path& path);
  void open_weights_dialog();
  // The weights run `id` saved; false (and nothing changes) when it saved none.
  bool show_run(int id);
  // Drops of a .safetensors anywhere on `window` open it here; `opened` is called after.
  void accept_drops_on(QWidget* window, std::function<void()> opened);

  bool loading() const;
  std::shared_ptr<const ModelWeights> model() const { return model_; }
  QString model_text() const;  // which model is open, from where
  QString message() const;     // the message bar's text, empty when hidden

  QComboBox* config_combo() { return config_; }
  QComboBox* run_combo() { return runs_; }
  QPushButton* open_button() { return open_; }
  QTabWidget* sections() { return sections_; }
  void show_section(QWidget* section);  // digits(), confusion(), network() or speed()
  DigitPanel* digits() { return digits_; }
  ConfusionView* confusion() { return confusion_; }
  NetworkPanel* network() { return network_; }
  SpeedView* speed() { return speed_; }
  QTreeWidget* layers();  // the Network section's list of layers

 signals:
  void model_changed();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void load(const std::filesystem::path& path);  // with the config chosen
  void config_chosen(int index);
  void choose_config_file();
  void fill_runs();
  void loaded(std::shared_ptr<const ModelWeights> model, const QString& path);
  void failed(const QString& path, const QString& message, bool needs_config);

  InsideContext context_;
  WeightsLoader* loader_;
  std::shared_ptr<const ModelWeights> model_;
  std::filesystem::path file_;  // the checkpoint the Config choice applies to
  int opening_run_ = 0;         // the run whose weights are being opened (0: a file opened by hand)
  int shown_run_ = 0;           // the run whose model is shown (0: none, or a file opened by hand)
  std::set<int> runs_with_weights_;
  bool runs_listed_ = false;  // runs found at the start are listed, not opened
  std::function<void()> dropped_;
  QLabel* model_label_;
  QComboBox* runs_;
  QPushButton* open_;
  QComboBox* config_;
  Banner* message_;
  QTabWidget* sections_;
  DigitPanel* digits_;
  ConfusionView* confusion_;
  NetworkPanel* network_;
  SpeedView* speed_;
};

}  // namespace gpulab::ui
