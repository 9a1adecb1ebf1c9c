// A lab's hand-in folder: the report a teacher reads, the tables, the quiz and the machine.
#include "engine/labs/lab_hand_in.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <system_error>

#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/labs/hand_in_manifest.hpp"
#include "engine/labs/lab_charts.hpp"
#include "engine/labs/lab_progress.hpp"
#include "engine/labs/matmul_chart.hpp"
#include "engine/records/output_paths.hpp"
#include "engine/records/record_reader.hpp"
#include "gpulab/build_config.hpp"

namespace gpulab {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// results.csv for the first table, results-2.csv for the second, ... as `lab run` always named
// them.
std::string table_stem(size_t index) {
  return index == 0 ? "results" : "results-" + std::to_string(index + 1);
}

// Under the tables, when GPU experiments were skipped and no reference run stood in: which ones
// and why each ("two gpus" on a machine of one GPU, every GPU row on a machine without one), so
// an empty row is never read as a machine without a GPU when it had one. Empty when none was.
std::string skipped_gpu_note(const Lab& lab, const std::vector<LabRunResult>& results) {
  std::string listed;
  int count = 0;
  for (const auto& r : results) {
    const LabExperiment* e = lab.experiment(r.experiment);
    if (e == nullptr || !e->needs_gpu() || r.skipped.empty() || !r.recorded_on.empty()) continue;
    std::string why = r.skipped;
    if (why.rfind("skipped: ", 0) == 0) why.erase(0, 9);
    listed += std::string(count++ ? "; " : "") + "\"" + r.experiment + "\" (" + why + ")";
  }
  if (count == 0) return "";
  return std::string(count == 1 ? "A GPU experiment was" : "GPU experiments were") +
         " skipped on this machine, and no reference run recorded on a GPU ships with gpulab " +
         (count == 1 ? "for it: " : "for them: ") + listed +
         ". Run the lab on a machine with the GPUs they need to fill those rows.\n";
}

// What a row filled by a reference run (engine/labs/reference_runs) is, under every table that
// has one: never read as the learner's own measurement.
bool any_reference(const std::vector<LabRunResult>& results) {
  for (const auto& r : results)
    if (!r.recorded_on.empty()) return true;
  return false;
}

const char* kReferenceNote =
    "Rows whose note says \"recorded on ...\" are reference runs: recorded on that GPU, on that "
    "day, and shipped with gpulab, shown where this machine could not run the experiment. They "
    "are not measurements of this machine, and no speedup is taken between them and its runs.\n";

// A name a hand-in writes: README.md, answers.json, machine.json, manifest.json,
// results[-N].csv|md, chart-N-KIND.png|svg|csv; and runs/ (where `lab run` records its runs) and
// reference-runs/.
bool hand_in_name(const std::string& name, bool is_folder) {
  if (is_folder) return name == kHandInRuns || name == kHandInReferenceRuns;
  if (name == "README.md" || name == "answers.json" || name == "machine.json" ||
      name == kManifestFile)
    return true;
  auto ends_with = [&](const std::string& tail) {
    return name.size() > tail.size() &&
           name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (name.rfind("results", 0) == 0) return ends_with(".csv") || ends_with(".md");
  if (name.rfind("chart-", 0) == 0)
    return ends_with(".png") || ends_with(".svg") || ends_with(".csv");
  return false;
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f GiB", bytes / (1024.0 * 1024 * 1024));
  return text;
}

std::string gpu_text(const GpuInfo& g) {
  std::string text = "GPU " + std::to_string(g.index) + ": " + g.name;
  if (g.memory_bytes > 0) text += ", " + gib(g.memory_bytes);
  if (g.compute_major > 0)
    text += ", compute capability " + std::to_string(g.compute_major) + "." +
            std::to_string(g.compute_minor);
  text += ", driver " + (g.driver_version.empty() ? std::string("unknown") : g.driver_version);
  text +=
      ", CUDA runtime " + (g.runtime_version.empty() ? std::string("unknown") : g.runtime_version);
  return text;
}

// A cell or a line of the report: "|" would end a table cell, a newline the line.
std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\n' ? ' ' : c;
  return out;
}

int right_choice(const QuizQuestion& q) {
  for (size_t k = 0; k < q.choices.size(); ++k)
    if (q.choices[k].correct) return int(k);
  return -1;
}

int answer_at(const LabHandIn& h, size_t question) {
  return question < h.answers.size() ? h.answers[question] : -1;
}

int choice_of(const QuizQuestion& q, const std::string& text) {
  for (size_t k = 0; k < q.choices.size(); ++k)
    if (q.choices[k].text == text) return int(k);
  return -1;
}

}  // namespace

