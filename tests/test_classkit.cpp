// The class kit: a hand-in made from real short CPU runs verifies, and each kind of forgery or
// damage (a number edited in a run.json, results.csv or answers.json, a run removed or taken from
// another learner's hand-in, a manifest hash, another version of the lab) is caught by
// `gpulab-cli lab verify`, naming the file; quiz attempts give a first-attempt and a final score.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "class_hand_ins.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/sha256.hpp"
#include "engine/classkit/hand_in_answers.hpp"
#include "engine/classkit/hand_in_verify.hpp"
#include "engine/labs/hand_in_manifest.hpp"
#include "engine/labs/lab.hpp"
#include "engine/labs/lab_hand_in.hpp"
#include "engine/labs/lab_progress.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;


// Expects verify to fail with a line naming `file` (under the hand-in) and saying `words`.
void expect_caught(const test::CliResult& r, const fs::path& file, const std::string& words) {
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(file.string() + ": "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(words), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("does not verify"), std::string::npos) << r.output;
}

TEST(Sha256, KnownDigestsOfBytesAndFiles) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  test::TempDir dir;
  write(dir.path() / "abc", "abc");
  EXPECT_EQ(sha256_file(dir.path() / "abc"), sha256_hex("abc"));
  EXPECT_THROW(sha256_file(dir.path() / "none"), RecordError);
}

TEST(ClassKitLab, ReadsQuizAttemptsAndTheWrittenQuestions) {
  const Lab lab = parse_lab(kLab, "two-cpus.md");
  ASSERT_TRUE(lab.ok());
  EXPECT_EQ(lab.quiz_attempts, 0);
  ASSERT_EQ(lab.questions.size(), 2u);
  EXPECT_EQ(lab.questions[0], "Which was faster?");
  EXPECT_EQ(lab.questions[1], "Why is that so? Think of the batch.");
  EXPECT_EQ(lab.sha256, sha256_hex(kLab));
  std::string once = kLab;
  once.replace(once.find("hardware: cpu"), 13, "hardware: cpu\nquiz-attempts: 1");
  EXPECT_EQ(parse_lab(once, "x.md").quiz_attempts, 1);
  for (const std::string value : {"none", "0", "-1", "1.5"}) {
    std::string bad_text = kLab;
    bad_text.replace(bad_text.find("hardware: cpu"), 13, "hardware: cpu\nquiz-attempts: " + value);
    const Lab bad = parse_lab(bad_text, "x.md");
    ASSERT_EQ(bad.problems.size(), 1u) << value;
    EXPECT_EQ(bad.problems[0].to_string(),
              "x.md:5: quiz-attempts: \"" + value +
                  "\" is not a whole number from 1 (leave it out for any number of answers)");
  }
}

// Attempts and written answers kept in the progress file in a shape gpulab does not write: the file
// is set aside whole, as any damaged progress file is, and the labs start clean.
TEST(ClassKitProgress, DamagedAttemptsOrWrittenAnswersSetTheProgressFileAside) {
  for (const std::string lab :
       {R"({"attempts": {"q": [{"time": "t"}]}})", R"({"attempts": {"q": "True"}})",
        R"({"attempts": ["True"]})", R"({"written": {"q": 3}})", R"({"written": ["x"]})"}) {
    test::TempDir dir;
    write(lab_progress_path(dir.path()), R"({"labs": {"x.md": )" + lab + "}}");
    std::string problem;
    const LabProgress progress = load_lab_progress(dir.path(), &problem);
    EXPECT_TRUE(progress.labs.empty()) << lab;
    EXPECT_NE(problem.find("it was moved to .gpulab-labs.json.damaged"), std::string::npos)
        << lab << ": " << problem;
  }
}

