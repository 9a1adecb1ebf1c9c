// The run controls: the buttons above the plots and starting runs.
#include "ui/window/run_controls.hpp"

#include <QBoxLayout>
#include <QEvent>
#include <QHBoxLayout>
#include <QMenu>
#include <QPushButton>
#include <QToolButton>
#include <algorithm>

#include "datasets/mnist_files.hpp"
#include "ui/setup/device_picker.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/setup/race_panel.hpp"
#include "ui/widgets/status_widgets.hpp"
#include "ui/window/data_banner.hpp"
#include "ui/window/lr_control.hpp"
#include "ui/window/run_scheduler.hpp"
#include "ui/window/setup_files.hpp"

namespace gpulab::ui {

RunControls::RunControls(QWidget* window) : QObject(window) {
  train_ = new QPushButton(tr("▶ Train"), window);
  train_->setObjectName("train");
  train_->setDefault(true);
  train_->setMinimumWidth(110);
  pause_ = new QPushButton(tr("Pause"), window);
  pause_->setObjectName("pause");
  stop_ = new QPushButton(tr("■ Stop"), window);
  stop_->setObjectName("stop");
  progress_ = new ProgressList(window);
  runs_button_ = new QToolButton(window);
  runs_button_->setObjectName("runs-shown");
  runs_button_->setText(tr("Runs shown"));
  runs_button_->setToolTip(tr("Choose the runs the plots and Compare show"));
  runs_button_->setPopupMode(QToolButton::InstantPopup);
  runs_button_->setMenu(new QMenu(runs_button_));
  lr_ = new LrControl(window);
  // The buttons keep to the top of their row: a progress row that wraps to two lines when a run
  // starts makes the row taller, and a centred button would move under the user's pointer.
  buttons_ = new QHBoxLayout;
  for (QWidget* button : std::initializer_list<QWidget*>{train_, pause_, stop_, runs_button_, lr_})
    buttons_->addWidget(button, 0, Qt::AlignTop);
  // The progress rows beside the buttons, or under them where the column is narrow (fit_width).
  row_ = new QBoxLayout(QBoxLayout::LeftToRight);
  row_->addLayout(buttons_);
  row_->addWidget(progress_, 1);
}

QLayout* RunControls::layout() const { return row_; }

bool RunControls::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Resize) fit_width();
  return QObject::eventFilter(watched, event);
}

void RunControls::follow_width(QWidget* column) {
  column_ = column;
  column->installEventFilter(this);
  fit_width();
}

void RunControls::fit_width() {
  if (!column_) return;
  // Beside the buttons only with room for a long run's progress text. The room asked for is a
  // fixed width, not the rows' text of the moment: a width that grew as a run trained once kept
  // the rows beside the buttons at 1280 px and the window from narrowing to 1024.
  const QMargins margins = column_->layout() ? column_->layout()->contentsMargins() : QMargins();
  const int room = column_->width() - margins.left() - margins.right();
  const int beside = buttons_->minimumSize().width() + row_->spacing() + progress_->text_width();
  const auto direction = room >= beside ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom;
  if (row_->direction() != direction) row_->setDirection(direction);
}

void RunControls::attach(Parts parts) {
  parts_ = parts;
  connect(train_, &QPushButton::clicked, this, &RunControls::start_training);
  connect(pause_, &QPushButton::clicked, this, [this] { set_paused(!parts_.scheduler->paused()); });
  connect(stop_, &QPushButton::clicked, parts_.scheduler, &RunScheduler::stop_all);
  connect(parts_.race, &RacePanel::start_requested, this, &RunControls::start_race);
  lr_->attach({parts_.scheduler, parts_.store, parts_.runs, parts_.message});
}

int RunControls::start_training() {
  if (parts_.scheduler->any_running()) return 0;
  if (race_chosen()) return start_race();
  QString problem;
  std::vector<RunRequest> requests = parts_.setup->requests(&problem);
  if (requests.empty()) {
    parts_.message->show_message(Banner::Kind::Error, problem);
    return 0;
  }
  return start(std::move(requests));
}

int RunControls::start_race() {
  if (parts_.scheduler->any_running()) return 0;
  if (parts_.race->entries().size() < 2) {
    parts_.message->show_message(Banner::Kind::Info,
                                 tr("Add two or more setups to the race first."));
    return 0;
  }
  // The setups stay in the list: ticking "Run at once" and starting again reruns them as they are.
  return start(parts_.race->entries());
}

int RunControls::start(std::vector<RunRequest> requests) {
  if (!data::mnist_present(parts_.data->dir())) {
    parts_.data->check(true);
    return 0;
  }
  parts_.message->dismiss();
  if (!parts_.setup->note().isEmpty())
    parts_.message->show_message(Banner::Kind::Warning, parts_.setup->note());
  progress_->clear_finished();
  return parts_.scheduler->start(std::move(requests), parts_.race->run_at_once());
}

void RunControls::set_paused(bool paused) { parts_.scheduler->set_paused(paused); }

bool RunControls::race_chosen() const {
  return parts_.setup->race_chosen() && parts_.race->entries().size() >= 2;
}

void RunControls::update() {
  const bool running = !parts_.scheduler->active().empty();
  const QString problem = parts_.experiment->problem();
  const auto chosen = parts_.devices->selected();
  if (race_chosen()) {  // a demo's race, opened from File → Demos or --setup
    QStringList names;
    for (const RunRequest& r : parts_.race->entries()) names << describe_request(r);
    train_->setEnabled(!running && problem.isEmpty());
    train_->setToolTip(!problem.isEmpty() ? problem
                                          : tr("Race the setup's runs: %1").arg(names.join(", ")));
    train_->setText(tr("▶ Race %1 runs").arg(parts_.race->entries().size()));
  } else {
    train_->setEnabled(!running && problem.isEmpty() && !chosen.empty());
    train_->setToolTip(!problem.isEmpty() ? problem
                       : chosen.empty()   ? tr("Tick a device to train on")
                       : chosen.size() > 1
                           ? parts_.devices->plan()
                           : tr("Train the setup on %1").arg(QString::fromStdString(chosen[0])));
    train_->setText(chosen.size() > 1 ? tr("▶ Race %1 runs").arg(chosen.size()) : tr("▶ Train"));
  }
  // A message that the model cannot be built goes once the model can be.
  if (problem.isEmpty() && parts_.message->text().startsWith(cannot_build_text(QString())))
    parts_.message->dismiss();
  pause_->setEnabled(running);
  pause_->setText(parts_.scheduler->paused() ? tr("Resume") : tr("Pause"));
  stop_->setEnabled(running);
  lr_->update();
  fit_width();  // the buttons' text may have changed their width
  bool gpu = false;
  for (const auto& d : chosen) gpu |= d != "cpu";
  parts_.experiment->set_gpu_selected(gpu);
}

}  // namespace gpulab::ui
