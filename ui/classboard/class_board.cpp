// The class board: class.csv as a table (its columns as lab grade wrote them), the class chart's
// PNG beside it, the selected learner's hand-in below; a class's hand-ins graded here as they
// arrive, a graded folder reread when it changes.
#include "ui/classboard/class_board.hpp"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QImage>
#include <QMenu>
#include <QPixmap>
#include <QScreen>
#include <QSplitter>
#include <QTextDocument>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/base/errors.hpp"
#include "engine/classkit/class_grade.hpp"
#include "engine/classkit/class_report.hpp"
#include "engine/classkit/hand_in_answers.hpp"
#include "engine/labs/hand_in_manifest.hpp"
#include "engine/labs/lab.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/labs/markdown_images.hpp"
#include "io/input_file.hpp"
#include "ui/charts/chart_export.hpp"

namespace gpulab::ui {

namespace fs = std::filesystem;

namespace {

// A file of the class folder or of a learner's hand-in, read as every file a user names is
// (io/input_file): a FIFO or a device put there is refused at once instead of hanging the window,
// and its size is bounded. Empty when it is missing; `problem` says why it could not be read.
std::string class_file_text(const fs::path& path, std::string* problem) {
  constexpr std::uintmax_t kLimit = std::uintmax_t(64) << 20;
  std::string text;
  try {
    read_input_file(path, kLimit, "a file of the class folder", &text);
  } catch (const InputFileError& error) {
    *problem = error.what();
    text.clear();
  }
  return text;
}

// Thrown from the grade's progress to stop it when the board closes.
struct GradeStopped {};

// The learner's report as a page that loads an image only from the hand-in's own folder, a
// regular file of a bounded size (engine/labs/markdown_images), read as every input file is:
// ![chart](/dev/zero) in a README took the window to 11 GB, and a FIFO held it for ever.
class HandInBrowser final : public QTextBrowser {
 public:
  using QTextBrowser::QTextBrowser;
  void set_folder(const fs::path& folder) { folder_ = folder; }

 protected:
  // Never a null QVariant for what is refused: QTextDocument then opens the file itself.
  QVariant loadResource(int type, const QUrl& name) override {
    if (type != QTextDocument::ImageResource) return QByteArray();
    QImage nothing(1, 1, QImage::Format_ARGB32);
    nothing.fill(Qt::transparent);
    const std::string target = name.toString().toStdString();
    if (folder_.empty() || !markdown_image_problem(target, folder_).empty()) return nothing;
    std::string bytes;
    try {
      read_input_file(folder_ / target, kMaxMarkdownImageBytes, "an image of the report", &bytes);
    } catch (const InputFileError&) {
      return nothing;
    }
    return QByteArray(bytes.data(), qsizetype(bytes.size()));
  }