TEST_F(ClassKit, AGenuineHandInVerifies) {
  const test::CliResult r = verify(root() / "ada");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("verified: the hand-in of \"ada\" for \"two-cpus\""), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("2 runs against themselves and the lab's settings"), std::string::npos)
      << r.output;
  // What the hand-in holds: the runs as recorded (no weights), the manifest of every file.
  const json manifest = json::parse(read(root() / "ada" / "manifest.json"));
  EXPECT_EQ(manifest["learner"], "ada");
  EXPECT_EQ(manifest["lab"], "two-cpus");
  EXPECT_EQ(manifest["lab_sha256"], sha256_hex(kLab));
  EXPECT_EQ(manifest["files"]["runs/mlp-cpu/run.json"],
            sha256_file(root() / "ada" / "runs" / "mlp-cpu" / "run.json"));
  EXPECT_TRUE(manifest["files"].contains("results.csv"));
  EXPECT_TRUE(manifest["files"].contains("chart-1-loss.csv"));
  EXPECT_FALSE(manifest["files"].contains("manifest.json"));
  // Both runs' losses, one point a step (6 and 4 steps), and each run's test loss at its end.
  EXPECT_NE(r.output.find(" and 12 chart points recomputed from them"), std::string::npos)
      << r.output;
  const json answers = json::parse(read(root() / "ada" / "answers.json"));
  EXPECT_EQ(answers["format"], "gpulab-hand-in/2");
  EXPECT_EQ(answers["learner"], "ada");
  EXPECT_EQ(answers["written"].size(), 2u);
}

TEST_F(ClassKit, ANumberEditedInARunJsonIsCaught) {
  const fs::path h = copy_of("ada");
  const fs::path run_json = h / "runs" / "mlp-cpu" / "run.json";
  json info = json::parse(read(run_json));
  info["summary"]["images"] = info["summary"]["images"].get<int64_t>() - 16;
  write(run_json, info.dump(2));
  expect_caught(verify(h), run_json, "changed after the hand-in was written");
}

TEST_F(ClassKit, ARunJsonEditedWithItsManifestIsCaughtByItsOwnFigures) {
  const fs::path h = copy_of("ada");
  const fs::path run_json = h / "runs" / "mlp-cpu" / "run.json";
  json info = json::parse(read(run_json));
  info["summary"]["train_seconds"] = info["summary"]["train_seconds"].get<double>() * 20;
  write(run_json, info.dump(2));
  // The forger rewrites the manifest too: the run disagrees with itself all the same.
  json manifest = json::parse(read(h / "manifest.json"));
  manifest["files"]["runs/mlp-cpu/run.json"] = sha256_file(run_json);
  write(h / "manifest.json", manifest.dump(2));
  const test::CliResult r = verify(h);
  // A training time longer than its steps' sum is no sign by itself (a loaded machine spends time
  // between steps); its images/s and its clocks disagree with it.
  expect_caught(r, run_json, " images/s is not its 96 images over ");
  EXPECT_NE(r.output.find(run_json.string() + ": its "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" images/s is not its 96 images over "), std::string::npos) << r.output;
  // The table's images/s is the median step's (metrics.csv), which the edit left alone: the run's
  // own figures are what give it away.
}

TEST_F(ClassKit, ANumberEditedInResultsCsvIsCaught) {
  const fs::path h = copy_of("ada");
  const std::string csv = read(h / "results.csv");
  const size_t row = csv.find("\nmlp again,");
  ASSERT_NE(row, std::string::npos) << csv;
  std::string edited = csv;
  edited.replace(row, 15, "\nmlp again,400,");  // steps 4 -> 400
  write(h / "results.csv", edited);
  json manifest = json::parse(read(h / "manifest.json"));
  manifest["files"]["results.csv"] = sha256_file(h / "results.csv");
  write(h / "manifest.json", manifest.dump(2));
  expect_caught(verify(h), h / "results.csv",
                "row \"mlp again\", column \"steps\" says \"400\", but the runs in the hand-in "
                "give \"4\"");
}

