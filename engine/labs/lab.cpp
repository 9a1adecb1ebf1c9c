// Reading a lab's text: the header, the fences, and each declared block, checked with the same
// validation a setup or `gpulab-cli train` gets.
#include "engine/labs/lab.hpp"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "engine/base/errors.hpp"
#include "engine/base/flag_list.hpp"
#include "engine/base/sha256.hpp"
#include "engine/base/text.hpp"
#include "engine/devices/matmul_bench.hpp"
#include "engine/inside/inference_timing.hpp"
#include "engine/labs/markdown_images.hpp"
#include "engine/training/backend_factory.hpp"
#include "engine/training/setting_bounds.hpp"
#include "gpulab/build_config.hpp"

namespace gpulab {
namespace {

using json = nlohmann::json;

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return std::string(s.substr(first, last - first + 1));
}

// A lab file's list: as a flag's, but empty entries ("a, b,") are only untidy here.
std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> items = split_flag_list(value);
  std::erase_if(items, [](const std::string& item) { return item.empty(); });
  return items;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// A "key: value" line; false for a line without a colon after a key.
bool split_key_value(const std::string& line, std::string& key, std::string& value) {
  const auto colon = line.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  key = trim(std::string_view(line).substr(0, colon));
  value = trim(std::string_view(line).substr(colon + 1));
  return !key.empty() && key.find(' ') == std::string::npos;
}

class Reader {
 public:
  Reader(std::string source, std::filesystem::path base_dir, Lab& lab)
      : source_(std::move(source)), base_dir_(std::move(base_dir)), lab_(lab) {}

  void problem(int line, std::string what) {
    lab_.problems.push_back({source_, line, std::move(what)});
  }

  void header(const std::vector<std::string>& lines, size_t& i);
  void parse_rubric(int line, const std::string& value);
  void experiment(int line, const std::vector<std::pair<int, std::string>>& body);
  void table(int line, const std::vector<std::pair<int, std::string>>& body);
  void chart(int line, const std::vector<std::pair<int, std::string>>& body);
  void quiz(int line, const std::vector<std::pair<int, std::string>>& body);
  void check_references();

 private:
  // The key: value lines of a block, each key once; blank lines skipped.
  std::vector<std::tuple<int, std::string, std::string>> key_values(
      const std::vector<std::pair<int, std::string>>& body, const char* block);
  void check_names(int line, const std::vector<std::string>& names, const char* block,
                   bool training_only);

  struct Pending {
    int line;
    std::vector<std::string> names;
    const char* block;
    bool training_only;
  };
  std::string source_;
  std::filesystem::path base_dir_;
  Lab& lab_;
  std::vector<Pending> pending_;
};

// "quiz-first 1, quiz-final 1, written 2, verified 5": each part a known item and a number of
// points from 0 to 1000.
void Reader::parse_rubric(int line, const std::string& value) {
  lab_.rubric.stated = true;
  for (const std::string& part : split_list(value)) {
    const size_t space = part.rfind(' ');
    const std::string item = space == std::string::npos ? part : trim(part.substr(0, space));
    const std::string number = space == std::string::npos ? "" : part.substr(space + 1);
    double points = -1;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), points);
    double* slot = item == "quiz-first"   ? &lab_.rubric.quiz_first
                   : item == "quiz-final" ? &lab_.rubric.quiz_final
                   : item == "written"    ? &lab_.rubric.written
                   : item == "verified"   ? &lab_.rubric.verified
                                          : nullptr;
    if (!slot)
      problem(line, "rubric: \"" + part +
                        "\" names no item of the rubric; give quiz-first, quiz-final, written "
                        "or verified, each with its points (\"quiz-final 1, verified 5\")");
    else if (ec != std::errc() || end != number.data() + number.size() || !(points >= 0) ||
             points > 1000)
      problem(line,
              "rubric: \"" + part + "\": give " + item + "'s points as a number from 0 to 1000");
    else
      *slot = points;
  }
}