void add_record_answers(LabHandIn& h, const Lab& lab, const LabRecord* record) {
  h.answers = quiz_answers(lab, record);
  h.attempts.clear();
  for (const QuizQuestion& q : lab.quiz) h.attempts.push_back(quiz_attempts(record, q.question));
  h.written.clear();
  if (record)
    for (const std::string& question : lab.questions)
      if (const auto w = record->written.find(question); w != record->written.end())
        h.written[question] = w->second;
}

std::vector<std::vector<QuizAttempt>> hand_in_attempts(const Lab& lab, const LabHandIn& h) {
  std::vector<std::vector<QuizAttempt>> all;
  for (size_t q = 0; q < lab.quiz.size(); ++q) {
    std::vector<QuizAttempt> attempts;
    if (q < h.attempts.size()) attempts = h.attempts[q];
    const int choice = answer_at(h, q);
    // The final answer is the last attempt: one given without attempts (--answers) is the only one.
    if (choice >= 0 &&
        (attempts.empty() || attempts.back().answer != lab.quiz[q].choices[size_t(choice)].text))
      attempts.push_back({lab.quiz[q].choices[size_t(choice)].text, ""});
    all.push_back(std::move(attempts));
  }
  return all;
}

int first_attempt_score(const Lab& lab, const LabHandIn& h) {
  const auto all = hand_in_attempts(lab, h);
  int right = 0;
  for (size_t q = 0; q < lab.quiz.size(); ++q)
    if (!all[q].empty()) {
      const int choice = choice_of(lab.quiz[q], all[q].front().answer);
      right += choice >= 0 && grade(lab.quiz[q], choice).correct;
    }
  return right;
}

std::string hand_in_table_file(size_t table, const std::string& format) {
  return table_stem(table) + "." + format;
}

std::string hand_in_chart_file(const Lab& lab, size_t chart, const std::string& format) {
  return "chart-" + std::to_string(chart + 1) + "-" + lab.charts.at(chart).kind + "." + format;
}

void check_hand_in_folder(const fs::path& dir, const Lab& lab, const std::string& flag) {
  // Not a file, not a run's folder, writable or creatable: as for a run's --out.
  check_run_folder(dir, flag);
  std::error_code error;
  if (!fs::is_directory(dir, error)) return;  // made when written
  auto refuse = [&](const std::string& why) {
    throw OutputRefused(flag + " " + dir.string() + ": " + why +
                        "; give an empty or new folder for the hand-in");
  };
  bool empty = true;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    empty = false;
    const std::string name = entry.path().filename().string();
    std::error_code e;
    // An earlier hand-in's README.md linked elsewhere had its target overwritten.
    if (entry.is_symlink(e))
      refuse("holds " + name + ", a link to " + fs::read_symlink(entry.path(), e).string() +
             ", and a hand-in never writes through a link out of its folder");
    if (!hand_in_name(name, entry.is_directory(e)))
      refuse("holds " + name + ", which is not part of a hand-in of \"" + lab.title + "\"");
  }
  if (error) refuse("cannot be read (" + error.message() + ")");
  if (empty) return;
  // Files of a hand-in's names: replaced only when they are this lab's hand-in.
  std::string text, format, other;
  try {
    if (!read_record_file(dir / "answers.json", kMaxRunJsonBytes, &text))
      refuse("holds files named as a hand-in's, but no answers.json says whose");
    const json answers = json::parse(text);
    if (answers.is_object()) {
      format = answers.value("format", "");
      other = answers.value("lab", "");
    }
  } catch (const json::exception&) {
    refuse("its answers.json is not a hand-in's (it is not JSON, or not a hand-in's shape)");
  } catch (const RecordError& e) {
    refuse(std::string("its answers.json cannot be read (") + e.what() + ")");
  }
  if (format != kHandInFormat && format != kHandInFormatV1)
    refuse("its answers.json is not a hand-in's (no \"format\": \"" + std::string(kHandInFormat) +
           "\")");
  if (other != lab.name)
    refuse("holds the hand-in of another lab (\"" + other + "\"), which it would overwrite");
}

