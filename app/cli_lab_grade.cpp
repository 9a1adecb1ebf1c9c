// gpulab-cli lab grade: a class's hand-ins verified (engine/classkit/class_grade) into --out:
// class.csv, class.md and, per lab, a chart of what the class measured (PNG, SVG and CSV).
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "app/cli_export.hpp"
#include "app/cli_lab.hpp"
#include "engine/base/errors.hpp"
#include "engine/classkit/class_grade.hpp"
#include "engine/classkit/class_report.hpp"
#include "engine/labs/lab.hpp"
#include "engine/records/output_paths.hpp"
#include "engine/training/trainer.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {

// The report's own files, known by their first line: what a grade into the same --out replaces.
const OutputKind& class_csv_kind() {
  static const OutputKind kind =
      first_line_kind("a class table (class.csv)",
                      [](std::string_view line) { return line.starts_with("learner,"); });
  return kind;
}
const OutputKind& class_md_kind() {
  static const OutputKind kind = first_line_kind(
      "a class report (class.md)", [](std::string_view line) { return line == "# Class"; });
  return kind;
}

// Before anything is graded: --out is a folder (or new), and its report files are an earlier
// report's, unless --force.
void check_report_folder(const fs::path& out, bool force) {
  std::error_code error;
  if (!fs::exists(fs::symlink_status(out, error))) return;  // made by grade_into
  if (!fs::is_directory(out, error))
    throw OutputRefused("--out " + out.string() + ": is " + describe_file(out) +
                        ", not a folder; name a folder for the class's report");
  check_output_file(out / "class.csv", "--out", class_csv_kind(), force);
  check_output_file(out / "class.md", "--out", class_md_kind(), force);
}

}  // namespace

int run_lab_grade(const LabFlags& f, RunControl& control, int argc, char** argv) {
  // Bad usage stops here, before anything is graded: a path that is not there, a lab file with
  // problems, an --out that cannot be written.
  std::vector<fs::path> paths;
  std::error_code error;
  for (const std::string& p : f.grade) {
    if (!fs::exists(p, error))
      throw ConfigError(p +
                        ": no such file or folder; give hand-in folders, .zip files or a "
                        "folder holding them");
    paths.emplace_back(p);
  }
  if (!f.lab_file.empty()) {
    const Lab lab = load_lab(f.lab_file);
    if (!lab.ok()) throw ConfigError("--lab " + f.lab_file + ": " + lab.problems[0].to_string());
  }
  GradeOptions options;
  options.lab = f.lab_file;
  options.replay_steps = f.replay;
  if (!f.data_dir.empty()) options.data_dir = fs::path(f.data_dir);
  options.control = &control;
  if (!f.roster.empty()) {
    options.roster = read_roster(f.roster);
    options.roster_file = f.roster;
  }
  const fs::path out = f.out;
  check_report_folder(out, f.force);
  ClassGrade grade;
  try {
    grade = grade_into(paths, out, options, [](size_t done, size_t total) {
      if (done % 10 == 0 || done == total) std::fprintf(stderr, "graded %zu of %zu\n", done, total);
    });
  } catch (const ConfigError& e) {
    throw OutputRefused("--out " + std::string(e.what()));
  } catch (const GradingStopped& e) {
    std::fprintf(stderr, "gpulab-cli: %s\n", e.what());
    return 130;
  }
  if (grade.hand_ins == 0) {
    // Nothing but paths that are no hand-in (a FIFO, /dev/zero): each said, and nothing graded.
    std::string why;
    for (const ClassRow& row : grade.rows)
      if (row.no_hand_in) why += "; " + row.problems.front();
    throw ConfigError(
        "no hand-in found in " + f.grade.front() + (f.grade.size() > 1 ? " and the rest" : "") +
        why + (why.empty() ? "; give hand-in folders, .zip files or a folder holding them" : ""));
  }
  const ClassReportFiles files =
      write_class_report(out, grade, [&](const Chart& chart, const fs::path& file) {
        write_chart_file(chart, file.string(), argc, argv, f.force);
      });
  for (const std::string& line : files.not_drawn) std::printf("chart %s\n", line.c_str());
  size_t verified = 0;
  for (const ClassRow& row : grade.rows) verified += row.verified();
  const std::string not_graded =
      grade.not_graded == 0
          ? ""
          : ", " + std::to_string(grade.not_graded) + " path" + (grade.not_graded == 1 ? "" : "s") +
                " not graded (no hand-in: a FIFO, a device or a link to one; its row says which)";
  const std::string missing = grade.missing == 0 ? ""
                                                 : ", " + std::to_string(grade.missing) +
                                                       " rows of roster learners without a hand-in";
  std::printf(
      "graded %zu hand-in%s: %zu learner-lab rows, %zu verified, %zu with problems, %zu "
      "earlier hand-ins replaced by a later one%s%s; %s\n",
      grade.hand_ins, grade.hand_ins == 1 ? "" : "s", grade.rows.size(), verified,
      grade.rows.size() - verified - grade.not_graded - grade.missing, grade.earlier.size(),
      not_graded.c_str(), missing.c_str(), (out / "class.csv").string().c_str());
  return 0;
}

}  // namespace gpulab::cli
