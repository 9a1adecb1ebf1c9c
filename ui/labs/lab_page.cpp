// A lab's page: its blocks as widgets, in reading order.
#include "ui/labs/lab_page.hpp"

#include <qcustomplot.h>

#include <QApplication>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QRadioButton>
#include <QResizeEvent>
#include <QScrollBar>
#include <QTableWidget>
#include <QTextDocumentFragment>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/analysis/chart_builder.hpp"
#include "ui/charts/chart_view.hpp"
#include "ui/labs/lab_quiz.hpp"
#include "ui/labs/lab_written.hpp"

namespace gpulab::ui {
namespace {

QLabel* wrapped_label(const QString& text, QWidget* parent, Qt::TextFormat format = Qt::RichText) {
  auto* label = new QLabel(parent);
  label->setTextFormat(format);
  label->setText(text);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextBrowserInteraction);
  label->setOpenExternalLinks(true);
  return label;
}

// The Markdown as HTML, converted once: a QLabel given Markdown imports it again at each of its
// layout's size questions, and the import slows with a paragraph's lines (a lab of 2,000 short
// lines took 9 s to show as Markdown, 0.2 s as HTML).
// A fragment, not a document: its HTML does not pin the font, so presenter mode still enlarges it.
QString markdown_html(const std::string& markdown) {
  return QTextDocumentFragment::fromMarkdown(QString::fromStdString(markdown)).toHtml();
}

// "lenet5 on cpu, batch 64, 300 steps": what the Run button will start.
QString settings_text(const LabExperiment& e) {
  const BackendOptions& backend = e.experiment.backend;
  if (!e.bench.empty()) {
    QStringList sizes;
    for (int n : e.sizes) sizes << QString::number(n);
    if (e.bench == "inference") {
      QString text =
          QObject::tr("inference of %1 on %2")
              .arg(QString::fromStdString(e.model_name), QString::fromStdString(backend.device));
      if (backend.device == "cpu")
        text += backend.threads > 0 ? QObject::tr(", %n CPU thread(s)", "", backend.threads)
                                    : QObject::tr(", every CPU thread");
      return text + QObject::tr(", batch sizes %1").arg(sizes.join(", "));
    }
    return QObject::tr("single-precision matrix multiply on %1, sizes %2")
        .arg(QString::fromStdString(backend.device), sizes.join(", "));
  }
  const TrainOptions& train = e.experiment.train;
  QString text =
      QObject::tr("%1 on %2, batch %3")
          .arg(QString::fromStdString(e.model_name), QString::fromStdString(backend.device))
          .arg(train.batch);
  if (train.max_steps > 0) text += QObject::tr(", %1 steps").arg(train.max_steps);
  if (train.epochs > 0) text += QObject::tr(", %n epoch(s)", "", int(train.epochs));
  if (backend.replicas > 1) text += QObject::tr(", %1 replicas").arg(backend.replicas);
  if (backend.threads > 0) text += QObject::tr(", %n CPU thread(s)", "", backend.threads);
  return text;
}

}  // namespace

