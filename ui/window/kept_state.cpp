// What the window keeps between launches: read at start, written when it changes.
#include "ui/window/kept_state.hpp"

#include <QDoubleSpinBox>

#include "engine/training/experiment.hpp"
#include "ui/compare/compare_view.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/runs/runs_panel.hpp"
#include "ui/setup/device_picker.hpp"
#include "ui/setup/experiment_panel.hpp"
#include "ui/window/setup_files.hpp"
#include "ui/window/window_state.hpp"

namespace gpulab::ui {

KeptState::KeptState(std::filesystem::path runs_dir, Parts parts, QObject* parent)
    : QObject(parent), runs_dir_(std::move(runs_dir)), parts_(parts) {}

KeptState::~KeptState() = default;

void KeptState::restore() {
  const WindowState state = load_window_state(runs_dir_);
  // One target for Setup and Compare: either spin box sets the other.
  QDoubleSpinBox* setup_target = parts_.experiment->findChild<QDoubleSpinBox*>("setup-target");
  QDoubleSpinBox* compare_target = parts_.compare->target_box();
  if (setup_target) {
    connect(setup_target, &QDoubleSpinBox::valueChanged, compare_target, &QDoubleSpinBox::setValue);
    connect(compare_target, &QDoubleSpinBox::valueChanged, setup_target, &QDoubleSpinBox::setValue);
  }
  if (auto setup = load_saved_setup(runs_dir_)) {
    parts_.experiment->set_experiment(*setup);
    parts_.devices->apply(setup->backend);
  } else if (setup_target)
    setup_target->setValue(100 * state.target_accuracy);
  compare_target->setValue(100 * state.target_accuracy);
  connect(compare_target, &QDoubleSpinBox::valueChanged, this, [this] {
    save();
    emit target_changed();
  });
  saved_state_ = std::make_unique<WindowState>(state);
  saved_state_->present = true;
  saved_setup_ = experiment_to_json(parts_.setup->current()).dump();
  if (state.present) {
    parts_.store->restore(state.checked, state.colors);
    for (RunEntry* entry : parts_.store->entries())
      if (!state.baseline.empty() && entry->data.dir.string() == state.baseline)
        parts_.runs->set_baseline(entry->id);
  }
  restoring_ = false;
}

void KeptState::save() {
  if (restoring_) return;
  WindowState state;
  state.checked = parts_.store->checked_dirs();
  state.colors = parts_.store->color_slots();
  if (RunEntry* baseline = parts_.store->find(baseline_id_))
    state.baseline = baseline->data.dir.string();
  state.target_accuracy = parts_.compare->target_accuracy();
  state.present = true;
  if (*saved_state_ == state) return;
  if (save_window_state(runs_dir_, state)) *saved_state_ = state;
}

void KeptState::save_setup() {
  const Experiment setup = parts_.setup->current();
  if (experiment_to_json(setup).dump() != saved_setup_) ui::save_setup(runs_dir_, setup);
}

}  // namespace gpulab::ui