// A chart's CSV holds the points its PNG and SVG draw: those `gpulab-cli export` draws from the
// hand-in's runs with its default options, as the Labs tab does.
TEST_F(ClassKit, AChartsPointsAreTheOnesExportDrawsFromTheHandInsRuns) {
  const fs::path h = root() / "ada";
  const fs::path out = dir_.path() / "loss.csv";
  const test::CliResult r =
      cli("export --chart loss --runs " + (h / "runs" / "mlp-cpu").string() + " " +
          (h / "runs" / "mlp-again").string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read(h / "chart-1-loss.csv"), read(out));
  EXPECT_NE(read(h / "README.md").find("[its points (CSV)](chart-1-loss.csv)"), std::string::npos)
      << read(h / "README.md");
}

TEST_F(ClassKit, APointEditedInAChartCsvIsCaught) {
  const fs::path h = copy_of("ada");
  const std::string csv = read(h / "chart-1-loss.csv");
  // The second run's first step: its loss made smaller, as a learner who wanted a lower curve.
  // (Its name ends in " ⚠" where other programs loaded this machine while it trained.)
  const size_t row = csv.find(",loss,,1,", csv.find("\nloss,mlp again · two-cpus"));
  ASSERT_NE(row, std::string::npos) << csv;
  const size_t value = row + std::string(",loss,,1,").size();
  const size_t comma = csv.find(',', value);
  std::string edited = csv;
  const std::string given = csv.substr(value, comma - value);
  edited.replace(value, comma - value, "0.125");
  write(h / "chart-1-loss.csv", edited);
  rehash(h, "chart-1-loss.csv");
  const test::CliResult r = verify(h);
  expect_caught(r, h / "chart-1-loss.csv", "line 9 (loss, mlp again · two-cpus");
  EXPECT_NE(r.output.find(", loss at 1), column \"value\" says \"0.125\", but the runs in the "
                          "hand-in give \"" +
                          given + "\""),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("results.csv"), std::string::npos) << r.output;  // only the chart
}

TEST_F(ClassKit, AChartsPointsRemovedOrAddedAreCaught) {
  const fs::path h = copy_of("ada");
  fs::remove(h / "chart-1-loss.csv");
  json manifest = json::parse(read(h / "manifest.json"));
  manifest["files"].erase("chart-1-loss.csv");
  write(h / "manifest.json", manifest.dump(2));
  expect_caught(verify(h), h / "chart-1-loss.csv",
                "missing; the runs in the hand-in draw this chart");
  // Points of a chart the lab's runs do not draw: the matrix-multiply chart of a lab without one.
  write(h / "chart-1-loss.csv", read(root() / "ada" / "chart-1-loss.csv"));
  write(h / "chart-matmul.csv", "panel,run,series,device,step,value,smoothed\n");
  rehash(h, "chart-1-loss.csv");
  rehash(h, "chart-matmul.csv");
  expect_caught(verify(h), h / "chart-matmul.csv",
                "points of a chart the runs in the hand-in do not draw");
}

TEST_F(ClassKit, AnAnswerEditedInAnswersJsonIsCaught) {
  const fs::path h = copy_of("ada");
  json answers = json::parse(read(h / "answers.json"));
  answers["answers"][0]["answer"] = "True";  // unanswered made right
  answers["answers"][0]["correct"] = false;
  write(h / "answers.json", answers.dump(2));
  const test::CliResult r = verify(h);
  expect_caught(r, h / "answers.json", "changed after the hand-in was written");
  EXPECT_NE(r.output.find("is marked wrong, but it is right"), std::string::npos) << r.output;
}