void Reader::header(const std::vector<std::string>& lines, size_t& i) {
  while (i < lines.size() && trim(lines[i]).empty()) ++i;
  if (i >= lines.size() || trim(lines[i]) != "---") {
    problem(int(std::min(i, lines.size() - 1)) + 1,
            "a lab starts with a header: a line \"---\", then title:, minutes: and hardware:, "
            "then \"---\"");
    i = 0;
    return;
  }
  const int start = int(i) + 1;
  bool closed = false, minutes_given = false;
  for (++i; i < lines.size(); ++i) {
    const std::string line = trim(lines[i]);
    if (line == "---") {
      closed = true;
      ++i;
      break;
    }
    if (line.empty()) continue;
    std::string key, value;
    const int n = int(i) + 1;
    if (!split_key_value(line, key, value)) {
      problem(n, "\"" + line + "\" is not a \"key: value\" line of the header");
    } else if (key == "title") {
      lab_.title = value;
    } else if (key == "minutes") {
      minutes_given = true;
      int minutes = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), minutes);
      if (ec != std::errc() || end != value.data() + value.size() || minutes < 1)
        problem(n, "minutes: \"" + value + "\" is not a whole number of minutes");
      lab_.minutes = minutes;
    } else if (key == "quiz-attempts") {
      int attempts = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), attempts);
      if (ec != std::errc() || end != value.data() + value.size() || attempts < 1)
        problem(n, "quiz-attempts: \"" + value +
                       "\" is not a whole number from 1 (leave it out for any number of answers)");
      lab_.quiz_attempts = std::max(attempts, 0);
    } else if (key == "rubric") {
      parse_rubric(n, value);
    } else if (key == "hardware") {
      lab_.hardware = split_list(value);
      for (const auto& h : lab_.hardware)
        if (std::find(lab_hardware_kinds().begin(), lab_hardware_kinds().end(), h) ==
            lab_hardware_kinds().end())
          problem(n, "hardware: unknown \"" + h + "\"; use " + join(lab_hardware_kinds()));
    } else {
      problem(n, "unknown header key \"" + key +
                     "\"; the header has title, minutes, hardware, quiz-attempts and rubric");
    }
  }
  if (!closed) problem(start, "the header is not closed: end it with a line \"---\"");
  if (lab_.title.empty()) problem(start, "the header has no title:");
  if (!minutes_given && closed) problem(start, "the header has no minutes:");
  if (lab_.hardware.empty()) problem(start, "the header has no hardware: (cpu, gpu, multi-gpu)");
}

std::vector<std::tuple<int, std::string, std::string>> Reader::key_values(
    const std::vector<std::pair<int, std::string>>& body, const char* block) {
  std::vector<std::tuple<int, std::string, std::string>> out;
  std::set<std::string> seen;
  for (const auto& [n, raw] : body) {
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    std::string key, value;
    if (!split_key_value(line, key, value)) {
      problem(n, "\"" + line + "\" is not a \"key: value\" line of a " + block + " block");
      continue;
    }
    if (!seen.insert(key).second) {
      problem(n, "\"" + key + "\" is given twice in one " + block + " block");
      continue;
    }
    out.emplace_back(n, key, value);
  }
  return out;
}

// The training keys an experiment takes: the CLI flag's spelling, and the setup JSON's name
// ("steps" is "max_steps" there). Either spelling is accepted; a value is converted to the JSON
// type, then read by train_config_from_json, the reader of setups and run.json.
enum class ValueKind { Whole, Number, OnOff, Text, Percent };
struct TrainKey {
  const char* flag;
  const char* json_key;
  ValueKind kind;
};
const TrainKey kTrainKeys[] = {
    {"epochs", "epochs", ValueKind::Whole},
    {"steps", "max_steps", ValueKind::Whole},
    {"batch", "batch", ValueKind::Whole},
    {"optimizer", "optimizer", ValueKind::Text},
    {"lr", "lr", ValueKind::Number},
    {"momentum", "momentum", ValueKind::Number},
    {"weight-decay", "weight_decay", ValueKind::Number},
    {"schedule", "schedule", ValueKind::Text},
    {"gamma", "gamma", ValueKind::Number},
    {"seed", "seed", ValueKind::Whole},
    {"shuffle", "shuffle", ValueKind::OnOff},
    {"eval-every", "eval_every", ValueKind::Whole},
    {"target-accuracy", "target_accuracy", ValueKind::Percent},
    {"device", "device", ValueKind::Text},
    {"threads", "threads", ValueKind::Whole},
    {"precision", "precision", ValueKind::Text},
    {"cuda-graph", "cuda_graph", ValueKind::OnOff},
    {"conv", "conv", ValueKind::Text},
    {"replicas", "replicas", ValueKind::Whole},
    {"sync", "sync", ValueKind::Text},
    {"bucket-mb", "bucket_mb", ValueKind::Number},
    {"collective-timeout", "collective_timeout_s", ValueKind::Number},
    {"dist", "dist", ValueKind::Text},
    {"stop-at-accuracy", "stop_at_accuracy", ValueKind::Percent},
    {"data-on", "data_on", ValueKind::Text},
    {"preprocess", "preprocess", ValueKind::Text},
};

