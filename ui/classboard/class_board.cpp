// The class board: class.csv as a table (its columns as lab grade wrote them), the class chart's
// PNG beside it, the selected learner's hand-in below, all reread when the folder changes.
#include "ui/classboard/class_board.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QPixmap>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/labs/lab_results.hpp"
#include "io/input_file.hpp"

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

int column_of(const QTableWidget* table, const QString& name) {
  for (int c = 0; c < table->columnCount(); ++c)
    if (table->horizontalHeaderItem(c) && table->horizontalHeaderItem(c)->text() == name) return c;
  return -1;
}

}  // namespace

ClassBoard::ClassBoard(const fs::path& folder, QWidget* parent)
    : QWidget(parent, Qt::Window), folder_(folder) {
  setObjectName("class-board");
  setWindowTitle(tr("Class: %1").arg(QString::fromStdString(folder.string())));
  summary_ = new QLabel(this);
  summary_->setObjectName("class-summary");
  summary_->setWordWrap(true);
  table_ = new QTableWidget(this);
  table_->setObjectName("class-table");
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  chart_ = new QLabel(this);
  chart_->setObjectName("class-chart");
  chart_->setAlignment(Qt::AlignCenter);
  chart_->setMinimumWidth(320);
  hand_in_ = new QTextBrowser(this);
  hand_in_->setObjectName("class-hand-in");
  hand_in_->setReadOnly(true);
  hand_in_->setPlaceholderText(tr("Click a learner's row to read their hand-in here."));
  auto* top = new QSplitter(Qt::Horizontal, this);
  top->addWidget(table_);
  top->addWidget(chart_);
  top->setStretchFactor(0, 3);  // the table's columns are many; the chart keeps its aspect
  top->setStretchFactor(1, 2);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(top);
  split->addWidget(hand_in_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);
  connect(table_, &QTableWidget::cellClicked, this, [this](int row, int) { open_hand_in(row); });
  // lab grade replaces class.csv by a rename: the folder's change is what is seen, and the file
  // is watched anew after each.
  connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, [this] { reload(); });
  connect(&watcher_, &QFileSystemWatcher::fileChanged, this, [this] { reload(); });
  reload();
  resize(1200, 760);
}

void ClassBoard::watch() {
  const QString dir = QString::fromStdString(folder_.string());
  const QString csv = QString::fromStdString((folder_ / "class.csv").string());
  if (!watcher_.directories().contains(dir)) watcher_.addPath(dir);
  if (fs::exists(folder_ / "class.csv") && !watcher_.files().contains(csv)) watcher_.addPath(csv);
}

void ClassBoard::reload() {
  watch();
  std::string problem;
  const auto rows = csv_rows(class_file_text(folder_ / "class.csv", &problem));
  table_->clear();
  table_->setRowCount(0);
  if (rows.empty()) {
    table_->setColumnCount(0);
    summary_->setText(
        !problem.empty() ? QString::fromStdString(problem)
                         : tr("No class.csv in %1 yet: grade the class into it with gpulab-cli lab "
                              "grade HAND-INS --out %1")
                               .arg(QString::fromStdString(folder_.string())));
    chart_->clear();
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
  table_->resizeColumnsToContents();
  summary_->setText(tr("%1 learner-lab rows, %2 verified, %3 with problems (class.csv in %4; "
                       "reread whenever lab grade writes it again)")
                        .arg(table_->rowCount())
                        .arg(verified)
                        .arg(table_->rowCount() - verified)
                        .arg(QString::fromStdString(folder_.string())));
  // The first lab's chart, as lab grade drew it.
  std::vector<fs::path> charts;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder_, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("class-", 0) == 0 && entry.path().extension() == ".png")
      charts.push_back(entry.path());
  }
  std::sort(charts.begin(), charts.end());
  if (charts.empty()) {
    chart_->setText(tr("No class chart: no hand-in had key figures."));
  } else {
    const QPixmap picture(QString::fromStdString(charts.front().string()));
    chart_->setPixmap(picture.scaled(640, 400, Qt::KeepAspectRatio, Qt::SmoothTransformation));
    chart_->setToolTip(QString::fromStdString(charts.front().string()));
  }
}

void ClassBoard::open_hand_in(int row) {
  const auto text_at = [&](const char* column) {
    const int c = column_of(table_, column);
    return c >= 0 && table_->item(row, c) ? table_->item(row, c)->text() : QString();
  };
  const fs::path source = text_at("source").toStdString();
  QString problems = text_at("problems");
  QString markdown = "# " + text_at("learner") + " — " + text_at("lab") + "\n\n";
  markdown += problems.isEmpty()
                  ? tr("**Verified.**") + "\n\n"
                  : tr("**Problems:**") + "\n\n- " + problems.replace(" | ", "\n- ") + "\n\n";
  std::error_code error;
  if (fs::is_regular_file(source / "README.md", error)) {
    std::string unread;
    markdown += QString::fromStdString(class_file_text(source / "README.md", &unread));
    if (!unread.empty()) markdown += QString::fromStdString(unread);
  } else
    markdown += tr("(%1 is not a hand-in folder here, e.g. a .zip: its report is not shown.)")
                    .arg(QString::fromStdString(source.string()));
  hand_in_->setMarkdown(markdown);
}

}  // namespace gpulab::ui