std::vector<int> read_given_answers(const fs::path& file, const Lab& lab, const std::string& flag) {
  const std::string where = flag + " " + file.string();
  std::string text;
  json given;
  try {
    if (!read_record_file(file, kMaxRunJsonBytes, &text))
      throw ConfigError(where + ": no such file; give a hand-in's answers.json");
    given = json::parse(text);
  } catch (const json::exception& e) {
    throw ConfigError(where + ": not JSON (" + e.what() + ")");
  } catch (const RecordError& e) {
    throw ConfigError(where + ": " + e.what());
  }
  const json* list = given.is_object() && given.contains("answers") ? &given["answers"] : nullptr;
  if (!list || !list->is_array())
    throw ConfigError(where +
                      ": expected {\"answers\": [{\"question\": ..., \"answer\": ...}]}, "
                      "as a hand-in's answers.json has");
  LabRecord record;
  for (const json& entry : *list) {
    if (!entry.is_object() || !entry.value("question", json()).is_string())
      throw ConfigError(where + ": each answer needs its \"question\" as text");
    const std::string question = entry["question"].get<std::string>();
    const json answer = entry.value("answer", json());
    if (answer.is_null()) continue;  // not answered
    const auto q = std::find_if(lab.quiz.begin(), lab.quiz.end(),
                                [&](const QuizQuestion& x) { return x.question == question; });
    if (q == lab.quiz.end())
      throw ConfigError(where + ": the question \"" + question + "\" is not in \"" + lab.title +
                        "\"");
    std::string choices;
    bool found = false;
    for (const QuizChoice& c : q->choices) {
      choices += (choices.empty() ? "\"" : ", \"") + c.text + "\"";
      found |= answer.is_string() && c.text == answer.get<std::string>();
    }
    if (!found)
      throw ConfigError(where + ": the answer " + answer.dump() + " to \"" + question +
                        "\" is not one of its choices (" + choices + ")");
    record.answers[question] = answer.get<std::string>();
  }
  return quiz_answers(lab, &record);
}

std::map<std::string, std::string> read_given_written(const fs::path& file, const Lab& lab,
                                                      const std::string& flag) {
  const std::string where = flag + " " + file.string();
  std::string text;
  json given;
  try {
    if (!read_record_file(file, kMaxRunJsonBytes, &text))
      throw ConfigError(where + ": no such file; give a JSON file of your answers");
    given = json::parse(text);
  } catch (const json::exception& e) {
    throw ConfigError(where + ": not JSON (" + e.what() + ")");
  } catch (const RecordError& e) {
    throw ConfigError(where + ": " + e.what());
  }
  std::map<std::string, std::string> written;
  if (!given.is_object() || !given.contains("written")) return written;
  const json& list = given["written"];
  if (!list.is_array())
    throw ConfigError(where +
                      ": its \"written\" is not a list; give [{\"question\": ..., "
                      "\"answer\": ...}], as a hand-in's answers.json has it");
  for (const json& entry : list) {
    if (!entry.is_object() || !entry.value("question", json()).is_string())
      throw ConfigError(where + ": each written answer needs its \"question\" as text");
    const std::string question = entry["question"].get<std::string>();
    if (std::find(lab.questions.begin(), lab.questions.end(), question) == lab.questions.end()) {
      std::string listed;
      for (const std::string& q : lab.questions)
        listed += (listed.empty() ? "\"" : ", \"") + q + "\"";
      throw ConfigError(where + ": the question \"" + question + "\" is not one of \"" + lab.title +
                        "\"'s questions (" +
                        (listed.empty() ? std::string("it has none") : listed) + ")");
    }
    const json answer = entry.value("answer", json());
    if (answer.is_null()) continue;  // not answered
    if (!answer.is_string())
      throw ConfigError(where + ": the answer to \"" + question + "\" is " + answer.dump() +
                        ", not text");
    written[question] = answer.get<std::string>();
  }
  return written;
}