const TrainKey* train_key(const std::string& key) {
  for (const auto& k : kTrainKeys)
    if (key == k.flag || key == k.json_key) return &k;
  return nullptr;
}

// The value as the JSON type the setup reader expects; throws ConfigError saying what it wants.
json to_json_value(const TrainKey& k, const std::string& value) {
  switch (k.kind) {
    case ValueKind::Whole: {
      // A setting with a bound is checked as typed: "seed: -1 is out of range: give ...".
      if (const SettingBound* setting = find_setting_bound(k.json_key))
        if (const std::string problem = setting->bound.problem(std::string_view(value));
            !problem.empty())
          throw ConfigError(problem);
      long long v = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || end != value.data() + value.size())
        throw ConfigError("\"" + value + "\" is not a whole number");
      return v;
    }
    case ValueKind::Number:
    case ValueKind::Percent: {
      // "1e400" is out of range, not "not a number".
      if (const SettingBound* setting = find_setting_bound(k.json_key);
          setting && k.kind == ValueKind::Number)
        if (const std::string problem = setting->bound.problem(std::string_view(value));
            !problem.empty())
          throw ConfigError(problem);
      double v = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || end != value.data() + value.size())
        throw ConfigError("\"" + value + "\" is not a number");
      // As on the command line, 99 and 0.99 both mean 99 %.
      if (k.kind == ValueKind::Percent && v > 1.0) v /= 100.0;
      if (const SettingBound* setting = find_setting_bound(k.json_key);
          setting && k.kind == ValueKind::Percent && !setting->bound.problem(json(v)).empty())
        throw ConfigError(value + " is out of range: give " + setting->bound.range_text() +
                          ", or a percentage up to 100");
      return v;
    }
    case ValueKind::OnOff:
      if (value == "on" || value == "yes" || value == "true") return true;
      if (value == "off" || value == "no" || value == "false") return false;
      throw ConfigError("\"" + value + "\" is not on or off");
    case ValueKind::Text:
      return value;
  }
  return value;
}

bool parse_yes_no(const std::string& value, bool& out) {
  if (value == "yes" || value == "true" || value == "on") return out = true, true;
  if (value == "no" || value == "false" || value == "off") return out = false, true;
  return false;
}

