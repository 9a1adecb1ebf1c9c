// The live-run board: the timer, the drawing budget, the progress rows and the key numbers.
#include "ui/window/live_board.hpp"

#include <QElapsedTimer>
#include <QLabel>
#include <QResizeEvent>
#include <QStringList>
#include <QTabWidget>
#include <QTimer>
#include <algorithm>
#include <cmath>

#include "ui/compare/compare_view.hpp"
#include "ui/runs/run_controller.hpp"
#include "ui/runs/run_store.hpp"
#include "ui/runs/runs_panel.hpp"
#include "ui/widgets/status_widgets.hpp"
#include "ui/window/live_tab.hpp"
#include "ui/window/presenter_mode.hpp"
#include "ui/window/run_scheduler.hpp"

namespace gpulab::ui {
namespace {

constexpr int kTickMs = 33;             // ~30 Hz: smooth to the eye, cheap for the trainer
constexpr int kBarsEveryTicks = 60;     // medians and comparisons every two seconds
constexpr int kProgressEveryTicks = 6;  // progress rows five times a second
// Drawing may take this share of one core at most (1%): on a 2-core machine a training step waits
// for its slowest thread, so every millisecond the window takes from a core is lost to all.
constexpr double kDrawBudget = 0.01;

// The run's line when it ends. Time to target is the same figure Compare and the lab report give:
// time_to_target_s over the run's records, for the one target the window shares.
QString result_text(const RunSummary& s, const RunData& run, double target_accuracy) {
  switch (s.status) {
    case RunStatus::Finished: {
      // The pace the runs list, Compare and the lab tables give (run_images_per_second).
      const double pace = run_images_per_second(run);
      QString text = QObject::tr("finished in %1, %2 images/s")
                         .arg(duration_text(s.train_seconds))
                         .arg(std::isfinite(pace) ? QString::number(pace, 'f', 0) : "–");
      if (std::isfinite(s.test_accuracy))
        text += QObject::tr(", test accuracy %1 %").arg(100 * s.test_accuracy, 0, 'f', 2);
      if (const double t = time_to_target_s(run, target_accuracy); std::isfinite(t))
        text += QObject::tr(", %1 % after %2 s")
                    .arg(100 * target_accuracy, 0, 'f', 1)
                    .arg(t, 0, 'f', 2);
      if (s.diverged) text += QObject::tr(" (diverged)");
      return text;
    }
    case RunStatus::Cancelled:  // the word the runs list and run.json use
      return QObject::tr("cancelled at step %1 (its record is kept)").arg(s.steps);
    case RunStatus::Failed:
      return QObject::tr("failed: %1").arg(QString::fromStdString(s.message));
    case RunStatus::Running:
      break;
  }
  return {};
}

}  // namespace

LiveBoard::LiveBoard(Parts parts, QObject* parent) : QObject(parent), parts_(parts) {
  parts_.key_numbers->installEventFilter(this);  // its room is fitted again at each new width
  timer_ = new QTimer(this);
  timer_->setInterval(kTickMs);
  connect(timer_, &QTimer::timeout, this, &LiveBoard::tick);
  RunScheduler* scheduler = parts_.scheduler;
  connect(scheduler, &RunScheduler::run_started, parts_.progress, &ProgressList::add);
  connect(scheduler, &RunScheduler::wave_started, this, [this] {
    if (follow_runs_) parts_.tabs->setCurrentIndex(0);
    timer_->start();
  });
  connect(scheduler, &RunScheduler::paused_changed, this, &LiveBoard::update_progress);
  connect(scheduler, &RunScheduler::run_ending, this, &LiveBoard::run_ending);
  connect(scheduler, &RunScheduler::run_ended, this, &LiveBoard::run_ended);
  connect(scheduler, &RunScheduler::changed, this, [this] {
    if (!parts_.scheduler->active().empty()) return;
    timer_->stop();
    follow_runs_ = true;  // the lab's runs are over: ▶ Train's next runs show the Live tab
  });
}

void LiveBoard::tick() {
  bool any = false, started = false;
  for (const RunScheduler::Active& a : parts_.scheduler->active()) {
    FeedBatch batch = a.controller->feed().take();
    if (batch.empty()) continue;
    if (batch.start) {
      parts_.store->set_started(a.id, *batch.start);
      parts_.progress->set_plan(a.id, batch.start->plan);
      started = true;
    }
    if (!batch.steps.empty()) last_step_[a.id] = batch.steps.back();
    any |= !batch.steps.empty() || !batch.evals.empty() || !batch.samples.empty() ||
           !batch.lr_changes.empty();
    parts_.store->append(a.id, batch);
  }
  if (started) emit plans_arrived();
  if (!any) return;
  ++ticks_;
  const bool bars = ticks_ % kBarsEveryTicks == 1;  // from the first points on
  parts_.live->refresh(bars);
  if (bars) {
    for (const RunScheduler::Active& a : parts_.scheduler->active()) parts_.runs->update_run(a.id);
    update_key_numbers(true);  // its medians cost O(steps): with the bars, not at every tick
  }
  if (ticks_ % kProgressEveryTicks == 0) update_progress();  // the status line and headline
  // Draw as often as the budget allows: a cheap chart at the timer's rate, a heavy one (many
  // points, a big screen) less often, never more than kDrawBudget of a core.
  const auto now = std::chrono::steady_clock::now();
  if (now < next_replot_) return;
  QElapsedTimer cost;
  cost.start();
  parts_.live->replot();
  if (parts_.tabs->currentWidget() == parts_.compare) parts_.compare->refresh(bars);
  const auto spent = std::chrono::nanoseconds(cost.nsecsElapsed());
  next_replot_ = now + std::max<std::chrono::nanoseconds>(
                           std::chrono::milliseconds(kTickMs),
                           std::chrono::nanoseconds(int64_t(spent.count() / kDrawBudget)));
}

void LiveBoard::run_ending(int id, RunController* controller) {
  tick();  // whatever the feed still holds
  if (auto last = last_step_.find(id); last != last_step_.end()) {
    parts_.progress->update(id, last->second, live_of(id), false);
    last_step_.erase(last);
  }
  const RunSummary& summary = controller->summary();
  parts_.store->finish(id, summary.status, summary.message);
  if (RunEntry* entry = parts_.store->find(id))
    parts_.progress->finish(id,
                            result_text(summary, entry->data, parts_.compare->target_accuracy()));
  const QString name = QString::fromStdString(controller->request().name);
  if (summary.diverged)
    parts_.message->show_message(
        Banner::Kind::Warning,
        tr("Run %1 %2").arg(name, QString::fromStdString(summary.divergence)));
  if (summary.status == RunStatus::Failed) {
    if (controller->data_missing())
      emit data_missing();
    else
      parts_.message->show_message(Banner::Kind::Error,
                                   tr("Run %1 failed: %2\nIts record is kept and marked failed.")
                                       .arg(name, QString::fromStdString(summary.message)));
  }
}

void LiveBoard::run_ended(int id) {
  parts_.live->refresh(true);
  parts_.live->replot();
  parts_.compare->refresh(true);
  parts_.runs->update_run(id);
  update_key_numbers(true);
}

LiveFigures LiveBoard::live_of(int id) const {
  const RunEntry* entry = parts_.store->find(id);
  if (!entry) return {};
  const auto plan = entry->data.info.find("plan");
  const int64_t total = plan != entry->data.info.end() && plan->is_object()
                            ? plan->value("total_steps", int64_t(0))
                            : 0;
  return live_figures(entry->data, total);
}

void LiveBoard::update_progress() {
  for (const auto& [id, step] : last_step_)
    parts_.progress->update(id, step, live_of(id), parts_.scheduler->paused());
  update_key_numbers(false);
}

void LiveBoard::set_presenter(bool on) {
  presenter_ = on;
  parts_.key_numbers->setVisible(on);
  if (!on) {  // the size fit_headline gave it goes, as the window's large type does
    fit_headline_text(parts_.key_numbers, 0, 0);
    parts_.key_numbers->setFont(QFont());
  }
  update_key_numbers(true);
}

bool LiveBoard::eventFilter(QObject* watched, QEvent* event) {
  // The width it wraps at is known only once laid out: shown, or the window resized without a
  // new height (a full screen the size the window was).
  if (watched == parts_.key_numbers && event->type() == QEvent::Resize && presenter_ &&
      static_cast<QResizeEvent*>(event)->size().width() !=
          static_cast<QResizeEvent*>(event)->oldSize().width())
    fit_headline_text(parts_.key_numbers, headline_runs_, headline_points_);
  return QObject::eventFilter(watched, event);
}

void LiveBoard::fit_headline(int runs, double points) {
  headline_points_ = points;
  headline_runs_ = runs;
  fitted_points_ = 0;  // a new width or height: fitted again even where the text is the same
  update_key_numbers(false);
}

QString LiveBoard::key_numbers() const {
  return parts_.key_numbers->isVisible() ? parts_.key_numbers->text() : QString();
}

void LiveBoard::update_key_numbers(bool recompute) {
  if (!presenter_) return;
  CompareView* compare = parts_.compare;
  // Compare's rows (O(steps)) with the bars; a live run's own figures, the same the status line
  // shows (live_figures), whenever its status line changes.
  if (recompute || key_rows_.size() != compare->runs().size()) key_rows_ = compare->rows();
  const std::vector<RunComparison>& rows = key_rows_;
  const std::vector<RunEntry*>& compared = compare->runs();
  const int baseline = compare->baseline_index();
  const double baseline_rate = baseline >= 0 && baseline < int(rows.size())
                                   ? rows[size_t(baseline)].images_per_second
                                   : kNoValue;
  // Live runs while training; otherwise every run shown, as Compare has them.
  const bool training = !parts_.scheduler->active().empty();
  std::vector<size_t> shown;
  for (size_t i = 0; i < compared.size() && i < rows.size(); ++i)
    if (!training || compared[i]->live) shown.push_back(i);
  // The room's eye takes in a few lines, not twenty: the latest, saying how many are left out.
  const size_t most = size_t(headline_runs_);
  const size_t hidden = shown.size() > most ? shown.size() - most : 0;
  QStringList lines;
  for (size_t k = hidden; k < shown.size(); ++k) {
    const size_t i = shown[k];
    RunEntry* entry = compared[i];
    const RunComparison& row = rows[i];
    double rate = row.images_per_second;
    const bool live = entry->live && last_step_.count(entry->id);
    LiveFigures figures;
    if (entry->live) {
      figures = live_of(entry->id);
      rate = figures.images_per_second;
    }
    QString line =
        QString("<span style='color:%1'>■</span> %2: <b>%3</b> images/s")
            .arg(entry->color.name(), QString::fromStdString(row.name).toHtmlEscaped(),
                 std::isfinite(rate) ? QString::number(rate, 'f', 0) : QStringLiteral("–"));
    if (live)
      line += tr(" · ETA <b>%1</b>")
                  .arg(parts_.scheduler->paused() ? tr("paused") : duration_text(figures.eta_s));
    // Named: "the baseline" left the room to guess which run it was.
    if (int(i) == baseline)
      line += tr(" · the baseline");
    else if (std::isfinite(rate / baseline_rate))
      line += tr(" · <b>%1×</b> %2")
                  .arg(rate / baseline_rate, 0, 'f', 1)
                  .arg(QString::fromStdString(rows[size_t(baseline)].name).toHtmlEscaped());
    if (!row.flags.empty()) {
      QStringList flags;
      for (const std::string& flag : row.flags)
        flags << QString::fromStdString(flag_headline(flag));
      line += " <span style='color:#a04000; font-size: small'>⚠ " +
              flags.join("; ").toHtmlEscaped() + "</span>";
    }
    lines << line;
  }
  // On the last line, small, rather than a line of its own.
  if (hidden > 0)
    lines.back() += tr(" <i style='font-size: small'>(the latest %1 of %2 runs shown; %3 earlier "
                       "not listed)</i>")
                        .arg(shown.size() - hidden)
                        .arg(shown.size())
                        .arg(hidden);
  const QString text =
      lines.isEmpty() ? tr("Press ▶ Train: the figures appear here.") : lines.join("<br>");
  if (text == parts_.key_numbers->text() && headline_points_ == fitted_points_) return;
  parts_.key_numbers->setText(text);
  fitted_points_ = headline_points_;
  fit_headline_text(parts_.key_numbers, headline_runs_, headline_points_);
}

}  // namespace gpulab::ui