std::string hand_in_readme(const Lab& lab, const LabHandIn& h) {
  std::string md = "# " + lab.title + "\n\n";
  if (!h.learner.empty()) md += "Handed in by **" + one_line(h.learner) + "**.\n\n";
  md += "Lab `" + lab.name + "`, handed in " + h.date + " from " + h.made_by +
        ". Every figure below was measured on the machine named here" +
        (any_reference(h.results) ? ", except reference runs, marked \"recorded on ...\"" : "") +
        "; none is invented.\n";

  md += "\n## Machine\n\n";
  const CpuInfo& cpu = h.machine.cpu;
  md += "- CPU: " + (cpu.model.empty() ? std::string("unknown") : cpu.model) + ", " +
        std::to_string(cpu.logical_cores) + " logical cores" +
        (cpu.simd.empty() ? "" : " (" + cpu.simd + ")") + "\n";
  if (h.machine.gpus.empty())
    md += "- GPU: none (" +
          (h.machine.no_gpu_reason.empty() ? std::string("none found") : h.machine.no_gpu_reason) +
          ")\n";
  for (const GpuInfo& g : h.machine.gpus) md += "- " + gpu_text(g) + "\n";
  md += "- gpulab " + std::string(GPULAB_VERSION) + (h.host.empty() ? "" : ", on host " + h.host) +
        "\n";
  bool any_run = false;
  for (const LabRunResult& r : h.results) any_run |= !r.device.empty();
  if (any_run) {
    md +=
        "\nThe runs, as their records name their devices:\n\n| experiment | device | host |\n"
        "| --- | --- | --- |\n";
    for (const LabRunResult& r : h.results)
      if (!r.device.empty())
        md += "| " + r.experiment + " | " + one_line(r.device) + " | " +
              (r.recorded_on.empty() ? r.host : "reference run, recorded on " + r.recorded_on) +
              " |\n";
  }

  md += "\n## Results\n";
  bool flagged = false;
  for (size_t t = 0; t < lab.tables.size(); ++t) {
    const LabResultsTable table = lab_results_table(lab, lab.tables[t], h.results);
    md += '\n';  // one append at a time: GCC 12 misreads "\n" + a temporary (-Wrestrict)
    md += to_markdown(table);
    for (bool f : table.flagged) flagged |= f;
  }
  if (lab.tables.empty()) md += "\nThis lab has no results table.\n";
  if (flagged)
    md +=
        "\n⚠ marks a run whose figures are not its own alone, were cut short or disagree with "
        "each other: it shared its hardware, other programs loaded the machine while it ran, it "
        "stopped early, or its record was edited or damaged. Its "
        "note says which; run it again alone for a clean figure.\n";
  if (const std::string note = skipped_gpu_note(lab, h.results); !note.empty()) md += "\n" + note;
  if (any_reference(h.results)) md += std::string("\n") + kReferenceNote;

  if (!lab.charts.empty() || h.matmul_chart) md += "\n## Charts\n";
  if (h.matmul_chart) {
    const std::string stem = kMatmulChartStem;
    md += "\n### " + std::string(kMatmulChartTitle) + " (both axes logarithmic)\n\n![" +
          kMatmulChartTitle + "](" + stem + ".png)\n\n[SVG](" + stem + ".svg)\n";
  }
  for (size_t c = 0; c < lab.charts.size(); ++c) {
    const LabChart& chart = lab.charts[c];
    const std::string title = chart.title.empty() ? chart.kind : chart.title;
    md += "\n### " + title + "\n\n";
    const std::string missing = c < h.charts_missing.size() ? h.charts_missing[c] : "not drawn";
    const bool points = !lab_chart_results(lab, c, h.results).empty();
    if (missing.empty())
      md += "![" + title + "](" + hand_in_chart_file(lab, c, "png") + ")\n\n[SVG](" +
            hand_in_chart_file(lab, c, "svg") + ")" +
            (points ? " · [its points (CSV)](" + hand_in_chart_file(lab, c, "csv") + ")" : "") +
            "\n";
    else
      md += "Not drawn: " + missing + "." +
            (points ? " Its points: [" + hand_in_chart_file(lab, c, "csv") + "](" +
                          hand_in_chart_file(lab, c, "csv") + ")."
                    : "") +
            "\n";
  }

  if (!lab.quiz.empty()) {
    const auto attempts = hand_in_attempts(lab, h);
    std::vector<int> answers;
    int answered = 0;
    for (size_t q = 0; q < lab.quiz.size(); ++q) {
      answers.push_back(answer_at(h, q));
      answered += answers.back() >= 0;
    }
    md += "\n## Quiz: " + std::to_string(quiz_score(lab, answers)) + " of " +
          std::to_string(lab.quiz.size()) + " right (" + std::to_string(answered) + " of " +
          std::to_string(lab.quiz.size()) + " answered)\n";
    md += "\nRight at the first attempt: " + std::to_string(first_attempt_score(lab, h)) + " of " +
          std::to_string(lab.quiz.size()) + ".\n";
    for (size_t q = 0; q < lab.quiz.size(); ++q) {
      const QuizQuestion& question = lab.quiz[q];
      md += '\n';
      md += std::to_string(q + 1) + ". " + one_line(question.question) + "\n\n";
      const int choice = answers[q];
      const int right = right_choice(question);
      if (choice < 0) {
        md += "   - Not answered.\n";
      } else {
        const QuizFeedback feedback = grade(question, choice);
        md += "   - Answer: " + one_line(question.choices[size_t(choice)].text) + " — " +
              (feedback.correct ? "**right**" : "**wrong**") + ". " + one_line(feedback.why) + "\n";
      }
      // Only after a wrong answer, as the window shows reasons only once a choice is picked: a
      // hand-in read before the quiz is done gives nothing away.
      if (choice >= 0 && choice != right && right >= 0)
        md += "   - The right answer: " + one_line(question.choices[size_t(right)].text) + ". " +
              one_line(question.choices[size_t(right)].why) + "\n";
      if (const auto& tries = attempts[q]; tries.size() > 1) {
        std::string listed;
        for (const QuizAttempt& a : tries)
          listed += (listed.empty() ? "" : "; ") + one_line(a.answer);
        md += "   - " + std::to_string(tries.size()) + " attempts: " + listed + "\n";
      }
    }
  }
  if (!lab.questions.empty()) {
    md += "\n## Questions\n";
    for (size_t q = 0; q < lab.questions.size(); ++q) {
      const auto w = h.written.find(lab.questions[q]);
      md += '\n';
      md += std::to_string(q + 1) + ". " + one_line(lab.questions[q]) + "\n\n   " +
            (w == h.written.end() || w->second.empty() ? std::string("Not answered.")
                                                       : one_line(w->second)) +
            "\n";
    }
  }
  return md;
}

