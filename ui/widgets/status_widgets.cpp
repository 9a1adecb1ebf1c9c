// Message bars and progress rows.
#include "ui/widgets/status_widgets.hpp"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace gpulab::ui {
QSize OneLineLabel::minimumSizeHint() const { return {0, fontMetrics().height()}; }

QSize OneLineLabel::sizeHint() const {
  return {fontMetrics().horizontalAdvance(text()), fontMetrics().height()};
}

void OneLineLabel::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setPen(
      palette().color(isEnabled() ? QPalette::Active : QPalette::Disabled, foregroundRole()));
  painter.drawText(rect(), int(Qt::AlignLeft | Qt::AlignVCenter),
                   fontMetrics().elidedText(text(), Qt::ElideRight, width()));
}

QString duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("?");
  const long total = std::lround(seconds);
  const long h = total / 3600, m = (total / 60) % 60, s = total % 60;
  if (h > 0) return QString("%1:%2:%3").arg(h).arg(m, 2, 10, QChar('0')).arg(s, 2, 10, QChar('0'));
  return QString("%1:%2").arg(m).arg(s, 2, 10, QChar('0'));
}

namespace {

// `text` with a zero-width space, where QLabel may wrap, after each '/', '_', '-', '.' and ',' of
// a word too long for a line (a path, a run folder's name), and every kLongWord characters of one
// that has none: a message never needs more width than the window has, and its close button
// stays on screen.
QString breakable(const QString& text) {
  constexpr int kLongWord = 40;
  static const QRegularExpression words(QStringLiteral("\\S{%1,}").arg(kLongWord));
  QString out = text;
  QRegularExpressionMatch match;
  qsizetype from = 0;
  while ((match = words.match(out, from)).hasMatch()) {
    QString word;
    int since_break = 0;
    for (const QChar c : match.captured()) {
      word += c;
      const bool separator = QStringLiteral("/_-.,\\").contains(c);
      if (separator || ++since_break >= kLongWord) {
        word += QChar(0x200B);
        since_break = 0;
      }
    }
    out.replace(match.capturedStart(), match.capturedLength(), word);
    from = match.capturedStart() + word.size();
  }
  return out;
}

}  // namespace

Banner::Banner(QWidget* parent) : QFrame(parent) {
  setFrameShape(QFrame::StyledPanel);
  label_ = new QLabel(this);
  label_->setWordWrap(true);
  label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  buttons_ = new QHBoxLayout;
  auto* close = new QToolButton(this);
  close->setText(QStringLiteral("✕"));
  close->setToolTip(tr("Dismiss"));
  close->setAutoRaise(true);
  connect(close, &QToolButton::clicked, this, [this] {
    dismiss();
    emit closed();
  });
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(10, 6, 6, 6);
  layout->addWidget(label_, 1);
  layout->addLayout(buttons_);
  layout->addWidget(close, 0, Qt::AlignTop);
  hide();
}

void Banner::show_message(Kind kind, const QString& text) {
  while (QLayoutItem* item = buttons_->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  progress_ = nullptr;
  lines_ = {{QString(), text, kind}};
  show_lines();
}

void Banner::add_message(Kind kind, const QString& text) {
  if (isHidden()) lines_.clear();
  for (const Line& line : lines_)
    if (line.text == text) return;
  lines_.push_back({QString(), text, kind});
  if (lines_.size() > size_t(kMostLines)) lines_.erase(lines_.begin());
  show_lines();
}

void Banner::set_line(const QString& key, Kind kind, const QString& text) {
  if (isHidden()) lines_.clear();
  auto same =
      std::find_if(lines_.begin(), lines_.end(), [&](const Line& l) { return l.key == key; });
  if (text.isEmpty()) {
    if (same == lines_.end()) return;
    lines_.erase(same);
    if (lines_.empty())
      dismiss();
    else
      show_lines();
    return;
  }
  if (same != lines_.end())
    *same = {key, text, kind};
  else
    lines_.push_back({key, text, kind});
  show_lines();
}

void Banner::show_lines() {
  Kind kind = Kind::Info;
  QStringList texts;
  for (const Line& line : lines_) {
    kind = std::max(kind, line.kind);
    texts << line.text;
  }
  const char* style = kind == Kind::Error     ? "background: #fde2e2; color: #6b0010;"
                      : kind == Kind::Warning ? "background: #fff4d6; color: #5c4100;"
                                              : "background: #e3f0fb; color: #0b3d66;";
  setStyleSheet(QString("gpulab--ui--Banner { %1 border-radius: 4px; } QLabel { %1 }").arg(style));
  text_ = texts.join("\n");
  label_->setText(breakable(text_));
  show();
}

QPushButton* Banner::add_button(const QString& text) {
  auto* button = new QPushButton(text, this);
  buttons_->addWidget(button);
  return button;
}

QProgressBar* Banner::progress() {
  if (!progress_) {
    progress_ = new QProgressBar(this);
    progress_->setMinimumWidth(200);
    buttons_->insertWidget(0, progress_);
  }
  return progress_;
}

QString Banner::text() const { return isHidden() ? QString() : text_; }

void Banner::dismiss() {
  text_.clear();
  label_->clear();
  lines_.clear();
  hide();
}

ProgressList::ProgressList(QWidget* parent) : QWidget(parent) {
  layout_ = new QVBoxLayout(this);
  layout_->setContentsMargins(0, 0, 0, 0);
  // The row's room says so while no run has one: the line is the window's status line.
  // Short enough for the presenter's tool bar at 1280x720, where it shares the line with the
  // buttons: cut with "…" there, it read as something missing.
  idle_ = new OneLineLabel(tr("No run is training: ▶ Train starts one."), this);
  idle_->setObjectName("progress-idle");
  idle_->setEnabled(false);  // grey: a note
  idle_->setToolTip(
      tr("▶ Train starts the setup (or the race of the Race panel), and each "
         "run's progress shows here."));
  layout_->addWidget(idle_);
  reserve_row();
}

void ProgressList::reserve_row() {
  // The room of one run's row, empty or not: ▶ Train's first row took 42 px from the tabs below.
  QProgressBar bar;
  bar.setFont(font());
  setMinimumHeight(std::max(fontMetrics().height(), bar.sizeHint().height()));
}

void ProgressList::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) reserve_row();
}

