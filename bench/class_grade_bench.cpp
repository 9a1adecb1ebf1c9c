// gpulab-bench-class: `gpulab-cli lab grade` over a generated class of hand-ins, timed. A few real
// hand-ins (`lab run LAB --quick`, real short runs) are copied to --learners learners (names
// changed, manifests re-hashed by the engine's own hand_in_file_hashes), a third of the genuine
// ones packed as zips, every fourth damaged or forged in one of six ways, laid out as a course
// platform downloads them, with the class's roster (two learners on it hand in nothing); then
// `lab grade --roster` runs --repeats times and the median is reported.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "engine/classkit/hand_in_zip.hpp"
#include "engine/labs/hand_in_manifest.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::string shell_quoted(const fs::path& path) { return "'" + path.string() + "'"; }

// The learner's name in manifest.json and answers.json, then the manifest's hashes anew: a copy
// that verifies as the learner's own (its runs are still its base's, which grade flags).
void rename_learner(const fs::path& h, const std::string& learner) {
  json answers = json::parse(read(h / "answers.json"));
  answers["learner"] = learner;
  write(h / "answers.json", answers.dump(2) + "\n");
  // The report names the learner too, and verify holds it to the manifest.
  std::string readme = read(h / "README.md");
  const std::string was = "Handed in by **base**.";
  if (const size_t at = readme.find(was); at != std::string::npos)
    readme.replace(at, was.size(), "Handed in by **" + learner + "**.");
  write(h / "README.md", readme);
  json manifest = json::parse(read(h / gpulab::kManifestFile));
  manifest["learner"] = learner;
  manifest["files"] = gpulab::hand_in_file_hashes(h);
  write(h / gpulab::kManifestFile, manifest.dump(2) + "\n");
}

fs::path first_run(const fs::path& h) {
  for (const auto& entry : fs::directory_iterator(h / gpulab::kHandInRuns)) return entry.path();
  return {};
}