std::string hand_in_answers_json(const Lab& lab, const LabHandIn& h) {
  const auto attempts = hand_in_attempts(lab, h);
  json questions = json::array();
  std::vector<int> answers;
  int answered = 0;
  for (size_t q = 0; q < lab.quiz.size(); ++q) {
    const QuizQuestion& question = lab.quiz[q];
    const int choice = answer_at(h, q);
    answers.push_back(choice);
    const int right = right_choice(question);
    json entry = {{"question", question.question}, {"answer", nullptr}, {"correct", false}};
    if (choice >= 0) {
      const QuizFeedback feedback = grade(question, choice);
      entry["answer"] = question.choices[size_t(choice)].text;
      entry["correct"] = feedback.correct;
      entry["why"] = feedback.why;
      if (right >= 0) entry["right_answer"] = question.choices[size_t(right)].text;
      ++answered;
    }
    json tries = json::array();
    for (const QuizAttempt& a : attempts[q]) {
      const int picked = choice_of(question, a.answer);
      tries.push_back({{"answer", a.answer},
                       {"time", a.time.empty() ? json() : json(a.time)},
                       {"correct", picked >= 0 && grade(question, picked).correct}});
    }
    entry["attempts"] = tries;
    entry["first_correct"] = !tries.empty() && tries.front()["correct"].get<bool>();
    questions.push_back(entry);
  }
  json written = json::array();
  int written_answered = 0;
  for (const std::string& question : lab.questions) {
    const auto w = h.written.find(question);
    const bool given = w != h.written.end() && !w->second.empty();
    written_answered += given;
    written.push_back({{"question", question}, {"answer", given ? json(w->second) : json()}});
  }
  json j = {
      {"format", kHandInFormat},      {"lab", lab.name},      {"title", lab.title},
      {"source", lab.source},         {"handed_in", h.date},  {"score", quiz_score(lab, answers)},
      {"questions", lab.quiz.size()}, {"answered", answered}, {"answers", questions}};
  j["learner"] = h.learner;
  j["first_attempt_score"] = first_attempt_score(lab, h);
  j["written"] = written;
  j["written_answered"] = written_answered;
  return j.dump(2) + "\n";
}

std::string hand_in_machine_json(const LabHandIn& h) {
  const CpuInfo& cpu = h.machine.cpu;
  json gpus = json::array();
  for (const GpuInfo& g : h.machine.gpus) {
    json gpu = gpu_info_json(g);
    gpu["index"] = g.index;
    gpus.push_back(gpu);
  }
  json runs = json::array();
  for (const LabRunResult& r : h.results)
    if (!r.run_dir.empty() || !r.device.empty())
      runs.push_back({{"experiment", r.experiment},
                      {"dir", r.run_dir.string()},
                      {"device", r.device},
                      {"host", r.host},
                      {"flags", r.flags},
                      {"recorded_on", r.recorded_on}});  // "" for this machine's own runs
  json j = {{"host", h.host},
            {"gpulab_version", GPULAB_VERSION},
            {"cpu",
             {{"model", cpu.model},
              {"logical_cores", cpu.logical_cores},
              {"simd", cpu.simd},
              {"blas", cpu.blas}}},
            {"gpus", gpus},
            {"runs", runs}};
  if (h.machine.gpus.empty()) j["no_gpu_reason"] = h.machine.no_gpu_reason;
  return j.dump(2) + "\n";
}

