// gpulab-cli lab grade: a class's hand-ins verified (engine/classkit/class_grade) into --out:
// class.csv, class.md and, per lab, a chart of what the class measured (PNG, SVG and CSV).
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "app/cli_export.hpp"
#include "app/cli_lab.hpp"
#include "engine/analysis/chart_csv.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/classkit/class_grade.hpp"
#include "engine/classkit/class_report.hpp"
#include "engine/labs/lab.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

int run_lab_grade(const LabFlags& f, int argc, char** argv) {
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
  const fs::path out = f.out;
  fs::create_directories(out, error);
  // Zips are unpacked here, inside --out, and nowhere else; removed when grading is done.
  std::string work = (out / ".grading-XXXXXX").string();
  if (error || !mkdtemp(work.data()))
    throw ConfigError("--out " + out.string() + ": cannot be written (" +
                      (error ? error.message() : std::string("no folder can be made in it")) +
                      "); give a folder you can write");
  const std::vector<fs::path> found = find_hand_ins(paths, out);
  if (found.empty()) {
    fs::remove_all(work, error);
    throw ConfigError("no hand-in found in " + f.grade.front() +
                      (f.grade.size() > 1 ? " and the rest" : "") +
                      "; give hand-in folders, .zip files or a folder holding them");
  }
  GradeOptions options;
  options.lab = f.lab_file;
  options.replay_steps = f.replay;
  if (!f.data_dir.empty()) options.data_dir = fs::path(f.data_dir);
  const ClassGrade grade = grade_class(found, work, options, [](size_t done, size_t total) {
    if (done % 10 == 0 || done == total) std::fprintf(stderr, "graded %zu of %zu\n", done, total);
  });
  fs::remove_all(work, error);

  std::vector<std::string> chart_files;
  for (const auto& [lab, chart] : class_charts(grade)) {
    const std::string stem = class_chart_stem(lab);
    std::ostringstream csv;
    write_chart_csv(chart, csv);
    write_file_atomically(out / (stem + ".csv"), csv.str());
    chart_files.push_back(stem + ".csv");
    for (const char* format : {".png", ".svg"}) {
      try {
        write_chart_file(chart, (out / (stem + format)).string(), argc, argv);
        chart_files.push_back(stem + format);
      } catch (const ConfigError& e) {  // a build without Qt draws no charts; the CSV is there
        std::printf("chart %s%s not drawn: %s\n", stem.c_str(), format, e.what());
        break;
      }
    }
  }
  write_file_atomically(out / "class.csv", to_csv(class_table(grade)));
  write_file_atomically(out / "class.md", class_markdown(grade, chart_files));
  size_t verified = 0;
  for (const ClassRow& row : grade.rows) verified += row.verified();
  std::printf(
      "graded %zu hand-in%s: %zu learner-lab rows, %zu verified, %zu with problems, %zu "
      "earlier hand-ins replaced by a later one; %s\n",
      found.size(), found.size() == 1 ? "" : "s", grade.rows.size(), verified,
      grade.rows.size() - verified, grade.earlier.size(), (out / "class.csv").string().c_str());
  return 0;
}

}  // namespace gpulab::cli
