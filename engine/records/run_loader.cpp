// Reading run folders back: one run, or every run under a folder, newest first.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "engine/base/errors.hpp"
#include "engine/base/host.hpp"
#include "engine/base/text.hpp"
#include "engine/records/record_csv.hpp"
#include "engine/records/record_reader.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::vector<LrChange> lr_changes_from(const json& info) {
  std::vector<LrChange> changes;
  const auto list = info.find("lr_changes");
  if (list == info.end() || !list->is_array()) return changes;
  for (const json& entry : *list) {
    LrChange change;
    change.step = entry.value("step", int64_t(0));
    change.epoch = entry.value("epoch", 0);
    change.time_s = entry.value("time_s", kNoValue);
    change.lr = entry.value("lr", kNoValue);
    changes.push_back(change);
  }
  return changes;
}

std::string RunData::name() const {
  if (info.contains("name") && info["name"].is_string()) return info["name"].get<std::string>();
  return dir.filename().string();
}

namespace {

enum class Writer { Unknown, Alive, Gone };

// The process that wrote a record, where run.json names it.
Writer record_writer(const json& info) {
  const auto process = info.find("process");
  if (process == info.end() || !process->is_object()) return Writer::Unknown;
  const auto host = process->find("host"), pid = process->find("pid");
  if (host == process->end() || !host->is_string() || pid == process->end() ||
      !pid->is_number_integer())
    return Writer::Unknown;
  if (host->get<std::string>() != host_name()) return Writer::Unknown;
  const long id = pid->get<long>();
  if (id <= 0) return Writer::Unknown;
  // Signal 0 only asks: EPERM means a process of another user has the id, so it lives.
  return ::kill(pid_t(id), 0) == 0 || errno == EPERM ? Writer::Alive : Writer::Gone;
}

std::string recorded_status(const json& info) {
  const auto status = info.find("status");
  return status != info.end() && status->is_string() ? status->get<std::string>() : "unknown";
}

}  // namespace

json this_process_json() { return {{"host", host_name()}, {"pid", int(::getpid())}}; }

std::string RunData::status() const {
  const std::string status = recorded_status(info);
  if (status == "running" && record_writer(info) == Writer::Gone) return "interrupted";
  return status;
}

bool RunData::written_elsewhere() const {
  if (recorded_status(info) != "running") return false;
  const Writer writer = record_writer(info);
  if (writer == Writer::Gone) return false;
  // A record from before the process was kept: nothing says anyone writes it.
  return writer == Writer::Alive || info.contains("process");
}

bool holds_run(const fs::path& dir) {
  std::error_code error;
  return fs::exists(fs::symlink_status(dir / "run.json", error));
}

nlohmann::json load_run_info(const fs::path& dir) {
  json info;
  const fs::path json_path = dir / "run.json";
  std::string text;
  if (!read_record_file(json_path, kMaxRunJsonBytes, &text))
    throw RecordError(json_path.string() + ": no such file; is this a gpulab run folder?");
  try {
    info = json::parse(text);
  } catch (const json::exception& e) {
    throw RecordError(json_path.string() + ": not valid JSON: " + e.what());
  }
  // A record of another format is no run; a format of the wrong type is a damaged field.
  const auto format = info.is_object() ? info.find("format") : info.end();
  if (!info.is_object() || format == info.end() || (format->is_string() && *format != kRunFormat))
    throw RecordError(json_path.string() + ": not a gpulab run record (format \"" + kRunFormat +
                      "\" expected)");
  check_run_info(info, json_path);
  // Names label rows, keys and chart titles: one of 4 MB stopped the window and took an export
  // 44 s. Cut as a new run's name is bounded (and the message, which the runs list shows).
  const auto shorten = [](json& object, const char* key, size_t bound) {
    if (!object.is_object()) return;
    const auto field = object.find(key);
    if (field != object.end() && field->is_string() &&
        field->get_ref<const std::string&>().size() > bound)
      *field = bounded_name(field->get_ref<const std::string&>(), bound);
  };
  shorten(info, "name", kMaxNameBytes);
  shorten(info, "message", 4096);
  if (info.contains("model")) shorten(info["model"], "name", kMaxNameBytes);
  return info;
}

RunData load_run(const fs::path& dir) {
  RunData run;
  run.dir = dir;
  run.info = load_run_info(dir);
  run.lr_changes = lr_changes_from(run.info);
  run.steps = read_metrics_csv(dir / "metrics.csv");
  run.replica_steps = read_replicas_csv(dir / "replicas.csv");
  run.evals = read_eval_csv(dir / "eval.csv");
  run.samples = read_telemetry_csv(dir / "telemetry.csv");
  return run;
}

std::vector<fs::path> run_folders(const fs::path& root, std::vector<std::string>* problems) {
  std::vector<fs::path> folders;
  auto problem = [&](const std::string& text) {
    if (problems) problems->push_back(text);
  };
  std::error_code error;
  const fs::file_status root_status = fs::status(root, error);
  if (error && error != std::errc::no_such_file_or_directory)
    problem(root.string() + ": cannot be read: " +
            (error == std::errc::too_many_symbolic_link_levels ? "a symbolic link that loops"
                                                               : error.message()));
  if (!fs::is_directory(root_status)) return folders;
  fs::directory_iterator entries(root, error);
  if (error) {
    problem(root.string() + ": cannot be read: " + error.message());
    return folders;
  }
  for (; entries != fs::directory_iterator(); entries.increment(error)) {
    if (error) {
      problem(root.string() + ": cannot be listed further: " + error.message());
      break;
    }
    const fs::path path = entries->path();
    std::error_code entry_error;
    const fs::file_status status = fs::status(path, entry_error);
    if (entry_error == std::errc::too_many_symbolic_link_levels) {
      problem(path.string() + ": cannot be read: a symbolic link that loops");
      continue;
    }
    if (entry_error || !fs::is_directory(status)) continue;  // a file, or a link to nothing
    if (holds_run(path)) folders.push_back(path);
  }
  return folders;
}

std::uintmax_t record_bytes(const fs::path& dir) {
  std::uintmax_t bytes = 0;
  for (const char* file : {"metrics.csv", "replicas.csv", "eval.csv", "telemetry.csv"}) {
    std::error_code error;
    if (fs::is_regular_file(dir / file, error)) {
      const std::uintmax_t size = fs::file_size(dir / file, error);
      if (!error) bytes += size;
    }
  }
  return bytes;
}

std::vector<RunData> load_runs(const fs::path& root, std::vector<std::string>* problems) {
  std::vector<RunData> runs;
  for (const fs::path& folder : run_folders(root, problems)) {
    try {
      runs.push_back(load_run(folder));
    } catch (const RecordError& e) {
      if (problems) problems->push_back(e.what());
    }
  }
  sort_newest_first(runs);
  return runs;
}

void sort_newest_first(std::vector<RunData>& runs) {
  std::stable_sort(runs.begin(), runs.end(), [](const RunData& a, const RunData& b) {
    return a.info.value("created", "") > b.info.value("created", "");
  });
}

}  // namespace gpulab
