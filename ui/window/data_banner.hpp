// The data banner: says when MNIST is missing from the data folder, fetches it (checked by
// SHA-256) with a progress bar and a cancel button, or lets the user choose the folder that has it
// (remembered in the settings).
#pragma once

#include <QObject>
#include <filesystem>
#include <memory>
#include <optional>

class QWidget;

namespace gpulab::ui {

class Banner;
class DataCache;
class DataFetcher;

class DataBanner : public QObject {
  Q_OBJECT

 public:
  // `dir`: the folder given on the command line; empty: the one chosen before, else the usual
  // search. `banner` is the data's own bar, `messages` the window's message bar.
  DataBanner(std::optional<std::filesystem::path> dir, Banner* banner, Banner* messages,
             std::shared_ptr<DataCache> cache, QWidget* window);

  std::filesystem::path dir() const;  // where MNIST is looked for
  // The folder a run is given: empty for the usual search.
  const std::optional<std::filesystem::path>& chosen_dir() const { return chosen_; }
  // Shows the bar when MNIST is missing (raised when `offer_fetch`), hides it when present.
  void check(bool offer_fetch);
  void fetch();
  void choose_folder();

 private:
  std::optional<std::filesystem::path> chosen_;
  Banner* banner_;
  Banner* messages_;
  std::shared_ptr<DataCache> cache_;
  QWidget* window_;
  DataFetcher* fetcher_ = nullptr;
};

}  // namespace gpulab::ui