// A quiz forged with its manifest rewritten: a right answer listed four times scoring 4 of 1, no
// answers at all, attempts that are no list. Each of the lab's questions is listed once, in order.
TEST_F(ClassKit, AQuizForgedByRepeatingOrDroppingAnswersIsCaught) {
  const auto forged = [&](const std::function<void(json&)>& forge) {
    const fs::path h = copy_of("ada");
    json answers = json::parse(read(h / "answers.json"));
    forge(answers);
    write(h / "answers.json", answers.dump(2));
    rehash(h, "answers.json");
    return std::pair{h, verify(h)};
  };
  {
    const auto [h, r] = forged([](json& answers) {
      json right = answers["answers"][0];
      right["answer"] = "True";
      right["correct"] = true;
      right["attempts"] = json::array({{{"answer", "True"}, {"time", "t1"}, {"correct", true}}});
      right["first_correct"] = true;
      answers["answers"] = json::array({right, right, right, right});
      answers["score"] = 4;
      answers["first_attempt_score"] = 4;
    });
    expect_caught(r, h / "answers.json",
                  "lists 4 answers; the lab's quiz has 1 questions, each listed once, in order");
    EXPECT_NE(r.output.find("answer 2 is to \"A GPU has many cores.\", the lab's question 1"),
              std::string::npos)
        << r.output;
  }
  {
    const auto [h, r] = forged([](json& answers) {
      answers["answers"] = json::object();
      answers["score"] = 0;
      answers["first_attempt_score"] = 0;
    });
    expect_caught(r, h / "answers.json", "its \"answers\" is not a list of the quiz's 1 questions");
  }
  {
    const auto [h, r] = forged([](json& answers) { answers["answers"][0]["attempts"] = "x"; });
    expect_caught(r, h / "answers.json",
                  "\"A GPU has many cores.\": its \"attempts\" is \"x\", not a list of attempts");
  }
  {
    const auto [h, r] = forged([](json& answers) { answers["answers"][0]["correct"] = "yes"; });
    expect_caught(r, h / "answers.json", "is marked \"yes\", but it is wrong");
  }
}

// A README.md whose images lie outside the hand-in (re-hashed, so the manifest agrees): each is a
// problem naming its line, found without reading it; the class board shows the report with none.
TEST_F(ClassKit, AReportImageOutsideTheHandInIsNamed) {
  const fs::path h = copy_of("ada");
  std::ofstream(h / "README.md", std::ios::app)
      << "\n![chart](/dev/zero)\n![up](../../../../dev/zero)\n";
  rehash(h, "README.md");
  const test::CliResult r = test::run_command_for(
      std::string(GPULAB_CLI_PATH) + " lab verify " + h.string() + " --lab " + lab().string(), 60);
  ASSERT_FALSE(r.timed_out);
  expect_caught(r, h / "README.md",
                ": the image \"/dev/zero\" is an absolute path; a page shows only image files in "
                "its own folder");
  EXPECT_NE(r.output.find("the image \"../../../../dev/zero\" points outside the page's folder"),
            std::string::npos)
      << r.output;
  // The charts a hand-in shows are its own files: a genuine one names none.
  EXPECT_EQ(verify(copy_of("bob")).exit_code, 0);
}

TEST_F(ClassKit, ARemovedRunIsCaught) {
  const fs::path h = copy_of("ada");
  fs::remove_all(h / "runs" / "mlp-again");
  const test::CliResult r = verify(h);
  expect_caught(r, h / "runs" / "mlp-again" / "run.json", "listed in manifest.json but missing");
  EXPECT_NE(r.output.find((h / "runs" / "mlp-again").string() + ": cannot be read"),
            std::string::npos)
      << r.output;
}

TEST_F(ClassKit, AClassmatesRunSwappedInIsCaught) {
  const fs::path h = copy_of("ada");
  fs::remove_all(h / "runs" / "mlp-cpu");
  fs::copy(root() / "bob" / "runs" / "mlp-cpu", h / "runs" / "mlp-cpu",
           fs::copy_options::recursive);
  const test::CliResult r = verify(h);
  expect_caught(r, h / "runs" / "mlp-cpu" / "metrics.csv", "changed after the hand-in was written");
  EXPECT_NE(r.output.find((h / "results.csv").string() + ": row \"mlp cpu\""), std::string::npos)
      << r.output;
}