LabPage::LabPage(const Lab& lab, QWidget* parent) : QScrollArea(parent), lab_(lab) {
  setObjectName("lab-page");
  setWidgetResizable(true);
  setFrameShape(QFrame::NoFrame);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setMinimumHeight(120);  // the page scrolls; the window's own scroll area need not
  auto* content = new QWidget(this);
  auto* layout = new QVBoxLayout(content);
  layout->setContentsMargins(8, 4, 8, 8);

  auto* heading = new QHBoxLayout;
  heading->addWidget(wrapped_label(tr("About %1 minutes · hardware: %2 · %n experiment(s)", "",
                                      int(lab.experiments.size()))
                                       .arg(lab.minutes)
                                       .arg(QString::fromStdString(lab.hardware_text())),
                                   content),
                     1);
  run_all_ = new QPushButton(tr("▶ Run all experiments"), content);
  run_all_->setObjectName("lab-run-all");
  run_all_->setToolTip(
      tr("Start every experiment this machine can run, one after another where they share "
         "hardware, so each is measured alone"));
  connect(run_all_, &QPushButton::clicked, this, [this] { emit run_requested(QString()); });
  heading->addWidget(run_all_, 0, Qt::AlignTop);
  hand_in_ = new QPushButton(tr("Hand in…"), content);
  hand_in_->setObjectName("lab-hand-in");
  hand_in_->setToolTip(
      tr("Write a folder for your teacher: this lab's results, charts, your answers and score, "
         "and the machine the runs came from"));
  connect(hand_in_, &QPushButton::clicked, this, [this] { emit hand_in_requested(false); });
  heading->addWidget(hand_in_, 0, Qt::AlignTop);
  hand_in_zip_ = new QPushButton(tr("Hand in as .zip…"), content);
  hand_in_zip_->setObjectName("lab-hand-in-zip");
  hand_in_zip_->setToolTip(
      tr("The same folder, and beside it one .zip of it (YOUR-NAME-LAB.zip): the file a course "
         "platform takes"));
  connect(hand_in_zip_, &QPushButton::clicked, this, [this] { emit hand_in_requested(true); });
  heading->addWidget(hand_in_zip_, 0, Qt::AlignTop);
  layout->addLayout(heading);

  for (const LabBlock& block : lab.blocks) {
    switch (block.kind) {
      case LabBlock::Kind::Text:
        layout->addWidget(wrapped_label(markdown_html(block.text), content));
        break;
      case LabBlock::Kind::Code:
        layout->addWidget(code_block(block));
        break;
      case LabBlock::Kind::Experiment:
        layout->addWidget(experiment_card(lab.experiments[size_t(block.index)]));
        break;
      case LabBlock::Kind::Table: {
        auto* table = new QTableWidget(content);
        table->setObjectName(QString("lab-table-%1").arg(tables_.size() + 1));
        table->setEditTriggers(QAbstractItemView::NoEditTriggers);
        table->verticalHeader()->hide();
        table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        table->setWordWrap(true);
        table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
        table->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
        table->installEventFilter(this);  // refitted to its width
        tables_.push_back(table);
        layout->addWidget(table);
        break;
      }
      case LabBlock::Kind::Chart: {
        const LabChart& c = lab.charts[size_t(block.index)];
        if (!c.title.empty())
          layout->addWidget(wrapped_label(
              "<b>" + QString::fromStdString(c.title).toHtmlEscaped() + "</b>", content));
        auto* view = new ChartView(parse_chart_kind(c.kind), content);
        view->setObjectName(QString("lab-chart-%1").arg(charts_.size() + 1));
        view->setMinimumHeight(280);
        view->plot()->installEventFilter(this);  // the wheel scrolls the page, not the chart
        charts_.push_back(view);
        layout->addWidget(view);
        break;
      }
      case LabBlock::Kind::Quiz: {
        const int number = int(questions_.size());
        auto* view = new QuizQuestionView(lab.quiz[size_t(block.index)], number + 1, content);
        connect(view, &QuizQuestionView::answered, this, [this, number](int choice) {
          update_score();
          emit answered(number, choice);
        });
        questions_.push_back(view);
        layout->addWidget(view);
        // The score under the last question.
        if (questions_.size() == lab.quiz.size()) {
          score_ = wrapped_label({}, content);
          score_->setObjectName("quiz-score");
          layout->addWidget(score_);
        }
        break;
      }
    }
  }
  if (!lab.questions.empty()) {
    written_ = new WrittenAnswersView(lab.questions, content);
    connect(written_, &WrittenAnswersView::changed, this, &LabPage::written);
    layout->addWidget(written_);
  }
  // Where the hand-in went, at the end of the page: under the heading it pushed every Run
  // button down when it appeared (the tab's floating message says it where the learner looks).
  hand_in_text_ = wrapped_label({}, content, Qt::PlainText);
  hand_in_text_->setObjectName("lab-hand-in-text");
  hand_in_text_->hide();
  layout->addWidget(hand_in_text_);
  layout->addStretch();
  setWidget(content);
  set_results({});
  update_score();
}

QWidget* LabPage::code_block(const LabBlock& block) {
  auto* code = new QLabel(QString::fromStdString(block.text).trimmed(), widget());
  code->setObjectName("lab-code");
  code->setTextFormat(Qt::PlainText);
  code->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  code->setTextInteractionFlags(Qt::TextSelectableByMouse);
  code->setStyleSheet(
      "QLabel#lab-code { background: #f4f4f4; border: 1px solid #dddddd; "
      "padding: 6px; }");
  return code;
}

