// answers.json as Markdown for the class board; read as untrusted (any field may be missing or
// of another type), so a damaged file shows what it holds and verify names what is wrong.
#include "engine/classkit/hand_in_answers.hpp"

#include <nlohmann/json.hpp>

namespace gpulab {
using json = nlohmann::json;

namespace {

// The learner's text as Markdown shows it: every character that starts markup escaped, and no
// HTML (a '<' would open a tag).
std::string md_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') {
      out += "&lt;";
      continue;
    }
    if (std::string("\\`*_[]#+-!|>~").find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string answer_string(const json& j, const char* key) {
  const auto value = j.is_object() ? j.find(key) : j.end();
  return j.is_object() && value != j.end() && value->is_string() ? value->get<std::string>() : "";
}

std::string answer_number(const json& j, const char* key) {
  const auto value = j.is_object() ? j.find(key) : j.end();
  return j.is_object() && value != j.end() && value->is_number_integer() ? value->dump() : "?";
}

const char* right_mark(const json& j) {
  const auto value = j.is_object() ? j.find("correct") : j.end();
  if (!j.is_object() || value == j.end() || !value->is_boolean()) return "";
  return value->get<bool>() ? " ✓" : " ✗";
}

// A learner's paragraph as a quote: one "> " per line, so a blank line cannot end it.
std::string as_quote(const std::string& text) {
  std::string out = "> ";
  for (char c : md_text(text)) {
    out += c;
    if (c == '\n') out += "> ";
  }
  return out + "\n\n";
}

}  // namespace

std::string hand_in_answers_markdown(const std::string& answers_json) {
  json answers;
  try {
    answers = json::parse(answers_json);
  } catch (const json::exception& e) {
    return "answers.json could not be read (" + std::string(e.what()) +
           "); lab verify names what is wrong with it.\n";
  }
  if (!answers.is_object())
    return "answers.json holds no object of answers; lab verify names what is wrong with it.\n";
  std::string md = "## Answers (answers.json)\n\n";
  const json quiz = answers.value("answers", json::array());
  md += "Quiz: " + answer_number(answers, "score") + " of " + answer_number(answers, "questions") +
        " right in the end, " + answer_number(answers, "first_attempt_score") +
        " right at the first attempt.\n\n";
  if (quiz.is_array())
    for (size_t q = 0; q < quiz.size(); ++q) {
      const json& item = quiz[q];
      const json final_answer = item.is_object() ? item.value("answer", json()) : json();
      // Paragraphs, not a list: Qt's Markdown reads an indented line under an item as an item.
      md +=
          "**" + std::to_string(q + 1) + ". " + md_text(answer_string(item, "question")) + "**\n\n";
      md += final_answer.is_string()
                ? "Final answer: " + md_text(final_answer.get<std::string>()) + right_mark(item)
                : std::string("Not answered.");
      const json attempts = item.is_object() ? item.value("attempts", json::array()) : json();
      if (attempts.is_array() && !attempts.empty()) {
        md += " · attempts in order: ";
        for (size_t a = 0; a < attempts.size(); ++a) {
          const std::string time = answer_string(attempts[a], "time");
          md += (a ? ", " : "") + md_text(answer_string(attempts[a], "answer")) +
                right_mark(attempts[a]) + (time.empty() ? "" : " (" + md_text(time) + ")");
        }
      }
      md += "\n\n";
    }
  const json written = answers.value("written", json::array());
  if (written.is_array() && !written.empty()) {
    md += "### Written answers (" + answer_number(answers, "written_answered") + " of " +
          std::to_string(written.size()) + ")\n\n";
    for (const json& item : written) {
      md += "**" + md_text(answer_string(item, "question")) + "**\n\n";
      const std::string answer = answer_string(item, "answer");
      md += answer.empty() ? "*Not answered.*\n\n" : as_quote(answer);
    }
  }
  return md;
}

}  // namespace gpulab
