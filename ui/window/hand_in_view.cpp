// A learner's hand-in shown in place of the user's runs: a read-only RunStore over its runs/ and
// a runs list on it, swapped in and out of the window's runs list.
#include "ui/window/hand_in_view.hpp"

#include <QPushButton>
#include <QStackedWidget>

#include "engine/labs/hand_in_manifest.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/runs/runs_panel.hpp"
#include "ui/widgets/status_widgets.hpp"

namespace gpulab::ui {

HandInView::HandInView(QStackedWidget* lists, Banner* line, QObject* parent)
    : QObject(parent), lists_(lists), line_(line) {
  line_->hide();
  connect(line_, &Banner::closed, this, &HandInView::close);
}

HandInView::~HandInView() = default;

int HandInView::open(const std::filesystem::path& hand_in, const QString& learner,
                     const QString& lab, QStringList* problems) {
  const std::filesystem::path runs = hand_in / kHandInRuns;
  std::error_code error;
  if (!std::filesystem::is_directory(runs, error)) {
    *problems << tr("%1: missing: %2's hand-in holds no runs to compare (lab verify names what "
                    "else is missing)")
                     .arg(QString::fromStdString(runs.string()), learner);
    return 0;
  }
  auto store = std::make_unique<RunStore>(runs);
  store->set_read_only(tr("%1's hand-in").arg(learner));
  *problems << store->load_all();
  if (store->entries().empty() && store->loading_in_background() == 0) {
    if (problems->isEmpty())
      *problems << tr("%1: holds no run records: %2's hand-in has no runs to compare")
                       .arg(QString::fromStdString(runs.string()), learner);
    return 0;
  }
  close();
  lab_ = lab;
  store_ = std::move(store);
  panel_ = new RunsPanel(store_.get(), lists_);
  panel_->rebuild();
  for (RunEntry* entry : store_->entries()) store_->set_checked(entry->id, true);
  panel_->setObjectName("hand-in-runs");
  lists_->addWidget(panel_);
  lists_->setCurrentWidget(panel_);
  connect(store_.get(), &RunStore::runs_changed, this, &HandInView::changed);
  connect(panel_, &RunsPanel::baseline_changed, this, &HandInView::baseline_changed);
  line_->show_message(
      Banner::Kind::Info,
      line_text() + "\n" + tr("Nothing is written into it. Its runs are not in your runs folder."));
  QPushButton* back = line_->add_button(tr("Back to my runs"));
  back->setObjectName("back-to-my-runs");
  connect(back, &QPushButton::clicked, this, &HandInView::close);
  line_->show();
  emit changed();
  return int(store_->entries().size()) + store_->loading_in_background();
}

void HandInView::close() {
  if (!store_) return;
  line_->dismiss();
  line_->hide();
  lists_->setCurrentIndex(0);
  lists_->removeWidget(panel_);
  delete panel_;
  panel_ = nullptr;
  store_.reset();
  emit changed();
}

QString HandInView::line_text() const {
  if (!store_) return {};
  const size_t runs = store_->entries().size();
  return tr("%1 (read-only): %2, %3")
      .arg(store_->owner(), lab_, runs == 1 ? tr("1 run") : tr("%1 runs").arg(runs));
}

}  // namespace gpulab::ui
