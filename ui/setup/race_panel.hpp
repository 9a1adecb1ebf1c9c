// The race line-up: setups collected one by one (a CPU run and a GPU run, batch 64 and batch
// 512, ...) and started together, to watch side by side.
#pragma once

#include <vector>

#include <QGroupBox>

#include "engine/session/session.hpp"

class QCheckBox;
class QListWidget;
class QPushButton;

namespace gpulab::ui {

class RacePanel : public QGroupBox {
  Q_OBJECT

 public:
  explicit RacePanel(QWidget* parent = nullptr);

  void add(const RunRequest& request);
  const std::vector<RunRequest>& entries() const { return entries_; }
  void clear();
  // Whether a race runs its setups side by side even where they share hardware (their records
  // then say so); by default such setups run one after another, each measured alone.
  bool run_at_once() const;

 signals:
  void add_requested();    // add the current setup, once per ticked device
  void start_requested();  // start every entry at once
  void entries_changed();

 private:
  void refresh();
  std::vector<RunRequest> entries_;
  QListWidget* list_;
  QPushButton* start_;
  QCheckBox* at_once_;
};

// "lenet5 cpu, 4 threads, b64, adam, lr 0.001, fp32"
QString describe_request(const RunRequest& request);

}  // namespace gpulab::ui
