// The race line-up.
#include "ui/setup/race_panel.hpp"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace gpulab::ui {

QString describe_request(const RunRequest& r) {
  // The name it will train under, which carries its settings, threads included.
  return QString::fromStdString(r.name.empty() ? auto_run_name(r) : r.name);
}

RacePanel::RacePanel(QWidget* parent) : QGroupBox(tr("Race"), parent) {
  list_ = new QListWidget(this);
  list_->setObjectName("race-list");
  list_->setMaximumHeight(90);
  auto* add = new QPushButton(tr("Add setup"), this);
  add->setToolTip(tr("Add the current setup, once for each ticked device"));
  auto* remove = new QPushButton(tr("Remove"), this);
  start_ = new QPushButton(tr("Start race"), this);
  start_->setObjectName("start-race");
  start_->setToolTip(tr("Start the setups in the list: one after another where they share "
                        "hardware, unless \"Run at once\" is ticked"));
  at_once_ = new QCheckBox(tr("Run at once"), this);
  at_once_->setObjectName("race-at-once");
  at_once_->setToolTip(
      tr("Run every setup side by side, even those that share the CPU or a GPU: more to watch, "
         "but each slows the others down, and their records say they shared hardware"));
  connect(add, &QPushButton::clicked, this, &RacePanel::add_requested);
  connect(remove, &QPushButton::clicked, this, [this] {
    const int row = list_->currentRow();
    if (row < 0 || row >= int(entries_.size())) return;
    entries_.erase(entries_.begin() + row);
    refresh();
  });
  connect(start_, &QPushButton::clicked, this, &RacePanel::start_requested);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(add);
  buttons->addWidget(remove);
  buttons->addStretch();
  buttons->addWidget(at_once_);
  buttons->addWidget(start_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(list_);
  layout->addLayout(buttons);
  refresh();
}

void RacePanel::add(const RunRequest& request) {
  entries_.push_back(request);
  refresh();
}

bool RacePanel::run_at_once() const { return at_once_->isChecked(); }

void RacePanel::clear() {
  entries_.clear();
  refresh();
}

void RacePanel::refresh() {
  list_->clear();
  for (const RunRequest& r : entries_) list_->addItem(describe_request(r));
  start_->setEnabled(entries_.size() >= 2);
  if (entries_.empty()) list_->addItem(tr("Add two or more setups to race them."));
  emit entries_changed();
}

}  // namespace gpulab::ui
