// A hand-in's answers.json as the instructor reads it: each quiz question with every attempt,
// the first-attempt and final scores, and the written answers (the class board's detail pane).
#pragma once

#include <string>

namespace gpulab {

// Markdown of the answers in `answers_json` (answers.json's text, untrusted): the scores, per
// quiz question its final answer and each attempt in order with its time and whether it was
// right, then each written question with the learner's answer or "Not answered.". The learner's
// text is shown as text, never as markup. Damaged JSON gives one line saying so and what to do.
std::string hand_in_answers_markdown(const std::string& answers_json);

}  // namespace gpulab