 private:
  fs::path folder_;
};

int column_of(const QTableWidget* table, const QString& name) {
  for (int c = 0; c < table->columnCount(); ++c)
    if (table->horizontalHeaderItem(c) && table->horizontalHeaderItem(c)->text() == name) return c;
  return -1;
}

}  // namespace

// What the board's thread hands back: the class graded, or why it could not be.
struct ClassGradeDone {
  ClassGrade grade;
  std::string error;
};

ClassBoard::ClassBoard(const fs::path& folder, QWidget* parent)
    // A dialog-type window of the main window's (transient for it), which window managers keep
    // above it: Open in Compare raises the main window, and hid a plain window's board behind it.
    // It keeps a plain window's buttons.
    : QWidget(parent, Qt::Dialog | Qt::WindowTitleHint | Qt::WindowSystemMenuHint |
                          Qt::WindowMinMaxButtonsHint | Qt::WindowCloseButtonHint),
      folder_(folder),
      report_(folder) {
  setAttribute(Qt::WA_DeleteOnClose);  // and the zips it unpacked go with it
  setObjectName("class-board");
  setWindowTitle(tr("Class: %1").arg(QString::fromStdString(folder.string())));
  std::error_code error;
  // A folder lab grade wrote holds class.csv (even one that is no file: said when read).
  grades_ = !fs::exists(fs::symlink_status(folder / "class.csv", error));
  if (grades_) {
    report_ = folder / "graded";
    // One hand-in opened as a class: a graded/ folder added to it would break it (lab verify
    // names every file added after the hand-in was written).
    const bool one_hand_in = fs::exists(folder / kManifestFile, error);
    if (!one_hand_in) fs::create_directories(report_, error);
    if (one_hand_in) {
      report_temporary_ = std::make_unique<QTemporaryDir>();
      report_note_ = tr("%1 is a hand-in, which a graded/ folder in it would break, so the grades "
                        "are in %2 until the board closes")
                         .arg(QString::fromStdString(folder.string()), report_temporary_->path());
      report_ = report_temporary_->path().toStdString();
    } else if (error || !QFileInfo(QString::fromStdString(report_.string())).isWritable()) {
      report_temporary_ = std::make_unique<QTemporaryDir>();
      report_note_ = tr("%1 cannot be written (%2), so the grades are in %3 until the board "
                        "closes")
                         .arg(QString::fromStdString(report_.string()),
                              error ? QString::fromStdString(error.message()) : tr("no permission"),
                              report_temporary_->path());
      report_ = report_temporary_->path().toStdString();
    }
  }
  summary_ = new QLabel(this);
  summary_->setObjectName("class-summary");
  summary_->setWordWrap(true);
  regrade_ = new QPushButton(tr("Grade again"), this);
  regrade_->setObjectName("class-grade-again");
  regrade_->setToolTip(
      tr("Verify every hand-in in the folder again (the board does so by itself "
         "when one arrives)"));
  lab_button_ = new QPushButton(tr("Lab file…"), this);
  lab_button_->setObjectName("class-lab-file");
  lab_button_->setToolTip(
      tr("The lab as you handed it out, built in or your copy of its file: each hand-in's lab "
         "must be this one, and its tables and settings are checked against it (without it, "
         "only the built-in labs are)"));
  regrade_->setVisible(grades_);
  lab_button_->setVisible(grades_);
  table_ = new QTableWidget(this);
  table_->setObjectName("class-table");
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  chart_ = new QLabel(this);
  chart_->setObjectName("class-chart");
  chart_->setAlignment(Qt::AlignCenter);
  chart_->setWordWrap(true);  // its note where there is no chart
  chart_->setMinimumWidth(320);
  // The picture is scaled to the room the splitter gives (fit_chart), never the other way: at its
  // own size it took half a 1280-pixel board from the table.
  chart_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
  hand_in_ = new HandInBrowser(this);
  hand_in_->setObjectName("class-hand-in");
  hand_in_->setReadOnly(true);
  hand_in_->setPlaceholderText(
      tr("Click a learner's row to read their hand-in here; double-click it to open its runs in "
         "Compare."));
  compare_ = new QPushButton(tr("Open in Compare"), this);
  compare_->setObjectName("open-in-compare");
  compare_->setToolTip(
      tr("Show the selected learner's runs in the window's Compare tab, "
         "read-only; Back to my runs returns to yours"));
  compare_->setEnabled(false);
  runs_line_ = new QLabel(this);
  runs_line_->setObjectName("class-runs-line");
  runs_line_->setWordWrap(true);
  runs_line_->setTextFormat(Qt::PlainText);
  auto* detail = new QWidget(this);
  auto* actions = new QHBoxLayout;
  actions->addWidget(compare_);
  actions->addWidget(runs_line_, 1);
  auto* detail_layout = new QVBoxLayout(detail);
  detail_layout->setContentsMargins(0, 0, 0, 0);
  detail_layout->addLayout(actions);
  detail_layout->addWidget(hand_in_, 1);
  auto* top = new QSplitter(Qt::Horizontal, this);
  top->addWidget(table_);
  top->addWidget(chart_);
  top->setStretchFactor(0, 3);  // the table's columns are many; the chart keeps its aspect
  top->setStretchFactor(1, 2);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(top);
  split->addWidget(detail);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  connect(top, &QSplitter::splitterMoved, this, [this] { fit_chart(); });
  auto* layout = new QVBoxLayout(this);
  auto* heading = new QHBoxLayout;
  heading->addWidget(summary_, 1);
  heading->addWidget(lab_button_);
  heading->addWidget(regrade_);
  layout->addLayout(heading);
  layout->addWidget(split, 1);
  connect(table_, &QTableWidget::cellClicked, this, [this](int row, int) { open_hand_in(row); });
  // The arrow keys move through the learners as clicks do.
  connect(table_, &QTableWidget::currentCellChanged, this, [this](int row, int, int previous, int) {
    if (row >= 0 && row != previous) open_hand_in(row);
  });
  connect(table_, &QTableWidget::cellDoubleClicked, this,
          [this](int row, int) { open_in_compare(row); });
  connect(table_, &QTableWidget::itemSelectionChanged, this,
          [this] { compare_->setEnabled(!table_->selectedItems().isEmpty()); });
  connect(compare_, &QPushButton::clicked, this, [this] {
    if (const auto rows = table_->selectionModel()->selectedRows(); !rows.isEmpty())
      open_in_compare(rows.front().row());
  });
  // lab grade replaces class.csv by a rename: the folder's change is what is seen, and the file
  // is watched anew after each.
  connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, [this] { reload(); });
  connect(&watcher_, &QFileSystemWatcher::fileChanged, this, [this] { reload(); });
  settle_.setSingleShot(true);
  settle_.setInterval(1500);
  connect(&settle_, &QTimer::timeout, this, &ClassBoard::grade);
  connect(&class_watcher_, &QFileSystemWatcher::directoryChanged, this, [this] {
    watch_class();  // a learner's new folder is watched too
    settle_.start();
  });
  connect(regrade_, &QPushButton::clicked, this, &ClassBoard::grade);
  // The built-in labs first (an instructor who handed one out has no file of it), then a file.
  // Made when the menu opens: the board itself starts without parsing seven labs.
  auto* labs = new QMenu(lab_button_);
  labs->setObjectName("class-lab-menu");
  connect(labs, &QMenu::aboutToShow, this, [this, labs] {
    labs->clear();
    const std::vector<std::string> names = builtin_lab_names();
    const std::vector<Lab> builtins = builtin_labs();
    for (size_t i = 0; i < names.size() && i < builtins.size(); ++i)
      connect(labs->addAction(tr("%1 (built in: %2)")
                                  .arg(QString::fromStdString(builtins[i].title),
                                       QString::fromStdString(names[i]))),
              &QAction::triggered, this, [this, name = names[i]] { set_lab_file(name); });
    labs->addSeparator();
    connect(labs->addAction(tr("A lab file…")), &QAction::triggered, this, [this] {
      const QString file = QFileDialog::getOpenFileName(
          this, tr("Your copy of the lab, as you handed it out"),
          QString::fromStdString(folder_.string()), tr("Labs (*.md);;All files (*)"));
      if (!file.isEmpty()) set_lab_file(file.toStdString());
    });
  });
  lab_button_->setMenu(labs);
  // 1200x760 where the screen has room; on a 1280x720 projector it took more than the screen.
  const QRect room = screen() ? screen()->availableGeometry() : QRect(0, 0, 1200, 760);
  resize(std::min(1200, room.width() * 19 / 20), std::min(760, room.height() * 9 / 10));
  if (grades_) {
    watch_class();
    grade();
  } else {
    reload();
  }
}

