// Inference speed: the open model timed on the CPU and on each GPU of the window for batches of
// 1, 64 and 1000 images (engine/inside/inference_timing on a worker thread, with progress), as a
// table of latency per batch and per image and images/s, with why a GPU can lose on one image.
#pragma once

#include <QWidget>
#include <map>
#include <memory>
#include <vector>

#include "engine/inside/inference_timing.hpp"
#include "ui/inside/background.hpp"

class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace gpulab::ui {

class SpeedView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kBatches[] = {1, 64, 1000};
  explicit SpeedView(QWidget* parent = nullptr);
  ~SpeedView() override;

  void set_model(std::shared_ptr<const ModelWeights> model);  // clears the table
  // The GPUs to time besides the CPU ("cuda:0", ...), or none and why.
  void set_gpus(const QStringList& devices, const QString& no_gpu_reason);

  // What time_model times, in order: the CPU, then each GPU with im2col convolutions and, for a
  // model with convolutions, again with implicit GEMM (ConvAlgorithm), so the two are side by side.
  struct Pass {
    std::string device;
    ConvAlgorithm conv = ConvAlgorithm::Im2col;
  };
  std::vector<Pass> passes() const;
  // A row's device cell: "cpu" (whatever `conv`: the CPU has its own kernels), "cuda:0", or for a
  // model with convolutions "cuda:0 · im2col" and "cuda:0 · implicit GEMM".
  QString label(const std::string& device, const std::string& conv) const;

  void time_model();  // on a worker thread; rows come in as each is measured
  void cancel();
  bool busy() const { return busy_; }
  const std::vector<InferenceTiming>& timings() const { return timings_; }
  // device,batch,batch_ms,ms_per_image,images_per_second,flags,conv: one row per timing; flags
  // says where other programs loaded the machine while it was timed, conv how a GPU computed the
  // convolutions (empty for the CPU).
  bool export_csv(const QString& path, QString* error) const;
  // A pass's timings taken while other programs loaded the machine (outside_load_caveat's
  // sentence): the rows labelled `label` get ⚠ and the sentence, as a run's figures do. Empty:
  // clean.
  void mark_load(const QString& label, const QString& caveat);

  QPushButton* time_button() { return time_; }
  QPushButton* export_button() { return export_; }
  QTableWidget* table() { return table_; }
  QString status() const;
  QString note() const;

 private:
  void add_row(const InferenceTiming& timing);
  void done(const QString& problem);
  void export_dialog();
  void refresh_controls();

  std::shared_ptr<const ModelWeights> model_;
  QStringList gpus_;
  QString no_gpu_reason_;
  std::vector<InferenceTiming> timings_;
  std::map<QString, QString> load_caveats_;  // by row label, where measured under load
  bool busy_ = false;
  Background worker_{this};
  QPushButton* time_;
  QPushButton* cancel_;
  QPushButton* export_;
  QProgressBar* progress_;
  QLabel* status_;
  QLabel* note_;
  QTableWidget* table_;
};

}  // namespace gpulab::ui