void Reader::experiment(int line, const std::vector<std::pair<int, std::string>>& body) {
  LabExperiment e;
  e.line = line;
  e.model_name = "lenet5";  // as `gpulab-cli train`
  int model_line = line, compare_line = 0;
  bool epochs_given = false, steps_given = false, sizes_given = false, train_valid = true;
  std::string sizes_text;  // read once the bench is known: matrix sizes or batch sizes
  int sizes_line = 0;
  TrainOptions& train = e.experiment.train;
  BackendOptions& backend = e.experiment.backend;
  for (const auto& [n, key, value] : key_values(body, "experiment")) {
    if (key == "name") {
      e.name = value;
      // Bounded as a run's name: the experiment names the runs `lab run` makes, and a 5,000-byte
      // name passed `lab check`, then failed `lab run` after part of a hand-in was written.
      if (const std::string bad = name_problem(value); !bad.empty()) problem(n, "name " + bad);
    } else if (key == "baseline") {
      if (!parse_yes_no(value, e.baseline))
        problem(n, "baseline: \"" + value + "\" is not yes or no");
    } else if (key == "compare-to") {
      e.compare_to = value;
      compare_line = n;
    } else if (key == "model") {
      e.model_name = value;
      model_line = n;
    } else if (key == "bench") {
      e.bench = value;
      if (value != "matmul" && value != "inference")
        problem(n, "bench: unknown \"" + value + "\"; the benchmarks are matmul and inference");
    } else if (key == "sizes") {
      sizes_given = true;
      sizes_text = value;
      sizes_line = n;
    } else if (const TrainKey* k = train_key(key)) {
      try {
        // Where the data lives is read by the setup reader where the engine trains from either
        // place; its values are held here too, so a lab names only those two.
        if (std::string(k->json_key) == "data_on" && value != "host" && value != "device")
          throw ConfigError("\"" + value + "\" is not host or device");
        train_config_from_json(json{{k->json_key, to_json_value(*k, value)}}, train, backend);
        epochs_given |= std::string(k->json_key) == "epochs";
        steps_given |= std::string(k->json_key) == "max_steps";
      } catch (const ConfigError& error) {
        problem(n, key + ": " + error.what());
        train_valid = false;  // the checks of the whole would blame what is left
      }
    } else {
      std::string keys = "name, baseline, compare-to, model, bench, sizes";
      for (const auto& t : kTrainKeys) keys += std::string(", ") + t.flag;
      problem(n, "unknown key \"" + key + "\" in an experiment; the keys are " + keys);
    }
  }
  if (e.name.empty()) problem(line, "the experiment has no name: (the row it gets in the table)");
  for (const auto& other : lab_.experiments)
    if (!e.name.empty() && other.name == e.name)
      problem(line, "two experiments are named \"" + e.name + "\"");
  // A step budget without an epoch count runs as many epochs as it needs, as on the command line.
  if (steps_given && !epochs_given) train.epochs = 0;
  backend.batch = train.batch;
  backend.seed = train.seed;
  if (sizes_given) try {
      // An inference benchmark's sizes are batch sizes, as bench inference --batch takes them.
      e.sizes = e.bench == "inference" ? parse_inference_batches(sizes_text)
                                       : parse_matrix_sizes(sizes_text);
    } catch (const ConfigError& error) {
      // A lab has no --batch flag to name: its key is sizes.
      std::string what = error.what();
      if (e.bench == "inference" && what.rfind("--batch: ", 0) == 0) what.erase(0, 9);
      problem(sizes_line, "sizes: " + what);
    }
  if (e.bench == "matmul") {
    if (!sizes_given) problem(line, "a bench: matmul experiment needs sizes: (32, 64, ...)");
  } else if (e.bench == "inference" && !sizes_given) {
    problem(line, "a bench: inference experiment needs sizes: its batch sizes (1, 64, ...)");
  }
  // Training and inference both need the model; a matrix product has none.
  if (e.bench != "matmul") {
    try {
      std::filesystem::path file = e.model_name;
      if (!is_preset(e.model_name) && file.is_relative() && !base_dir_.empty())
        file = base_dir_ / file;
      // A name that is no preset and no .json file is most likely a mistyped preset.
      if (!is_preset(e.model_name) && file.extension() != ".json") preset(e.model_name);
      e.experiment.model = load_model(is_preset(e.model_name) ? e.model_name : file.string());
      plan_model(e.experiment.model);
    } catch (const ConfigError& error) {
      problem(model_line, std::string("model: ") + error.what());
    }
    try {
      if (train_valid) validate(train);
    } catch (const ConfigError& error) {
      problem(line, error.what());
      train_valid = false;
    }
  }
  // A build without CUDA still checks a GPU experiment's settings: the lab is valid, and where it
  // runs without a GPU the run says so and skips it.
  try {
    if (!train_valid) {
      // The backend's checks would repeat the batch's problem.
    } else if (GPULAB_CUDA_ENABLED || cuda_device_index(backend.device) < 0) {
      validate(backend);
    } else {
      parse_cuda_devices(backend.device);
    }
  } catch (const ConfigError& error) {
    problem(line, error.what());
  }
  if (compare_line) check_names(compare_line, {e.compare_to}, "compare-to", false);
  lab_.blocks.push_back({LabBlock::Kind::Experiment, line, {}, {}, int(lab_.experiments.size())});
  lab_.experiments.push_back(std::move(e));
}

void Reader::table(int line, const std::vector<std::pair<int, std::string>>& body) {
  LabTable t;
  t.line = line;
  std::vector<int> name_lines;
  for (const auto& [n, key, value] : key_values(body, "table")) {
    if (key == "columns") {
      t.columns = split_list(value);
      for (const auto& c : t.columns)
        if (std::find(lab_columns().begin(), lab_columns().end(), c) == lab_columns().end())
          problem(n,
                  "columns: unknown column \"" + c + "\"; the columns are " + join(lab_columns()));
    } else if (key == "experiments") {
      t.experiments = split_list(value);
      name_lines.push_back(n);
    } else {
      problem(n, "unknown key \"" + key + "\" in a table; the keys are columns, experiments");
    }
  }
  if (t.columns.empty()) problem(line, "the table has no columns:");
  if (!name_lines.empty()) check_names(name_lines[0], t.experiments, "table", false);
  lab_.blocks.push_back({LabBlock::Kind::Table, line, {}, {}, int(lab_.tables.size())});
  lab_.tables.push_back(std::move(t));
}