ClassBoard::~ClassBoard() {
  cancel_ = true;  // the grade stops after the hand-in it is verifying
  if (worker_.joinable()) worker_.join();
}

void ClassBoard::watch_class() {
  QStringList paths{QString::fromStdString(folder_.string())};
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder_, error)) {
    std::error_code e;
    if (entry.is_directory(e) && !entry.is_symlink(e) && entry.path() != report_)
      paths << QString::fromStdString(entry.path().string());
  }
  const QStringList watched = class_watcher_.directories();
  for (const QString& path : paths)
    if (!watched.contains(path)) class_watcher_.addPath(path);
}

void ClassBoard::grade() {
  if (!grades_) return;
  settle_.stop();
  if (worker_.joinable()) {
    pending_ = true;  // graded again once this one is done
    return;
  }
  pending_ = false;
  GradeOptions options;
  options.lab = lab_file_.string();
  regrade_->setEnabled(false);
  summary_->setText(
      tr("Grading the hand-ins in %1…").arg(QString::fromStdString(folder_.string())));
  cancel_ = false;
  worker_ = std::thread([this, options, folder = folder_, out = report_] {
    auto done = std::make_shared<ClassGradeDone>();
    try {
      done->grade = grade_into({folder}, out, options, [this](size_t graded, size_t total) {
        if (cancel_) throw GradeStopped{};
        QMetaObject::invokeMethod(
            this,
            [this, graded, total] {
              summary_->setText(tr("Grading the hand-ins in %1: %2 of %3…")
                                    .arg(QString::fromStdString(folder_.string()))
                                    .arg(graded)
                                    .arg(total));
            },
            Qt::QueuedConnection);
      });
    } catch (const GradeStopped&) {
      return;
    } catch (const std::exception& e) {
      done->error = e.what();
    }
    QMetaObject::invokeMethod(
        this, [this, done] { graded(done); }, Qt::QueuedConnection);
  });
}

