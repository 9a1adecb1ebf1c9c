// What `gpulab-cli lab grade` writes of a graded class: class.csv and class.md (one row per
// learner and lab) and, per lab, a chart of its key figures for every learner, grouped by the
// hardware they ran on (drawn by the chart code `export` uses; its CSV by write_chart_csv).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/analysis/chart_builder.hpp"
#include "engine/classkit/class_grade.hpp"
#include "engine/labs/lab_results.hpp"

namespace gpulab {

// class.csv's table: learner, lab, submitted, first_attempt_score, final_score, quiz_questions,
// written_answered, written_questions, verified ("yes" or "no"), problems (joined by " | "), cpu,
// gpu, source, flagged_runs, roster_id, points, percent, lab_checked ("yes" or "no"), then every
// key figure of any row's lab ("cnn gpu speedup", ...). A row that does
// not verify is flagged (⚠ in the Markdown).
LabResultsTable class_table(const ClassGrade& grade);

// class.md: a heading, what was graded, the table, each unverified row's problems one per line,
// the earlier hand-ins a later one replaced, and the chart files.
std::string class_markdown(const ClassGrade& grade, const std::vector<std::string>& chart_files);

// Per lab with key figures: (its name, its chart). One bar panel per figure; the bars are the
// learners, ordered by their hardware (the GPU where there is one, else the CPU) and named
// "learner · hardware"; a learner without that figure has an empty bar saying why. A figure
// that is 1 for everyone (the baseline's speedup over itself) is left out.
std::vector<std::pair<std::string, Chart>> class_charts(const ClassGrade& grade);

// "class-cnn-on-gpu": a lab's chart file stem in the --out folder.
std::string class_chart_stem(const std::string& lab);

// Draws a chart to a file (.png or .svg by its name); throws ConfigError where it cannot draw at
// all (a build without Qt), RecordError where the file cannot be written.
using ChartDrawer = std::function<void(const Chart&, const std::filesystem::path&)>;

struct ClassReportFiles {
  std::vector<std::string> charts;     // the chart files written, as class.md lists them
  std::vector<std::string> not_drawn;  // "class-cnn-on-gpu.png: <why>", one a chart not drawn
};

// Writes what `lab grade` writes into `out`, each file atomically: per lab with key figures its
// chart's points (class-LAB.csv) and, through `draw`, the chart as class-LAB.png and .svg (where
// it cannot draw, the CSV stays and not_drawn says why); then class.csv and class.md, last, so
// that a board watching the folder rereads a whole report.
ClassReportFiles write_class_report(const std::filesystem::path& out, const ClassGrade& grade,
                                    const ChartDrawer& draw);

}  // namespace gpulab
