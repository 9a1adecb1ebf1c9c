// The careful cheats of issue 42, each made on a real hand-in of short runs with every hash of
// its manifest rewritten, and each caught and named by `lab verify` or `lab grade`: times forged
// consistently, a shipped reference run handed in as the learner's own, a quiz rewritten in
// answers.json, a hand-in made under another learner's name, one run held by two learners. The
// honest hand-ins verify clean beside them. Also: verify of a .zip, a lab that was not checked,
// hand-in's --answers and its warning for a run of other settings, a roster, and the paths
// `lab grade` is given that are no hand-in.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "class_hand_ins.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/classkit/class_grade.hpp"
#include "engine/classkit/hand_in_zip.hpp"
#include "engine/classkit/run_consistency.hpp"
#include "engine/labs/hand_in_manifest.hpp"
#include "engine/labs/lab.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/labs/reference_runs.hpp"
#include "engine/records/record_reader.hpp"
#include "engine/records/run_record.hpp"

namespace gpulab {
namespace {

using json = nlohmann::json;

// Every file of the hand-in `h` re-hashed into its manifest: a forger's last step.
void rehash_all(const fs::path& h) {
  json manifest = json::parse(read(h / "manifest.json"));
  for (auto& [name, hash] : manifest["files"].items()) hash = sha256_file(h / name);
  write(h / "manifest.json", manifest.dump(2));
}

// A shipped reference run: the first of gpulab's own.
fs::path shipped_run() { return reference_runs_dir() / "cnn-on-gpu.lenet5-gpu"; }

// Each cell of a CSV column scaled: `column` by name, every row after the header.
void scale_column(const fs::path& csv, const std::string& column, double factor) {
  auto rows = csv_rows(read(csv));
  ASSERT_FALSE(rows.empty());
  const auto at = std::find(rows[0].begin(), rows[0].end(), column);
  ASSERT_NE(at, rows[0].end()) << column << " in " << csv;
  const size_t c = size_t(at - rows[0].begin());
  std::string text;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (r > 0 && c < rows[r].size() && !rows[r][c].empty()) {
      char number[40];
      std::snprintf(number, sizeof number, "%.9g", std::stod(rows[r][c]) * factor);
      rows[r][c] = number;
    }
    for (size_t i = 0; i < rows[r].size(); ++i) text += (i ? "," : "") + rows[r][i];
    text += "\n";
  }
  write(csv, text);
}

// The row of a parsed class.csv whose `column` is `value`; fails when there is not exactly one.
std::vector<std::string> csv_row(const std::vector<std::vector<std::string>>& rows,
                                 const std::string& column, const std::string& value) {
  const auto& header = rows.front();
  const size_t c = size_t(std::find(header.begin(), header.end(), column) - header.begin());
  std::vector<std::string> found;
  int n = 0;
  for (size_t r = 1; r < rows.size(); ++r)
    if (c < rows[r].size() && rows[r][c] == value) found = rows[r], ++n;
  EXPECT_EQ(n, 1) << column << " = " << value;
  return found;
}

std::string cell(const std::vector<std::vector<std::string>>& rows,
                 const std::vector<std::string>& row, const std::string& column) {
  const auto& header = rows.front();
  const size_t c = size_t(std::find(header.begin(), header.end(), column) - header.begin());
  return c < row.size() ? row[c] : "<no column " + column + ">";
}

class Cheats : public ClassKit {
 protected:
  // The lab's first table recomputed from the hand-in's runs, as a forger with gpulab's own code
  // would, put into results.csv, results.md and README.md in place of the honest one.
  void rewrite_tables(const fs::path& h, const fs::path& honest, const fs::path& lab_file) {
    const Lab lab = load_lab_file(lab_file);
    ASSERT_TRUE(lab.ok());
    std::vector<LabRunResult> before, after;
    for (const LabExperiment& e : lab.experiments) {
      const std::string folder = "runs/" + experiment_folder(e.name);
      before.push_back(lab_run_result(e.name, load_run(honest / folder)));
      after.push_back(lab_run_result(e.name, load_run(h / folder)));
    }
    const LabResultsTable old_table = lab_results_table(lab, lab.tables[0], before);
    const LabResultsTable new_table = lab_results_table(lab, lab.tables[0], after);
    write(h / "results.csv", to_csv(new_table));
    edit(h / "results.md", to_markdown(old_table), to_markdown(new_table));
    edit(h / "README.md", to_markdown(old_table), to_markdown(new_table));
  }
  test::CliResult grade_ada(const fs::path& out) {
    return cli("lab grade " + (root() / "ada").string() + " --out " + out.string() + " --lab " +
               lab().string());
  }
  test::CliResult grade_unchecked(const fs::path& h, const fs::path& out) {
    return cli("lab grade " + h.string() + " --out " + out.string());
  }
  test::CliResult hand_in(const std::string& learner, const fs::path& runs, const fs::path& out,
                          const std::string& more = "") {
    return cli("lab hand-in " + lab().string() + " --learner '" + learner + "' --runs-dir " +
               runs.string() + " --out '" + out.string() + "'" + more);
  }
};

TEST_F(Cheats, HonestHandInsVerifyWithNoFalseAlarm) {
  for (const char* learner : kLearners) {
    const test::CliResult r = verify(root() / learner);
    EXPECT_EQ(r.exit_code, 0) << learner << ":\n" << r.output;
    EXPECT_NE(r.output.find(": verified: the hand-in of \"" + std::string(learner) + "\""),
              std::string::npos)
        << r.output;
  }
}

// Every step time in metrics.csv halved, run.json's totals and the results tables changed to
// agree, the manifest rehashed: the steps now end long before the evaluation after them had
// trained. A run of a few hundred steps: the clocks of a run of milliseconds may differ by a
// thread's wake-up, which no check holds against it.
TEST_F(Cheats, TimesForgedConsistentlyAreCaughtByTheClockTheyShare) {
  std::string longer = kLab;
  longer.replace(longer.find("steps: 6"), 8, "steps: 400");
  const fs::path lab_file = dir_.path() / "longer.md";
  write(lab_file, longer);
  const fs::path honest = dir_.path() / "tim";
  const test::CliResult ran = cli("lab run " + lab_file.string() + " --quiet --learner tim --out " +
                                  honest.string() + " --data-dir " + (root() / "data").string());
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  const std::string with_lab = " --lab " + lab_file.string();
  // The honest run's clocks agree. (Its training seconds against the sum of its steps' times, an
  // older check, can miss by more than its tolerance on a loaded machine: not asserted here.)
  const test::CliResult clean = cli("lab verify " + honest.string() + with_lab);
  EXPECT_EQ(clean.output.find("the steps' times are shorter than the clock"), std::string::npos)
      << clean.output;
  EXPECT_EQ(clean.output.find("after the whole run's"), std::string::npos) << clean.output;
  const fs::path h = dir_.path() / "tim-forged";
  fs::copy(honest, h, fs::copy_options::recursive);
  const fs::path run = h / "runs" / "mlp-cpu";
  scale_column(run / "metrics.csv", "time_s", 0.5);
  scale_column(run / "metrics.csv", "step_ms", 0.5);
  scale_column(run / "metrics.csv", "images_per_second", 2);
  json info = json::parse(read(run / "run.json"));
  json& summary = info["summary"];
  for (const char* key : {"train_seconds", "wall_seconds"})
    summary[key] = summary[key].get<double>() / 2;
  summary["images_per_second"] = summary["images_per_second"].get<double>() * 2;
  for (json& epoch : summary["epochs"]) {
    epoch["seconds"] = epoch["seconds"].get<double>() / 2;
    epoch["images_per_second"] = epoch["images_per_second"].get<double>() * 2;
  }
  write(run / "run.json", info.dump(2));
  rewrite_tables(h, honest, lab_file);
  // The step-time chart is not in this lab; the loss chart is by step, which the forgery keeps.
  rehash_all(h);
  const test::CliResult r = cli("lab verify " + h.string() + with_lab);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // The forged figures agree with each other: only the clock they share gives them away.
  EXPECT_EQ(r.output.find("results.csv"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find((run / "metrics.csv").string() + ": its step "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(" s by then: the steps' times are shorter than the clock that took "
                          "them"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find((run / "eval.csv").string() + ": its evaluation at step 400 ended at "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("does not verify"), std::string::npos) << r.output;
}

// --replay also times the replayed steps: recorded steps ten times faster than this machine runs
// them, on its CPU model, are flagged with both figures (a flag, for a person: not a problem).
TEST_F(Cheats, ReplayFlagsStepsFarFasterThanTheyReplayOnTheSameCpu) {
  const fs::path h = copy_of("ada");
  scale_column(h / "runs" / "mlp-cpu" / "metrics.csv", "step_ms", 0.01);
  rehash_all(h);
  const test::CliResult r = verify(h, " --replay 6 --data-dir " + (root() / "data").string());
  EXPECT_NE(r.output.find("⚠ runs/mlp-cpu: its steps took a median "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("replayed here, on the same CPU model ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("runs/mlp-cpu: replay pace: a median step of "), std::string::npos)
      << r.output;
  // The pace is a flag: the problems here are the run's own (its steps' times no longer add up).
  EXPECT_EQ(r.output.find("metrics.csv: replay"), std::string::npos) << r.output;
}

// A shipped reference run copied into a learner's runs, in place of one of theirs, with the
// tables recomputed and the manifest rehashed: named with where it was recorded, by its files;
// and, with every file's bytes changed but its losses, by its losses on a machine without its GPU.
TEST_F(Cheats, AShippedReferenceRunInTheLearnersRunsIsNamed) {
  ASSERT_TRUE(fs::exists(shipped_run() / "run.json")) << shipped_run();
  const std::string named =
      ": is the reference run \"cnn-on-gpu.lenet5-gpu\" that ships with gpulab (recorded on "
      "NVIDIA H100 80GB HBM3, 2026-11-27";
  for (const bool disguised : {false, true}) {
    const fs::path h = copy_of("ada");
    const fs::path run = h / "runs" / "mlp-cpu";
    fs::remove_all(run);
    fs::copy(shipped_run(), run, fs::copy_options::recursive);
    if (disguised) {
      json info = json::parse(read(run / "run.json"));
      info["created"] = "2026-11-28T09:00:00Z";
      info["process"]["host"] = "laptop";
      write(run / "run.json", info.dump(2));
      for (const char* file : {"metrics.csv", "eval.csv", "telemetry.csv"})
        scale_column(run / file, "time_s", 1.0001);
      fs::remove(run / "replicas.csv");
    }
    json manifest = json::parse(read(h / "manifest.json"));
    manifest["files"].erase("runs/mlp-cpu/replicas.csv");
    for (const auto& entry : fs::directory_iterator(run))
      manifest["files"]["runs/mlp-cpu/" + entry.path().filename().string()] = "";
    write(h / "manifest.json", manifest.dump(2));
    rehash_all(h);
    const test::CliResult r = verify(h);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(run.string() + named), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(disguised ? "losses are the shipped run's, step for step, and the "
                                        "machine that handed it in has no NVIDIA H100"
                                      : "is the shipped run's, byte for byte"),
              std::string::npos)
        << r.output;
    // The hand-in's own machine has no GPU, and says so.
    EXPECT_NE(r.output.find("recorded on the GPU \"NVIDIA H100 80GB HBM3\", but machine.json "
                            "(and README.md's machine) names no GPU"),
              std::string::npos)
        << r.output;
  }
}

// `lab hand-in` of a built-in GPU lab from a runs folder holding a shipped run: refused, naming
// it, and nothing is written.
TEST_F(Cheats, HandInRefusesAReferenceRunAsTheLearnersOwn) {
  const fs::path runs = dir_.path() / "runs";
  fs::create_directories(runs);
  fs::copy(shipped_run(), runs / "lenet5-gpu", fs::copy_options::recursive);
  const fs::path out = dir_.path() / "hand-in";
  const test::CliResult r = cli("lab hand-in cnn-on-gpu --learner Eve --runs-dir " + runs.string() +
                                " --out " + out.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("gpulab-cli: --runs-dir " + runs.string() + ": the run " +
                          (runs / "lenet5-gpu").string() +
                          " of \"lenet5 gpu\" is the reference run \"cnn-on-gpu.lenet5-gpu\" "
                          "that ships with gpulab (recorded on NVIDIA H100 80GB HBM3, 2026-11-27"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("a hand-in never takes a reference run as the learner's own"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(out));
}

// answers.json rewritten to a first-attempt right answer, the manifest rehashed: the report the
// hand-in wrote still says what was answered.
TEST_F(Cheats, AQuizRewrittenInAnswersJsonDisagreesWithTheReport) {
  const fs::path h = copy_of("ada");
  json answers = json::parse(read(h / "answers.json"));
  json& q = answers["answers"][0];
  q["answer"] = "True";
  q["correct"] = true;
  q["attempts"] = json::array({{{"answer", "True"}, {"time", "t1"}, {"correct", true}}});
  q["first_correct"] = true;
  answers["score"] = 1;
  answers["first_attempt_score"] = 1;
  answers["written"][0]["answer"] = "The first, by far.";
  answers["written_answered"] = 1;
  write(h / "answers.json", answers.dump(2));
  rehash(h, "answers.json");
  const test::CliResult r = verify(h);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string readme = (h / "README.md").string();
  for (const char* said :
       {": reports the answer to \"A GPU has many cores.\" as not answered, but answers.json "
        "gives \"True\" (right)",
        ": its quiz heading says \"Quiz: 0 of 1 right (0 of 1 answered)\", but answers.json gives "
        "\"Quiz: 1 of 1 right (1 of 1 answered)\"",
        ": its first-attempt score is not answers.json's (\"Right at the first attempt: 1 of 1.\")",
        ": gives the written answer to \"Which was faster?\" as \"Not answered.\", but "
        "answers.json as \"The first, by far.\""})
    EXPECT_NE(r.output.find(readme + said), std::string::npos) << said << "\n" << r.output;
  // answers.json agrees with itself: the problem is where two files disagree.
  EXPECT_EQ(r.output.find((h / "answers.json").string() + ": "), std::string::npos) << r.output;
}

// The learner's name and machine in the report, and a results.md cell, each against the files a
// script reads.
TEST_F(Cheats, TheReportsLearnerMachineAndTablesAgreeWithTheOtherFiles) {
  const fs::path h = copy_of("bob");
  edit(h / "README.md", "Handed in by **bob**.", "Handed in by **Ada**.");
  edit(h / "README.md", "- GPU: none", "- GPU 0: NVIDIA H100 80GB HBM3, driver 580\n- x: none");
  const std::string md = read(h / "results.md");
  ASSERT_NE(md.find("mlp again | 4 | "), std::string::npos)
      << md;  // "⚠ mlp again" on a busy machine
  edit(h / "results.md", "mlp again | 4 | ", "mlp again | 40 | ");
  rehash_all(h);
  const test::CliResult r = verify(h);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  for (const std::string& said :
       {(h / "README.md").string() + ": is handed in by \"Ada\", but manifest.json names \"bob\"",
        (h / "README.md").string() + ": its machine lists a GPU, but machine.json names none",
        std::string("mlp again\", column \"steps\" says \"40\", but the runs in the hand-in give "
                    "\"4\"")})
    EXPECT_NE(r.output.find(said), std::string::npos) << said << "\n" << r.output;
}

// A run of another model: one line naming the layers that differ, never the model's JSON.
TEST_F(Cheats, AModelSwapNamesTheLayersThatDiffer) {
  RunData run = load_run(root() / "ada" / "runs" / "mlp-cpu");
  json& layers = run.info["model"]["layers"];
  ASSERT_TRUE(layers.is_array() && layers.size() >= 2) << run.info["model"].dump();
  const std::string first = layers[0].value("name", "");
  const std::string field = layers[0].contains("out_features") ? "out_features" : "type";
  layers[0][field] = layers[0][field].is_number() ? json(999) : json("conv2d");
  layers.push_back({{"name", "extra"}, {"type", "relu"}});
  const Lab lab = load_lab_file(ClassKit::lab());
  const std::vector<std::string> found = setting_differences(run, *lab.experiment("mlp cpu"));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(
      found[0].rfind("its model's layers are not those of the lab's experiment \"mlp cpu\": \"" +
                         first + "\": " + field + " ",
                     0),
      0u)
      << found[0];
  EXPECT_NE(found[0].find("; \"extra\" (\"relu\"): not in the lab's model"), std::string::npos)
      << found[0];
  EXPECT_LT(found[0].size(), 400u) << found[0];
}

// Issue 42.8: a .zip is opened as lab grade opens it, its learner named; its problems named
// inside it.
TEST_F(Cheats, VerifyOpensAZipAndNamesItsLearner) {
  const fs::path where = dir_.path() / "zips";
  ASSERT_EQ(hand_in("Ada Lovelace", root() / "ada", where / "ada", " --zip").exit_code, 0);
  const fs::path zip = where / "Ada-Lovelace-two-cpus.zip";
  const test::CliResult r = verify(zip);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(zip.string() + ": verified: the hand-in of \"Ada Lovelace\" for "
                                         "\"two-cpus\""),
            std::string::npos)
      << r.output;
  // A damaged one: the file named inside the zip.
  edit(where / "ada" / "results.csv", "mlp cpu", "mlp CPU");
  write_hand_in_zip(where / "ada", zip);
  const test::CliResult bad = verify(zip);
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find(zip.string() + ":ada/results.csv: changed after the hand-in was "
                                           "written"),
            std::string::npos)
      << bad.output;
  EXPECT_NE(bad.output.find("the hand-in of \"Ada Lovelace\" does not verify"), std::string::npos)
      << bad.output;
  // Nothing unpacked is left behind.
  write(dir_.path() / "notzip.zip", "no zip\n");
  const test::CliResult notzip = verify(dir_.path() / "notzip.zip");
  EXPECT_EQ(notzip.exit_code, 1) << notzip.output;
  EXPECT_NE(notzip.output.find("notzip.zip: not a zip file ("), std::string::npos) << notzip.output;
}

// Issue 43.8: a hand-in whose lab could not be checked is never "verified".
TEST_F(Cheats, AHandInWhoseLabIsNotCheckedIsNotVerified) {
  const fs::path h = copy_of("ada");
  json manifest = json::parse(read(h / "manifest.json"));
  manifest["lab_sha256"] = "x";
  write(h / "manifest.json", manifest.dump(2));
  const test::CliResult plain = cli("lab verify " + h.string());
  EXPECT_EQ(plain.exit_code, 1) << plain.output;
  EXPECT_NE(plain.output.find(h.string() + ": not verified: the hand-in of \"ada\" for "
                                           "\"two-cpus\": its results were not recomputed"),
            std::string::npos)
      << plain.output;
  EXPECT_EQ(plain.output.find(": verified:"), std::string::npos) << plain.output;
  // The lab given: checked, and its SHA-256 is not the manifest's.
  const test::CliResult with_lab = verify(h);
  EXPECT_EQ(with_lab.exit_code, 1) << with_lab.output;
  EXPECT_NE(with_lab.output.find("the lab's SHA-256 is x, but --lab "), std::string::npos)
      << with_lab.output;
}

// Issue 42.7: a hand-in done from another version of the lab says what changed, by experiment.
TEST_F(Cheats, AnotherVersionOfTheLabSaysWhichExperimentsSettingsChanged) {
  std::string changed = kLab;
  changed.replace(changed.find("batch: 16"), 9, "batch: 20");
  const fs::path other = dir_.path() / "two-cpus.md";
  write(other, changed);
  const test::CliResult r =
      cli("lab verify " + (root() / "ada").string() + " --lab " + other.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("manifest.json: what differs from --lab's version: \"mlp cpu\": its "
                          "setting \"batch\" is 16, but the lab's experiment \"mlp cpu\" sets 20"),
            std::string::npos)
      << r.output;
  changed = kLab;
  changed.replace(changed.find("# Two CPUs"), 10, "# Two CPUs, again");
  write(other, changed);
  const test::CliResult text =
      cli("lab verify " + (root() / "ada").string() + " --lab " + other.string());
  EXPECT_NE(text.output.find("what differs from --lab's version: not its experiments' models or "
                             "settings"),
            std::string::npos)
      << text.output;
}

// Issue 42.10 and 42.9: written and quiz answers from a file, and a warning, naming both, for a
// run whose settings are not its experiment's.
TEST_F(Cheats, HandInTakesAnswersFromAFileAndWarnsOfOtherSettings) {
  const fs::path answers = dir_.path() / "answers.json";
  write(answers, R"({"written": [{"question": "Which was faster?", "answer": "mlp cpu"}],
                     "answers": [{"question": "A GPU has many cores.", "answer": "True"}]})");
  const fs::path out = dir_.path() / "hand-in";
  const test::CliResult r = hand_in("ada", root() / "ada", out, " --answers " + answers.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("quiz 1 of 1 right (1 at the first attempt), 1 of 2 questions "
                          "answered in words"),
            std::string::npos)
      << r.output;
  const json given = json::parse(read(out / "answers.json"));
  EXPECT_EQ(given["written"][0]["answer"], "mlp cpu");
  EXPECT_EQ(given["score"], 1);
  EXPECT_EQ(verify(out).exit_code, 0);
  write(answers, R"({"written": [{"question": "Why not?", "answer": "x"}]})");
  const test::CliResult unknown =
      hand_in("ada", root() / "ada", dir_.path() / "h2", " --answers " + answers.string());
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_NE(unknown.output.find("--answers " + answers.string() +
                                ": the question \"Why not?\" is not one of \"Two CPUs\"'s "
                                "questions (\"Which was faster?\", \"Why is that so? Think of "
                                "the batch.\")"),
            std::string::npos)
      << unknown.output;

  const fs::path runs = copy_of("ada");
  const fs::path run_json = runs / "runs" / "mlp-again" / "run.json";
  json info = json::parse(read(run_json));
  info["config"]["batch"] = 16;
  write(run_json, info.dump(2));
  const test::CliResult warned = hand_in("ada", runs, dir_.path() / "h3");
  ASSERT_EQ(warned.exit_code, 0) << warned.output;
  EXPECT_NE(warned.output.find("warning: the run " + (runs / "runs" / "mlp-again").string() +
                               " (\"mlp again · two-cpus\") taken for the experiment \"mlp "
                               "again\": its setting \"batch\" is 16, but the lab's experiment "
                               "\"mlp again\" sets 32"),
            std::string::npos)
      << warned.output;
}

TEST(ClassKitRubric, TheLabsHeaderStatesTheRubric) {
  std::string text = kLab;
  text.replace(text.find("hardware: cpu"), 13,
               "hardware: cpu\nrubric: quiz-first 1, quiz-final 2.5, verified 10");
  const Lab lab = parse_lab(text, "x.md");
  ASSERT_TRUE(lab.ok()) << lab.problems[0].to_string();
  EXPECT_TRUE(lab.rubric.stated);
  EXPECT_EQ(lab.rubric.quiz_first, 1);
  EXPECT_EQ(lab.rubric.quiz_final, 2.5);
  EXPECT_EQ(lab.rubric.written, 1);  // not stated: the default
  EXPECT_EQ(lab.rubric.verified, 10);
  text = kLab;
  text.replace(text.find("hardware: cpu"), 13, "hardware: cpu\nrubric: essays 3, verified x");
  const Lab bad = parse_lab(text, "x.md");
  ASSERT_EQ(bad.problems.size(), 2u);
  EXPECT_EQ(bad.problems[0].to_string(),
            "x.md:5: rubric: \"essays 3\" names no item of the rubric; give quiz-first, "
            "quiz-final, written or verified, each with its points (\"quiz-final 1, verified "
            "5\")");
  EXPECT_EQ(bad.problems[1].to_string(),
            "x.md:5: rubric: \"verified x\": give verified's points as a number from 0 to 1000");
}

// Issue 42.3: a figure far outside the others' on the same hardware is flagged, naming both; a
// figure on other hardware, or among too few, is not.
TEST(ClassKitOutliers, AFigureFarOutsideTheClassOnTheSameHardwareIsFlagged) {
  ClassGrade grade;
  const auto add = [&](const std::string& learner, const std::string& cpu, double images) {
    ClassRow row;
    row.learner = learner;
    row.lab = "two-cpus";
    row.cpu = cpu;
    row.figures = {{"mlp cpu images/s", images}};
    grade.rows.push_back(row);
  };
  add("a", "Xeon", 15000);
  add("b", "Xeon", 16000);
  add("c", "Xeon", 14000);
  add("d", "Xeon", 60000);
  add("e", "Ryzen", 90000);
  add("f", "Ryzen", 30000);
  flag_outliers(grade);
  ASSERT_EQ(grade.rows[3].flagged_runs.size(), 1u);
  EXPECT_EQ(grade.rows[3].flagged_runs[0],
            "mlp cpu images/s: 6e+04 is 4.0× the median of the 3 others on Xeon (1.5e+04): far "
            "outside the class on the same hardware; look at its runs");
  for (size_t i : {0, 1, 2, 4, 5}) EXPECT_TRUE(grade.rows[i].flagged_runs.empty()) << i;
  EXPECT_TRUE(grade.rows[3].problems.empty());  // a flag, not a verdict
}

// Issue 42.3: a GPU figure far from the shipped reference run of the same experiment recorded on
// the same GPU model is flagged, naming both figures and where the reference was recorded, with
// no class to compare against; near it, or on another GPU, it is not.
TEST(ClassKitOutliers, AGpuFigureFarFromTheShippedReferenceOnThatGpuIsFlagged) {
  const RunData reference = load_run(shipped_run());
  const double shipped = run_images_per_second(reference);
  ASSERT_GT(shipped, 0);
  ClassGrade grade;
  const auto add = [&](const std::string& gpu, double images) {
    ClassRow row;
    row.learner = "x";
    row.lab = "cnn-on-gpu";
    row.gpu = gpu;
    row.figures = {{"lenet5 gpu images/s", images}, {"lenet5 gpu speedup", 3.0}};
    grade.rows.push_back(row);
  };
  add("NVIDIA H100 80GB HBM3", shipped * 3);
  add("NVIDIA H100 80GB HBM3", shipped * 1.5);
  add("NVIDIA H100 80GB HBM3", shipped / 4);
  add("NVIDIA GeForce RTX 3060", shipped * 3);
  flag_against_references(grade, {reference});
  char text[512];
  std::snprintf(text, sizeof text,
                "lenet5 gpu images/s: %.4g is 3.00× the %.4g of the reference run that ships with "
                "gpulab, recorded on NVIDIA H100 80GB HBM3, 2026-11-27: far from what this GPU "
                "gave there; look at its runs",
                shipped * 3, shipped);
  ASSERT_EQ(grade.rows[0].flagged_runs.size(), 1u);
  EXPECT_EQ(grade.rows[0].flagged_runs[0], text);
  EXPECT_TRUE(grade.rows[1].flagged_runs.empty());
  ASSERT_EQ(grade.rows[2].flagged_runs.size(), 1u);
  EXPECT_NE(grade.rows[2].flagged_runs[0].find("is 0.25× the"), std::string::npos);
  EXPECT_TRUE(grade.rows[3].flagged_runs.empty());
  for (const ClassRow& row : grade.rows) EXPECT_TRUE(row.problems.empty());  // flags, not verdicts
}

// Issue 43.9: a FIFO, /dev/null and a link to /dev/zero are rows saying why they are no hand-in,
// counted as not graded, read never (the FIFO would block).
TEST_F(Cheats, GradeOfAFifoOrADeviceIsARowNotAGrade) {
  const fs::path fifo = dir_.path() / "pipe.zip";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", dir_.path() / "zero");
  const fs::path out = dir_.path() / "graded";
  const test::CliResult alone = test::run_command_for(
      std::string(GPULAB_CLI_PATH) + " lab grade " + fifo.string() + " --out " + out.string(), 60);
  ASSERT_FALSE(alone.timed_out);
  EXPECT_EQ(alone.exit_code, 1) << alone.output;
  EXPECT_NE(alone.output.find("no hand-in found in " + fifo.string() + "; " + fifo.string() +
                              ": a FIFO (a named pipe), not a hand-in"),
            std::string::npos)
      << alone.output;
  const test::CliResult r = test::run_command_for(
      std::string(GPULAB_CLI_PATH) + " lab grade " + (root() / "ada").string() + " " +
          fifo.string() + " /dev/null " + (dir_.path() / "zero").string() + " --out " +
          out.string() + " --lab " + lab().string(),
      60);
  ASSERT_FALSE(r.timed_out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("graded 1 hand-in: 4 learner-lab rows, 1 verified, 0 with problems, 0 "
                          "earlier hand-ins replaced by a later one, 3 paths not graded"),
            std::string::npos)
      << r.output;
  const std::string csv = read(out / "class.csv");
  EXPECT_NE(csv.find("/dev/null: a character device, not a hand-in"), std::string::npos) << csv;
  EXPECT_NE(csv.find("zero: a link to a character device, not a hand-in"), std::string::npos)
      << csv;
}

// Issue 43.3: work folders a killed grade left are removed at the next grade of the folder; one
// of a grade still running is not.
TEST_F(Cheats, WorkFoldersOfAnInterruptedGradeAreRemovedAtTheNext) {
  const fs::path out = dir_.path() / "graded";
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  const fs::path dead = out / (".grading-" + std::to_string(gone) + "-abcdef");
  const fs::path legacy = out / ".grading-Xy12Zq";
  const fs::path alive = out / (".grading-" + std::to_string(::getpid()) + "-abcdef");
  for (const fs::path& p : {dead, legacy, alive}) fs::create_directories(p / "hand-in-0");
  const test::CliResult r = grade_ada(out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(legacy));
  EXPECT_TRUE(fs::exists(alive));
}

// SIGINT and SIGTERM stop a grade, and its work folder goes with it.
TEST_F(Cheats, ASignalStopsAGradeAndLeavesNoWorkFolder) {
  const fs::path course = dir_.path() / "course";
  for (int i = 0; i < 3; ++i)
    for (const char* learner : {"ada", "bob"})
      ASSERT_EQ(hand_in(std::string(learner) + std::to_string(i), root() / learner,
                        course / (std::string(learner) + std::to_string(i)), " --zip")
                    .exit_code,
                0);
  for (const char* signal : {"INT", "TERM"}) {
    const fs::path out = dir_.path() / (std::string("graded-") + signal);
    const test::CliResult r = test::run_command_for(
        "sh -c '" + std::string(GPULAB_CLI_PATH) + " lab grade " + course.string() + " --out " +
            out.string() + " --lab " + lab().string() + " --replay 3 --data-dir " +
            (root() / "data").string() + " & p=$!; sleep 0.3; kill -" + signal +
            " $p; wait $p; echo exit=$?'",
        120);
    ASSERT_FALSE(r.timed_out);
    // Stopped (130) or, on a fast machine, done before the signal (0): never a work folder left.
    EXPECT_TRUE(r.output.find("exit=130") != std::string::npos ||
                r.output.find("exit=0") != std::string::npos)
        << r.output;
    if (r.output.find("exit=130") != std::string::npos) {
      EXPECT_NE(r.output.find("grading stopped by SIG"), std::string::npos) << r.output;
    }
    std::error_code error;  // a signal before --out was made leaves no folder at all
    for (const auto& entry : fs::directory_iterator(out, error))
      EXPECT_NE(entry.path().filename().string().rfind(".grading", 0), 0u) << entry.path();
  }
}

// Issue 42.5, 42.4, 42.6: a course platform's download graded with a roster. Mallory hands in
// under Ada's name, Eve hands in Bob's runs as hers, Zed's zip is no zip, Grace hands in nothing:
// each is a row saying so, and no row replaces another.
TEST_F(Cheats, ARosterNamesImpersonationCopiesAndLearnersWithoutAHandIn) {
  const fs::path course = dir_.path() / "course";
  const auto platform = [&](const std::string& folder) {
    const fs::path p = course / (folder + "_assignsubmission_file");
    fs::create_directories(p);
    return p;
  };
  const fs::path made = dir_.path() / "made";
  ASSERT_EQ(hand_in("Ada Lovelace", root() / "ada", made / "ada", " --zip").exit_code, 0);
  fs::copy(made / "Ada-Lovelace-two-cpus.zip", platform("Ada Lovelace_111"));
  fs::create_directories(dir_.path() / "given");  // not beside --out: a folder with answers.json
  const fs::path answers = dir_.path() / "given" / "answers.json";  // is taken for a hand-in
  write(answers, R"({"written": [{"question": "Which was faster?", "answer": "mlp cpu"}],
                     "answers": [{"question": "A GPU has many cores.", "answer": "True"}]})");
  const fs::path bob = platform("Bob Byte_222") / "bob";
  ASSERT_EQ(hand_in("Bob Byte", root() / "bob", bob, " --answers " + answers.string()).exit_code,
            0);
  ASSERT_EQ(hand_in("Ada Lovelace", root() / "cy", platform("Mallory Moe_333") / "h").exit_code, 0);
  {  // Eve: Bob's hand-in with her name in every file that states it, handed in later.
    const fs::path eve = platform("Eve Evil_555") / "eve";
    fs::copy(bob, eve, fs::copy_options::recursive);
    json manifest = json::parse(read(eve / "manifest.json"));
    manifest["learner"] = "Eve Evil";
    std::string later = manifest["handed_in"].get<std::string>();
    later[0] = '3';
    manifest["handed_in"] = later;
    write(eve / "manifest.json", manifest.dump(2));
    edit(eve / "answers.json", "\"learner\": \"Bob Byte\"", "\"learner\": \"Eve Evil\"");
    edit(eve / "README.md", "Handed in by **Bob Byte**.", "Handed in by **Eve Evil**.");
    rehash_all(eve);
  }
  write(platform("Zed_999") / "zed.zip", "not a zip\n");
  const fs::path roster = dir_.path() / "roster.csv";
  write(roster,
        "id,name,email\n111,Ada Lovelace,ada@example.org\n222,Bob Byte,\n333,Mallory Moe,\n"
        "444,Grace Hopper,\n555,Eve Evil,\n999,Zed Zero,\n");
  const fs::path out = dir_.path() / "graded";
  const test::CliResult r = cli("lab grade " + course.string() + " --out " + out.string() +
                                " --lab " + lab().string() + " --roster " + roster.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("graded 5 hand-ins: 6 learner-lab rows, 1 verified, 4 with problems, 0 "
                          "earlier hand-ins replaced by a later one, 1 rows of roster learners "
                          "without a hand-in"),
            std::string::npos)
      << r.output;
  const auto rows = csv_rows(read(out / "class.csv"));
  ASSERT_EQ(rows.size(), 7u) << read(out / "class.csv");
  const auto ada = csv_row(rows, "roster_id", "111");
  EXPECT_EQ(cell(rows, ada, "learner"), "Ada Lovelace");
  EXPECT_EQ(cell(rows, ada, "verified"), "yes");
  EXPECT_EQ(cell(rows, ada, "lab_checked"), "yes");
  EXPECT_EQ(cell(rows, ada, "points"), "0");
  const auto mallory = csv_row(rows, "roster_id", "333");
  EXPECT_EQ(cell(rows, mallory, "learner"), "Ada Lovelace");
  EXPECT_NE(cell(rows, mallory, "problems")
                .find("manifest.json names Ada Lovelace (roster id 111), but it came in the "
                      "course platform's folder of Mallory Moe (roster id 333) (\"Mallory "
                      "Moe_333_...\"): handed in under another learner's name"),
            std::string::npos)
      << cell(rows, mallory, "problems");
  const auto bob_row = csv_row(rows, "roster_id", "222");
  EXPECT_NE(cell(rows, bob_row, "problems").find("holds the same run as the hand-in of Eve Evil ("),
            std::string::npos)
      << cell(rows, bob_row, "problems");
  EXPECT_NE(cell(rows, bob_row, "problems").find("this one was handed in first"), std::string::npos)
      << cell(rows, bob_row, "problems");
  // Quiz right in the end (1 point) and one written answer (1 point) of 3, by the default rubric.
  EXPECT_EQ(cell(rows, bob_row, "points"), "2");
  EXPECT_EQ(cell(rows, bob_row, "percent"), "66.67");
  const auto eve = csv_row(rows, "roster_id", "555");
  EXPECT_NE(cell(rows, eve, "problems").find("holds the same run as the hand-in of Bob Byte ("),
            std::string::npos);
  EXPECT_NE(cell(rows, eve, "problems").find("Bob Byte's was handed in first"), std::string::npos)
      << cell(rows, eve, "problems");
  const auto zed = csv_row(rows, "roster_id", "999");
  EXPECT_EQ(cell(rows, zed, "learner"), "Zed Zero");
  EXPECT_NE(cell(rows, zed, "problems").find("zed.zip: not a zip file ("), std::string::npos);
  const auto grace = csv_row(rows, "roster_id", "444");
  EXPECT_EQ(cell(rows, grace, "learner"), "Grace Hopper");
  EXPECT_EQ(cell(rows, grace, "problems"),
            "no hand-in of two-cpus found for this learner of " + roster.string());

  // Without the roster: the two hand-ins claiming Ada, from two platform folders, both stay.
  const fs::path plain = dir_.path() / "plain";
  const test::CliResult p =
      cli("lab grade " + course.string() + " --out " + plain.string() + " --lab " + lab().string());
  ASSERT_EQ(p.exit_code, 0) << p.output;
  const auto plain_rows = csv_rows(read(plain / "class.csv"));
  size_t claims = 0;
  for (const auto& row : plain_rows)
    claims +=
        cell(plain_rows, row, "problems").find("two hand-ins claim Ada Lovelace for two-cpus") !=
        std::string::npos;
  EXPECT_EQ(claims, 2u) << read(plain / "class.csv");
  // Graded without --lab, the lab of a file is not checked: its rows say so.
  const fs::path unchecked = dir_.path() / "unchecked";
  ASSERT_EQ(grade_unchecked(made / "ada", unchecked).exit_code, 0);
  const auto unchecked_rows = csv_rows(read(unchecked / "class.csv"));
  EXPECT_EQ(cell(unchecked_rows, unchecked_rows.at(1), "lab_checked"), "no");
}

// A learner's hand-in copied whole into a plain folder under another name is one hand-in in two
// places, not a second hand-in replacing the first: the row says where both are. The folder and
// the zip `lab hand-in --zip` packs beside it are one hand-in, and no problem.
TEST_F(Cheats, AHandInCopiedIntoAnotherFolderIsNamedNotTakenAsAResubmission) {
  const fs::path course = dir_.path() / "course";
  ASSERT_EQ(hand_in("Ada Lovelace", root() / "ada", course / "Ada Lovelace", " --zip").exit_code,
            0);
  const fs::path out = dir_.path() / "graded";
  const test::CliResult packed =
      cli("lab grade " + course.string() + " --out " + out.string() + " --lab " + lab().string());
  ASSERT_EQ(packed.exit_code, 0) << packed.output;
  auto rows = csv_rows(read(out / "class.csv"));
  ASSERT_EQ(rows.size(), 2u) << read(out / "class.csv");
  EXPECT_EQ(cell(rows, rows[1], "verified"), "yes") << cell(rows, rows[1], "problems");

  fs::copy(course / "Ada Lovelace", course / "Mallory Moe", fs::copy_options::recursive);
  const test::CliResult copied = cli("lab grade " + course.string() + " --out " + out.string() +
                                     " --lab " + lab().string() + " --force");
  ASSERT_EQ(copied.exit_code, 0) << copied.output;
  EXPECT_NE(copied.output.find("0 earlier hand-ins replaced by a later one"), std::string::npos)
      << copied.output;
  rows = csv_rows(read(out / "class.csv"));
  ASSERT_EQ(rows.size(), 2u) << read(out / "class.csv");
  EXPECT_EQ(cell(rows, rows[1], "verified"), "no");
  const std::string problems = cell(rows, rows[1], "problems");
  EXPECT_NE(problems.find("the same hand-in of Ada Lovelace for two-cpus (handed in "),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find((course / "Mallory Moe").string()), std::string::npos) << problems;
  EXPECT_NE(problems.find("one is a copy of the other; find out whose each is"), std::string::npos)
      << problems;
}

// A roster that cannot be read stops the grade in one line, naming the file and line.
TEST_F(Cheats, ABadRosterIsRefusedNamingItsLine) {
  const fs::path roster = dir_.path() / "roster.csv";
  for (const auto& [text, said] :
       {std::pair<std::string, std::string>{"name\nAda\n",
                                            ": its first line names no \"id\" and "
                                            "\"name\" columns"},
        {"id,name\n1,Ada\n1,Bob\n", ": line 3: the id 1 is there twice"},
        {"id,name\n2,\n", ": line 2: a learner needs an id and a name"}}) {
    write(roster, text);
    const test::CliResult r = cli("lab grade " + (root() / "ada").string() + " --out " +
                                  (dir_.path() / "o").string() + " --roster " + roster.string());
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("gpulab-cli: --roster " + roster.string() + said), std::string::npos)
        << r.output;
  }
}

}  // namespace
}  // namespace gpulab