void ClassBoard::graded(const std::shared_ptr<ClassGradeDone>& done) {
  if (worker_.joinable()) worker_.join();  // it has posted this, its last act
  regrade_->setEnabled(true);
  QString problem = QString::fromStdString(done->error);
  if (problem.isEmpty()) {
    try {
      write_class_report(report_, done->grade, [](const Chart& chart, const fs::path& file) {
        const QString path = QString::fromStdString(file.string());
        const auto format = export_format_from_name(QFileInfo(path).suffix());
        QString error;
        if (!export_built_chart(chart, path, format.value_or(ExportFormat::Png), &error))
          throw RecordError(error.toStdString());
      });
    } catch (const std::exception& e) {
      problem = QString::fromStdString(e.what());
    }
  }
  reload();
  if (!problem.isEmpty())
    summary_->setText(tr("The hand-ins in %1 could not be graded: %2")
                          .arg(QString::fromStdString(folder_.string()), problem));
  if (pending_) grade();
}

bool ClassBoard::set_lab_file(const fs::path& lab) {
  const Lab loaded = load_lab(lab.string());
  if (!loaded.ok()) {
    summary_->setText(tr("%1 is not used to check the hand-ins: %2")
                          .arg(QString::fromStdString(lab.string()),
                               QString::fromStdString(loaded.problems.front().to_string())));
    return false;
  }
  lab_file_ = lab;
  grade();
  return true;
}

void ClassBoard::watch() {
  const QString dir = QString::fromStdString(folder_.string());
  const QString csv = QString::fromStdString((folder_ / "class.csv").string());
  if (!watcher_.directories().contains(dir)) watcher_.addPath(dir);
  if (fs::exists(folder_ / "class.csv") && !watcher_.files().contains(csv)) watcher_.addPath(csv);
}