void Reader::chart(int line, const std::vector<std::pair<int, std::string>>& body) {
  static const std::vector<std::string> kinds = {"loss",       "accuracy", "step-time",
                                                 "throughput", "gpu",      "speedup"};
  LabChart c;
  c.line = line;
  int names_line = 0;
  for (const auto& [n, key, value] : key_values(body, "chart")) {
    if (key == "kind") {
      c.kind = value;
      if (std::find(kinds.begin(), kinds.end(), value) == kinds.end())
        problem(n, "kind: unknown chart \"" + value + "\"; the charts are " + join(kinds));
    } else if (key == "title") {
      c.title = value;
    } else if (key == "experiments") {
      c.experiments = split_list(value);
      names_line = n;
    } else {
      problem(n, "unknown key \"" + key + "\" in a chart; the keys are kind, title, experiments");
    }
  }
  if (c.kind.empty()) problem(line, "the chart has no kind: (" + join(kinds) + ")");
  if (names_line) check_names(names_line, c.experiments, "chart", true);
  lab_.blocks.push_back({LabBlock::Kind::Chart, line, {}, {}, int(lab_.charts.size())});
  lab_.charts.push_back(std::move(c));
}

// A question, then either "answer: true|false" and "why:", or choices "- [x] text" (right) and
// "- [ ] text" (wrong), each followed by its own "why:" line.
void Reader::quiz(int line, const std::vector<std::pair<int, std::string>>& body) {
  QuizQuestion q;
  q.line = line;
  std::string answer, why;
  int answer_line = 0;
  for (const auto& [n, raw] : body) {
    const std::string text = trim(raw);
    if (text.empty()) continue;
    if (text.rfind("- [", 0) == 0 && text.size() >= 5 && text[4] == ']') {
      const char mark = text[3];
      if (mark != 'x' && mark != 'X' && mark != ' ')
        problem(n, "a choice is \"- [x] text\" (right) or \"- [ ] text\" (wrong)");
      q.choices.push_back({trim(text.substr(5)), mark == 'x' || mark == 'X', {}});
      if (q.choices.back().text.empty()) problem(n, "a choice without text");
      continue;
    }
    std::string key, value;
    if (!split_key_value(text, key, value)) {
      problem(n, "\"" + text +
                     "\" is not part of a quiz: use question:, answer:, why: or "
                     "choices \"- [x] text\" and \"- [ ] text\"");
    } else if (key == "question") {
      q.question = value;
    } else if (key == "answer") {
      answer = value;
      answer_line = n;
      if (value != "true" && value != "false")
        problem(n, "answer: \"" + value +
                       "\" is not true or false (a multiple-choice question "
                       "marks its right choice \"- [x]\")");
    } else if (key == "why") {
      if (!q.choices.empty()) {
        if (!q.choices.back().why.empty()) problem(n, "a choice has two why: lines");
        q.choices.back().why = value;
      } else {
        why = value;
      }
    } else {
      problem(n, "unknown key \"" + key + "\" in a quiz; the keys are question, answer, why");
    }
  }
  if (q.question.empty()) problem(line, "the quiz has no question:");
  if (!answer.empty() && !q.choices.empty())
    problem(answer_line, "a question has answer: (true/false) or choices, not both");
  if (!answer.empty()) {
    if (why.empty()) problem(line, "the true/false question has no why: (the reason, as feedback)");
    q.true_false = true;
    q.choices = {{"True", answer == "true", why}, {"False", answer == "false", why}};
  } else if (q.choices.empty()) {
    problem(line,
            "the quiz has no correct answer: give answer: true|false, or choices with "
            "one \"- [x]\"");
  } else {
    const auto right = std::count_if(q.choices.begin(), q.choices.end(),
                                     [](const QuizChoice& c) { return c.correct; });
    if (right == 0)
      problem(line, "the quiz has no correct answer: mark the right choice \"- [x]\"");
    if (right > 1) problem(line, "the quiz has more than one correct answer; mark one \"- [x]\"");
    if (q.choices.size() < 2)
      problem(line, "a multiple-choice question needs at least two choices");
    for (const auto& c : q.choices)
      if (c.why.empty()) problem(line, "the choice \"" + c.text + "\" has no why: (its feedback)");
  }
  lab_.blocks.push_back({LabBlock::Kind::Quiz, line, {}, {}, int(lab_.quiz.size())});
  lab_.quiz.push_back(std::move(q));
}

