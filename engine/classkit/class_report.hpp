// What `gpulab-cli lab grade` writes of a graded class: class.csv and class.md (one row per
// learner and lab) and, per lab, a chart of its key figures for every learner, grouped by the
// hardware they ran on (drawn by the chart code `export` uses; its CSV by write_chart_csv).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/analysis/chart_builder.hpp"
#include "engine/classkit/class_grade.hpp"
#include "engine/labs/lab_results.hpp"

namespace gpulab {

// class.csv's table: learner, lab, submitted, first_attempt_score, final_score, quiz_questions,
// written_answered, written_questions, verified ("yes" or "no"), problems (joined by " | "), cpu,
// gpu, source, then every key figure of any row's lab ("cnn gpu speedup", ...). A row that does
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

}  // namespace gpulab
