// The learning-rate field and its Apply button, acting on a training run.
#include "ui/window/lr_control.hpp"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "engine/base/errors.hpp"
#include "ui/runs/run_controller.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/runs/runs_panel.hpp"
#include "ui/widgets/status_widgets.hpp"
#include "ui/window/run_scheduler.hpp"

namespace gpulab::ui {
namespace {

constexpr int kFollowMs = 250;  // the field follows a schedule's learning rate this often

QString lr_text(double lr) { return QString::number(lr, 'g', 6); }

RunController* controller_of(const RunScheduler& scheduler, int id) {
  for (const RunScheduler::Active& a : scheduler.active())
    if (a.id == id) return a.controller;
  return nullptr;
}

}  // namespace

LrControl::LrControl(QWidget* parent) : QWidget(parent) {
  auto* name = new QLabel(tr("lr"), this);
  field_ = new QLineEdit(this);
  field_->setObjectName("lr-field");
  fit_field();
  field_->installEventFilter(this);  // presenter mode's type changes its font
  name->setBuddy(field_);
  apply_ = new QPushButton(tr("Apply"), this);
  apply_->setObjectName("lr-apply");
  // Beside Apply, on one line cut to its room (the whole note in its tooltip): on a line of its
  // own under the field, "lr 0.01 from step 98" appearing took 15 px from the tabs below.
  status_ = new OneLineLabel(this);
  status_->setObjectName("lr-status");
  status_->setEnabled(false);  // drawn grey: a note, not a control
  QSizePolicy keep = status_->sizePolicy();  // its room kept while empty: Apply stays put
  keep.setRetainSizeWhenHidden(true);
  keep.setHorizontalPolicy(QSizePolicy::Expanding);
  status_->setSizePolicy(keep);
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(name);
  row->addWidget(field_);
  row->addWidget(apply_);
  row->addWidget(status_, 1);
  follow_ = new QTimer(this);
  follow_->setInterval(kFollowMs);
  connect(follow_, &QTimer::timeout, this, &LrControl::update);
  connect(apply_, &QPushButton::clicked, this, &LrControl::apply);
  connect(field_, &QLineEdit::returnPressed, this, &LrControl::apply);
}

void LrControl::fit_field() {
  // Room for a learning rate such as 0.000125, in the field's own font.
  field_->setFixedWidth(field_->fontMetrics().horizontalAdvance("0.000125") + 16);
}

bool LrControl::eventFilter(QObject* watched, QEvent* event) {
  if (watched == field_ && event->type() == QEvent::FontChange) fit_field();
  return QWidget::eventFilter(watched, event);
}

void LrControl::attach(Parts parts) {
  parts_ = parts;
  connect(parts_.runs->tree(), &QTreeWidget::currentItemChanged, this, &LrControl::update);
  update();
}

int LrControl::target() const {
  if (!parts_.scheduler) return 0;
  const int selected = parts_.runs->selected_run();
  if (RunController* c = controller_of(*parts_.scheduler, selected); c && c->is_running())
    return selected;
  const auto& active = parts_.scheduler->active();
  for (auto a = active.rbegin(); a != active.rend(); ++a)
    if (a->controller->is_running()) return a->id;
  return 0;
}

void LrControl::update() {
  const int id = target();
  const RunEntry* entry = id ? parts_.store->find(id) : nullptr;
  RunController* controller = id ? controller_of(*parts_.scheduler, id) : nullptr;
  const bool on = entry && controller;
  field_->setEnabled(on);
  apply_->setEnabled(on);
  if (!on) {
    follow_->stop();
    shown_run_ = 0;
    asked_.reset();
    field_->clear();
    field_->setPlaceholderText(QStringLiteral("–"));
    const QString idle = tr("The learning rate of a run that trains: press ▶ Train first");
    field_->setToolTip(idle);
    apply_->setToolTip(idle);
    status_->clear();
    status_->hide();
    return;
  }
  if (!follow_->isActive()) follow_->start();
  const RunData& data = entry->data;
  if (asked_ && asked_->run != id) asked_.reset();
  const bool taken = asked_ && data.lr_changes.size() > asked_->changes_before;
  // A change taken from a step the feed has not brought yet is the rate now: the last step shown
  // still had the old one, and the field read it back while the status said the new one.
  const bool change_ahead =
      !data.lr_changes.empty() &&
      (data.steps.empty() || data.steps.back().step < data.lr_changes.back().step);
  const double now = asked_ && !taken     ? asked_->lr
                     : change_ahead       ? double(data.lr_changes.back().lr)
                     : data.steps.empty() ? double(controller->request().train.optimizer.lr)
                                          : double(data.steps.back().lr);
  if (taken) asked_.reset();
  // The field shows the run's learning rate, except while the user types a new one.
  // Only when it differs: setting the same text would move the cursor and drop a selection.
  if (id != shown_run_ || !field_->isModified()) {
    if (field_->text() != lr_text(now)) field_->setText(lr_text(now));
    field_->setModified(false);
  }
  shown_run_ = id;
  const QString name = QString::fromStdString(data.name());
  const QString tip = tr("The learning rate of %1, %2 now. Type another and press Apply or Enter: "
                         "the run takes it from its next step on, and every chart marks the step.")
                          .arg(name, lr_text(now));
  field_->setToolTip(tip);
  apply_->setToolTip(tip);
  QString status;
  if (asked_)
    status = tr("lr %1 asked for: from the next step").arg(lr_text(asked_->lr));
  else if (!data.lr_changes.empty())
    status = tr("lr %1 from step %2")
                 .arg(lr_text(data.lr_changes.back().lr))
                 .arg(data.lr_changes.back().step);
  status_->setText(status);
  status_->setToolTip(status.isEmpty() ? QString() : name + ": " + status);
  status_->setVisible(!status.isEmpty());
}

bool LrControl::apply() {
  const int id = target();
  RunController* controller = id ? controller_of(*parts_.scheduler, id) : nullptr;
  const RunEntry* entry = id ? parts_.store->find(id) : nullptr;
  if (!controller || !entry) return false;
  const QString typed = field_->text().trimmed();
  bool number = false;
  double lr = QLocale::c().toDouble(typed, &number);
  if (!number) lr = QLocale().toDouble(typed, &number);  // a decimal comma where that is usual
  if (!number) {
    parts_.message->show_message(
        Banner::Kind::Error,
        tr("Learning rate \"%1\": not a number; type a positive number, such as 0.01; the run "
           "goes on with the one it has")
            .arg(typed));
    return false;
  }
  try {
    controller->set_learning_rate(lr);
  } catch (const ConfigError& e) {
    QString text = QString::fromUtf8(e.what());  // "learning rate -1: type ..."
    text[0] = text[0].toUpper();
    parts_.message->show_message(Banner::Kind::Error, text);
    return false;
  }
  asked_ = Asked{id, lr, entry->data.lr_changes.size()};
  field_->setModified(false);
  update();
  return true;
}

}  // namespace gpulab::ui