void Reader::check_names(int line, const std::vector<std::string>& names, const char* block,
                         bool training_only) {
  // Experiments may be declared after the table that shows them: checked at the end.
  pending_.push_back({line, names, block, training_only});
}

void Reader::check_references() {
  for (const auto& p : pending_)
    for (const auto& name : p.names) {
      const LabExperiment* e = lab_.experiment(name);
      if (!e)
        problem(p.line, std::string("no experiment is named \"") + name + "\" (the " + p.block +
                            " names an experiment by its name:)");
      else if (p.training_only && !e->bench.empty())
        problem(p.line, "\"" + name + "\" is a benchmark; a chart draws training runs");
    }
  const LabExperiment* baseline = nullptr;
  const auto& hardware = lab_.hardware;
  const bool gpu_lab = std::find(hardware.begin(), hardware.end(), "gpu") != hardware.end() ||
                       std::find(hardware.begin(), hardware.end(), "multi-gpu") != hardware.end();
  for (const auto& e : lab_.experiments) {
    if (e.baseline && baseline)
      problem(e.line, "\"" + e.name + "\" says baseline: yes, and so does \"" + baseline->name +
                          "\"; a lab has one baseline");
    if (e.baseline && !baseline) baseline = &e;
    // The header is what a learner reads before choosing a lab: it must not hide a GPU.
    if (e.needs_gpu() && !gpu_lab && !hardware.empty())
      problem(e.line, "\"" + e.name + "\" runs on " + e.experiment.backend.device +
                          ", but the header's hardware: does not name gpu");
  }
}

// The numbered items under a "## Questions" heading (any level), each joined onto one line: an
// item's indented lines continue it, and any other heading ends the list. Fenced code is skipped.
std::vector<std::string> written_questions(const std::vector<std::string>& lines, size_t from) {
  std::vector<std::string> questions;
  bool in_questions = false, in_fence = false, in_item = false;
  for (size_t i = from; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::string text = trim(line);
    if (text.rfind("```", 0) == 0) in_fence = !in_fence;
    if (in_fence || text.rfind("```", 0) == 0) {
      in_item = false;
      continue;
    }
    if (!text.empty() && text[0] == '#') {
      in_questions =
          trim(std::string_view(text).substr(text.find_first_not_of('#'))) == "Questions";
      in_item = false;
      continue;
    }
    if (!in_questions) continue;
    const size_t digits = text.find_first_not_of("0123456789");
    if (digits > 0 && digits != std::string::npos && text.compare(digits, 2, ". ") == 0) {
      questions.push_back(trim(std::string_view(text).substr(digits + 2)));
      in_item = true;
    } else if (in_item && !text.empty() && (line[0] == ' ' || line[0] == '\t')) {
      questions.back() += " " + text;
    } else {
      in_item = false;
    }
  }
  return questions;
}

}  // namespace

std::string lab_size_limit_text(const std::string& found) {
  return "the file has " + found + "; a lab file has at most " + std::to_string(kMaxLabBytes) +
         " bytes and " + std::to_string(kMaxLabLines) + " lines: split it into smaller labs";
}

std::string LabProblem::to_string() const {
  return file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + problem;
}

std::string Lab::hardware_text() const { return join(hardware); }

const std::vector<std::string>& lab_columns() {
  static const std::vector<std::string> columns = {
      "experiment", "device", "model", "batch", "precision", "steps", "images/s", "ms per step",
      "speedup", "time to target", "test accuracy", "size", "ms", "ms with copies", "GFLOP/s",
      "GFLOP/s with copies", "copy GB/s",
      // From the run's record: its telemetry, step phases and energy (lab_run_readings).
      "utilization", "peak memory", "power", "peak temperature", "data ms", "copy ms",
      "all-reduce ms", "matmul share", "energy", "images/J", "memory busy", "SM MHz", "SM MHz max",
      // A run without CUDA graphs against its baseline with them: the launches' cost per step.
      "launch ms",
      // An inference benchmark's (and a training run's, to set beside it).
      "ms per image"};
  return columns;
}

const std::vector<std::string>& lab_hardware_kinds() {
  static const std::vector<std::string> kinds = {"cpu", "gpu", "multi-gpu"};
  return kinds;
}