QWidget* LabPage::experiment_card(const LabExperiment& e) {
  auto* card = new QFrame;
  card->setObjectName("lab-experiment");
  card->setFrameShape(QFrame::StyledPanel);
  auto* layout = new QGridLayout(card);
  layout->addWidget(wrapped_label("<b>" + QString::fromStdString(e.name).toHtmlEscaped() +
                                      "</b> · " + settings_text(e).toHtmlEscaped(),
                                  card),
                    0, 0);
  auto* status = wrapped_label(tr("not run yet"), card);
  status->setObjectName("lab-experiment-status");
  // A running experiment's card offers the Live tab; ▶ Run itself leaves the learner here.
  status->setOpenExternalLinks(false);
  connect(status, &QLabel::linkActivated, this, [this](const QString& link) {
    if (link == QLatin1String("gpulab:live")) emit live_requested();
  });
  layout->addWidget(status, 1, 0);
  auto* run = new QPushButton(tr("▶ Run"), card);
  run->setObjectName("lab-run");
  run->setToolTip(tr("Start %1 (%2); it is listed with your runs")
                      .arg(QString::fromStdString(e.name), settings_text(e)));
  layout->addWidget(run, 0, 1, 2, 1, Qt::AlignTop);
  layout->setColumnStretch(0, 1);
  const QString name = QString::fromStdString(e.name);
  connect(run, &QPushButton::clicked, this, [this, name] { emit run_requested(name); });
  run_buttons_[e.name] = run;
  status_labels_[e.name] = status;
  return card;
}

void LabPage::set_states(const std::vector<ExperimentState>& states, bool busy) {
  bool any = false;
  for (size_t i = 0; i < states.size() && i < lab_.experiments.size(); ++i) {
    const std::string& name = lab_.experiments[i].name;
    const ExperimentState& s = states[i];
    QPushButton* run = run_buttons_.at(name);
    QLabel* status = status_labels_.at(name);
    run->setEnabled(s.missing.empty() && !busy);
    any |= s.missing.empty();
    if (!s.missing.empty() && s.own_run) {
      // The learner's own run, recorded on another machine, fills its row.
      run->setToolTip(tr("Not on this machine: %1").arg(QString::fromStdString(s.missing)));
      status->setText(tr("<span style='color:#a04000'>Cannot run here: %1.</span> Its row shows "
                         "your own run of it: %2")
                          .arg(QString::fromStdString(s.missing).toHtmlEscaped(),
                               QString::fromStdString(s.status).toHtmlEscaped()));
    } else if (!s.missing.empty() && !s.reference.empty()) {
      // A reference run's figures in its row, said to be another machine's, never the learner's.
      run->setToolTip(tr("Not on this machine: %1").arg(QString::fromStdString(s.missing)));
      status->setText(tr("<span style='color:#a04000'>Cannot run here: %1.</span> Its row shows "
                         "a reference run recorded on %2, shipped with gpulab: not a measurement "
                         "of yours; run the lab on a machine with an NVIDIA GPU to measure your "
                         "own.")
                          .arg(QString::fromStdString(s.missing).toHtmlEscaped(),
                               QString::fromStdString(s.reference).toHtmlEscaped()));
    } else if (!s.missing.empty()) {
      // Said plainly, and nothing shown in its place: no reference run recorded on a real GPU
      // matches it.
      run->setToolTip(tr("Not on this machine: %1").arg(QString::fromStdString(s.missing)));
      status->setText(tr("<span style='color:#a04000'>Cannot run here: %1.</span> No reference "
                         "run recorded on a GPU ships with gpulab for it, so its row stays "
                         "empty; run the lab on a machine with the GPUs it needs to fill it.")
                          .arg(QString::fromStdString(s.missing).toHtmlEscaped()));
    } else if (s.running) {
      // On the same line as the status, so nothing below moves when a run starts or ends.
      status->setText(QString::fromStdString(s.status).toHtmlEscaped() + " · " +
                      tr("<a href=\"gpulab:live\">watch it on the Live tab</a>"));
    } else {
      status->setText(QString::fromStdString(s.status).toHtmlEscaped());
    }
  }
  run_all_->setEnabled(any && !busy);
}

void LabPage::set_results(const std::vector<LabRunResult>& results) {
  results_ = results;
  for (size_t i = 0; i < tables_.size(); ++i) {
    const LabResultsTable t = lab_results_table(lab_, lab_.tables[i], results);
    QTableWidget* table = tables_[i];
    table->setColumnCount(int(t.header.size()));
    table->setRowCount(int(t.rows.size()));
    QStringList header;
    for (const auto& h : t.titles.empty() ? t.header : t.titles)
      header << QString::fromStdString(h);
    table->setHorizontalHeaderLabels(header);
    for (size_t r = 0; r < t.rows.size(); ++r)
      for (size_t c = 0; c < t.rows[r].size(); ++c) {
        QString cell = QString::fromStdString(t.rows[r][c]);
        if (c == 0 && t.flagged[r]) cell = "⚠ " + cell;  // as the charts mark its run
        auto* item = new QTableWidgetItem(cell);
        // Figures right-aligned, as in a printed table; names and notes left.
        const bool text = t.header[c] == "experiment" || t.header[c] == "device" ||
                          t.header[c] == "model" || t.header[c] == "note";
        item->setTextAlignment(Qt::AlignVCenter | (text ? Qt::AlignLeft : Qt::AlignRight));
        if (t.header[c] == "note") item->setToolTip(item->text());
        table->setItem(int(r), int(c), item);
      }
    fit_table(table);
  }
}