namespace {

// Each chart's points beside its pictures, built from the runs as copied into the hand-in, as
// `lab verify` rebuilds them: chart-N-KIND.csv, and chart-matmul.csv from the benchmarks'
// timings. A chart without runs has none; a previous hand-in's is removed.
template <class Write>
void write_chart_points(const fs::path& dir, const Lab& lab, const LabHandIn& h,
                        const std::vector<std::string>& folders, Write& write) {
  std::error_code error;
  std::map<size_t, RunData> loaded;  // by result: read once, however many charts draw it
  for (size_t c = 0; c < lab.charts.size(); ++c) {
    const std::string file = hand_in_chart_file(lab, c, "csv");
    std::vector<const RunData*> runs;
    for (size_t i : lab_chart_results(lab, c, h.results)) {
      if (folders.at(i).empty()) continue;
      auto run = loaded.find(i);
      if (run == loaded.end()) {
        run = loaded.emplace(i, load_run(dir / folders[i])).first;
        run->second.recorded_on = h.results[i].recorded_on;
      }
      runs.push_back(&run->second);
    }
    if (runs.empty()) {
      fs::remove(dir / file, error);
      continue;
    }
    write(file, chart_points_csv(lab_chart(lab, c, runs)));
  }
  const std::string matmul = kMatmulChartStem + std::string(".csv");
  if (const Chart chart = matmul_chart(lab, h.results); !chart.runs.empty())
    write(matmul, chart_points_csv(chart));
  else
    fs::remove(dir / matmul, error);
}

}  // namespace

std::vector<fs::path> write_hand_in(const fs::path& dir, const Lab& lab, const LabHandIn& h) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw RecordError(dir.string() + ": could not be made (" + error.message() + ")");
  std::vector<fs::path> written;
  auto write = [&](const std::string& name, const std::string& text) {
    write_file_atomically(dir / name, text, AtLink::replace);  // never through a link
    written.push_back(dir / name);
  };
  // answers.json first: from then on the folder says whose hand-in it is, so a `lab run` cut short
  // can be run again into it.
  write("answers.json", hand_in_answers_json(lab, h));
  write("machine.json", hand_in_machine_json(h));
  for (size_t t = 0; t < lab.tables.size(); ++t) {
    const LabResultsTable table = lab_results_table(lab, lab.tables[t], h.results);
    write(table_stem(t) + ".csv", to_csv(table));
    std::string markdown = "# " + lab.title + "\n\n" + to_markdown(table);
    if (const std::string note = skipped_gpu_note(lab, h.results); !note.empty())
      markdown += "\n" + note;
    if (any_reference(h.results)) markdown += std::string("\n") + kReferenceNote;
    write(table_stem(t) + ".md", markdown);
  }
  for (size_t c = 0; c < lab.charts.size(); ++c) {
    const bool drawn = c < h.charts_missing.size() && h.charts_missing[c].empty();
    for (const char* format : {"png", "svg"})
      if (drawn)
        written.push_back(dir / hand_in_chart_file(lab, c, format));
      else
        fs::remove(dir / hand_in_chart_file(lab, c, format), error);  // a previous hand-in's
  }
  for (const char* format : {".png", ".svg"})
    if (h.matmul_chart)
      written.push_back(dir / (kMatmulChartStem + std::string(format)));
    else
      fs::remove(dir / (kMatmulChartStem + std::string(format)), error);  // a previous hand-in's
  write("README.md", hand_in_readme(lab, h));
  // The runs, then the manifest over everything: the last file written, so its hashes are of
  // the files as they stand.
  const std::vector<std::string> folders = copy_hand_in_runs(dir, h.results);
  write_chart_points(dir, lab, h, folders, write);
  write_manifest(dir, lab, h.learner, h.date, manifest_experiments(h.results, folders));
  written.push_back(dir / kManifestFile);
  return written;
}

}  // namespace gpulab
