// class.csv, class.md and the class charts from a graded class: the table through the results
// tables' own CSV and Markdown writers, the charts as bar panels the chart code draws.
#include "engine/classkit/class_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "engine/analysis/chart_csv.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/backend/metrics.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/labs/hand_in_manifest.hpp"

namespace gpulab {

namespace {

std::string whole_or_fixed(double value) {
  char text[32];
  std::snprintf(text, sizeof text, value == std::floor(value) ? "%.0f" : "%.2f", value);
  return text;
}

std::string hardware_of(const ClassRow& row) {
  if (!row.gpu.empty()) return row.gpu;
  return row.cpu.empty() ? "unknown machine" : row.cpu;
}

}  // namespace

std::string class_chart_stem(const std::string& lab) {
  return "class-" + experiment_folder(lab.empty() ? "unknown" : lab);
}

LabResultsTable class_table(const ClassGrade& grade) {
  LabResultsTable table;
  table.header = {"learner",
                  "lab",
                  "submitted",
                  "first_attempt_score",
                  "final_score",
                  "quiz_questions",
                  "written_answered",
                  "written_questions",
                  "verified",
                  "problems",
                  "cpu",
                  "gpu",
                  "source",
                  "flagged_runs",
                  "roster_id",
                  "points",
                  "percent",
                  "lab_checked"};
  std::vector<std::string> figures;
  for (const ClassRow& row : grade.rows)
    for (const auto& [name, value] : row.figures)
      if (std::find(figures.begin(), figures.end(), name) == figures.end()) figures.push_back(name);
  table.header.insert(table.header.end(), figures.begin(), figures.end());
  for (const ClassRow& row : grade.rows) {
    std::string problems;
    for (const std::string& p : row.problems) problems += (problems.empty() ? "" : " | ") + p;
    const auto number = [](int n) { return n < 0 ? std::string() : std::to_string(n); };
    std::vector<std::string> cells = {
        row.learner,
        row.lab,
        row.submitted,
        number(row.first_attempt_score),
        number(row.score),
        number(row.score < 0 ? -1 : row.quiz_questions),
        number(row.score < 0 ? -1 : row.written_answered),
        number(row.score < 0 ? -1 : row.written_questions),
        row.verified() ? "yes" : "no",
        problems,
        row.cpu,
        row.gpu,
        row.source,
        row.flagged_runs.empty() ? std::string() : "⚠ " + join_flags(row.flagged_runs),
        row.roster_id,
        row.max_points < 0 ? "" : whole_or_fixed(row.points),
        row.max_points <= 0 ? "" : whole_or_fixed(100.0 * row.points / row.max_points),
        row.lab_checked ? "yes" : "no"};
    for (const std::string& name : figures) {
      const auto at = std::find_if(row.figures.begin(), row.figures.end(),
                                   [&](const auto& f) { return f.first == name; });
      cells.push_back(at == row.figures.end() ? "" : whole_or_fixed(at->second));
    }
    table.rows.push_back(std::move(cells));
    table.flagged.push_back(!row.verified() || !row.flagged_runs.empty());
  }
  return table;
}

std::string class_markdown(const ClassGrade& grade, const std::vector<std::string>& chart_files) {
  size_t verified = 0;
  for (const ClassRow& row : grade.rows) verified += row.verified();
  std::string md = "# Class\n\n" + std::to_string(grade.rows.size()) + " hand-ins graded (" +
                   std::to_string(verified) + " verified, " +
                   std::to_string(grade.rows.size() - verified) +
                   " with problems); the last hand-in of each learner per lab counts.\n\n";
  // The Markdown table keeps the columns a reader scans; class.csv has every one.
  LabResultsTable table = class_table(grade);
  const auto problems_at = std::find(table.header.begin(), table.header.end(), "problems");
  const size_t drop = size_t(problems_at - table.header.begin());
  table.header.erase(table.header.begin() + long(drop));
  for (auto& row : table.rows) row.erase(row.begin() + long(drop));
  md += to_markdown(table);
  bool any = false;
  for (const ClassRow& row : grade.rows) {
    if (row.verified()) continue;
    if (!any) md += "\n## Problems\n";
    any = true;
    md += "\n### " + row.learner + " (" + (row.lab.empty() ? "no lab" : row.lab) + ")\n\n";
    for (const std::string& p : row.problems) md += "- " + p + "\n";
  }
  size_t unchecked = 0;
  for (const ClassRow& row : grade.rows) unchecked += !row.lab.empty() && !row.lab_checked;
  if (unchecked)
    md += "\n" + std::to_string(unchecked) +
          " rows were graded without their lab (no --lab, and not a built-in lab of that "
          "SHA-256): their tables and settings were not recomputed (lab_checked: no).\n";
  if (!grade.earlier.empty()) {
    md += "\n## Earlier hand-ins (a later one of the same learner and lab counts)\n\n";
    for (const ClassRow& row : grade.earlier)
      md += "- " + row.learner + ", " + row.lab + ", submitted " + row.submitted + ": " +
            row.source + "\n";
  }
  if (!chart_files.empty()) {
    md += "\n## Charts\n\n";
    for (const std::string& file : chart_files) md += "- " + file + "\n";
  }
  return md;
}

std::vector<std::pair<std::string, Chart>> class_charts(const ClassGrade& grade) {
  std::map<std::string, std::vector<const ClassRow*>> by_lab;
  for (const ClassRow& row : grade.rows)
    if (!row.figures.empty()) by_lab[row.lab].push_back(&row);
  std::vector<std::pair<std::string, Chart>> charts;
  for (auto& [lab, rows] : by_lab) {
    std::stable_sort(rows.begin(), rows.end(), [](const ClassRow* a, const ClassRow* b) {
      return hardware_of(*a) < hardware_of(*b);
    });
    Chart chart;
    chart.kind = ChartKind::Speedup;  // bars, one per learner: what the speedup chart draws
    chart.title = "What the class measured: " + lab + ", by hardware";
    for (const ClassRow* row : rows) {
      std::vector<std::string> flags = row->flagged_runs;
      if (!row->verified()) flags.insert(flags.begin(), "does not verify");
      chart.runs.push_back(row->learner + " · " + hardware_of(*row) + (flags.empty() ? "" : " ⚠"));
      chart.flags.push_back(join_flags(flags));
    }
    std::vector<std::string> names;
    for (const ClassRow* row : rows)
      for (const auto& [name, value] : row->figures)
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    for (const std::string& name : names) {
      Panel panel;
      panel.title = name;
      for (const char* key : {"images/s", "speedup", "GFLOP/s"})
        if (name.find(key) != std::string::npos) panel.y_label = key;
      BarSet bars;
      bars.label = name;
      bool all_one = true;
      for (const ClassRow* row : rows) {
        const auto at = std::find_if(row->figures.begin(), row->figures.end(),
                                     [&](const auto& f) { return f.first == name; });
        bars.values.push_back(at == row->figures.end() ? kNoValue : at->second);
        bars.notes.push_back(at == row->figures.end() ? "not in the hand-in" : "");
        if (at != row->figures.end() && at->second != 1.0) all_one = false;
      }
      if (all_one) continue;
      panel.bars.push_back(std::move(bars));
      chart.panels.push_back(std::move(panel));
    }
    if (!chart.panels.empty()) charts.emplace_back(lab, std::move(chart));
  }
  return charts;
}

ClassReportFiles write_class_report(const std::filesystem::path& out, const ClassGrade& grade,
                                    const ChartDrawer& draw) {
  ClassReportFiles files;
  for (const auto& [lab, chart] : class_charts(grade)) {
    const std::string stem = class_chart_stem(lab);
    std::ostringstream csv;
    write_chart_csv(chart, csv);
    write_file_atomically(out / (stem + ".csv"), csv.str());
    files.charts.push_back(stem + ".csv");
    for (const char* format : {".png", ".svg"}) {
      try {
        draw(chart, out / (stem + format));
        files.charts.push_back(stem + format);
      } catch (const ConfigError& e) {  // a build without Qt draws no charts; the CSV is there
        files.not_drawn.push_back(stem + format + ": " + e.what());
        break;
      }
    }
  }
  write_file_atomically(out / "class.csv", to_csv(class_table(grade)));
  write_file_atomically(out / "class.md", class_markdown(grade, files.charts));
  return files;
}

}  // namespace gpulab