bool LabPage::eventFilter(QObject* watched, QEvent* event) {
  // A learner scrolling through the lab must not zoom a chart in passing (dragging still pans
  // it, and Fit puts it back).
  if (event->type() == QEvent::Wheel && watched->inherits("QCustomPlot")) {
    QApplication::sendEvent(verticalScrollBar(), event);
    return true;
  }
  if (auto* table = qobject_cast<QTableWidget*>(watched)) {
    // A new width, or presenter mode's larger type: the rows and the height change with it.
    const auto* resize =
        event->type() == QEvent::Resize ? static_cast<QResizeEvent*>(event) : nullptr;
    if ((resize && resize->size().width() != resize->oldSize().width()) ||
        event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange)
      fit_table(table);
  }
  return QScrollArea::eventFilter(watched, event);
}

void LabPage::fit_table(QTableWidget* table) {
  // The figures as wide as they are; the last column (the note) takes the width left and wraps,
  // so the table needs no scrolling unless its figures alone are wider than the page. When they
  // are, the table scrolls sideways anyway, and the note keeps up to 400 px: at 120 a reference
  // row's "recorded on ..." wrapped into a dozen lines, rows 200 px high at 1280x720.
  table->resizeColumnsToContents();
  const int last = table->columnCount() - 1;
  if (last > 0) {
    int figures = 0;
    for (int c = 0; c < last; ++c) figures += table->columnWidth(c);
    const int room = table->width() - 2 * table->frameWidth() - figures;
    table->setColumnWidth(last, std::max({room, std::min(table->columnWidth(last), 400)}));
  }
  table->resizeRowsToContents();
  // As tall as its rows: the page scrolls, not the table.
  int height = table->horizontalHeader()->height() + 2 * table->frameWidth() + 2;
  for (int r = 0; r < table->rowCount(); ++r) height += table->rowHeight(r);
  if (table->horizontalScrollBar()->maximum() > 0)
    height += table->horizontalScrollBar()->sizeHint().height();
  table->setFixedHeight(height);
}

void LabPage::set_chart_runs(size_t chart, std::vector<const RunData*> runs,
                             std::vector<QColor> colors) {
  ChartView* view = charts_.at(chart);
  view->set_runs(std::move(runs), std::move(colors));
  view->refresh(true);
  view->replot_if_dirty();
}

void LabPage::set_answers(const std::vector<int>& answers) {
  for (size_t i = 0; i < questions_.size(); ++i)
    questions_[i]->set_answer(i < answers.size() ? answers[i] : -1);
  update_score();
}

void LabPage::set_quiz_open(const std::vector<bool>& open) {
  for (size_t i = 0; i < questions_.size(); ++i)
    questions_[i]->set_open(i >= open.size() || open[i]);
}

void LabPage::set_written(const std::map<std::string, std::string>& written) {
  if (written_) written_->set_answers(written);
}

void LabPage::update_score() {
  if (!score_) return;
  std::vector<int> answers;
  int answered = 0;
  for (QuizQuestionView* q : questions_) {
    answers.push_back(q->answer());
    answered += q->answer() >= 0;
  }
  const int right = quiz_score(lab_, answers);
  score_->setText(answered == 0 ? tr("<b>Score:</b> answer the questions above; each says why "
                                     "as soon as you pick.")
                                : tr("<b>Score: %1 of %2 right</b> (%3 of %2 answered)")
                                      .arg(right)
                                      .arg(questions_.size())
                                      .arg(answered));
}

std::vector<int> LabPage::answers() const {
  std::vector<int> answers;
  for (QuizQuestionView* q : questions_) answers.push_back(q->answer());
  return answers;
}

void LabPage::set_hand_in_text(const QString& text) {
  hand_in_text_->setText(text);
  hand_in_text_->setVisible(!text.isEmpty());
}

QPushButton* LabPage::run_button(const std::string& experiment) const {
  const auto it = run_buttons_.find(experiment);
  return it == run_buttons_.end() ? nullptr : it->second;
}

QString LabPage::score_text() const {
  return score_ ? QTextDocumentFragment::fromHtml(score_->text()).toPlainText() : QString();
}

QString LabPage::experiment_text(const std::string& experiment) const {
  const auto it = status_labels_.find(experiment);
  return it == status_labels_.end()
             ? QString()
             : QTextDocumentFragment::fromHtml(it->second->text()).toPlainText();
}

}  // namespace gpulab::ui
