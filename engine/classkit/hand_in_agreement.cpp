// The facts a hand-in states in more than one file, read from each and compared: the report
// (README.md) as write_hand_in lays it out, against the files a script reads.
#include "engine/classkit/hand_in_agreement.hpp"

#include <algorithm>
#include <sstream>
#include <string>

#include "engine/base/errors.hpp"
#include "engine/base/text.hpp"
#include "engine/labs/hand_in_manifest.hpp"
#include "engine/labs/lab_hand_in.hpp"
#include "engine/records/record_reader.hpp"

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string text_of(const json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto value = j.find(key);
  return value != j.end() && value->is_string() ? value->get<std::string>() : "";
}

// As the report writes a name or an answer on one line.
std::string report_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

std::string in_quotes(const std::string& text) { return "\"" + bounded_name(text, 80) + "\""; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines of the section that starts with a line beginning `heading` ("## Quiz"), up to the
// next "## "; empty when there is none.
std::vector<std::string> section(const std::vector<std::string>& lines,
                                 const std::string& heading) {
  std::vector<std::string> found;
  bool in = false;
  for (const std::string& line : lines) {
    if (line.rfind("## ", 0) == 0) {
      if (in) break;
      in = line.rfind(heading, 0) == 0;
    }
    if (in) found.push_back(line);
  }
  return found;
}

// The cells of a Markdown table line ("| a | b \| c |"), "\|" read as "|".
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  if (line.size() < 2 || line.front() != '|') return cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (line[i] == '|') {
      const size_t begin = cell.find_first_not_of(' '), end = cell.find_last_not_of(' ');
      cells.push_back(begin == std::string::npos ? "" : cell.substr(begin, end - begin + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

// "12. text" -> 12 and "text"; 0 when the line is no numbered item.
int numbered(const std::string& line, std::string* rest) {
  size_t digits = 0;
  while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
  if (digits == 0 || digits > 4 || line.compare(digits, 2, ". ") != 0) return 0;
  *rest = line.substr(digits + 2);
  return std::stoi(line.substr(0, digits));
}

class Agreement {
 public:
  Agreement(const fs::path& dir, const json& manifest, const json& answers, const json& machine)
      : dir_(dir), manifest_(manifest), answers_(answers), machine_(machine) {}

  std::vector<HandInProblem> run(const std::vector<LabResultsTable>& tables) {
    std::string text;
    try {
      if (!read_record_file(dir_ / "README.md", kMaxRunJsonBytes, &text)) return problems_;
    } catch (const RecordError&) {
      return problems_;  // said by the manifest's check
    }
    readme_ = lines_of(text);
    check_learner();
    if (machine_.is_object()) check_machine();
    for (size_t t = 0; t < tables.size(); ++t) {
      check_table("README.md", readme_, tables[t], t);
      const std::string md = hand_in_table_file(t, "md");
      try {
        std::string table_text;
        if (read_record_file(dir_ / md, kMaxRunJsonBytes, &table_text))
          check_table(md, lines_of(table_text), tables[t], t);
      } catch (const RecordError&) {  // said by the manifest's check
      }
    }
    if (answers_.is_object()) {
      check_quiz();
      check_written();
    }
    return problems_;
  }

 private:
  void problem(const std::string& file, const std::string& message) {
    problems_.push_back({file, message});
  }

  void check_learner() {
    const std::string learner = report_line(text_of(manifest_, "learner"));
    std::string said;
    const std::string mark = "Handed in by **";
    for (const std::string& line : readme_)
      if (line.rfind(mark, 0) == 0 && line.size() >= mark.size() + 3)
        said = line.substr(mark.size(), line.rfind("**") - mark.size());
    if (said != learner)
      problem("README.md", said.empty()
                               ? "names no learner, but manifest.json names " + in_quotes(learner)
                               : "is handed in by " + in_quotes(said) +
                                     ", but manifest.json names " + in_quotes(learner));
  }

  void check_machine() {
    const std::vector<std::string> machine = section(readme_, "## Machine");
    const json cpu = machine_.value("cpu", json::object());
    const std::string model = text_of(cpu, "model").empty() ? "unknown" : text_of(cpu, "model");
    std::string cpu_line, gpu_none;
    std::vector<std::string> items;
    for (const std::string& line : machine) {
      if (line.rfind("- CPU: ", 0) == 0) cpu_line = line.substr(7);
      if (line.rfind("- GPU: none", 0) == 0) gpu_none = line;
      if (line.rfind("- ", 0) == 0) items.push_back(line.substr(2));
    }
    if (cpu_line.rfind(report_line(model) + ",", 0) != 0)
      problem("README.md", "its machine's CPU is " +
                               in_quotes(cpu_line.substr(0, cpu_line.find(','))) +
                               ", but machine.json's is " + in_quotes(model));
    const json gpus = machine_.value("gpus", json::array());
    std::vector<std::string> names;
    if (gpus.is_array())
      for (const json& gpu : gpus) names.push_back(text_of(gpu, "name"));
    if (names.empty() && gpu_none.empty())
      problem("README.md", "its machine lists a GPU, but machine.json names none");
    if (!names.empty() && !gpu_none.empty())
      problem("README.md",
              "its machine says \"GPU: none\", but machine.json names " + in_quotes(names.front()));
    for (const std::string& name : names)
      if (!name.empty() && std::none_of(items.begin(), items.end(), [&](const std::string& item) {
            return item.rfind("GPU ", 0) == 0 &&
                   item.find(": " + report_line(name)) != std::string::npos;
          }))
        problem("README.md", "its machine does not list the GPU " + in_quotes(name) +
                                 ", which machine.json names");
    check_runs_table();
  }

  // "| experiment | device | host |": machine.json's runs, a reference run's host cell saying
  // where it was recorded; and each manifest experiment marked reference where machine.json says
  // it was recorded elsewhere.
  void check_runs_table() {
    std::vector<std::vector<std::string>> rows;
    bool in = false;
    for (const std::string& line : readme_) {
      const std::vector<std::string> cells = cells_of(line);
      if (cells == std::vector<std::string>{"experiment", "device", "host"}) {
        in = true;
        continue;
      }
      if (!in) continue;
      if (cells.empty()) break;
      if (cells.size() == 3 && cells[0] != "---") rows.push_back(cells);
    }
    const json runs = machine_.value("runs", json::array());
    if (!runs.is_array()) return;
    std::vector<std::vector<std::string>> expected;
    for (const json& run : runs) {
      const std::string recorded_on = text_of(run, "recorded_on");
      expected.push_back({text_of(run, "experiment"), report_line(text_of(run, "device")),
                          recorded_on.empty() ? text_of(run, "host")
                                              : "reference run, recorded on " + recorded_on});
      if (!recorded_on.empty() && !reference_in_manifest(expected.back()[0]))
        problem(kManifestFile, "does not mark the run of \"" + expected.back()[0] +
                                   "\" as a reference run, but machine.json says it was recorded "
                                   "on " +
                                   recorded_on);
    }
    for (const auto& row : rows) {
      const auto same = std::find_if(expected.begin(), expected.end(),
                                     [&](const auto& e) { return e[0] == row[0]; });
      if (same == expected.end())
        problem("README.md", "its runs table names a run of " + in_quotes(row[0]) +
                                 ", which machine.json has not");
      else if (*same != row)
        problem("README.md", "its runs table gives the run of " + in_quotes(row[0]) + " on " +
                                 in_quotes(row[1]) + " (" + in_quotes(row[2]) +
                                 "), but machine.json on " + in_quotes((*same)[1]) + " (" +
                                 in_quotes((*same)[2]) + ")");
    }
    for (const auto& e : expected)
      if (std::none_of(rows.begin(), rows.end(), [&](const auto& r) { return r[0] == e[0]; }))
        problem("README.md", "its runs table leaves out the run of " + in_quotes(e[0]) +
                                 ", which machine.json names");
  }

  bool reference_in_manifest(const std::string& experiment) const {
    const json experiments = manifest_.value("experiments", json::array());
    if (!experiments.is_array()) return false;
    for (const json& e : experiments)
      if (text_of(e, "experiment") == experiment) return e.value("reference", false) == true;
    return false;
  }

  // The table as the runs give it, found in `lines` by its header: each cell that differs named
  // (three, then how many more), as verify names results.csv's.
  void check_table(const std::string& file, const std::vector<std::string>& lines,
                   const LabResultsTable& table, size_t t) {
    const std::vector<std::string> want = lines_of(to_markdown(table));
    if (want.size() < 2) return;
    const auto header = std::find(lines.begin(), lines.end(), want[0]);
    const std::string which =
        t == 0 ? "its results table" : "its results table " + std::to_string(t + 1);
    if (header == lines.end()) {
      problem(file, which + " is missing, or its columns are not the lab's (" +
                        bounded_name(want[0], 120) + ")");
      return;
    }
    std::vector<std::string> found(header, lines.end());
    int wrong = 0;
    for (size_t r = 2; r < want.size(); ++r) {
      const std::vector<std::string> expected = cells_of(want[r]);
      const std::vector<std::string> given =
          r < found.size() ? cells_of(found[r]) : std::vector<std::string>{};
      if (given.empty()) {
        problem(file, which + " lacks the row " + in_quotes(expected.empty() ? "" : expected[0]) +
                          " the runs in the hand-in give");
        return;
      }
      for (size_t c = 0; c < expected.size(); ++c) {
        const std::string cell = c < given.size() ? given[c] : "";
        if (cell == expected[c]) continue;
        if (++wrong <= 3)
          problem(file, which + ", row " + in_quotes(expected[0]) + ", column " +
                            in_quotes(table.header[c]) + " says " + in_quotes(cell) +
                            ", but the runs in the hand-in give " + in_quotes(expected[c]));
      }
    }
    if (want.size() < found.size() && !cells_of(found[want.size()]).empty())
      problem(file, which + " has more rows than the runs in the hand-in give");
    if (wrong > 3) problem(file, which + ": " + std::to_string(wrong - 3) + " more cells disagree");
  }

  // "## Quiz: S of M right (A of M answered)", "Right at the first attempt: K of M.", and per
  // question the answer with "**right**" or "**wrong**", or "Not answered.".
  void check_quiz() {
    const json list = answers_.value("answers", json());
    if (!list.is_array()) return;
    const std::vector<std::string> quiz = section(readme_, "## Quiz");
    if (quiz.empty()) {
      if (!list.empty()) problem("README.md", "has no quiz, but answers.json answers one");
      return;
    }
    int answered = 0;
    for (const json& entry : list)
      answered += entry.is_object() && !entry.value("answer", json()).is_null();
    const std::string heading = "## Quiz: " + answers_.value("score", json()).dump() + " of " +
                                std::to_string(list.size()) + " right (" +
                                std::to_string(answered) + " of " + std::to_string(list.size()) +
                                " answered)";
    if (quiz.front() != heading)
      problem("README.md", "its quiz heading says " + in_quotes(quiz.front().substr(3)) +
                               ", but answers.json gives " + in_quotes(heading.substr(3)));
    const std::string first =
        "Right at the first attempt: " + answers_.value("first_attempt_score", json()).dump() +
        " of " + std::to_string(list.size()) + ".";
    const bool first_said = std::any_of(quiz.begin(), quiz.end(), [](const std::string& line) {
      return line.rfind("Right at the first attempt: ", 0) == 0;
    });
    if (first_said && std::find(quiz.begin(), quiz.end(), first) == quiz.end())
      problem("README.md",
              "its first-attempt score is not answers.json's (" + in_quotes(first) + ")");
    // The report's answer per question, by number.
    std::vector<std::string> said(list.size());
    int at = 0;
    for (const std::string& line : quiz) {
      std::string rest;
      if (const int n = numbered(line, &rest); n > 0) at = n;
      if (at < 1 || size_t(at) > said.size() || !said[size_t(at) - 1].empty()) continue;
      if (line.rfind("   - Answer: ", 0) == 0) said[size_t(at) - 1] = line.substr(13);
      if (line == "   - Not answered.") said[size_t(at) - 1] = "-";
    }
    for (size_t q = 0; q < list.size(); ++q) {
      const json& entry = list[q];
      if (!entry.is_object()) continue;
      const std::string question = text_of(entry, "question");
      const json answer = entry.value("answer", json());
      const bool right = entry.value("correct", json()) == json(true);
      const std::string given = answer.is_string() ? report_line(answer.get<std::string>()) : "";
      const std::string reported = said[q];
      std::string report_answer = "not answered", report_mark;
      if (!reported.empty() && reported != "-") {
        const size_t dash = reported.find(" — **");
        report_answer = in_quotes(reported.substr(0, dash));
        report_mark = reported.find("**right**") != std::string::npos ? "right" : "wrong";
      }
      const std::string json_answer =
          answer.is_null() ? std::string("not answered") : in_quotes(given);
      const bool agrees = answer.is_null() ? reported == "-"
                                           : report_answer == in_quotes(given) &&
                                                 report_mark == (right ? "right" : "wrong");
      if (reported.empty())
        problem("README.md", "does not report the answer to " + in_quotes(question) +
                                 ", which answers.json gives as " + json_answer);
      else if (!agrees)
        problem(
            "README.md",
            "reports the answer to " + in_quotes(question) + " as " + report_answer +
                (report_mark.empty() ? "" : " (" + report_mark + ")") +
                ", but answers.json gives " + json_answer +
                (answer.is_null() ? "" : std::string(" (") + (right ? "right" : "wrong") + ")"));
    }
  }

  // "## Questions": each item, then its answer on the next line but one, or "Not answered.".
  void check_written() {
    const json list = answers_.value("written", json());
    if (!list.is_array() || list.empty()) return;
    const std::vector<std::string> questions = section(readme_, "## Questions");
    std::vector<std::string> said(list.size());
    for (size_t i = 0; i < questions.size(); ++i) {
      std::string rest;
      const int n = numbered(questions[i], &rest);
      if (n < 1 || size_t(n) > said.size() || i + 2 >= questions.size()) continue;
      const std::string& answer = questions[i + 2];
      said[size_t(n) - 1] = answer.rfind("   ", 0) == 0 ? answer.substr(3) : answer;
    }
    for (size_t q = 0; q < list.size(); ++q) {
      const json& entry = list[q];
      if (!entry.is_object()) continue;
      const json answer = entry.value("answer", json());
      const std::string given = answer.is_string() && !answer.get<std::string>().empty()
                                    ? report_line(answer.get<std::string>())
                                    : "Not answered.";
      if (said[q] != given)
        problem("README.md", "gives the written answer to " +
                                 in_quotes(text_of(entry, "question")) + " as " +
                                 (said[q].empty() ? std::string("nothing") : in_quotes(said[q])) +
                                 ", but answers.json as " + in_quotes(given));
    }
  }

  fs::path dir_;
  const json& manifest_;
  const json& answers_;
  const json& machine_;
  std::vector<std::string> readme_;
  std::vector<HandInProblem> problems_;
};

}  // namespace

std::vector<HandInProblem> hand_in_disagreements(const fs::path& dir, const json& manifest,
                                                 const json& answers, const json& machine,
                                                 const std::vector<LabResultsTable>& tables) {
  return Agreement(dir, manifest, answers, machine).run(tables);
}

}  // namespace gpulab