// Damage of kind `kind` (0-5) to the hand-in `h`; returns what was done.
std::string damage(const fs::path& h, int kind) {
  switch (kind) {
    case 0: {  // a number edited in a run.json
      const fs::path file = first_run(h) / "run.json";
      json info = json::parse(read(file));
      info["summary"]["images"] = info["summary"]["images"].get<int64_t>() * 2;
      write(file, info.dump(2));
      return "a number edited in a run.json";
    }
    case 1: {  // half-copied
      const fs::path file = first_run(h) / "metrics.csv";
      const std::string text = read(file);
      write(file, text.substr(0, text.size() / 2));
      return "half of a metrics.csv";
    }
    case 2:
      fs::remove(h / "results.csv");
      return "results.csv missing";
    case 3: {  // a table cell forged, the manifest re-hashed to match
      std::string text = read(h / "results.csv");
      const size_t digit = text.find_first_of("123456789", text.find('\n'));
      text[digit] = text[digit] == '9' ? '8' : char(text[digit] + 1);
      write(h / "results.csv", text);
      json manifest = json::parse(read(h / gpulab::kManifestFile));
      manifest["files"] = gpulab::hand_in_file_hashes(h);
      write(h / gpulab::kManifestFile, manifest.dump(2));
      return "results.csv forged and re-hashed";
    }
    case 4: {  // another version of the lab
      json manifest = json::parse(read(h / gpulab::kManifestFile));
      manifest["lab_sha256"] = std::string(64, 'a');
      write(h / gpulab::kManifestFile, manifest.dump(2));
      return "another version of the lab";
    }
    default:
      return "";
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lab grade over a generated class of hand-ins, timed"};
  std::string cli = "build/app/gpulab-cli", lab = "cnn-on-gpu", work, data_dir;
  int learners = 60, bases = 2, repeats = 3;
  app.add_option("--cli", cli, "the gpulab-cli to time");
  app.add_option("--lab", lab, "the lab the class hands in (run with --quick for the bases)");
  app.add_option("--work", work, "folder for the bases, the class and the grades")->required();
  app.add_option("--learners", learners, "hand-ins in the class");
  app.add_option("--bases", bases, "real hand-ins made with `lab run --quick`, then copied");
  app.add_option("--repeats", repeats, "times lab grade runs; the median is reported");
  app.add_option("--data-dir", data_dir, "MNIST for the bases' runs");
  CLI11_PARSE(app, argc, argv);
  const fs::path root = work;
  const std::string data = data_dir.empty() ? "" : " --data-dir " + shell_quoted(data_dir);
  for (int b = 0; b < bases; ++b) {  // kept between invocations: the slow part
    const fs::path base = root / "bases" / ("base-" + std::to_string(b));
    if (fs::exists(base / gpulab::kManifestFile)) continue;
    fs::remove_all(base);
    if (shell(shell_quoted(cli) + " lab run " + lab + " --quick --quiet --learner base" + data +
              " --out " + shell_quoted(base) + " > /dev/null") != 0) {
      std::fprintf(stderr, "class-bench: lab run %s failed\n", lab.c_str());
      return 1;
    }
  }
  const fs::path course = root / "class";
  fs::remove_all(course);
  int damaged = 0, zips = 0, not_zips = 0;
  for (int i = 0; i < learners; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "Learner %02d", i + 1);
    const fs::path submission =
        course / (std::string(name) + "_" + std::to_string(1000 + i) + "_assignsubmission_file");
    const fs::path h = submission / ("learner-" + std::to_string(i + 1));
    fs::create_directories(submission);
    fs::copy(root / "bases" / ("base-" + std::to_string(i % bases)), h,
             fs::copy_options::recursive);
    rename_learner(h, name);
    if (i % 4 == 3) {  // a quarter damaged or forged
      const int kind = (i / 4) % 6;
      ++damaged;
      if (kind == 5) {  // a file that is no zip, named as one
        fs::remove_all(h);
        write(submission / "hand-in.zip", "not a zip\n");
        ++not_zips;
      } else {
        damage(h, kind);
      }
    } else if (i % 3 == 0) {  // a third of the genuine ones as the platform's zip
      gpulab::write_hand_in_zip(h, submission / gpulab::hand_in_zip_name(name, lab));
      fs::remove_all(h);
      ++zips;
    }
  }
  // The roster: every learner by the platform's id, and two who handed in nothing.
  std::string roster = "id,name,email\n";
  for (int i = 0; i < learners + 2; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "Learner %02d", i + 1);
    roster += std::to_string(1000 + i) + "," + name + ",learner" + std::to_string(i + 1) +
              "@example.org\n";
  }
  write(root / "roster.csv", roster);
  std::vector<double> seconds;
  std::string summary;
  for (int r = 0; r < repeats; ++r) {
    const fs::path out = root / "graded";
    fs::remove_all(out);
    const auto start = std::chrono::steady_clock::now();
    const int status =
        shell(shell_quoted(cli) + " lab grade " + shell_quoted(course) + " --lab " + lab +
              " --roster " + shell_quoted(root / "roster.csv") + " --out " + shell_quoted(out) +
              " > " + shell_quoted(root / "grade.log") + " 2>&1");
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    summary = read(root / "grade.log");
    if (status != 0) {
      std::fprintf(stderr, "class-bench: lab grade exited %d:\n%s", status, summary.c_str());
      return 1;
    }
  }
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  std::printf(
      "class: %d hand-ins of %s (%d zips, %d damaged or forged, %d of them no zip), "
      "copies of %d real hand-ins, a roster of %d\n",
      learners, lab.c_str(), zips, damaged, not_zips, bases, learners + 2);
  std::printf("%s", summary.substr(summary.rfind("graded ", summary.rfind("graded "))).c_str());
  std::printf("lab grade: median %.2f s over %d runs (", sorted[sorted.size() / 2], repeats);
  for (size_t r = 0; r < seconds.size(); ++r) std::printf("%s%.2f", r ? ", " : "", seconds[r]);
  std::printf(" s)\n");
  return 0;
}