void ClassBoard::reload() {
  if (!grades_) watch();  // a board that grades rereads what it wrote itself
  std::string problem;
  const auto rows = csv_rows(class_file_text(report_ / "class.csv", &problem));
  // The learner being read stays selected when the class is read again.
  const int selected = table_->currentRow();
  const QString learner = selected >= 0 ? text_at(selected, "learner") : QString();
  const QString lab = selected >= 0 ? text_at(selected, "lab") : QString();
  table_->clear();
  table_->setRowCount(0);
  compare_->setEnabled(false);
  if (rows.empty()) {
    table_->setColumnCount(0);
    summary_->setText(
        !problem.empty() ? QString::fromStdString(problem)
        : grades_ ? tr("No hand-in in %1 yet: each is graded here as it arrives (a folder or "
                       ".zip, or a folder of them per learner, as a course platform gives "
                       "them).")
                        .arg(QString::fromStdString(folder_.string()))
                  : tr("No class.csv in %1 yet: grade the class into it with gpulab-cli lab "
                       "grade HAND-INS --out %1")
                        .arg(QString::fromStdString(folder_.string())));
    chart_->clear();
    chart_picture_ = {};
    return;
  }
  const auto& header = rows.front();
  table_->setColumnCount(int(header.size()));
  QStringList titles;
  for (const std::string& title : header) titles << QString::fromStdString(title);
  table_->setHorizontalHeaderLabels(titles);
  int verified = 0;
  for (size_t r = 1; r < rows.size(); ++r) {
    const int row = table_->rowCount();
    table_->insertRow(row);
    for (size_t c = 0; c < rows[r].size() && c < header.size(); ++c)
      table_->setItem(row, int(c), new QTableWidgetItem(QString::fromStdString(rows[r][c])));
    const int v = column_of(table_, "verified");
    verified += v >= 0 && table_->item(row, v) && table_->item(row, v)->text() == "yes";
  }
  // Whether each learner verified, and why not, right after their name: the columns lab grade
  // writes before them are many, and would push these out of view.
  QHeaderView* header_view = table_->horizontalHeader();
  int place = 1;
  for (const char* name : {"verified", "problems"})
    if (const int c = column_of(table_, name); c >= 0)
      header_view->moveSection(header_view->visualIndex(c), place++);
  if (const int v = column_of(table_, "verified"); v >= 0)
    for (int row = 0; row < table_->rowCount(); ++row)
      if (QTableWidgetItem* item = table_->item(row, v))
        item->setForeground(item->text() == "yes" ? QColor(0x1B, 0x7F, 0x3B)
                                                  : QColor(0xC0, 0x20, 0x20));
  table_->resizeColumnsToContents();
  // A row's problems can be long: the column stays readable, its whole text in the tip.
  if (const int p = column_of(table_, "problems"); p >= 0) {
    table_->setColumnWidth(p,
                           std::min(table_->columnWidth(p), 28 * fontMetrics().averageCharWidth()));
    for (int row = 0; row < table_->rowCount(); ++row)
      if (QTableWidgetItem* item = table_->item(row, p)) item->setToolTip(item->text());
  }
  const QString counts = tr("%1 learner-lab rows, %2 verified, %3 with problems")
                             .arg(table_->rowCount())
                             .arg(verified)
                             .arg(table_->rowCount() - verified);
  if (!grades_)
    summary_->setText(tr("%1 (class.csv in %2; reread whenever lab grade writes it again)")
                          .arg(counts, QString::fromStdString(folder_.string())));
  else
    summary_->setText(
        tr("%1: the hand-ins in %2, graded again as they arrive; checked against %3. class.csv, "
           "class.md and the chart are in %4.")
            .arg(counts, QString::fromStdString(folder_.string()),
                 lab_file_.empty() ? tr("the built-in labs (Lab file… for yours)")
                 : lab_file_.has_parent_path()
                     ? QString::fromStdString(lab_file_.string())
                     : tr("the built-in lab %1").arg(QString::fromStdString(lab_file_.string())),
                 report_note_.isEmpty() ? QString::fromStdString(report_.string()) : report_note_));
  // The first lab's chart, as lab grade drew it.
  std::vector<fs::path> charts;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(report_, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("class-", 0) == 0 && entry.path().extension() == ".png")
      charts.push_back(entry.path());
  }
  std::sort(charts.begin(), charts.end());
  if (!learner.isEmpty())
    for (int row = 0; row < table_->rowCount(); ++row)
      if (text_at(row, "learner") == learner && text_at(row, "lab") == lab) {
        table_->setCurrentCell(row, 0);  // and their hand-in read again: it may be a newer one
        table_->selectRow(row);
        break;
      }
  if (charts.empty()) {
    chart_picture_ = {};
    chart_->setText(grades_ && lab_file_.empty()
                        ? tr("No class chart: no hand-in had key figures. A lab that is not built "
                             "in has them once you give its file: Lab file…")
                        : tr("No class chart: no hand-in had key figures."));
  } else {
    chart_picture_ = QPixmap(QString::fromStdString(charts.front().string()));
    fit_chart();
    chart_->setToolTip(QString::fromStdString(charts.front().string()));
  }
}

QString ClassBoard::text_at(int row, const char* column) const {
  const int c = column_of(table_, column);
  return c >= 0 && table_->item(row, c) ? table_->item(row, c)->text() : QString();
}