TEST_F(ClassKit, OneRunHeldByTwoExperimentsIsCaught) {
  const fs::path h = copy_of("ada");
  json manifest = json::parse(read(h / "manifest.json"));
  for (json& e : manifest["experiments"])
    if (e["experiment"] == "mlp again") e["run"] = "runs/mlp-cpu";
  write(h / "manifest.json", manifest.dump(2));
  const test::CliResult r = verify(h);
  expect_caught(r, h / "runs" / "mlp-cpu",
                "holds the same run as runs/mlp-cpu (their metrics.csv are identical)");
  // Its settings are not the experiment's either.
  EXPECT_NE(r.output.find("its setting \"batch\" is 16, but the lab's experiment \"mlp again\" "
                          "sets 32"),
            std::string::npos)
      << r.output;
}

TEST_F(ClassKit, AManifestHashMismatchAndAnAddedFileAreCaught) {
  const fs::path h = copy_of("ada");
  edit(h / "manifest.json", "\"README.md\": \"", "\"README.md\": \"0");
  write(h / "notes.txt", "extra");
  const test::CliResult r = verify(h);
  expect_caught(r, h / "README.md", "manifest.json says 0");
  EXPECT_NE(r.output.find((h / "notes.txt").string() +
                          ": not listed in manifest.json: added after the hand-in was written"),
            std::string::npos)
      << r.output;
}

TEST_F(ClassKit, ALabFileThatDiffersFromTheInstructorsIsCaught) {
  const fs::path other = dir_.path() / "two-cpus.md";
  std::string changed = kLab;
  changed.replace(changed.find("steps: 6"), 8, "steps: 7");
  write(other, changed);
  const test::CliResult r =
      cli("lab verify " + (root() / "ada").string() + " --lab " + other.string());
  expect_caught(r, root() / "ada" / "manifest.json",
                "the lab's SHA-256 is " + sha256_hex(kLab) + ", but --lab " + other.string() +
                    " has " + sha256_hex(changed) +
                    ": the hand-in was done from another version of the lab");
}

TEST_F(ClassKit, AFolderWithoutAManifestSaysWhatToDo) {
  const fs::path h = copy_of("ada");
  fs::remove(h / "manifest.json");
  expect_caught(verify(h), h / "manifest.json",
                "missing: this folder is no checkable hand-in; hand the lab in again with "
                "gpulab-cli lab hand-in LAB --learner NAME");
}

