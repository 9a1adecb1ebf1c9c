// Whether the files of a hand-in that state one fact agree: README.md's learner, machine, runs,
// results tables, quiz and written answers against manifest.json, machine.json, answers.json and
// the tables its runs give; each results-N.md against its table. A careful forger rewrites one
// file and its hash; the others still say what happened.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/classkit/hand_in_verify.hpp"
#include "engine/labs/lab_results.hpp"

namespace gpulab {

// Every disagreement, one line each, as (file, what disagrees): "README.md" / "reports the answer
// to \"Q\" as \"False\" (wrong), but answers.json gives \"True\" (right)". `tables` are the lab's
// tables as the runs give them (empty when the lab is not known: the tables are then not held to
// them). JSON that is null (missing or damaged, said elsewhere) is not compared.
std::vector<HandInProblem> hand_in_disagreements(const std::filesystem::path& dir,
                                                 const nlohmann::json& manifest,
                                                 const nlohmann::json& answers,
                                                 const nlohmann::json& machine,
                                                 const std::vector<LabResultsTable>& tables);

}  // namespace gpulab
