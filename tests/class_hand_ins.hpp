// The class kit's test hand-ins: a small CPU lab and two learners' hand-ins of it made once per
// suite by `lab run` (real short runs on a tiny IDX set), and the file edits a forger makes.
// Shared by tests/test_classkit.cpp (verify) and tests/test_classkit_grade.cpp (zip, grade).
#pragma once

#include <gtest/gtest.h>

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

// Two learners' hand-ins of the same lab, made once for the suite by `lab run` (real runs on the
// tiny IDX set) and copied fresh for each test that damages one.
class ClassKit : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new test::TempDir();
    const fs::path root = root_->path();
    test::write_mnist(root / "data", test::synthetic_set(128, 1), test::synthetic_set(32, 2));
    write(root / "two-cpus.md", kLab);
    for (const char* learner : {"ada", "bob"}) make_hand_in(learner);
  }
  // A learner's own hand-in (real runs of their own) in root()/LEARNER.
  static void make_hand_in(const std::string& learner) {
    const fs::path root = root_->path();
    const test::CliResult r =
        cli("lab run " + (root / "two-cpus.md").string() + " --quiet --learner " + learner +
            " --out " + (root / learner).string() + " --data-dir " + (root / "data").string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  static void TearDownTestSuite() {
    delete root_;
    root_ = nullptr;
  }
  static fs::path root() { return root_->path(); }
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

  static inline test::TempDir* root_ = nullptr;
  test::TempDir dir_;
  int copies_ = 0;
};

}  // namespace gpulab