void ProgressList::add(int id, const QString& name) {
  clear_finished();
  idle_->hide();
  Row row;
  row.label =
      new OneLineLabel(tr("%1: starting (loading data, building the model)…").arg(name), this);
  row.label->setProperty("name", name);
  row.label->setToolTip(row.label->text());
  row.bar = new QProgressBar(this);
  row.bar->setRange(0, 0);  // busy until the plan is known
  row.bar->setTextVisible(true);
  row.bar->setMinimumWidth(kBarMinimum);  // not its text's width: see text_width()
  // The line and its bar side by side: a row is one line high, as high as the buttons beside it.
  row.line = new QWidget(this);
  auto* line = new QHBoxLayout(row.line);
  line->setContentsMargins(0, 0, 0, 0);
  row.label->setParent(row.line);
  row.bar->setParent(row.line);
  line->addWidget(row.label, 1);
  line->addWidget(row.bar, 1);
  layout_->addWidget(row.line);
  rows_[id] = row;
}

void ProgressList::set_plan(int id, const StepPlan& plan) {
  auto it = rows_.find(id);
  if (it == rows_.end()) return;
  it->second.plan = plan;
  it->second.bar->setRange(0, int(std::min<int64_t>(plan.total_steps, 1 << 30)));
  it->second.bar->setValue(0);
}

void ProgressList::update(int id, const StepMetrics& last, const LiveFigures& figures,
                          bool paused) {
  auto it = rows_.find(id);
  if (it == rows_.end() || it->second.finished) return;
  Row& row = it->second;
  const QString name = row.label->property("name").toString();
  const int64_t total = row.plan.total_steps;
  row.bar->setValue(int(std::min<int64_t>(last.step, 1 << 30)));
  row.bar->setFormat(tr("epoch %1/%2 · step %3/%4 · ETA %5")
                         .arg(last.epoch)
                         .arg(row.plan.epochs)
                         .arg(last.step)
                         .arg(total)
                         .arg(paused ? tr("paused") : duration_text(figures.eta_s)));
  row.label->setText(tr("%1: loss %2 · %3 images/s")
                         .arg(name)
                         .arg(last.loss, 0, 'f', 4)
                         .arg(std::isfinite(figures.images_per_second)
                                  ? QString::number(figures.images_per_second, 'f', 0)
                                  : QStringLiteral("–")));
  row.label->setToolTip(row.label->text());
}

void ProgressList::finish(int id, const QString& result) {
  auto it = rows_.find(id);
  if (it == rows_.end()) return;
  it->second.finished = true;
  it->second.label->setText(it->second.label->property("name").toString() + ": " + result);
  it->second.label->setToolTip(it->second.label->text());
  if (it->second.bar->maximum() == 0) it->second.bar->setRange(0, 1);
  it->second.bar->setValue(it->second.bar->maximum());
  it->second.bar->setFormat(tr("done"));
}

void ProgressList::clear_finished() {
  for (auto it = rows_.begin(); it != rows_.end();) {
    if (!it->second.finished) {
      ++it;
      continue;
    }
    delete it->second.line;  // and its label and bar
    it = rows_.erase(it);
  }
}

int ProgressList::text_width() const {
  const QString longest = tr("epoch %1/%2 · step %3/%4 · ETA %5")
                              .arg(100)
                              .arg(100)
                              .arg(999999)
                              .arg(999999)
                              .arg(duration_text(36000));
  return fontMetrics().horizontalAdvance(longest) + 2 * fontMetrics().averageCharWidth();
}

QString ProgressList::text(int id) const {
  auto it = rows_.find(id);
  if (it == rows_.end()) return {};
  return it->second.label->text() + " | " + it->second.bar->text();
}

}  // namespace gpulab::ui