// Damage and forgery the manifest cannot see (it was rewritten each time), each named: a setting
// changed in run.json, time stamps that go backwards, a run made after the hand-in, another
// learner's name in answers.json, more attempts than the lab takes, a manifest pointing out of
// the folder, a manifest that is not JSON, and a folder that is no hand-in at all.
TEST_F(ClassKit, EachInconsistencyTheManifestCannotSeeIsNamed) {
  {
    const fs::path h = copy_of("ada");
    const fs::path run_json = h / "runs" / "mlp-again" / "run.json";
    json info = json::parse(read(run_json));
    info["config"]["seed"] = 6;
    write(run_json, info.dump(2));
    rehash(h, "runs/mlp-again/run.json");
    expect_caught(verify(h), run_json,
                  "its setting \"seed\" is 6, but the lab's experiment \"mlp again\" sets 5");
  }
  {
    const fs::path h = copy_of("ada");
    const fs::path metrics = h / "runs" / "mlp-cpu" / "metrics.csv";
    std::string csv = read(metrics);
    std::istringstream lines(csv);
    std::string header, first, second;
    std::getline(lines, header);
    std::getline(lines, first);
    std::getline(lines, second);
    // The second row's time stamp (the third column) before the first's.
    size_t at = second.find(',', second.find(',') + 1) + 1;
    std::string backwards = second;
    backwards.replace(at, second.find(',', at) - at, "0.000001");
    csv.replace(csv.find(second), second.size(), backwards);
    write(metrics, csv);
    rehash(h, "runs/mlp-cpu/metrics.csv");
    expect_caught(verify(h), metrics, "its time stamps go backwards at step 2");
  }
  {
    const fs::path h = copy_of("ada");
    const fs::path run_json = h / "runs" / "mlp-cpu" / "run.json";
    json info = json::parse(read(run_json));
    info["created"] = "2999-01-01T00:00:00Z";
    write(run_json, info.dump(2));
    rehash(h, "runs/mlp-cpu/run.json");
    expect_caught(verify(h), run_json,
                  "created 2999-01-01T00:00:00Z, after the hand-in was written");
  }
  {
    const fs::path h = copy_of("ada");
    json answers = json::parse(read(h / "answers.json"));
    answers["learner"] = "bob";
    answers["answers"][0]["answer"] = "True";
    answers["answers"][0]["correct"] = true;
    answers["answers"][0]["attempts"] =
        json::array({{{"answer", "True"}, {"time", "t2"}, {"correct", true}},
                     {{"answer", "True"}, {"time", "t1"}, {"correct", true}}});
    answers["answers"][0]["first_correct"] = true;
    answers["score"] = 1;
    answers["first_attempt_score"] = 1;
    write(h / "answers.json", answers.dump(2));
    rehash(h, "answers.json");
    const test::CliResult r = verify(h);
    expect_caught(r, h / "answers.json", "names the learner \"bob\", manifest.json \"ada\"");
    EXPECT_NE(r.output.find("its attempts' times go backwards"), std::string::npos) << r.output;
  }
  {
    const fs::path h = copy_of("ada");
    json manifest = json::parse(read(h / "manifest.json"));
    manifest["files"]["../../etc/passwd"] = "0";
    write(h / "manifest.json", manifest.dump(2));
    expect_caught(verify(h), h / "manifest.json",
                  "lists \"../../etc/passwd\", which is outside the hand-in");
  }
  {
    // README.md swapped for a link to a file of the same bytes elsewhere.
    const fs::path h = copy_of("ada");
    fs::copy_file(h / "README.md", dir_.path() / "elsewhere.md");
    fs::remove(h / "README.md");
    fs::create_symlink(dir_.path() / "elsewhere.md", h / "README.md");
    expect_caught(verify(h), h / "README.md", "a link, where the hand-in wrote a file");
  }
  {
    const fs::path h = copy_of("ada");
    write(h / "manifest.json", "{\"format\": ");
    expect_caught(verify(h), h / "manifest.json", "not JSON (");
  }
  const test::CliResult none = verify(dir_.path() / "nothing-here");
  expect_caught(none, dir_.path() / "nothing-here",
                "not a folder; give a hand-in folder (it holds manifest.json)");
}

// More answers than a lab's quiz-attempts allow, and a written answer of a hand-in whose lab takes
// one: the lab file here says so, and the hand-in was made from it.
TEST_F(ClassKit, MoreAttemptsThanTheLabTakesAreNamed) {
  std::string once = kLab;
  once.replace(once.find("hardware: cpu"), 13, "hardware: cpu\nquiz-attempts: 1");
  const fs::path lab_file = dir_.path() / "two-cpus.md";
  write(lab_file, once);
  const fs::path h = copy_of("ada");
  json answers = json::parse(read(h / "answers.json"));
  answers["answers"][0]["answer"] = "True";
  answers["answers"][0]["correct"] = true;
  answers["answers"][0]["attempts"] =
      json::array({{{"answer", "False"}, {"time", "t1"}, {"correct", false}},
                   {{"answer", "True"}, {"time", "t2"}, {"correct", true}}});
  answers["answers"][0]["first_correct"] = false;
  answers["score"] = 1;
  answers["first_attempt_score"] = 0;
  write(h / "answers.json", answers.dump(2));
  json manifest = json::parse(read(h / "manifest.json"));
  manifest["files"]["answers.json"] = sha256_file(h / "answers.json");
  manifest["lab_sha256"] = sha256_hex(once);
  write(h / "manifest.json", manifest.dump(2));
  const test::CliResult r = cli("lab verify " + h.string() + " --lab " + lab_file.string());
  expect_caught(r, h / "answers.json", "\"A GPU has many cores.\" has 2 attempts; the lab takes 1");
}

