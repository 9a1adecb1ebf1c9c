// The runs list.
#include "ui/runs/runs_panel.hpp"

#include <QDesktopServices>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIcon>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPixmap>
#include <QPushButton>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "engine/analysis/run_comparison.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/records/run_names.hpp"
#include "ui/runs/run_store.hpp"

namespace gpulab::ui {
namespace {

enum RunColumn { kName, kDevice, kBatch, kStatus, kAccuracy, kThroughput, kEpochTime, kColumns };

QIcon color_icon(const QColor& color) {
  QPixmap pixmap(12, 12);
  pixmap.fill(color);
  return QIcon(pixmap);
}

}  // namespace

RunsPanel::RunsPanel(RunStore* store, QWidget* parent) : QWidget(parent), store_(store) {
  tree_ = new QTreeWidget(this);
  tree_->setObjectName("runs");
  tree_->setColumnCount(kColumns);
  tree_->setHeaderLabels({tr("Run"), tr("Device"), tr("Batch"), tr("Status"), tr("Test acc."),
                          tr("Images/s"), tr("Epoch")});
  tree_->setRootIsDecorated(false);
  tree_->setUniformRowHeights(true);
  tree_->setAlternatingRowColors(true);
  tree_->setContextMenuPolicy(Qt::CustomContextMenu);
  tree_->header()->setSectionResizeMode(kName, QHeaderView::Stretch);
  for (int c = kDevice; c < kColumns; ++c)
    tree_->header()->setSectionResizeMode(c, QHeaderView::Interactive);
  tree_->setTextElideMode(Qt::ElideRight);
  tree_->header()->setStretchLastSection(false);  // the name takes what the others leave
  tree_->setToolTip(tr("Tick runs to overlay them in the plots; right-click for more"));
  // A few runs stay in view however small the window: the plots above it scroll instead.
  tree_->setMinimumHeight(6 * tree_->fontMetrics().height());

  auto* import = new QPushButton(tr("Import…"), this);
  import->setToolTip(tr("Add runs recorded elsewhere: a run folder or a folder of runs"));
  connect(import, &QPushButton::clicked, this, &RunsPanel::import_runs);
  auto* hint = new QLabel(tr("Tick runs to compare them; right-click a run to rename, delete or "
                             "make it the baseline."),
                          this);
  hint->setWordWrap(true);
  hint->setStyleSheet("color: palette(mid)");

  auto* show = new QToolButton(this);
  show->setObjectName("runs-show");
  show->setText(tr("Show"));
  show->setToolTip(tr("Untick every run, or show only the latest ones"));
  show->setPopupMode(QToolButton::InstantPopup);
  show->setMenu(new QMenu(show));
  add_show_actions(show->menu(), store_);

  // A hand-in's runs (a read-only store): nothing to import into it, and the hint says whose.
  if (store_->read_only()) {
    import->hide();
    hint->setText(tr("The runs of %1, read-only: tick runs to compare them; they are not "
                     "renamed or deleted.")
                      .arg(store_->owner()));
  }

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(hint, 1);
  buttons->addWidget(show);
  buttons->addWidget(import);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(tree_, 1);
  layout->addLayout(buttons);

  // A tick reaches the store after the view has finished handling the click or key that made it:
  // the store's news updates rows, and no row may change under a view still in its event handler.
  connect(tree_, &QTreeWidget::itemChanged, this, [this](QTreeWidgetItem* item, int column) {
    if (filling_ || column != kName) return;
    const int id = item->data(kName, Qt::UserRole).toInt();
    const bool checked = item->checkState(kName) == Qt::Checked;
    QMetaObject::invokeMethod(
        this, [this, id, checked] { store_->set_checked(id, checked); }, Qt::QueuedConnection);
  });
  connect(tree_, &QTreeWidget::customContextMenuRequested, this, &RunsPanel::show_menu);
  connect(store_, &RunStore::runs_changed, this, &RunsPanel::rebuild);
  connect(store_, &RunStore::run_updated, this, &RunsPanel::update_run);
}

void add_show_actions(QMenu* menu, RunStore* store) {
  // After the menu is done with the action: the change may rebuild the menu it sits in.
  auto later = [store](int count) {
    QTimer::singleShot(0, store, [store, count] { store->show_only_latest(count); });
  };
  QAction* none = menu->addAction(QObject::tr("Untick all"), store, [later] { later(0); });
  none->setObjectName("untick-all");
  QMenu* latest = menu->addMenu(QObject::tr("Show only the latest"));
  latest->setObjectName("show-latest");
  for (int count : {1, 2, 3, 4, 6, 8})
    latest->addAction(count == 1 ? QObject::tr("1 run") : QObject::tr("%1 runs").arg(count), store,
                      [later, count] { later(count); });
}

void fill_runs_menu(QMenu* menu, RunStore* store) {
  menu->clear();
  const std::vector<RunEntry*> entries = store->entries();
  std::vector<const RunData*> data;
  for (RunEntry* e : entries) data.push_back(&e->data);
  const auto names = display_run_names(data);
  for (size_t i = 0; i < entries.size(); ++i) {
    QPixmap swatch(12, 12);
    swatch.fill(entries[i]->color);
    QAction* action =
        menu->addAction(QIcon(swatch), QString::fromStdString(flagged_name(names[i], *data[i])));
    action->setCheckable(true);
    action->setChecked(entries[i]->checked);
    const int id = entries[i]->id;
    QObject::connect(action, &QAction::toggled, store, [store, id](bool checked) {
      // After the menu is done with the action: ticking rebuilds the menu.
      QTimer::singleShot(0, store, [store, id, checked] { store->set_checked(id, checked); });
    });
  }
  if (entries.empty()) menu->addAction(QObject::tr("No runs yet"))->setEnabled(false);
  menu->addSeparator();
  add_show_actions(menu, store);
}

void RunsPanel::fill_row(QTreeWidgetItem* item, const RunEntry& entry) {
  const RunComparison row = compare_runs({&entry.data}, -1, 0).front();
  const bool baseline = entry.id == baseline_;
  item->setData(kName, Qt::UserRole, entry.id);
  // The run's one name (RunStore names every run together), as Compare and the charts say it.
  item->setText(kName, QString::fromStdString(row.name) + (baseline ? tr(" (baseline)") : ""));
  item->setIcon(kName, color_icon(entry.color));
  item->setCheckState(kName, entry.checked ? Qt::Checked : Qt::Unchecked);
  item->setText(kDevice, QString::fromStdString(row.device));
  item->setText(kBatch, row.batch > 0 ? QString::number(row.batch) : "");
  const QString status =
      entry.live && entry.paused ? tr("paused") : QString::fromStdString(row.status);
  item->setText(kStatus, status);
  const bool bad = status == "failed" || status == "diverged";
  item->setForeground(kStatus, bad ? QBrush(QColor(0xC0, 0x20, 0x20)) : QBrush());
  QString tip = QString::fromStdString(entry.data.dir.string());
  if (!row.note.empty()) tip += "\n" + QString::fromStdString(row.note);
  // Flagged as the charts and Compare flag it: a cancelled run too, not only a caveat.
  if (!row.flags.empty()) {
    item->setText(kStatus, status + " ⚠");
    for (const std::string& flag : row.flags) tip += "\n⚠ " + QString::fromStdString(flag);
  }
  for (int c = 0; c < kColumns; ++c) item->setToolTip(c, tip);
  // The device's text may be elided where the list is narrow: its tooltip says it whole.
  item->setToolTip(kDevice, QString::fromStdString(row.device) + "\n" + tip);
  item->setText(kAccuracy, std::isfinite(row.test_accuracy)
                               ? QString::number(100 * row.test_accuracy, 'f', 2) + " %"
                               : "");
  item->setText(kThroughput, std::isfinite(row.images_per_second)
                                 ? QString::number(row.images_per_second, 'f', 0)
                                 : "");
  item->setText(kEpochTime, std::isfinite(row.epoch_seconds)
                                ? QString::fromStdString(epoch_time_text(row))
                                : "");
  for (int c = kBatch; c < kColumns; ++c) item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
}

void RunsPanel::rebuild() {
  // Rows are kept, moved and updated, never all thrown away: the item under the mouse or the
  // keyboard focus stays the same object, so a view handling an event on it never sees it freed.
  filling_ = true;
  const std::vector<RunEntry*> entries = store_->entries();
  for (int i = tree_->topLevelItemCount() - 1; i >= 0; --i) {
    const int id = tree_->topLevelItem(i)->data(kName, Qt::UserRole).toInt();
    if (!store_->find(id)) delete tree_->takeTopLevelItem(i);
  }
  for (int row = 0; row < int(entries.size()); ++row) {
    QTreeWidgetItem* item = nullptr;
    for (int i = row; i < tree_->topLevelItemCount() && !item; ++i)
      if (tree_->topLevelItem(i)->data(kName, Qt::UserRole).toInt() == entries[row]->id)
        item = i == row ? tree_->topLevelItem(i) : tree_->takeTopLevelItem(i);
    if (!item) {
      item = new QTreeWidgetItem;
      item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    }
    if (tree_->indexOfTopLevelItem(item) < 0) tree_->insertTopLevelItem(row, item);
    fill_row(item, *entries[row]);
  }
  filling_ = false;
  fit_columns();
}

void RunsPanel::fit_columns() {
  QHeaderView* header = tree_->header();
  const QFontMetrics metrics = tree_->fontMetrics();
  // The tick box and the colour come before the name's text.
  const int name_least = metrics.horizontalAdvance(QString(14, QChar('x'))) +
                         tree_->iconSize().width() + 3 * metrics.height();
  // A cell's text and the margins the style draws around it (QCommonStyle's item text margin).
  const int margins =
      2 * (tree_->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, tree_) + 1) + 4;
  int widths[kColumns] = {};
  int details = 0;
  for (int c = kDevice; c < kColumns; ++c) {
    widths[c] = std::max(header->sectionSizeHint(c),
                         metrics.horizontalAdvance(tree_->headerItem()->text(c)) + 2 * margins);
    for (int i = 0; i < tree_->topLevelItemCount(); ++i)
      widths[c] = std::max(widths[c],
                           metrics.horizontalAdvance(tree_->topLevelItem(i)->text(c)) + margins);
    details += widths[c];
  }
  // Where that does not fit: the device's text gives way down to 8 characters, then the epoch
  // time and then the batch leave the list (Compare shows both).
  int excess = details + name_least - tree_->viewport()->width();
  const int device_least = metrics.horizontalAdvance(QString(8, QChar('x'))) + margins;
  if (excess > 0 && widths[kDevice] > device_least) {
    const int given = std::min(excess, widths[kDevice] - device_least);
    widths[kDevice] -= given, excess -= given;
  }
  bool hidden[kColumns] = {};
  for (int c : {int(kEpochTime), int(kBatch)})
    if (excess > 0) hidden[c] = true, excess -= widths[c];
  for (int c = kDevice; c < kColumns; ++c) {
    header->setSectionHidden(c, hidden[c]);
    if (!hidden[c]) header->resizeSection(c, widths[c]);
  }
}

void RunsPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fit_columns();
}

int RunsPanel::selected_run() const {
  const QTreeWidgetItem* item = tree_->currentItem();
  return item ? item->data(kName, Qt::UserRole).toInt() : 0;
}

void RunsPanel::update_run(int id) {
  RunEntry* entry = store_->find(id);
  if (!entry) return;
  filling_ = true;
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* item = tree_->topLevelItem(i);
    if (item->data(kName, Qt::UserRole).toInt() == id) fill_row(item, *entry);
  }
  filling_ = false;
  fit_columns();
}

void RunsPanel::set_baseline(int id) {
  if (baseline_ == id) return;
  baseline_ = id;
  rebuild();
  emit baseline_changed(id);
}

void RunsPanel::import_runs() {
  const QString folder = QFileDialog::getExistingDirectory(
      this, tr("Import runs: choose a run folder or a folder of runs"));
  if (folder.isEmpty()) return;
  QStringList problems;
  const int added = store_->import_folder(folder.toStdString(), &problems);
  QString text = tr("Imported %n run(s) from %1", "", added).arg(folder);
  if (!problems.isEmpty()) text += "\n" + problems.join("\n");
  emit message(text);
}

void RunsPanel::show_menu(const QPoint& pos) {
  QTreeWidgetItem* item = tree_->itemAt(pos);
  if (!item) return;
  const int id = item->data(kName, Qt::UserRole).toInt();
  RunEntry* entry = store_->find(id);
  if (!entry) return;
  QMenu menu(this);
  menu.addAction(tr("Make baseline"), this, [this, id] { set_baseline(id); });
  menu.addAction(tr("Use this setup"), this, [this, id] { emit use_setup_requested(id); });
  menu.addSeparator();
  QAction* rename = menu.addAction(tr("Rename…"), this, [this, id] { rename_run(id); });
  QAction* open = menu.addAction(tr("Open folder"), this, [entry] {
    QDesktopServices::openUrl(QUrl::fromLocalFile(QString::fromStdString(entry->data.dir.string())));
  });
  open->setEnabled(!entry->data.dir.empty());
  QAction* remove = menu.addAction(tr("Delete…"), this, [this, id] { delete_run(id); });
  // A record another process still writes (a gpulab-cli run) is not this window's to delete.
  const bool elsewhere = !entry->live && entry->data.written_elsewhere();
  remove->setEnabled(!entry->live && !elsewhere);
  if (elsewhere) remove->setText(tr("Delete… (another process is still writing this run)"));
  // A learner's hand-in is the instructor's to read, never to change (the store refuses too).
  if (store_->read_only()) {
    const QString why = tr(" (read-only: %1)").arg(store_->owner());
    rename->setEnabled(false);
    rename->setText(rename->text() + why);
    remove->setEnabled(false);
    remove->setText(tr("Delete…") + why);
  }
  menu.exec(tree_->viewport()->mapToGlobal(pos));
}

void RunsPanel::rename_run(int id) {
  RunEntry* entry = store_->find(id);
  if (!entry) return;
  bool ok = false;
  const QString name = QInputDialog::getText(this, tr("Rename run"), tr("Name shown in plots and tables:"),
                                             QLineEdit::Normal,
                                             QString::fromStdString(entry->data.name()), &ok);
  if (!ok) return;
  QString error;
  if (!store_->rename(id, name, &error)) emit message(tr("Could not rename: %1").arg(error));
}

void RunsPanel::delete_run(int id) {
  RunEntry* entry = store_->find(id);
  if (!entry) return;
  const QString folder = QString::fromStdString(entry->data.dir.string());
  const auto answer = QMessageBox::question(
      this, tr("Delete run"),
      tr("Delete the run \"%1\" and its folder?\n%2\nThis cannot be undone.")
          .arg(QString::fromStdString(entry->data.name()), folder),
      QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
  if (answer != QMessageBox::Yes) return;
  QString error;
  if (!store_->remove(id, &error)) emit message(tr("Could not delete: %1").arg(error));
}

}  // namespace gpulab::ui
