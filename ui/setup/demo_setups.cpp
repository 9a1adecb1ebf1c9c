// Setups and the shipped demos.
#include "ui/setup/demo_setups.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <nlohmann/json.hpp>

#include "engine/base/errors.hpp"

namespace gpulab::ui {
namespace {

const char* const kDemoFolder = ":/demos";
// A race is a few setups side by side on one screen: 32 is already more lines than a chart shows.
constexpr size_t kMaxRaceEntries = 32;

Setup parse_setup(const QByteArray& bytes, const QString& source) {
  const std::string where = source.toStdString();
  try {
    const nlohmann::json j = nlohmann::json::parse(bytes.toStdString());
    Setup setup;
    setup.experiment = experiment_from_json(j);
    setup.source = source;
    setup.description = QString::fromStdString(j.value("description", ""));
    if (j.contains("race")) {
      if (!j["race"].is_array()) throw ConfigError("\"race\" must be a list of {\"device\": ...}");
      if (j["race"].size() > kMaxRaceEntries)
        throw ConfigError("\"race\" has " + std::to_string(j["race"].size()) +
                          " entries; a race has at most " + std::to_string(kMaxRaceEntries));
      for (const auto& e : j["race"]) {
        RaceEntry entry;
        entry.device = e.at("device").get<std::string>();
        entry.threads = e.value("threads", 0);
        entry.name = e.value("name", "");
        if (entry.threads < 0) throw ConfigError("\"threads\" must not be negative");
        setup.race.push_back(entry);
      }
    }
    return setup;
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(where + ": not a valid setup: " + e.what());
  } catch (const ConfigError& e) {
    throw ConfigError(where + ": " + e.what());
  }
}

}  // namespace

QStringList demo_names() {
  QStringList names;
  for (const QString& file : QDir(kDemoFolder).entryList({"*.json"}, QDir::Files, QDir::Name))
    names << QFileInfo(file).completeBaseName();
  return names;
}

Setup load_setup(const QString& name_or_path) {
  QString path = name_or_path;
  if (!QFileInfo::exists(path)) {
    QString demo = QFileInfo(name_or_path).fileName();
    if (!demo.endsWith(".json")) demo += ".json";
    path = QString(kDemoFolder) + "/" + demo;
    if (name_or_path.contains('/') || !QFile::exists(path))
      throw ConfigError(name_or_path.toStdString() +
                        ": cannot be opened (no such file, and not a demo: " +
                        demo_names().join(", ").toStdString() + ")");
  }
  if (path.startsWith(':')) {  // a shipped demo, built in
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
      throw ConfigError(path.toStdString() + ": cannot be opened");
    return parse_setup(file.readAll(), path);
  }
  // As the CLI reads one: a FIFO, a device or a folder is named, never waited on.
  return parse_setup(QByteArray::fromStdString(read_setup_file(path.toStdString())), path);
}

}  // namespace gpulab::ui