TEST_F(ClassKit, ReplayAgreesForAGenuineRunAndNotForEditedLosses) {
  const std::string data = " --data-dir " + (root() / "data").string();
  const test::CliResult good = verify(root() / "ada", " --replay 3" + data);
  EXPECT_EQ(good.exit_code, 0) << good.output;
  EXPECT_NE(good.output.find("runs/mlp-cpu: replay agrees: 3 steps replayed"), std::string::npos)
      << good.output;
  EXPECT_NE(good.output.find("BLAS recorded with "), std::string::npos) << good.output;

  // Losses typed in: every other file agrees with them once the manifest is rewritten.
  const fs::path h = copy_of("ada");
  const fs::path metrics = h / "runs" / "mlp-cpu" / "metrics.csv";
  forge_first_loss(h);
  expect_caught(verify(h, " --replay 3" + data), metrics, "replay disagrees: 3 steps replayed");
}

TEST_F(ClassKit, AWrongThenRightAnswerScoresWrongFirstAndRightFinal) {
  const Lab lab = load_lab_file(ClassKit::lab());
  ASSERT_TRUE(lab.ok());
  // The window's record: both runs of `lab run`, and two answers to the one question.
  LabProgress progress;
  LabRecord& record = progress.labs[lab.source];
  record.runs["mlp cpu"] = (root() / "ada" / "runs" / "mlp-cpu").string();
  record.runs["mlp again"] = (root() / "ada" / "runs" / "mlp-again").string();
  const std::string q = lab.quiz[0].question;
  ASSERT_TRUE(record_quiz_answer(lab, record, q, "False", "2026-11-27T08:00:00Z"));
  ASSERT_TRUE(record_quiz_answer(lab, record, q, "True", "2026-11-27T08:01:00Z"));
  record.written[lab.questions[0]] = "The small batch.";
  const fs::path runs = dir_.path() / "runs";
  fs::copy(root() / "ada" / "runs", runs, fs::copy_options::recursive);
  record.runs["mlp cpu"] = (runs / "mlp-cpu").string();
  record.runs["mlp again"] = (runs / "mlp-again").string();
  std::string problem;
  ASSERT_TRUE(save_lab_progress(runs, progress, &problem)) << problem;
  // Kept across a restart: read back as written.
  const LabProgress again = load_lab_progress(runs, &problem);
  ASSERT_EQ(again.labs.at(lab.source).attempts.at(q).size(), 2u);

  const fs::path out = dir_.path() / "hand-in";
  const test::CliResult r =
      cli("lab hand-in " + ClassKit::lab().string() + " --learner \"Ada L\" --runs-dir " +
          runs.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("hand-in of \"Two CPUs\" by Ada L: 2 of 2 experiments with results, quiz "
                          "1 of 1 right (0 at the first attempt), 1 of 2 questions answered in "
                          "words; "),
            std::string::npos)
      << r.output;
  const json answers = json::parse(read(out / "answers.json"));
  EXPECT_EQ(answers["score"], 1);
  EXPECT_EQ(answers["first_attempt_score"], 0);
  EXPECT_EQ(answers["answers"][0]["first_correct"], false);
  EXPECT_EQ(answers["answers"][0]["correct"], true);
  ASSERT_EQ(answers["answers"][0]["attempts"].size(), 2u);
  EXPECT_EQ(answers["answers"][0]["attempts"][0]["answer"], "False");
  EXPECT_EQ(answers["answers"][0]["attempts"][0]["time"], "2026-11-27T08:00:00Z");
  EXPECT_EQ(answers["written"][0]["answer"], "The small batch.");
  EXPECT_TRUE(answers["written"][1]["answer"].is_null());
  EXPECT_NE(read(out / "README.md").find("Right at the first attempt: 0 of 1."), std::string::npos);
  const test::CliResult v = verify(out);
  EXPECT_EQ(v.exit_code, 0) << v.output;
  // A /2 answers.json is still an answers file for `lab run --answers`: its final answers.
  EXPECT_EQ(read_given_answers(out / "answers.json", lab, "--answers"), std::vector<int>{0});

  // quiz-attempts: 1 takes one answer per question.
  Lab once = lab;
  once.quiz_attempts = 1;
  LabRecord single;
  EXPECT_TRUE(record_quiz_answer(once, single, q, "False", "t1"));
  EXPECT_FALSE(record_quiz_answer(once, single, q, "True", "t2"));
  EXPECT_EQ(single.answers.at(q), "False");
  EXPECT_EQ(quiz_attempts_left(once, &single, q), 0);
}

