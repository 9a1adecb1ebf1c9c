// The data banner: MNIST missing, fetched or chosen.
#include "ui/window/data_banner.hpp"

#include <QDir>
#include <QFileDialog>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>

#include "datasets/mnist.hpp"
#include "datasets/mnist_files.hpp"
#include "ui/runs/run_controller.hpp"
#include "ui/widgets/status_widgets.hpp"
#include "ui/fetch/data_fetcher.hpp"

namespace gpulab::ui {

DataBanner::DataBanner(std::optional<std::filesystem::path> dir, Banner* banner, Banner* messages,
                       std::shared_ptr<DataCache> cache, QWidget* window)
    : QObject(window),
      chosen_(std::move(dir)),
      banner_(banner),
      messages_(messages),
      cache_(std::move(cache)),
      window_(window) {
  if (!chosen_) {
    const QString saved = QSettings().value("data/dir").toString();
    if (!saved.isEmpty()) chosen_ = saved.toStdString();
  }
}

std::filesystem::path DataBanner::dir() const {
  try {
    return data::default_data_dir(chosen_);
  } catch (const std::exception&) {
    return std::filesystem::path(QDir::homePath().toStdString()) / ".local/share/gpulab/mnist";
  }
}

void DataBanner::check(bool offer_fetch) {
  const std::filesystem::path dir = this->dir();
  std::string missing;
  if (data::mnist_present(dir, &missing)) {
    banner_->dismiss();
    return;
  }
  banner_->show_message(
      Banner::Kind::Warning,
      tr("MNIST is not in %1 (%2 is missing). gpulab needs its four files to train: "
         "fetch them (about 12 MB, checked by SHA-256) or choose the folder that has them.")
          .arg(QString::fromStdString(dir.string()), QString::fromStdString(missing)));
  connect(banner_->add_button(tr("Fetch MNIST")), &QPushButton::clicked, this, &DataBanner::fetch);
  connect(banner_->add_button(tr("Choose folder…")), &QPushButton::clicked, this,
          &DataBanner::choose_folder);
  if (offer_fetch) banner_->raise();
}

void DataBanner::fetch() {
  if (fetcher_ && fetcher_->busy()) return;
  const std::filesystem::path dir = this->dir();
  delete fetcher_;
  fetcher_ = new DataFetcher(dir, this);
  banner_->show_message(Banner::Kind::Info,
                        tr("Fetching MNIST into %1…").arg(QString::fromStdString(dir.string())));
  QProgressBar* bar = banner_->progress();
  bar->setRange(0, 0);
  QPushButton* cancel = banner_->add_button(tr("Cancel"));
  connect(cancel, &QPushButton::clicked, fetcher_, &DataFetcher::cancel);
  connect(fetcher_, &DataFetcher::progress, this,
          [bar](qint64 received, qint64 total, const QString& what) {
            bar->setRange(0, total > 0 ? 1000 : 0);
            if (total > 0) bar->setValue(int(1000 * received / total));
            bar->setFormat(what + " %p%");
          });
  connect(fetcher_, &DataFetcher::finished, this, [this, dir](bool ok, const QString& text) {
    cache_->forget(dir);
    if (ok) {
      banner_->show_message(Banner::Kind::Info, text + tr(". Ready to train."));
    } else {
      banner_->show_message(Banner::Kind::Error, tr("Could not fetch MNIST: %1").arg(text));
      connect(banner_->add_button(tr("Try again")), &QPushButton::clicked, this,
              &DataBanner::fetch);
      connect(banner_->add_button(tr("Choose folder…")), &QPushButton::clicked, this,
              &DataBanner::choose_folder);
    }
  });
  fetcher_->start();
}

void DataBanner::choose_folder() {
  const QString folder =
      QFileDialog::getExistingDirectory(window_, tr("Choose the folder with the MNIST files"));
  if (folder.isEmpty()) return;
  chosen_ = folder.toStdString();
  QSettings().setValue("data/dir", folder);
  check(true);
  if (banner_->isHidden())
    messages_->show_message(Banner::Kind::Info, tr("Using MNIST from %1").arg(folder));
}

}  // namespace gpulab::ui