Lab parse_lab(std::string_view text, const std::string& source,
              const std::filesystem::path& base_dir) {
  Lab lab;
  lab.source = source;
  lab.name = std::filesystem::path(source).stem().string();
  Reader reader(source, base_dir, lab);
  if (text.size() > kMaxLabBytes) {
    reader.problem(0, lab_size_limit_text(std::to_string(text.size()) + " bytes"));
    return lab;
  }
  if (const auto count = std::count(text.begin(), text.end(), '\n'); count > kMaxLabLines) {
    reader.problem(0, lab_size_limit_text(std::to_string(count) + " lines"));
    return lab;
  }
  // Else its first line is no "---", and the lab is said to lack its header.
  if (const std::string bom = bom_problem(text); !bom.empty()) {
    reader.problem(1, bom);
    return lab;
  }
  std::vector<std::string> lines;
  {
    std::string line;
    std::istringstream in{std::string(text)};
    while (std::getline(in, line)) lines.push_back(line);
  }
  // Every line UTF-8, or nothing of it is read: its names and text go to run.json and the window.
  for (size_t i = 0; i < lines.size(); ++i)
    if (const std::string why = utf8_problem(lines[i]); !why.empty()) {
      reader.problem(int(i) + 1,
                     why +
                         " is not UTF-8: save the file as UTF-8 (a Latin-1 \"é\" is one byte, "
                         "UTF-8 writes it as two)");
      return lab;
    }
  if (lines.empty()) {
    reader.problem(1, "the file is empty; a lab starts with a header (see docs/labs.md)");
    return lab;
  }
  lab.sha256 = sha256_hex(text);
  size_t i = 0;
  reader.header(lines, i);
  lab.questions = written_questions(lines, i);
  std::string markdown;
  int markdown_line = int(i) + 1;
  auto flush_text = [&] {
    if (!trim(markdown).empty())
      lab.blocks.push_back({LabBlock::Kind::Text, markdown_line, markdown, {}, -1});
    markdown.clear();
  };
  for (; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::string opening = trim(line);
    const size_t ticks = opening.find_first_not_of('`');
    if (opening.rfind("```", 0) != 0) {
      if (markdown.empty()) markdown_line = int(i) + 1;
      markdown += line + "\n";
      continue;
    }
    flush_text();
    // A fence closes with at least as many backticks as it opened with, and nothing else.
    const size_t fence = ticks == std::string::npos ? opening.size() : ticks;
    const std::string info = trim(std::string_view(opening).substr(fence));
    const int start = int(i) + 1;
    std::vector<std::pair<int, std::string>> body;
    bool closed = false;
    for (++i; i < lines.size(); ++i) {
      const std::string candidate = trim(lines[i]);
      if (candidate.size() >= fence && candidate.find_first_not_of('`') == std::string::npos) {
        closed = true;
        break;
      }
      body.emplace_back(int(i) + 1, lines[i]);
    }
    if (!closed) {
      reader.problem(start, "the ```" + info + " block is not closed: end it with a line ```");
      break;
    }
    if (info == "experiment") {
      reader.experiment(start, body);
    } else if (info == "table") {
      reader.table(start, body);
    } else if (info == "chart") {
      reader.chart(start, body);
    } else if (info == "quiz") {
      reader.quiz(start, body);
    } else {
      std::string code;
      for (const auto& [n, l] : body) code += l + "\n";
      lab.blocks.push_back({LabBlock::Kind::Code, start, code, info, -1});
    }
    markdown_line = int(i) + 2;
  }
  flush_text();
  reader.check_references();
  // The window shows the lab's Markdown: an image it would load from outside the lab's folder
  // (/dev/zero, a FIFO, ../../etc) is refused here, before any page is made of it.
  // A file named with no folder is in the current one; a built-in lab (":/labs/...") has none.
  const std::filesystem::path image_folder =
      base_dir.empty() && source.rfind(":/", 0) != 0 ? std::filesystem::path(".") : base_dir;
  for (const MarkdownImage& image : markdown_images(text))
    if (const std::string why = markdown_image_problem(image.target, image_folder); !why.empty())
      reader.problem(image.line, "the image \"" + image.target + "\" " + why);
  std::stable_sort(lab.problems.begin(), lab.problems.end(),
                   [](const LabProblem& a, const LabProblem& b) { return a.line < b.line; });
  return lab;
}

}  // namespace gpulab