// answers.json as the class board shows it: the scores, each attempt in order with its time and
// mark, the final answer, and the written answers with the learner's markup shown as text.
TEST(HandInAnswers, EveryAttemptBothScoresAndTheWrittenAnswersAreShown) {
  const std::string answers = R"({"format": "gpulab-hand-in/2", "score": 1, "questions": 2,
    "first_attempt_score": 0, "written_answered": 1,
    "answers": [
      {"question": "A GPU has many cores.", "answer": "True", "correct": true,
       "attempts": [{"answer": "False", "time": "2026-11-27T08:00:00Z", "correct": false},
                    {"answer": "True", "time": "2026-11-27T08:01:00Z", "correct": true}]},
      {"question": "What dominates training?", "answer": null, "correct": false,
       "attempts": []}],
    "written": [{"question": "Which was faster?", "answer": "The GPU <b>by far</b>,\n*10x*."},
                {"question": "Why?", "answer": null}]})";
  const std::string md = hand_in_answers_markdown(answers);
  for (const char* part :
       {"Quiz: 1 of 2 right in the end, 0 right at the first attempt.",
        "**1. A GPU has many cores.**\n\nFinal answer: True ✓ · attempts in order: False ✗ "
        "(2026\\-11\\-27T08:00:00Z), True ✓ (2026\\-11\\-27T08:01:00Z)\n\n",
        "**2. What dominates training?**\n\nNot answered.\n\n", "### Written answers (1 of 2)",
        "**Which was faster?**\n\n> The GPU &lt;b\\>by far&lt;/b\\>,\n> \\*10x\\*.\n",
        "**Why?**\n\n*Not answered.*"})
    EXPECT_NE(md.find(part), std::string::npos) << part << "\nin\n" << md;
  // Damaged or of another shape: one line, and what to do.
  EXPECT_EQ(hand_in_answers_markdown("[1, 2]"),
            "answers.json holds no object of answers; lab verify names what is wrong with it.\n");
  const std::string cut = hand_in_answers_markdown("{\"score\": ");
  EXPECT_EQ(cut.rfind("answers.json could not be read (", 0), 0u) << cut;
  EXPECT_EQ(std::count(cut.begin(), cut.end(), '\n'), 1);
  // Fields of the wrong type are shown as unknown, never thrown on.
  const std::string odd = hand_in_answers_markdown(
      R"({"score": "ten", "answers": [{"question": 3, "attempts": "none"}], "written": 7})");
  EXPECT_NE(odd.find("Quiz: ? of ? right in the end, ? right at the first attempt."),
            std::string::npos)
      << odd;
  EXPECT_NE(odd.find("**1. **\n\nNot answered.\n\n"), std::string::npos) << odd;
}

TEST_F(ClassKit, HandInWithoutALearnerIsRefusedNamingTheFlag) {
  const test::CliResult r =
      cli("lab hand-in " + lab().string() + " --runs-dir " + (root() / "ada").string() + " --out " +
          (dir_.path() / "x").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--learner is required"), std::string::npos) << r.output;
  const test::CliResult blank =
      cli("lab hand-in " + lab().string() + " --learner ' ' --runs-dir " +
          (root() / "ada").string() + " --out " + (dir_.path() / "x").string());
  EXPECT_EQ(blank.exit_code, 1);
  EXPECT_NE(blank.output.find("gpulab-cli: --learner: the name is empty; give the learner's name, "
                              "e.g. --learner \"Ada Lovelace\""),
            std::string::npos)
      << blank.output;
  EXPECT_FALSE(fs::exists(dir_.path() / "x"));
}

}  // namespace
}  // namespace gpulab