fs::path ClassBoard::hand_in_folder(int row, QString* problem) {
  const fs::path source = text_at(row, "source").toStdString();
  std::error_code error;
  if (fs::is_directory(source, error)) return source;
  // A zip is unpacked once per version of it (lab grade unpacked it only to grade it).
  const auto time = fs::last_write_time(source, error);
  const std::string key =
      source.string() + "@" + std::to_string(error ? 0 : time.time_since_epoch().count());
  if (const auto seen = opened_.find(key); seen != opened_.end()) return seen->second;
  if (!unpacked_) unpacked_ = std::make_unique<QTemporaryDir>();
  if (!unpacked_->isValid()) {
    *problem = tr("%1 could not be unpacked: no temporary folder (%2)")
                   .arg(QString::fromStdString(source.string()), unpacked_->errorString());
    return {};
  }
  const fs::path work =
      fs::path(unpacked_->path().toStdString()) / ("hand-in-" + std::to_string(opened_.size() + 1));
  std::string refused;
  const fs::path dir = gpulab::open_hand_in(source, work, ZipLimits{}, &refused);
  if (dir.empty()) {
    *problem = QString::fromStdString(refused);
    return {};
  }
  opened_[key] = dir;
  return dir;
}

void ClassBoard::fit_chart() {
  if (chart_picture_.isNull()) return;
  chart_->setPixmap(chart_picture_.scaled(chart_->size().expandedTo(QSize(320, 200)),
                                          Qt::KeepAspectRatio, Qt::SmoothTransformation));
}

void ClassBoard::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fit_chart();
}

void ClassBoard::open_hand_in(int row) {
  QString problems = text_at(row, "problems");
  QString markdown = "# " + text_at(row, "learner") + " — " + text_at(row, "lab") + "\n\n";
  markdown += problems.isEmpty()
                  ? tr("**Verified.**") + "\n\n"
                  : tr("**Problems:**") + "\n\n- " + problems.replace(" | ", "\n- ") + "\n\n";
  QString unreadable;
  const fs::path dir = hand_in_folder(row, &unreadable);
  if (dir.empty()) {
    markdown += tr("Its files cannot be shown: %1").arg(unreadable);
    static_cast<HandInBrowser*>(hand_in_)->set_folder({});
    hand_in_->setMarkdown(markdown);
    return;
  }
  static_cast<HandInBrowser*>(hand_in_)->set_folder(dir);
  for (const char* file : {"answers.json", "README.md"}) {
    std::string unread;
    const std::string text = class_file_text(dir / file, &unread);
    if (!unread.empty())
      markdown += QString::fromStdString(unread) + "\n\n";
    else if (text.empty())
      markdown += tr("(%1 is missing.)").arg(file) + "\n\n";
    else if (std::string(file) == "answers.json")
      markdown += QString::fromStdString(hand_in_answers_markdown(text)) + "\n";
    else
      markdown += QString::fromStdString(text);
  }
  hand_in_->setMarkdown(markdown);
}

void ClassBoard::open_in_compare(int row) {
  const QString learner = text_at(row, "learner");
  QString problem;
  const fs::path dir = hand_in_folder(row, &problem);
  if (dir.empty()) {
    runs_line_->setText(tr("%1's runs cannot be opened: %2").arg(learner, problem));
    return;
  }
  if (!open_runs_) {
    runs_line_->setText(tr("%1's runs cannot be opened: no window to show them in").arg(learner));
    return;
  }
  const RunsOpened opened = open_runs_({dir, learner, text_at(row, "lab")});
  QStringList lines;
  if (opened.runs > 0)
    lines << tr("%1's hand-in: %2 in the window's Compare tab, read-only.")
                 .arg(learner, opened.runs == 1 ? tr("1 run") : tr("%1 runs").arg(opened.runs));
  else
    lines << tr("%1's runs are not shown; the window shows its runs as before:").arg(learner);
  for (const QString& p : opened.problems) lines << "⚠ " + p;
  runs_line_->setText(lines.join("\n"));
}

}  // namespace gpulab::ui
