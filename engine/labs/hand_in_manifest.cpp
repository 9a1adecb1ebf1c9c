// A hand-in's runs/ and manifest.json: the copies of the runs its tables use and the hashes that
// let an instructor find any file changed after it was written.
#include "engine/labs/hand_in_manifest.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <system_error>

#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/base/sha256.hpp"
#include "engine/base/text.hpp"
#include "engine/records/run_record.hpp"
#include "gpulab/build_config.hpp"

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string experiment_folder(const std::string& experiment) {
  std::string out;
  for (char c : experiment)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '-';
  return out;
}

namespace {

bool same_folder(const fs::path& a, const fs::path& b) {
  std::error_code error;
  return fs::equivalent(a, b, error) && !error;
}

// The record files of `from` into `to`, which is made anew: never a weights file, never through
// a link (a link in the run folder is not a file gpulab wrote, and is left out).
void copy_record(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::remove_all(to, error);
  fs::create_directories(to, error);
  if (error) throw RecordError(to.string() + ": could not be made (" + error.message() + ")");
  for (const char* name : kRunFiles) {
    const fs::path source = from / name;
    if (!fs::is_regular_file(fs::symlink_status(source, error))) continue;
    fs::copy_file(source, to / name, fs::copy_options::overwrite_existing, error);
    if (error)
      throw RecordError(source.string() + ": could not be copied into the hand-in (" +
                        error.message() + ")");
  }
}

}  // namespace

std::vector<std::string> copy_hand_in_runs(const fs::path& dir,
                                           const std::vector<LabRunResult>& results) {
  // A link standing for runs/ (made after the folder was checked) is replaced, never written
  // through: the copies go into a folder of the hand-in's own.
  std::error_code error;
  for (const char* parent : {kHandInRuns, kHandInReferenceRuns})
    if (fs::is_symlink(fs::symlink_status(dir / parent, error))) fs::remove(dir / parent, error);
  std::vector<std::string> folders;
  std::set<std::string> used;
  for (const LabRunResult& r : results) {
    if (r.run_dir.empty() || !r.summary) {
      folders.emplace_back();
      continue;
    }
    const std::string stem =
        std::string(r.recorded_on.empty() ? kHandInRuns : kHandInReferenceRuns) + "/" +
        experiment_folder(r.experiment);
    // "mlp cpu" and "mlp-cpu" make one folder name: the second run gets "-2", never the first's.
    std::string folder = stem;
    for (int n = 2; used.count(folder); ++n) folder = stem + "-" + std::to_string(n);
    if (!same_folder(r.run_dir, dir / folder)) copy_record(r.run_dir, dir / folder);
    folders.push_back(folder);
    used.insert(folder);
  }
  // An earlier hand-in's copy of a run this one does not use would be verified as this one's.
  for (const char* parent : {kHandInRuns, kHandInReferenceRuns})
    for (const auto& entry : fs::directory_iterator(dir / parent, error)) {
      const std::string folder = std::string(parent) + "/" + entry.path().filename().string();
      if (!used.count(folder)) fs::remove_all(entry.path(), error);
    }
  return folders;
}

json manifest_experiments(const std::vector<LabRunResult>& results,
                          const std::vector<std::string>& folders) {
  json list = json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    const LabRunResult& r = results[i];
    json entry = {{"experiment", r.experiment},
                  {"run", i < folders.size() ? folders[i] : ""},
                  {"reference", !r.recorded_on.empty()},
                  {"skipped", r.skipped}};
    if (!r.matmul.empty()) {
      json timings = json::array();
      for (const MatmulTiming& t : r.matmul)
        timings.push_back({{"size", t.size}, {"ms", t.ms}, {"ms_with_copies", t.ms_with_copies}});
      entry["matmul"] = timings;
      if (!r.outside_load.is_null()) entry["outside_load"] = r.outside_load;
      // A benchmark keeps no run folder to say where it was recorded: its entry does.
      if (!r.recorded_on.empty()) {
        entry["recorded_on"] = r.recorded_on;
        entry["device"] = r.device;
      }
    }
    list.push_back(entry);
  }
  return list;
}

json hand_in_file_hashes(const fs::path& dir) {
  json files = json::object();
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(dir, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (!it->is_regular_file(error) || it->is_symlink(error)) continue;
    const std::string name = it->path().lexically_relative(dir).generic_string();
    if (name == kManifestFile) continue;
    files[name] = sha256_file(it->path());
  }
  if (error) throw RecordError(dir.string() + ": could not be listed (" + error.message() + ")");
  return files;
}

void write_manifest(const fs::path& dir, const Lab& lab, const std::string& learner,
                    const std::string& date, const json& experiments) {
  const json manifest = {{"format", kManifestFormat},
                         {"learner", learner},
                         {"lab", lab.name},
                         {"lab_title", lab.title},
                         {"lab_sha256", lab.sha256},
                         {"gpulab_version", GPULAB_VERSION},
                         {"handed_in", date},
                         {"experiments", experiments},
                         {"files", hand_in_file_hashes(dir)}};
  write_file_atomically(dir / kManifestFile, manifest.dump(2) + "\n", AtLink::replace);
}

std::string checked_learner(const std::string& name, const std::string& flag) {
  const auto refuse = [&](const std::string& why) {
    throw ConfigError(flag + ": " + why + "; give the learner's name, e.g. " + flag +
                      " \"Ada Lovelace\"");
  };
  const size_t first = name.find_first_not_of(" \t");
  const size_t last = name.find_last_not_of(" \t");
  const std::string trimmed =
      first == std::string::npos ? "" : name.substr(first, last - first + 1);
  if (trimmed.empty()) refuse("the name is empty");
  if (trimmed.find_first_of("\r\n") != std::string::npos) refuse("the name is more than one line");
  if (!utf8_problem(trimmed).empty()) refuse("the name is not UTF-8");
  if (trimmed.size() > 100) refuse("the name is longer than 100 bytes");
  return trimmed;
}

}  // namespace gpulab
