// Lab files on disk and built into the program, and grading quiz answers.
#include "engine/base/errors.hpp"
#include "engine/labs/lab.hpp"
#include "io/input_file.hpp"

namespace gpulab {

// The built-in labs, embedded at build time (engine/CMakeLists.txt writes lab_builtins.cpp).
struct BuiltinLabFile {
  const char* name;
  const unsigned char* bytes;
  size_t size;
};

extern const BuiltinLabFile kBuiltinLabs[];
extern const size_t kBuiltinLabCount;

Lab load_lab_file(const std::filesystem::path& path) {
  Lab lab;
  lab.source = path.string();
  lab.name = path.stem().string();
  // Through the one reader of input files: a FIFO is refused, never waited on (a remembered one
  // would hold every start of the window), and a file past the limit is refused by its size,
  // unread.
  std::error_code error;
  if (const auto size = std::filesystem::file_size(path, error); !error && size > kMaxLabBytes) {
    lab.problems.push_back(
        {path.string(), 0, lab_size_limit_text(std::to_string(size) + " bytes")});
    return lab;
  }
  std::string text;
  try {
    if (!read_input_file(path, kMaxLabBytes, "a lab file", &text)) {
      lab.problems.push_back({path.string(), 0, "cannot be opened: no such file"});
      return lab;
    }
  } catch (const InputFileError& e) {
    lab.problems.push_back({path.string(), 0, e.what()});
    return lab;
  }
  return parse_lab(text, path.string(), path.parent_path());
}

std::vector<std::string> builtin_lab_names() {
  std::vector<std::string> names;
  for (size_t i = 0; i < kBuiltinLabCount; ++i)
    names.push_back(std::filesystem::path(kBuiltinLabs[i].name).stem().string());
  return names;
}

namespace {
Lab builtin_lab(size_t i) {
  const auto& file = kBuiltinLabs[i];
  return parse_lab(std::string_view(reinterpret_cast<const char*>(file.bytes), file.size),
                   std::string(":/labs/") + file.name);
}
}  // namespace

std::vector<Lab> builtin_labs() {
  std::vector<Lab> labs;
  for (size_t i = 0; i < kBuiltinLabCount; ++i) labs.push_back(builtin_lab(i));
  return labs;
}

std::string builtin_lab_source_of(const std::filesystem::path& file) {
  std::string text;
  try {
    if (!read_input_file(file, kMaxLabBytes, "a lab file", &text)) return {};
  } catch (const InputFileError&) {
    return {};
  }
  for (size_t i = 0; i < kBuiltinLabCount; ++i) {
    const auto& lab = kBuiltinLabs[i];
    if (std::string_view(reinterpret_cast<const char*>(lab.bytes), lab.size) == text)
      return std::string(":/labs/") + lab.name;
  }
  return {};
}

Lab load_lab(const std::string& name_or_path) {
  // A file at that path is read as a lab file (a FIFO or device is refused, saying what it is); a
  // folder (a lab's --out folder named after it) or nothing there is a built-in lab's name.
  std::error_code error;
  const auto status = std::filesystem::status(name_or_path, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_directory(status))
    return load_lab_file(name_or_path);
  std::string name = std::filesystem::path(name_or_path).filename().string();
  if (name.size() > 3 && name.substr(name.size() - 3) == ".md") name.resize(name.size() - 3);
  if (name_or_path.find('/') == std::string::npos)
    for (size_t i = 0; i < kBuiltinLabCount; ++i)
      if (std::filesystem::path(kBuiltinLabs[i].name).stem() == name) return builtin_lab(i);
  std::string names;
  for (const auto& n : builtin_lab_names()) names += (names.empty() ? "" : ", ") + n;
  if (std::filesystem::is_directory(status))  // "no such file" sent the user looking for one
    throw ConfigError(name_or_path + ": is a folder, not a lab file; give the lab's FILE.md (" +
                      "the folder's .md file, say) or a built-in lab: " + names);
  throw ConfigError(name_or_path +
                    ": cannot be opened (no such file, and not a built-in lab: " + names + ")");
}

QuizFeedback grade(const QuizQuestion& question, int choice) {
  if (choice < 0 || choice >= int(question.choices.size()))
    throw ConfigError("choice " + std::to_string(choice + 1) +
                      " does not exist; the question has " +
                      std::to_string(question.choices.size()));
  const QuizChoice& picked = question.choices[size_t(choice)];
  return {picked.correct, picked.why};
}

int quiz_score(const Lab& lab, const std::vector<int>& answers) {
  int right = 0;
  for (size_t i = 0; i < lab.quiz.size() && i < answers.size(); ++i)
    if (answers[i] >= 0 && answers[i] < int(lab.quiz[i].choices.size()))
      right += lab.quiz[i].choices[size_t(answers[i])].correct;
  return right;
}

}  // namespace gpulab
