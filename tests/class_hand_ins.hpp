// The class kit's test hand-ins: a small CPU lab and two learners' hand-ins of it made once per
// suite by `lab run` (real short runs on a tiny IDX set), and the file edits a forger makes.
// Shared by tests/test_classkit.cpp (verify) and tests/test_classkit_grade.cpp (zip, grade).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "engine/base/sha256.hpp"
#include "temp_dir.hpp"
#include "test_support.hpp"

namespace gpulab {

namespace fs = std::filesystem;

inline std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Replaces the first `from` in the file by `to`; fails the test when it is not there.
inline void edit(const fs::path& path, const std::string& from, const std::string& to) {
  std::string text = read(path);
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << path << " lacks " << from << "\n" << text;
  text.replace(at, from.size(), to);
  write(path, text);
}

// Rewrites the manifest's hash of `file` (relative to the hand-in `h`), as a forger would.
inline void rehash(const fs::path& h, const std::string& file) {
  nlohmann::json manifest = nlohmann::json::parse(read(h / "manifest.json"));
  manifest["files"][file] = sha256_file(h / file);
  write(h / "manifest.json", manifest.dump(2));
}

inline test::CliResult cli(const std::string& args);

// Types a loss into runs/mlp-cpu/metrics.csv's first step, draws the loss chart's points again
// from the runs as `gpulab-cli export` does, and re-hashes both: every file agrees with it, and
// only a replay can tell.
inline void forge_first_loss(const fs::path& h) {
  const fs::path metrics = h / "runs" / "mlp-cpu" / "metrics.csv";
  std::string csv = read(metrics);
  std::istringstream lines(csv);
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  ASSERT_GE(std::count(first.begin(), first.end(), ','), 4) << first;
  // metrics.csv's fourth column is the loss.
  size_t at = 0;
  for (int i = 0; i < 3; ++i) at = first.find(',', at) + 1;
  const size_t end = first.find(',', at);
  std::string forged = first;
  forged.replace(at, end - at, "0.5");
  csv.replace(csv.find(first), first.size(), forged);
  write(metrics, csv);
  rehash(h, "runs/mlp-cpu/metrics.csv");
  const test::CliResult r =
      cli("export --chart loss --runs " + (h / "runs" / "mlp-cpu").string() + " " +
          (h / "runs" / "mlp-again").string() + " --out " + (h / "chart-1-loss.csv").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  rehash(h, "chart-1-loss.csv");
}

inline test::CliResult cli(const std::string& args) {
  return test::run_command(std::string(GPULAB_CLI_PATH) + " " + args);
}

// A CPU lab of two small experiments, a table, a chart, one quiz question and two written
// questions.
inline const std::string kLab =
    "---\ntitle: Two CPUs\nminutes: 5\nhardware: cpu\n---\n\n# Two CPUs\n\n"
    "```experiment\nname: mlp cpu\nmodel: mlp\nbatch: 16\nsteps: 6\nseed: 3\nthreads: 1\n```\n"
    "```experiment\nname: mlp again\nmodel: mlp\nbatch: 32\nsteps: 4\nseed: 5\nthreads: 1\n```\n"
    "```table\ncolumns: experiment, steps, images/s, ms per step, speedup, test accuracy\n```\n"
    "```chart\nkind: loss\n```\n"
    "## Questions\n\n1. Which was faster?\n2. Why is that so?\n   Think of the batch.\n\n"
    "## Quiz\n\n"
    "```quiz\nquestion: A GPU has many cores.\nanswer: true\nwhy: It does.\n```\n";

// The learners whose hand-ins the suites use: ada and bob for verify (tests/test_classkit.cpp),
// and more, each with runs of their own, for a class where only forged runs are shared
// (tests/test_classkit_grade.cpp).
inline constexpr const char* kLearners[] = {"ada",  "bob",    "cut",      "nofile",
                                            "hash", "forger", "otherlab", "cy"};

// The learners' hand-ins of the same lab, made by `lab run` (real runs on the tiny IDX set) and
// copied fresh for each test that damages one. ctest runs each test as a process of its own, so
// they are made once per build, not once per test: into tests/class-hand-ins/KEY of the build
// folder, by the first test process to need them, under a lock the others wait on; KEY changes
// with gpulab-cli's file and the lab, and an older KEY's folder is removed then. A process killed
// while making them leaves no ".complete", and the next one makes them again.
class ClassKit : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const fs::path cli_path = GPULAB_CLI_PATH;
    std::error_code error;
    const std::string stamp =
        std::to_string(fs::file_size(cli_path, error)) + ":" +
        std::to_string(fs::last_write_time(cli_path, error).time_since_epoch().count());
    std::string learners;
    for (const char* learner : kLearners) learners += std::string(learner) + ",";
    const std::string key = sha256_hex(kLab + "\n" + stamp + "\n" + learners).substr(0, 16);
    const fs::path base = cli_path.parent_path().parent_path() / "tests" / "class-hand-ins";
    fs::create_directories(base);
    root_ = base / key;
    const int lock = ::open((base / ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    ASSERT_GE(lock, 0) << base / ".lock";
    ASSERT_EQ(::flock(lock, LOCK_EX), 0);
    if (!fs::exists(root_ / ".complete")) {
      for (const auto& entry : fs::directory_iterator(base))
        if (entry.is_directory()) fs::remove_all(entry.path());  // an older key's, or half made
      fs::create_directories(root_);
      test::write_mnist(root_ / "data", test::synthetic_set(128, 1), test::synthetic_set(32, 2));
      write(root_ / "two-cpus.md", kLab);
      for (const char* learner : kLearners) make_hand_in(learner);
      if (!HasFatalFailure()) write(root_ / ".complete", stamp + "\n");
    }
    ::close(lock);  // and the lock with it
  }
  // A learner's own hand-in (real runs of their own) in root()/LEARNER.
  static void make_hand_in(const std::string& learner) {
    const test::CliResult r =
        cli("lab run " + (root_ / "two-cpus.md").string() + " --quiet --learner " + learner +
            " --out " + (root_ / learner).string() + " --data-dir " + (root_ / "data").string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  static fs::path root() { return root_; }
  static fs::path lab() { return root() / "two-cpus.md"; }

  // A fresh copy of a learner's hand-in to damage.
  fs::path copy_of(const std::string& learner) {
    const fs::path to = dir_.path() / (learner + "-" + std::to_string(++copies_));
    fs::copy(root() / learner, to, fs::copy_options::recursive);
    return to;
  }
  test::CliResult verify(const fs::path& hand_in, const std::string& more = "") {
    return cli("lab verify " + hand_in.string() + " --lab " + lab().string() + more);
  }

  static inline fs::path root_;
  test::TempDir dir_;
  int copies_ = 0;
};

}  // namespace gpulab
