// Labs: every shipped lab reads cleanly and names only presets, flags and devices that exist;
// each kind of mistake in a lab file is reported at its line; quizzes grade with their feedback;
// a lab's hand-in folder; `gpulab-cli lab check|list|run|hand-in` and `bench matmul` as an
// instructor or a learner meets them.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "bad_inputs.hpp"
#include "engine/analysis/run_figures.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/text.hpp"
#include "engine/devices/devices.hpp"
#include "engine/devices/matmul_bench.hpp"
#include "engine/labs/lab.hpp"
#include "engine/labs/lab_charts.hpp"
#include "engine/labs/lab_hand_in.hpp"
#include "engine/labs/lab_progress.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/labs/matmul_chart.hpp"
#include "engine/labs/reference_runs.hpp"
#include "engine/training/experiment.hpp"
#include "engine/training/trainer.hpp"
#include "gpulab/build_config.hpp"
#include "io/install_paths.hpp"
#include "recorded_runs.hpp"
#include "reference_run_fixture.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

const std::string kHeader = "---\ntitle: T\nminutes: 5\nhardware: cpu, gpu\n---\n";

Lab parse(const std::string& body) { return parse_lab(kHeader + body, "x.md"); }

// The problems of a lab as "line: problem" lines, for failure messages.
std::string problems(const Lab& lab) {
  std::string out;
  for (const auto& p : lab.problems) out += p.to_string() + "\n";
  return out;
}

// Expects exactly one problem, at `line`, mentioning `words`.
void expect_problem(const std::string& body, int line, const std::string& words) {
  const Lab lab = parse(body);
  ASSERT_EQ(lab.problems.size(), 1u) << problems(lab);
  EXPECT_EQ(lab.problems[0].line, line) << problems(lab);
  EXPECT_EQ(lab.problems[0].file, "x.md");
  EXPECT_NE(lab.problems[0].problem.find(words), std::string::npos) << problems(lab);
}

TEST(Labs, EveryShippedLabReadsAndNamesWhatExists) {
  const std::vector<Lab> labs = builtin_labs();
  ASSERT_GE(labs.size(), 2u);
  for (const Lab& lab : labs) {
    EXPECT_TRUE(lab.ok()) << problems(lab);
    EXPECT_FALSE(lab.title.empty()) << lab.name;
    EXPECT_GT(lab.minutes, 0) << lab.name;
    EXPECT_FALSE(lab.experiments.empty()) << lab.name;
    EXPECT_FALSE(lab.tables.empty()) << lab.name;
    EXPECT_FALSE(lab.quiz.empty()) << lab.name;
    for (const auto& e : lab.experiments) {
      if (e.bench.empty()) {
        EXPECT_TRUE(is_preset(e.model_name)) << lab.name << ": " << e.model_name;
        EXPECT_NO_THROW(plan_model(e.experiment.model)) << lab.name << ": " << e.name;
      }
      EXPECT_NO_THROW(cuda_device_index(e.experiment.backend.device)) << e.name;
    }
  }
  // The two labs the course starts with, by the names `lab run` takes.
  const auto names = builtin_lab_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "cnn-on-gpu"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "gpu-vs-cpu-matmul"), names.end());
  for (const char* name : {"feeding-the-gpu", "single-vs-multi-gpu", "watching-the-hardware",
                           "mixed-precision", "many-jobs-or-one"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

// A lab that runs on a GPU says what stands in for its GPU experiments on a machine without one,
// and its text agrees with the reference runs that ship (resources/reference-runs): where one
// ships for a GPU experiment, the text names the GPU and the day it was recorded on; where none
// does, it says that no recorded GPU runs ship. Nothing else stands in for the learner's runs.
TEST(Labs, GpuLabsSayWhichRecordedGpuRunsShipWithThem) {
  ASSERT_EQ(std::getenv(kReferenceRunsVariable), nullptr) << "the shipped folder is checked";
  const ReferenceRuns shipped = load_reference_runs(reference_runs_dir());
  EXPECT_TRUE(shipped.problems.empty()) << shipped.problems.front();
  std::set<std::string> labs_with_references;
  for (const Lab& lab : builtin_labs()) {
    std::string text;
    for (const auto& block : lab.blocks)
      if (block.kind == LabBlock::Kind::Text) text += block.text;
    std::replace(text.begin(), text.end(), '\n', ' ');  // a sentence may run over lines
    bool gpu_experiment = false;
    std::set<std::string> recorded;  // "NVIDIA H100 80GB HBM3 on 2026-11-27"
    for (const LabExperiment& e : lab.experiments) {
      if (!e.needs_gpu()) continue;
      gpu_experiment = true;
      if (auto reference = reference_result(lab, e, shipped)) {
        const std::string& on = reference->recorded_on;  // "NVIDIA H100 80GB HBM3, 2026-11-27"
        ASSERT_NE(on.find(", "), std::string::npos) << on;
        recorded.insert(on.substr(0, on.rfind(", ")) + " on " + on.substr(on.rfind(", ") + 2));
      }
    }
    if (!gpu_experiment) continue;
    if (recorded.empty()) {
      EXPECT_NE(text.find("No recorded GPU runs ship with gpulab yet"), std::string::npos)
          << lab.name;
      continue;
    }
    labs_with_references.insert(lab.name);
    EXPECT_EQ(text.find("No recorded GPU runs ship"), std::string::npos) << lab.name;
    for (const std::string& on : recorded)
      EXPECT_NE(text.find("Reference runs recorded on an " + on + " ship with gpulab"),
                std::string::npos)
          << lab.name << ": " << on;
  }
  // The labs whose one-GPU experiments were run on an H100 or an H200 and ship.
  EXPECT_EQ(labs_with_references,
            (std::set<std::string>{"cnn-on-gpu", "feeding-the-gpu", "gpu-vs-cpu-matmul",
                                   "many-jobs-or-one", "mixed-precision", "single-vs-multi-gpu",
                                   "watching-the-hardware"}));
}

TEST(Labs, ShippedQuizzesHaveTheCourseQuestionsWithReasons) {
  for (const Lab& lab : builtin_labs())
    for (const auto& q : lab.quiz)
      for (const auto& c : q.choices) EXPECT_FALSE(c.why.empty()) << lab.name << ": " << q.question;
  // "Loading small chunks" in the lab about feeding the GPU, false with its reason.
  bool feeding_small_chunks = false;
  for (const auto& q : load_lab("feeding-the-gpu").quiz)
    if (q.question.find("loading small chunks of data") != std::string::npos) {
      feeding_small_chunks = true;
      EXPECT_TRUE(grade(q, 1).correct);
      EXPECT_NE(grade(q, 0).why.find("copied"), std::string::npos) << grade(q, 0).why;
    }
  EXPECT_TRUE(feeding_small_chunks);
  const Lab lab = load_lab("cnn-on-gpu");
  bool small_chunks = false, many_cores = false;
  for (const auto& q : lab.quiz) {
    for (const auto& c : q.choices) EXPECT_FALSE(c.why.empty()) << q.question;
    if (q.question.find("loading small chunks of data") != std::string::npos) {
      small_chunks = true;
      EXPECT_TRUE(q.true_false);
      EXPECT_FALSE(grade(q, 0).correct);  // "True" is wrong
      EXPECT_TRUE(grade(q, 1).correct);
      EXPECT_NE(grade(q, 0).why.find("copied"), std::string::npos) << grade(q, 0).why;
    }
    if (q.question.find("many cores") != std::string::npos) {
      many_cores = true;
      EXPECT_TRUE(grade(q, 0).correct);
    }
  }
  EXPECT_TRUE(small_chunks);
  EXPECT_TRUE(many_cores);
}

TEST(Labs, ReadsTheHeaderTextCodeAndBlocksInOrder) {
  const Lab lab = parse(
      "# Intro\nSome text.\n\n```bash\ngpulab-cli devices\n```\n"
      "```experiment\nname: a\nmodel: mlp\ndevice: cpu\nbatch: 32\nsteps: 10\n"
      "weight_decay: 0.01\ntarget-accuracy: 90\nshuffle: off\n```\n"
      "```experiment\nname: b\nbaseline: yes\nmodel: lenet5\nmax_steps: 5\nepochs: 2\n```\n"
      "```table\ncolumns: experiment, images/s, ms per step, speedup, time to target\n"
      "experiments: b, a\n```\n"
      "```chart\nkind: throughput\ntitle: Speed\n```\n"
      "```quiz\nquestion: Q?\nanswer: true\nwhy: Because.\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  EXPECT_EQ(lab.title, "T");
  EXPECT_EQ(lab.minutes, 5);
  EXPECT_EQ(lab.hardware_text(), "cpu, gpu");
  ASSERT_EQ(lab.blocks.size(), 7u);
  EXPECT_EQ(lab.blocks[0].kind, LabBlock::Kind::Text);
  EXPECT_EQ(lab.blocks[0].line, 6);
  EXPECT_EQ(lab.blocks[1].kind, LabBlock::Kind::Code);
  EXPECT_EQ(lab.blocks[1].language, "bash");
  EXPECT_EQ(lab.blocks[1].text, "gpulab-cli devices\n");
  EXPECT_EQ(lab.blocks[2].kind, LabBlock::Kind::Experiment);
  EXPECT_EQ(lab.blocks[4].kind, LabBlock::Kind::Table);
  EXPECT_EQ(lab.blocks[5].kind, LabBlock::Kind::Chart);
  EXPECT_EQ(lab.blocks[6].kind, LabBlock::Kind::Quiz);

  const LabExperiment& a = lab.experiments[0];
  EXPECT_EQ(a.experiment.model.name, "mlp");
  EXPECT_EQ(a.experiment.train.batch, 32);
  EXPECT_EQ(a.experiment.backend.batch, 32);
  EXPECT_EQ(a.experiment.train.max_steps, 10);
  EXPECT_EQ(a.experiment.train.epochs, 0);  // a step budget alone, as on the command line
  EXPECT_FLOAT_EQ(a.experiment.train.optimizer.weight_decay, 0.01f);
  EXPECT_DOUBLE_EQ(a.experiment.train.target_accuracy, 0.9);
  EXPECT_FALSE(a.experiment.train.shuffle);
  EXPECT_EQ(lab.experiments[1].experiment.train.epochs, 2);
  EXPECT_EQ(lab.baseline()->name, "b");
  EXPECT_EQ(lab.tables[0].experiments, (std::vector<std::string>{"b", "a"}));
}

TEST(Labs, ReportsEachMistakeAtItsLine) {
  // Lines count from the header's first line; the body starts on line 6.
  expect_problem("```experiment\nname: a\nbatchsize: 32\n```\n", 8, "unknown key \"batchsize\"");
  expect_problem("text\n```experiment\nname: a\nmodel: resnet50\n```\n", 9,
                 "unknown model preset \"resnet50\"");
  expect_problem("```experiment\nname: a\ndevice: tpu:0\n```\n", 6, "--device tpu:0");
  expect_problem("```experiment\nname: a\nprecision: fp16\n```\n", 8, "precision");
  expect_problem("```experiment\nname: a\nbatch: many\n```\n", 8, "not a whole number");
  expect_problem("```experiment\nname: a\nbatch: 0\n```\n", 8,
                 "batch: 0 is out of range: give a whole number from 1 to 65536");
  expect_problem("```experiment\nmodel: mlp\n```\n", 6, "no name");
  expect_problem("```experiment\nname: a\nbench: fft\nsizes: 32\n```\n", 8, "bench: unknown");
  expect_problem("intro\n\n```quiz\nquestion: Q?\nanswer: true\n", 8, "not closed");
  expect_problem("```quiz\nquestion: Q?\n- [ ] one\n  why: no\n- [ ] two\n  why: no\n```\n", 6,
                 "no correct answer");
  expect_problem("```quiz\nquestion: Q?\n```\n", 6, "no correct answer");
  expect_problem("```quiz\nquestion: Q?\nanswer: maybe\nwhy: w\n```\n", 8, "not true or false");
  expect_problem("```quiz\nquestion: Q?\n- [x] one\n  why: yes\n- [ ] two\n```\n", 6,
                 "\"two\" has no why");
  expect_problem("```table\ncolumns: experiment, flops\n```\n", 7, "unknown column \"flops\"");
  expect_problem("```table\ncolumns: experiment\nexperiments: ghost\n```\n", 8,
                 "no experiment is named \"ghost\"");
  expect_problem("```chart\nkind: pie\n```\n", 7, "unknown chart \"pie\"");
  expect_problem("```experiment\nname: a\ncompare-to: b\n```\n", 8, "no experiment is named \"b\"");
  expect_problem("```experiment\nname: a\n```\n```experiment\nname: a\n```\n", 9,
                 "two experiments are named \"a\"");
  expect_problem(
      "```experiment\nname: a\nbaseline: yes\n```\n```experiment\nname: b\n"
      "baseline: yes\n```\n",
      10, "a lab has one baseline");
  const Lab cpu_only = parse_lab(
      "---\ntitle: T\nminutes: 5\nhardware: cpu\n---\n```experiment\nname: a\ndevice: "
      "cuda:0\n```\n",
      "c.md");
  ASSERT_EQ(cpu_only.problems.size(), 1u) << problems(cpu_only);
  EXPECT_EQ(cpu_only.problems[0].line, 6);
  EXPECT_NE(cpu_only.problems[0].problem.find("hardware: does not name gpu"), std::string::npos);
  const Lab no_header = parse_lab("# A lab\n", "y.md");
  ASSERT_FALSE(no_header.ok());
  EXPECT_EQ(no_header.problems[0].to_string().rfind("y.md:1: ", 0), 0u) << problems(no_header);
  const Lab bad_header = parse_lab("---\ntitle: T\nminutes: soon\nhardware: tpu\n---\n", "z.md");
  ASSERT_EQ(bad_header.problems.size(), 2u) << problems(bad_header);
  EXPECT_EQ(bad_header.problems[0].line, 3);
  EXPECT_EQ(bad_header.problems[1].line, 4);
}

TEST(Labs, ABenchmarkTakesSizesAsBenchMatmulDoes) {
  const Lab lab = parse("```experiment\nname: m\nbench: matmul\nsizes: 32,...,256, 1000\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  EXPECT_EQ(lab.experiments[0].sizes, (std::vector<int>{32, 64, 128, 256, 1000}));
  expect_problem("```experiment\nname: m\nbench: matmul\nsizes: 32, big\n```\n", 9,
                 "sizes: --sizes: \"big\" is not a matrix size");
  EXPECT_EQ(parse_matrix_sizes("1, 7,...,28"), (std::vector<int>{1, 7, 14, 28}));
  EXPECT_THROW(parse_matrix_sizes("0"), ConfigError);
  EXPECT_THROW(parse_matrix_sizes("...,64"), ConfigError);
  EXPECT_THROW(parse_matrix_sizes("32,64,"), ConfigError);  // a typo is named, not dropped
  expect_problem("```experiment\nname: m\nbench: matmul\n```\n", 6, "needs sizes");
}

// Issue 41, item 10: an inference benchmark takes its batch sizes as bench inference --batch does,
// and the model it times; its problems name the lab's key, not a flag.
TEST(Labs, AnInferenceBenchmarkTakesBatchSizesAndAModel) {
  const Lab lab = parse(
      "```experiment\nname: i\nbench: inference\nmodel: mlp\nthreads: 1\nsizes: 1, 64\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  const LabExperiment& e = lab.experiments[0];
  EXPECT_EQ(e.sizes, (std::vector<int>{1, 64}));
  EXPECT_EQ(e.experiment.model.name, "mlp");
  EXPECT_EQ(e.experiment.backend.threads, 1);
  expect_problem("```experiment\nname: i\nbench: inference\nsizes: 1, 0\n```\n", 9,
                 "sizes: \"0\" is not a batch size from 1 to 65536");
  expect_problem("```experiment\nname: i\nbench: inference\n```\n", 6,
                 "a bench: inference experiment needs sizes: its batch sizes");
  expect_problem("```experiment\nname: i\nbench: inference\nmodel: nonet\nsizes: 1\n```\n", 9,
                 "model: ");
  expect_problem("```experiment\nname: i\nbench: gemv\nsizes: 1\n```\n", 8,
                 "the benchmarks are matmul and inference");
}

TEST(Labs, AModelFileIsFoundBesideTheLab) {
  test::TempDir dir;
  save_experiment(dir.path() / "net.json", Experiment{preset("mlp"), {}, {}});
  {
    std::ofstream lab(dir.path() / "mine.md");
    lab << kHeader << "```experiment\nname: a\nmodel: net.json\n```\n";
  }
  const Lab lab = load_lab_file(dir.path() / "mine.md");
  EXPECT_TRUE(lab.ok()) << problems(lab);
  EXPECT_EQ(lab.name, "mine");
  EXPECT_EQ(lab.experiments[0].experiment.model.layers.size(), preset("mlp").layers.size());
  EXPECT_THROW(load_lab("no-such-lab"), ConfigError);
}

TEST(Labs, QuizGradesEachAnswerWithItsReasonAndScores) {
  const Lab lab = parse(
      "```quiz\nquestion: Pick.\n- [ ] one\n  why: not one\n- [x] two\n  why: two it is\n```\n"
      "```quiz\nquestion: Yes?\nanswer: false\nwhy: the reason\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  ASSERT_EQ(lab.quiz.size(), 2u);
  EXPECT_FALSE(lab.quiz[0].true_false);
  EXPECT_EQ(grade(lab.quiz[0], 0).correct, false);
  EXPECT_EQ(grade(lab.quiz[0], 0).why, "not one");
  EXPECT_EQ(grade(lab.quiz[0], 1).correct, true);
  EXPECT_EQ(grade(lab.quiz[0], 1).why, "two it is");
  ASSERT_EQ(lab.quiz[1].choices.size(), 2u);
  EXPECT_EQ(lab.quiz[1].choices[0].text, "True");
  EXPECT_FALSE(grade(lab.quiz[1], 0).correct);
  EXPECT_EQ(grade(lab.quiz[1], 0).why, "the reason");
  EXPECT_THROW(grade(lab.quiz[1], 2), ConfigError);
  EXPECT_EQ(quiz_score(lab, {1, 1}), 2);
  EXPECT_EQ(quiz_score(lab, {0, 1}), 1);
  EXPECT_EQ(quiz_score(lab, {-1, 0}), 0);
  EXPECT_EQ(quiz_score(lab, {}), 0);
}

TEST(Labs, ResultsTableComputesSpeedupsAndSaysWhatDidNotRun) {
  const Lab lab = parse(
      "```experiment\nname: slow\nsteps: 10\n```\n```experiment\nname: fast\nsteps: 10\n```\n"
      "```experiment\nname: gpu\ndevice: cuda:0\n```\n"
      "```experiment\nname: fast again\ncompare-to: fast\nsteps: 10\n```\n"
      "```table\ncolumns: experiment, images/s, ms per step, speedup, time to target\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  RunSummary slow, fast;
  slow.status = fast.status = RunStatus::Finished;
  slow.steps = fast.steps = 10;
  slow.images = fast.images = 640;
  slow.train_seconds = 2.0;
  fast.train_seconds = 0.5;
  fast.target_accuracy = 0.9;
  fast.time_to_target_s = 0.25;
  auto result = [](const char* name, const char* skipped, std::optional<RunSummary> summary) {
    LabRunResult r;
    r.experiment = name;
    r.skipped = skipped;
    r.summary = summary;
    return r;
  };
  const std::vector<LabRunResult> results = {result("slow", "", slow), result("fast", "", fast),
                                             result("gpu", "no GPU here", {}),
                                             result("fast again", "", fast)};
  const LabResultsTable table = lab_results_table(lab, lab.tables[0], results);
  ASSERT_EQ(table.rows.size(), 4u);
  EXPECT_EQ(table.rows[3][3], "1.00");  // over "fast", not the baseline
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"slow", "320", "200.00", "1.00", "", ""}));
  EXPECT_EQ(table.rows[1], (std::vector<std::string>{"fast", "1280", "50.00", "4.00", "0.25", ""}));
  EXPECT_EQ(table.rows[2],
            (std::vector<std::string>{"gpu", "", "", "", "", "skipped: no GPU here"}));
  EXPECT_EQ(to_csv(table).substr(0, to_csv(table).find('\n')),
            "experiment,images/s,ms per step,speedup,time to target,note");
  EXPECT_NE(to_markdown(table).find("| fast | 1280 | 50.00 | 4.00 | 0.25 |  |"), std::string::npos)
      << to_markdown(table);
}

// A lab's pace is the median step: the first GPU run of a process spends ~115 ms of its first
// step setting the device up (0.3 ms a step after it), and counted, that would make whichever
// experiment ran first look 29x slower than its twin.
TEST(Labs, PaceIsTheMedianStepSoTheFirstStepsSetUpDoesNotCount) {
  const Lab lab = parse(
      "```experiment\nname: first\nsteps: 10\n```\n```experiment\nname: second\nsteps: 10\n```\n"
      "```table\ncolumns: experiment, images/s, ms per step, speedup\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  auto run = [](double first_step_ms) {
    RunData run;
    double seconds = 0;
    for (int i = 1; i <= 10; ++i) {
      StepMetrics m;
      m.step = i;
      m.epoch = 1;
      m.step_ms = i == 1 ? first_step_ms : 0.3;
      seconds += m.step_ms / 1000;
      m.time_s = seconds;
      m.images_per_second = 64 / (m.step_ms / 1000);
      run.steps.push_back(m);
    }
    run.info = {{"status", "finished"},
                {"summary", {{"steps", 10}, {"images", 640}, {"train_seconds", seconds}}}};
    return run;
  };
  const std::vector<LabRunResult> results = {lab_run_result("first", run(115.0)),
                                             lab_run_result("second", run(1.3))};
  const LabResultsTable table = lab_results_table(lab, lab.tables[0], results);
  // 64 images over 0.3 ms: 213,333 images/s each, whatever the first step took.
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"first", "213333", "0.30", "1.00", ""}));
  EXPECT_EQ(table.rows[1], (std::vector<std::string>{"second", "213333", "0.30", "1.00", ""}));
}

// The window finds an experiment's run in its runs folder: the row comes from run.json's summary,
// and a run still going shows only its note.
TEST(Labs, ARecordedRunGivesItsRowAndARunningOneOnlyItsNote) {
  const Lab lab = parse(
      "```experiment\nname: cpu\nsteps: 10\n```\n"
      "```table\ncolumns: experiment, steps, images/s, ms per step, "
      "test accuracy, time to target\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  RunData run;
  run.dir = "/runs/a";
  run.info = {{"status", "finished"},
              {"summary",
               {{"steps", 10},
                {"images", 640},
                {"train_seconds", 0.5},
                {"test_accuracy", 0.9125},
                {"target_accuracy", 0.9},
                {"time_to_target_s", 0.25}}}};
  const LabRunResult finished = lab_run_result("cpu", run);
  EXPECT_EQ(finished.run_dir, "/runs/a");
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {finished}).rows[0],
            (std::vector<std::string>{"cpu", "10", "1280", "50.00", "91.25", "0.25", ""}));
  run.info["status"] = "running";
  run.info.erase("summary");
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {lab_run_result("cpu", run)}).rows[0],
            (std::vector<std::string>{"cpu", "", "", "", "", "", "running"}));
  run.info = {{"status", "failed"}, {"message", "out of memory"}};
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {lab_run_result("cpu", run)}).rows[0].back(),
            "failed: out of memory");
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A lab of two CPU experiments, one on a GPU, a table, a chart and two questions.
const std::string kHandInLab =
    "```experiment\nname: clean\nmodel: mlp\nsteps: 40\n```\n"
    "```experiment\nname: shared\nmodel: mlp\nsteps: 40\n```\n"
    "```experiment\nname: gpu\nmodel: mlp\ndevice: cuda:0\n```\n"
    "```table\ncolumns: experiment, steps, images/s\n```\n"
    "```chart\nkind: loss\ntitle: Its loss\n```\n"
    "```quiz\nquestion: A GPU has many cores.\nanswer: true\nwhy: Thousands of them.\n```\n"
    "```quiz\nquestion: What dominates training?\n- [ ] Printing\n  why: A little CPU work.\n"
    "- [x] Matrix products\n  why: Forward and backward are mostly products.\n```\n";

// A recorded run of 40 steps; `shared` marks it as having shared its hardware, as a race's
// concurrent runs are.
RunData recorded_run(const std::filesystem::path& dir, bool shared) {
  test::write_run(dir, 2, 32, 40, 10.0, "2026-11-24T08:00:00Z");
  if (shared) {
    nlohmann::json info = nlohmann::json::parse(read(dir / "run.json"));
    info["shared_hardware"] = {{"concurrent_with", {"another run"}}};
    write_file_atomically(dir / "run.json", info.dump());
  }
  return load_run(dir);
}

// A speedup is taken over the same model only: over the baseline's (or compare-to's) run when it
// trains that model, else the cell stays empty ("lenet5 fp32" once read 8.71x over vgg-small).
TEST(LabResults, ASpeedupIsOnlyOverTheSameModel) {
  test::TempDir dir;
  const Lab lab = parse(
      "```experiment\nname: base\nbaseline: yes\nmodel: mlp\nsteps: 40\n```\n"
      "```experiment\nname: same model\nmodel: mlp\nsteps: 40\n```\n"
      "```experiment\nname: other model\nmodel: lenet5\nsteps: 40\n```\n"
      "```experiment\nname: other, compared\ncompare-to: base\nmodel: lenet5\nsteps: 40\n```\n"
      "```table\ncolumns: experiment, images/s, speedup\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  test::write_run(dir.path() / "a", 2, 32, 40, 10.0, "2026-11-24T08:00:00Z");
  test::write_run(dir.path() / "b", 2, 32, 40, 20.0, "2026-11-24T08:01:00Z");
  const RunData slow = load_run(dir.path() / "a"), fast = load_run(dir.path() / "b");
  const LabResultsTable table = lab_results_table(
      lab, lab.tables[0],
      {lab_run_result("base", slow), lab_run_result("same model", fast),
       lab_run_result("other model", fast), lab_run_result("other, compared", fast)});
  ASSERT_EQ(table.rows.size(), 4u);
  // Recomputed from the two runs' images over training seconds.
  const auto rate = [](const RunData& run) {
    const RunSummary s = *lab_run_result("x", run).summary;
    return double(s.images) / s.train_seconds;
  };
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", rate(fast) / rate(slow));
  EXPECT_EQ(table.rows[0][2], "1.00");
  EXPECT_EQ(table.rows[1][2], ratio);
  EXPECT_NE(table.rows[1][2], "1.00");
  EXPECT_EQ(table.rows[2][2], "");
  EXPECT_EQ(table.rows[3][2], "");  // compare-to names another model: no speedup either
}

// "time to target" names the target its experiments share in the report's and the window's
// title ("time to target (90 %)", where the headline may say 95 %); the CSV keeps the column's
// name; experiments of different targets leave the title alone.
TEST(LabResults, TimeToTargetNamesItsTarget) {
  const std::string columns = "```table\ncolumns: experiment, time to target\n```\n";
  const Lab same = parse(
      "```experiment\nname: a\nmodel: mlp\ntarget-accuracy: 90\n```\n"
      "```experiment\nname: b\nmodel: mlp\ntarget-accuracy: 0.9\n```\n"
      "```experiment\nname: c\nmodel: mlp\n```\n" + columns);
  ASSERT_TRUE(same.ok()) << problems(same);
  const LabResultsTable t = lab_results_table(same, same.tables[0], {});
  EXPECT_EQ(t.titles[1], "time to target (90 %)");
  EXPECT_EQ(t.header[1], "time to target");
  EXPECT_NE(to_markdown(t).find("| experiment | time to target (90 %) | note |"),
            std::string::npos)
      << to_markdown(t);
  EXPECT_EQ(to_csv(t).substr(0, to_csv(t).find('\n')), "experiment,time to target,note");
  const Lab mixed = parse(
      "```experiment\nname: a\nmodel: mlp\ntarget-accuracy: 90\n```\n"
      "```experiment\nname: b\nmodel: mlp\ntarget-accuracy: 97.5\n```\n" + columns);
  ASSERT_TRUE(mixed.ok()) << problems(mixed);
  EXPECT_EQ(lab_results_table(mixed, mixed.tables[0], {}).titles[1], "time to target");
}

LabHandIn known_hand_in(const std::filesystem::path& runs) {
  LabHandIn h;
  h.results = {lab_run_result("clean", recorded_run(runs / "a", false)),
               lab_run_result("shared", recorded_run(runs / "b", true)),
               {}};
  h.results.back().experiment = "gpu";
  h.results.back().skipped = "no GPU on this machine";
  h.answers = {0, 0};  // True: right; Printing: wrong
  h.machine.cpu.model = "Test CPU 9000";
  h.machine.cpu.logical_cores = 8;
  GpuInfo gpu;
  gpu.name = "NVIDIA H200";
  gpu.memory_bytes = 141.0 * (1 << 30);
  gpu.compute_major = 9;
  gpu.driver_version = "570.86";
  gpu.runtime_version = "12.8";
  h.machine.gpus = {gpu};
  h.host = "lab-node";
  h.date = "2026-11-24T09:00:00Z";
  h.made_by = "a test";
  h.charts_missing = {""};
  return h;
}

TEST(LabHandIn, TheFolderHoldsTheReportTablesAnswersAndMachine) {
  test::TempDir dir;
  const Lab lab = parse(kHandInLab);
  ASSERT_TRUE(lab.ok()) << problems(lab);
  const LabHandIn h = known_hand_in(dir.path() / "runs");
  const auto out = dir.path() / "hand-in";
  check_hand_in_folder(out, lab, "--out");
  write_hand_in(out, lab, h);
  const std::string readme = read(out / "README.md");
  for (const std::string& expected :
       {std::string("# T\n"), std::string("handed in 2026-11-24T09:00:00Z"),
        std::string("- CPU: Test CPU 9000, 8 logical cores"),
        std::string("- GPU 0: NVIDIA H200, 141 GiB, compute capability 9.0, driver 570.86, CUDA "
                    "runtime 12.8"),
        std::string("- gpulab ") + GPULAB_VERSION + ", on host lab-node",
        std::string("| experiment | steps | images/s | note |"),
        std::string("| clean | 40 | 3200 |  |"),
        std::string("| ⚠ shared | 40 | 3200 | ⚠ shared its hardware with another run while it "
                    "ran |"),
        std::string("| gpu |  |  | skipped: no GPU on this machine |"),
        std::string("⚠ marks a run whose figures are not its own alone"),
        std::string("![Its loss](chart-1-loss.png)"), std::string("[SVG](chart-1-loss.svg)"),
        std::string("## Quiz: 1 of 2 right (2 of 2 answered)"),
        std::string(
            "1. A GPU has many cores.\n\n   - Answer: True — **right**. Thousands of them."),
        std::string("   - Answer: Printing — **wrong**. A little CPU work."),
        std::string("   - The right answer: Matrix products. Forward and backward are mostly "
                    "products.")})
    EXPECT_NE(readme.find(expected), std::string::npos) << expected << "\n---\n" << readme;
  // The CSV keeps the names as they are; the note says why a row is flagged.
  const std::string csv = read(out / "results.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "experiment,steps,images/s,note");
  EXPECT_NE(csv.find("\nshared,40,3200,⚠ shared its hardware"), std::string::npos) << csv;
  EXPECT_NE(read(out / "results.md").find("| ⚠ shared | 40 |"), std::string::npos);

  const auto answers = nlohmann::json::parse(read(out / "answers.json"));
  EXPECT_EQ(answers["format"], kHandInFormat);
  EXPECT_EQ(answers["lab"], "x");
  EXPECT_EQ(answers["score"], 1);
  EXPECT_EQ(answers["questions"], 2);
  EXPECT_EQ(answers["answered"], 2);
  EXPECT_EQ(answers["answers"][0]["answer"], "True");
  EXPECT_EQ(answers["answers"][0]["correct"], true);
  EXPECT_EQ(answers["answers"][1]["answer"], "Printing");
  EXPECT_EQ(answers["answers"][1]["correct"], false);
  EXPECT_EQ(answers["answers"][1]["right_answer"], "Matrix products");

  const auto machine = nlohmann::json::parse(read(out / "machine.json"));
  EXPECT_EQ(machine["cpu"]["model"], "Test CPU 9000");
  EXPECT_EQ(machine["cpu"]["logical_cores"], 8);
  EXPECT_EQ(machine["gpus"][0]["driver"], "570.86");
  EXPECT_EQ(machine["gpus"][0]["cuda_runtime"], "12.8");
  EXPECT_EQ(machine["gpulab_version"], GPULAB_VERSION);
  EXPECT_EQ(machine["runs"][1]["experiment"], "shared");
  EXPECT_EQ(machine["runs"][1]["flags"][0], "shared its hardware with another run while it ran");
}

TEST(LabHandIn, AMachineWithoutAGpuSaysWhyAndUnansweredQuestionsGiveNothingAway) {
  test::TempDir dir;
  const Lab lab = parse(kHandInLab);
  LabHandIn h = known_hand_in(dir.path() / "runs");
  h.machine.gpus.clear();
  h.machine.no_gpu_reason = "no NVIDIA driver found";
  h.answers = {-1, -1};
  h.charts_missing = {"no finished runs to draw"};
  const std::string readme = hand_in_readme(lab, h);
  EXPECT_NE(readme.find("- GPU: none (no NVIDIA driver found)"), std::string::npos) << readme;
  EXPECT_NE(readme.find("## Quiz: 0 of 2 right (0 of 2 answered)"), std::string::npos) << readme;
  EXPECT_NE(readme.find("Not drawn: no finished runs to draw."), std::string::npos) << readme;
  EXPECT_EQ(readme.find("right answer"), std::string::npos) << readme;
  EXPECT_EQ(readme.find("chart-1-loss.png"), std::string::npos) << readme;
  const auto machine = nlohmann::json::parse(hand_in_machine_json(h));
  EXPECT_EQ(machine["no_gpu_reason"], "no NVIDIA driver found");
  EXPECT_TRUE(machine["gpus"].empty());
}

TEST(LabHandIn, RefusesAFolderHoldingSomethingElseAndReplacesItsOwnEarlierHandIn) {
  test::TempDir dir;
  const Lab lab = parse(kHandInLab);
  const LabHandIn h = known_hand_in(dir.path() / "runs");
  const auto out = dir.path() / "out";
  std::filesystem::create_directories(out);
  EXPECT_NO_THROW(check_hand_in_folder(out, lab, "--out"));  // empty
  write_hand_in(out, lab, h);
  std::ofstream(out / "chart-1-loss.png") << "png";
  // Its own earlier hand-in is replaced; a chart not drawn this time leaves with it.
  EXPECT_NO_THROW(check_hand_in_folder(out, lab, "--out"));
  LabHandIn again = h;
  again.charts_missing = {"no finished runs to draw"};
  write_hand_in(out, lab, again);
  EXPECT_FALSE(std::filesystem::exists(out / "chart-1-loss.png"));

  auto refusal = [&](const std::filesystem::path& folder, const Lab& of) {
    try {
      check_hand_in_folder(folder, of, "--out");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  // Another lab's hand-in.
  Lab other = lab;
  other.name = "other-lab";
  EXPECT_EQ(refusal(out, other),
            "--out " + out.string() +
                ": holds the hand-in of another lab (\"x\"), which it would overwrite; give an "
                "empty or new folder for the hand-in");
  // Anything that is not part of a hand-in, and a hand-in's names without its answers.json.
  std::ofstream(out / "notes.txt") << "mine";
  EXPECT_NE(refusal(out, lab).find(": holds notes.txt, which is not part of a hand-in of \"T\""),
            std::string::npos)
      << refusal(out, lab);
  const auto bare = dir.path() / "bare";
  std::filesystem::create_directories(bare);
  std::ofstream(bare / "results.csv") << "a,b\n";
  EXPECT_NE(refusal(bare, lab).find("no answers.json says whose"), std::string::npos);
  std::ofstream(bare / "answers.json") << R"({"format": 1, "lab": "x"})";
  EXPECT_NE(refusal(bare, lab).find("its answers.json is not a hand-in's"), std::string::npos)
      << refusal(bare, lab);
  // A file, and a run's folder.
  EXPECT_NE(refusal(out / "notes.txt", lab).find("is a text file, not a folder"),
            std::string::npos);
  EXPECT_NE(refusal(dir.path() / "runs" / "a", lab).find("already holds a run"), std::string::npos);
  EXPECT_EQ(read(out / "notes.txt"), "mine");  // nothing was touched
}

TEST(LabHandIn, FindsTheWindowsRunsAndAnswersInTheProgressFile) {
  test::TempDir dir;
  const Lab lab = parse(kHandInLab);
  const auto runs = dir.path() / "runs";
  recorded_run(runs / "a", false);
  recorded_run(runs / "b", true);
  LabRecord record;
  record.runs["shared"] = (runs / "b").string();
  record.answers["What dominates training?"] = "Matrix products";
  record.answers["A GPU has many cores."] = "a choice since removed";
  EXPECT_EQ(quiz_answers(lab, &record), (std::vector<int>{-1, 1}));
  DeviceList none;
  none.no_gpu_reason = "no NVIDIA driver found";
  const auto results = lab_results_from(lab, &record, load_runs(runs), none);
  ASSERT_EQ(results.size(), 2u);  // "clean" never ran: no run of its folder or its name
  EXPECT_EQ(results[0].experiment, "shared");
  EXPECT_EQ(results[0].run_dir, runs / "b");
  EXPECT_FALSE(results[0].flags.empty());
  EXPECT_EQ(results[1].skipped, "no GPU on this machine");
}

// A benchmark timed while other programs kept the CPU busy carries ⚠ on every row of its sizes,
// as a run measured so does, from what the progress file keeps (the window's Run writes it); the
// note is run.json's caveat, worked out here: 75 % of 2 cores is 1.5 cores. A benchmark timed
// alone (0.2 of 2 cores) carries nothing, and the load survives a save and a load.
TEST(LabProgress, ABenchmarkTimedUnderOutsideLoadIsFlaggedOnEveryRow) {
  test::TempDir dir;
  const Lab lab = parse(
      "```experiment\nname: busy\nbench: matmul\nsizes: 32, 64\n```\n"
      "```experiment\nname: alone\nbench: matmul\nsizes: 32\n```\n"
      "```table\ncolumns: experiment, size, ms\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  std::ofstream(lab_progress_path(dir.path())) << R"({"labs": {"x.md": {"matmul": {
      "busy": [{"size": 32, "ms": 0.5, "ms_with_copies": 0.5},
               {"size": 64, "ms": 2.0, "ms_with_copies": 2.0}],
      "alone": [{"size": 32, "ms": 0.25, "ms_with_copies": 0.25}]},
    "matmul_outside_load": {
      "busy": {"mean_percent": 75.0, "max_percent": 75.0, "mean_cores": 1.5, "cores": 2,
               "samples": 1, "under_load": true},
      "alone": {"mean_percent": 10.0, "max_percent": 10.0, "mean_cores": 0.2, "cores": 2,
                "samples": 1, "under_load": false}}}}})";
  std::string problem;
  LabProgress progress = load_lab_progress(dir.path(), &problem);
  ASSERT_TRUE(problem.empty()) << problem;
  auto table_of = [&](const LabProgress& p) {
    const auto results = lab_results_from(lab, &p.labs.at("x.md"), {}, list_devices());
    return lab_results_table(lab, lab.tables[0], results);
  };
  const std::string note =
      "⚠ measured under outside load: other programs kept 1.5 of 2 cores busy on average";
  for (const LabResultsTable& table :
       {table_of(progress), [&] {
          EXPECT_TRUE(save_lab_progress(dir.path(), progress, &problem)) << problem;
          return table_of(load_lab_progress(dir.path(), &problem));
        }()}) {
    ASSERT_EQ(table.rows.size(), 3u);
    EXPECT_EQ(table.rows[0], (std::vector<std::string>{"busy", "32", "0.500", note}));
    EXPECT_EQ(table.rows[1], (std::vector<std::string>{"busy", "64", "2.000", note}));
    EXPECT_EQ(table.rows[2], (std::vector<std::string>{"alone", "32", "0.250", ""}));
    EXPECT_EQ(table.flagged, (std::vector<bool>{true, true, false}));
    const std::string markdown = to_markdown(table);
    EXPECT_NE(markdown.find("| ⚠ busy | 32 | 0.500 | " + note + " |"), std::string::npos)
        << markdown;
    EXPECT_NE(markdown.find("| alone | 32 | 0.250 |  |"), std::string::npos) << markdown;
  }
}

DeviceSample sample(const std::string& device, double util, double mem_mib, double power_w,
                    double temperature_c, double time_s = 0) {
  DeviceSample s;
  s.time_s = time_s;
  s.device = device;
  s.util_percent = util;
  s.mem_used_bytes = mem_mib * double(1 << 20);
  s.power_w = power_w;
  s.temperature_c = temperature_c;
  return s;
}

StepMetrics step(double data_ms, double copy_ms, double allreduce_ms) {
  StepMetrics m;
  m.times.data_ms = data_ms;
  m.times.copy_ms = copy_ms;
  m.times.allreduce_ms = allreduce_ms;
  return m;
}

// The hardware columns, each worked out by hand from a small record of two GPUs: the samples of
// the devices the run computed on (not the host's CPU), the steps' phases, run.json's energy.
TEST(Labs, HardwareColumnsComeFromTheRunsRecord) {
  const Lab lab = parse(
      "```experiment\nname: two\ndevice: cuda:0,1\nsteps: 10\n```\n"
      "```table\ncolumns: experiment, utilization, peak memory, power, peak temperature, "
      "data ms, copy ms, all-reduce ms, energy, images/J\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  RunData run;
  run.info = {{"status", "finished"},
              {"summary", {{"steps", 2}, {"images", 640}, {"train_seconds", 0.5}}},
              {"energy",
               {{"joules", 200.0},
                {"images_per_joule", 3.2},
                {"of", {"cuda:0", "cuda:1"}},
                {"devices",
                 {{{"device", "cuda:0"}, {"joules", 150.0}, {"source", "NVML energy counter"}},
                  {{"device", "cuda:1"}, {"joules", 50.0}, {"source", "power samples"}}}}}}};
  run.samples = {sample("cuda:0", 50, 1024, 100, 60), sample("cuda:1", 70, 3000, 50, 71),
                 sample("cuda:0", 90, 2048, 200, 70, 1.2), sample("cuda:1", 70, 3000, 50, 65, 1.2),
                 sample("cpu", 10, 90000, kNoValue, kNoValue)};  // the host: not a compute device
  run.steps = {step(1, 0.5, 0), step(3, 1.5, 0.4)};
  const LabRunResult result = lab_run_result("two", run);
  EXPECT_DOUBLE_EQ(result.readings.mean_util_percent, 70);  // (50 + 70 + 90 + 70) / 4
  // Utilization, peak memory in MiB (cuda:1's 3000, not the CPU's), power (cuda:0's mean 150 W
  // plus cuda:1's 50 W), the hottest reading, the phases' means, the energy and images per joule.
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {result}).rows[0],
            (std::vector<std::string>{"two", "70", "3000", "200", "71", "2.00", "1.00", "0.20",
                                      "200.0", "3.2", ""}));

  // A CPU run on a machine without RAPL: the energy is unavailable with its reason, never 0 J,
  // and the readings the CPU does not have are dashes.
  run.info["energy"] = {
      {"joules", nullptr},
      {"images_per_joule", nullptr},
      {"of", {"cpu"}},
      {"devices",
       {{{"device", "cpu"},
         {"joules", nullptr},
         {"source", "unavailable"},
         {"why", "no RAPL counters on this machine (/sys/class/powercap is absent)"}}}}};
  run.samples = {sample("cpu", 40, 100, kNoValue, kNoValue),
                 sample("cpu", 60, 300, kNoValue, kNoValue)};
  run.steps.clear();
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {lab_run_result("two", run)}).rows[0],
            (std::vector<std::string>{"two", "50", "300", "—", "—", "—", "—", "—",
                                      "unavailable: no RAPL counters on this machine",
                                      "unavailable", ""}));

  // A record from before energy was kept: the GPUs sampled are the compute devices.
  run.info.erase("energy");
  run.samples = {sample("cpu", 99, 5000, kNoValue, kNoValue), sample("cuda:0", 30, 700, 80, 50),
                 sample("cuda:0", 30, 700, 80, 50, 1.0)};
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {lab_run_result("two", run)}).rows[0],
            (std::vector<std::string>{"two", "30", "700", "80", "50", "—", "—", "—", "not recorded",
                                      "not recorded", ""}));

  // A GPU run sampled over less than NVML's period: its utilization reads the idle time before
  // it (1 % for a 0.22 s run at full load, watching-the-hardware on an H100), so it is not shown,
  // and the note says why.
  run.samples = {sample("cuda:0", 1, 700, 80, 50, 0.004), sample("cuda:0", 1, 700, 90, 51, 0.1),
                 sample("cuda:0", 1, 700, 90, 52, 0.222)};
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {lab_run_result("two", run)}).rows[0],
            (std::vector<std::string>{
                "two", "—", "700", "87", "52", "—", "—", "—", "not recorded", "not recorded",
                "utilization not measured: NVML averages a GPU's over up to 1 s, and this run was "
                "sampled over 0.22 s"}));
}

// A GPU's memory controller and SM clock, worked out by hand from two GPUs' samples: "memory
// busy" is the mean of their memory utilization, (20 + 40 + 30 + 50) / 4 = 35 % (not the host
// CPU's 90, its share of host memory); "SM MHz" the median clock of 1410, 1755, 1980 and 1980,
// (1755 + 1980) / 2 = 1867.5; "SM MHz max" the highest, 1980.
TEST(Labs, MemoryBusyAndTheSmClockComeFromTheGpusSamples) {
  const Lab lab = parse(
      "```experiment\nname: two\ndevice: cuda:0,1\nsteps: 10\n```\n"
      "```table\ncolumns: experiment, utilization, memory busy, SM MHz, SM MHz max\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  RunData run;
  run.info = {{"status", "finished"},
              {"summary", {{"steps", 2}, {"images", 640}, {"train_seconds", 0.5}}}};
  auto gpu = [](const std::string& device, double mem_busy, double clock, double time_s) {
    DeviceSample s = sample(device, 80, 1000, 300, 60, time_s);
    s.mem_util_percent = mem_busy;
    s.sm_clock_mhz = clock;
    return s;
  };
  DeviceSample host = sample("cpu", 10, 9000, kNoValue, kNoValue);
  host.mem_util_percent = 90;
  run.samples = {gpu("cuda:0", 20, 1980, 0), gpu("cuda:1", 40, 1755, 0), host,
                 gpu("cuda:0", 30, 1410, 1.5), gpu("cuda:1", 50, 1980, 1.5)};
  const LabRunResult result = lab_run_result("two", run);
  EXPECT_DOUBLE_EQ(result.readings.mean_mem_busy_percent, 35);
  EXPECT_DOUBLE_EQ(result.readings.median_sm_clock_mhz, 1867.5);
  EXPECT_DOUBLE_EQ(result.readings.max_sm_clock_mhz, 1980);
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {result}).rows[0],
            (std::vector<std::string>{"two", "80", "35", "1868", "1980", ""}));

  // Sampled over less than NVML's period: the controller's busy share is as unmeasured as the
  // utilization (both are NVML's share of its sample period); the clock is a reading at an
  // instant, so it stays: the median of three, 1410.
  run.samples = {gpu("cuda:0", 20, 1980, 0.0), gpu("cuda:0", 30, 1410, 0.1),
                 gpu("cuda:0", 40, 1200, 0.2)};
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {lab_run_result("two", run)}).rows[0],
            (std::vector<std::string>{"two", "—", "—", "1410", "1980",
                                      "utilization not measured: NVML averages a GPU's over up to "
                                      "1 s, and this run was sampled over 0.20 s"}));

  // A CPU run has neither: dashes, though its samples carry a memory share.
  run.samples = {host, host};
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {lab_run_result("two", run)}).rows[0],
            (std::vector<std::string>{"two", "10", "—", "—", "—", ""}));
}

// The launches' cost, worked out by hand: without CUDA graphs a step takes 45 ms / 100 = 0.45 ms,
// with them 30 ms / 100 = 0.30 ms, so "launch ms" is 0.150 on the graphs-off row (its baseline's
// cell is empty). It is only a difference of launches where the records say the one ran without
// graphs and the other with them: a baseline whose graphs fell back to eager gives no figure.
TEST(Labs, LaunchMsIsAStepWithoutCudaGraphsLessAStepWithThem) {
  const Lab lab = parse(
      "```experiment\nname: graphs on\ndevice: cuda:0\nsteps: 100\n```\n"
      "```experiment\nname: graphs off\ncompare-to: graphs on\ndevice: cuda:0\n"
      "cuda-graph: off\nsteps: 100\n```\n"
      "```table\ncolumns: experiment, ms per step, speedup, launch ms\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  auto record = [](double train_seconds, const std::string& graphs) {
    RunData run;
    run.info = {{"status", "finished"},
                {"cuda_graphs", graphs},
                {"summary", {{"steps", 100}, {"images", 6400}, {"train_seconds", train_seconds}}}};
    return run;
  };
  const LabRunResult on = lab_run_result("graphs on", record(0.030, "on"));
  const LabRunResult off = lab_run_result("graphs off", record(0.045, "off"));
  const LabResultsTable table = lab_results_table(lab, lab.tables[0], {on, off});
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"graphs on", "0.30", "1.00", "", ""}));
  // 0.30 / 0.45 = 0.67: the speedup over the graphs-on run.
  EXPECT_EQ(table.rows[1], (std::vector<std::string>{"graphs off", "0.45", "0.67", "0.150", ""}));

  const LabRunResult fell_back =
      lab_run_result("graphs on", record(0.030, "off after capture failed: not supported"));
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {fell_back, off}).rows[1][3], "");
}

// The matrix products' share of forward and backward, worked out by hand: (7 + 3) of
// (4 + 6 + 2 + 3) ms is 67 %; a record without it (a GPU run, an older record) shows "—".
TEST(Labs, TheMatmulShareColumnIsTheRecordsMatrixProductsOverForwardAndBackward) {
  const Lab lab = parse(
      "```experiment\nname: cpu\ndevice: cpu\nsteps: 2\n```\n"
      "```table\ncolumns: experiment, matmul share\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  RunData run;
  run.info = {{"status", "finished"},
              {"summary", {{"steps", 2}, {"images", 128}, {"train_seconds", 0.1}}}};
  StepMetrics first, second;
  first.times.forward_ms = 4, first.times.backward_ms = 6, first.times.matmul_ms = 7;
  second.times.forward_ms = 2, second.times.backward_ms = 3, second.times.matmul_ms = 3;
  run.steps = {first, second};
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {lab_run_result("cpu", run)}).rows[0],
            (std::vector<std::string>{"cpu", "67", ""}));
  run.steps[0].times.matmul_ms = run.steps[1].times.matmul_ms = kNoValue;
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {lab_run_result("cpu", run)}).rows[0],
            (std::vector<std::string>{"cpu", "—", ""}));
}

// Inference beside training, worked out by hand: an inference row's ms per image is its batch's
// time over the batch and its images/s the batch over that time; a training row's ms per image is
// its step over its images (1000 / images/s); speedups are over the compare-to benchmark at the
// same batch size; an inference row has no GFLOP/s.
TEST(Labs, InferenceRowsAreTimesPerBatchAndPerImageBesideTraining) {
  const Lab lab = parse(
      "```experiment\nname: train\nmodel: mlp\nbatch: 64\nsteps: 10\n```\n"
      "```experiment\nname: one\nbench: inference\nmodel: mlp\nthreads: 1\nsizes: 1, 64\n```\n"
      "```experiment\nname: all\ncompare-to: one\nbench: inference\nmodel: mlp\nsizes: 1, "
      "64\n```\n"
      "```table\ncolumns: experiment, model, batch, ms, ms per image, images/s, speedup, "
      "GFLOP/s\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  RunData run;  // 10 steps of 64 images in 1 s: 640 images/s, 1.5625 ms an image
  run.info = {{"status", "finished"},
              {"summary", {{"steps", 10}, {"images", 640}, {"train_seconds", 1.0}}}};
  LabRunResult one, all;
  one.experiment = "one";
  one.matmul = {{1, 0.5, 0.5}, {64, 8, 8}};
  all.experiment = "all";
  all.matmul = {{1, 0.4, 0.4}, {64, 2, 2}};
  const LabResultsTable table =
      lab_results_table(lab, lab.tables[0], {lab_run_result("train", run), one, all});
  ASSERT_EQ(table.rows.size(), 5u);
  using Row = std::vector<std::string>;
  EXPECT_EQ(table.rows[0], (Row{"train", "mlp", "64", "", "1.5625", "640", "1.00", "", ""}));
  EXPECT_EQ(table.rows[1], (Row{"one", "mlp", "1", "0.500", "0.5000", "2000", "", "", ""}));
  EXPECT_EQ(table.rows[2], (Row{"one", "mlp", "64", "8.000", "0.1250", "8000", "", "", ""}));
  // 0.5 / 0.4 and 8 / 2.
  EXPECT_EQ(table.rows[3], (Row{"all", "mlp", "1", "0.400", "0.4000", "2500", "1.25", "", ""}));
  EXPECT_EQ(table.rows[4], (Row{"all", "mlp", "64", "2.000", "0.0312", "32000", "4.00", "", ""}));
}

// The benchmark itself: one row per batch size, in order, each batch's time as both times.
TEST(Labs, AnInferenceBenchmarkTimesEachBatchSize) {
  const Lab lab =
      parse("```experiment\nname: i\nbench: inference\nmodel: mlp\nthreads: 1\nsizes: 1, 4\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  const LabRunResult result = run_lab_bench(lab.experiments[0], lab.experiments[0].sizes);
  EXPECT_EQ(result.experiment, "i");
  ASSERT_EQ(result.matmul.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(result.matmul[i].size, i == 0 ? 1 : 4);
    EXPECT_GT(result.matmul[i].ms, 0);
    EXPECT_EQ(result.matmul[i].ms_with_copies, result.matmul[i].ms);
  }
}

// data-on (where a run keeps its training data) and stop-at-accuracy are keys as on the command
// line; the precision is a column of its own.
TEST(Labs, DataOnAndStopAtAccuracyAreKeysAndPrecisionAColumn) {
  const Lab lab = parse(
      "```experiment\nname: h\ndevice: cuda:0\ndata-on: host\nstop-at-accuracy: 97\n"
      "precision: bf16\n```\n"
      "```experiment\nname: d\ndevice: cuda:0\ndata_on: device\n```\n"
      "```table\ncolumns: experiment, precision\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  EXPECT_DOUBLE_EQ(lab.experiments[0].experiment.train.stop_at_accuracy, 0.97);
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], {}).rows[0],
            (std::vector<std::string>{"h", "bf16", "not run yet"}));
  expect_problem("```experiment\nname: a\ndata-on: disk\n```\n", 8,
                 "data-on: \"disk\" is not host or device");
  expect_problem("```experiment\nname: a\npreprocess: sometimes\n```\n", 8,
                 "preprocess: --preprocess sometimes: use none, once");
}

// conv (how a GPU computes its convolutions) is a key as on the command line.
TEST(Labs, ConvIsAKey) {
  const Lab lab = parse(
      "```experiment\nname: i\ndevice: cuda:0\nconv: implicit\n```\n"
      "```experiment\nname: c\ndevice: cuda:0\ncompare-to: i\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  EXPECT_EQ(lab.experiments[0].experiment.backend.conv, ConvAlgorithm::Implicit);
  EXPECT_EQ(lab.experiments[1].experiment.backend.conv, ConvAlgorithm::Im2col);
  expect_problem("```experiment\nname: a\nconv: winograd\n```\n", 8,
                 "conv: --conv winograd: unknown; use im2col");
}

// Issue 41.2: the feeding lab's augmented GPU rows, from records of the split phases. A GPU fed by
// one host thread augmenting every batch spends its step in data ms (the host's preparing), copy
// ms is the transfer alone, and NVML's utilization, sampled over more than a second, is low;
// the same work done once leaves the step to the GPU. The figures are the fixture's, worked out
// by hand.
TEST(Labs, TheFeedingLabShowsAGpuStarvedByPerBatchPreprocessing) {
  const Lab lab = load_lab("feeding-the-gpu");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  const LabExperiment* per_batch = nullptr;
  for (const LabExperiment& e : lab.experiments)
    if (e.name == "batch 1024, augmented per batch") per_batch = &e;
  ASSERT_NE(per_batch, nullptr);
  EXPECT_EQ(per_batch->experiment.backend.preprocess, Preprocess::PerBatch);
  EXPECT_EQ(per_batch->experiment.backend.data_on, DataOn::Host);
  EXPECT_EQ(per_batch->compare_to, "batch 1024, augmented once");

  // Four steps of 1024 images each; cuda:0 sampled at 0 s and 2 s.
  const auto record = [](double step_ms, double data_ms, double copy_ms, double util) {
    RunData run;
    run.info = {{"status", "finished"},
                {"config", {{"device", "cuda:0"}}},
                {"summary", {{"steps", 4}, {"images", 4096}, {"train_seconds", 0.1}}}};
    run.samples = {sample("cuda:0", util, 1024, 100, 60, 0.0),
                   sample("cuda:0", util, 1024, 100, 60, 2.0)};
    for (int i = 1; i <= 4; ++i) {
      StepMetrics m = step(data_ms, copy_ms, 0);
      m.step = i;
      m.step_ms = step_ms;
      run.steps.push_back(m);
    }
    return run;
  };
  const std::vector<LabRunResult> results = {
      lab_run_result("batch 1024, augmented per batch", record(8, 6, 0.25, 25)),
      lab_run_result("batch 1024, augmented once", record(2, 0.05, 0.25, 90))};
  std::map<std::string, std::vector<std::string>> rows;
  for (const auto& row : lab_results_table(lab, lab.tables[0], results).rows)
    rows[row.front()] = row;
  // experiment, device, batch, data ms, copy ms, ms per step, images/s (1024 images / 8 ms),
  // utilization, speedup (128000 / 512000 images/s), note.
  EXPECT_EQ(rows["batch 1024, augmented per batch"],
            (std::vector<std::string>{"batch 1024, augmented per batch", "cuda:0", "1024", "6.00",
                                      "0.25", "8.00", "128000", "25", "—", "—", "0.25", ""}));
  EXPECT_EQ(rows["batch 1024, augmented once"],
            (std::vector<std::string>{"batch 1024, augmented once", "cuda:0", "1024", "0.05",
                                      "0.25", "2.00", "512000", "90", "—", "—", "", ""}));
}

// A lab page loads an image only from the lab's own folder, a regular file: /dev/zero, a FIFO, a
// path out of the folder or a URL in a lab's Markdown is a problem at its line (the window took
// 18.7 GB showing /dev/zero, and a FIFO held it for ever), found without reading any of them.
TEST(Labs, ImagesOutsideTheLabsFolderAreRefusedAtTheirLine) {
  test::TempDir dir;
  std::ofstream(dir.path() / "chart.png") << "png";
  ASSERT_EQ(::mkfifo((dir.path() / "pipe.png").c_str(), 0600), 0);
  std::filesystem::create_symlink("/dev/zero", dir.path() / "zero.png");
  std::ofstream(dir.path() / "images.md")
      << kHeader << "![fine](chart.png)\n"                      // line 6
      << "![a](/dev/zero) and ![b](file:///dev/zero)\n"         // line 7
      << "![c](../../../../dev/zero \"title\")\n"               // line 8
      << "<img src=\"/dev/urandom\">\n"                         // line 9
      << "![d](pipe.png)\n![e](zero.png)\n![f](missing.png)\n"  // lines 10-12
      << "```\n![shown as code](/dev/zero)\n```\n```experiment\nname: a\nmodel: mlp\n```\n";
  const auto start = std::chrono::steady_clock::now();
  const Lab lab = load_lab_file(dir.path() / "images.md");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  std::vector<std::pair<int, std::string>> found;
  for (const LabProblem& p : lab.problems) found.emplace_back(p.line, p.problem);
  const std::string only = "; a page shows only image files in its own folder";
  const std::vector<std::pair<int, std::string>> expected = {
      {7, "the image \"/dev/zero\" is an absolute path" + only},
      {7, "the image \"file:///dev/zero\" is a URL" + only},
      {8, "the image \"../../../../dev/zero\" points outside the page's folder (\"..\")" + only},
      {9, "the image \"/dev/urandom\" is an absolute path" + only},
      {10, "the image \"pipe.png\" is a FIFO, not an image file" + only},
      {11, "the image \"zero.png\" is a link out of the page's folder" + only},
      {12, "the image \"missing.png\" is not there"}};
  EXPECT_EQ(found, expected) << problems(lab);
}

// Run names and titles reach terminals: control characters are shown as '?'.
TEST(Text, TerminalTextShowsControlCharactersAsQuestionMarks) {
  EXPECT_EQ(terminal_text("a\x1b[2Jb\x7f\xc2\x9b"
                          "c\tZoë"),
            "a?[2Jb??c\tZoë");
}

// Every numeric setting is held to the bounds the command line, setup files and the run record
// reader share, at its own line, with the value and the range: a seed of -1 and a weight decay of
// inf passed `lab check` and made records no reader loaded, and steps: -5 said "--epochs must be
// at least 1".
TEST(Labs, SettingsOutOfRangeAreRefusedAtTheirLineWithTheRange) {
  const std::string whole = ": give a whole number from ";
  for (const auto& [line, said] : std::vector<std::pair<std::string, std::string>>{
           {"seed: -1", "seed: -1 is out of range" + whole + "0 to 9223372036854775807"},
           {"seed: 18446744073709551615",
            "seed: 18446744073709551615 is out of range" + whole + "0 to 9223372036854775807"},
           {"steps: -5", "steps: -5 is out of range" + whole + "0 to 2147483647"},
           {"steps: 3000000000000",
            "steps: 3000000000000 is out of range" + whole + "0 to 2147483647"},
           {"epochs: 2147483648", "epochs: 2147483648 is out of range" + whole + "0 to 2147483647"},
           {"batch: 4294967360", "batch: 4294967360 is out of range" + whole + "1 to 65536"},
           {"batch: 64.5", "batch: 64.5 is not a whole number" + whole + "1 to 65536"},
           {"eval-every: -1",
            "eval-every: -1 is out of range" + whole + "0 to 9223372036854775807"},
           {"replicas: 0", "replicas: 0 is out of range" + whole + "1 to 65536"},
           {"threads: -2", "threads: -2 is out of range" + whole + "0 to 2147483647"},
           {"weight-decay: inf",
            "weight-decay: inf is out of range: give a number from 0 to 3.40282e+38"},
           {"weight-decay: 1e39",
            "weight-decay: 1e39 is out of range: give a number from 0 to 3.40282e+38"},
           {"gamma: -1", "gamma: -1 is out of range: give a number from 0 to 1"},
           {"gamma: nan", "gamma: nan is out of range: give a number from 0 to 1"},
           {"lr: 0", "lr: 0 is out of range: give a number above 0, at most 3.40282e+38"},
           {"lr: 1e400", "lr: 1e400 is out of range: give a number above 0, at most 3.40282e+38"},
           {"momentum: 1", "momentum: 1 is out of range: give a number from 0 to below 1"},
           {"bucket-mb: -1", "bucket-mb: -1 is out of range: give a number above 0"},
           {"collective-timeout: 1e10",
            "collective-timeout: 1e10 is out of range: give a number above 0, at most 2592000"},
           {"target-accuracy: 150",
            "target-accuracy: 150 is out of range: give a number from 0 to 1, or a percentage up "
            "to 100"},
       })
    expect_problem("```experiment\nname: a\n" + line + "\n```\n", 8, said);
  // The values at the edges are taken, and a step budget alone still runs its epochs.
  const Lab edges = parse(
      "```experiment\nname: a\nseed: 9223372036854775807\nsteps: 2147483647\ngamma: 1\n"
      "weight-decay: 0\nmomentum: 0.9999\nbatch: 65536\n```\n");
  ASSERT_TRUE(edges.ok()) << problems(edges);
  EXPECT_EQ(edges.experiments[0].experiment.train.seed, 9223372036854775807u);
  EXPECT_EQ(edges.experiments[0].experiment.train.max_steps, 2147483647);
}

// Text that is not UTF-8 is refused at its line with the byte, before anything of the lab is
// read: a Latin-1 file passed `lab check`, then died in `lab run`, and the window's Run did
// nothing.
TEST(Labs, TextThatIsNotUtf8IsRefusedAtItsLineWithTheByte) {
  for (const auto& [text, column, byte] : std::vector<std::tuple<std::string, int, std::string>>{
           {"name: caf\xe9", 10, "0xE9"},          // Latin-1
           {"name: \x80", 7, "0x80"},              // a continuation byte alone
           {"name: \xc0\xaf", 7, "0xC0"},          // overlong '/'
           {"name: \xed\xa0\x80", 7, "0xED"},      // a UTF-16 surrogate
           {"name: \xf5\x80\x80\x80", 7, "0xF5"},  // past U+10FFFF
           {"name: ab\xe2\x82", 9, "0xE2"},        // cut short at the line's end
           {"name: \xf0\x9f\x98", 7, "0xF0"},      // a four-byte sequence cut short
       }) {
    const Lab lab = parse("```experiment\n" + text + "\n```\n");
    ASSERT_EQ(lab.problems.size(), 1u) << problems(lab);
    EXPECT_EQ(lab.problems[0].to_string(),
              "x.md:7: byte " + byte + " at column " + std::to_string(column) +
                  " is not UTF-8: save the file as UTF-8 (a Latin-1 \"é\" is one byte, UTF-8 "
                  "writes it as two)");
    EXPECT_TRUE(lab.experiments.empty());
  }
  const Lab title = parse_lab("---\ntitle: Caf\xe9\n", "t.md");
  ASSERT_EQ(title.problems.size(), 1u) << problems(title);
  EXPECT_EQ(title.problems[0].line, 2);
  // UTF-8 of every length reads.
  EXPECT_TRUE(parse("```experiment\nname: café ∑ 😀\n```\n").ok());
}

// A lab file is at most 64 KiB and 1000 lines, said in the message; a larger file is refused by
// its size, unread (a 3 GiB sparse file answers at once), so a remembered one cannot stop the
// window from starting.
TEST(Labs, AFileTooLargeOrTooLongIsRefusedWithTheLimits) {
  const std::string limits =
      "; a lab file has at most 65536 bytes and 1000 lines: split it into "
      "smaller labs";
  const Lab big = parse(std::string(kMaxLabBytes, 'x'));
  ASSERT_EQ(big.problems.size(), 1u) << problems(big);
  EXPECT_EQ(
      big.problems[0].to_string(),
      "x.md: the file has " + std::to_string(kHeader.size() + kMaxLabBytes) + " bytes" + limits);
  std::string lines;
  for (int i = 0; i < kMaxLabLines; ++i) lines += "x\n";
  const Lab tall = parse(lines);
  ASSERT_EQ(tall.problems.size(), 1u) << problems(tall);
  EXPECT_EQ(tall.problems[0].problem,
            "the file has " + std::to_string(kMaxLabLines + 5) + " lines" + limits);
  // At the limits, it reads.
  std::string most = kHeader;
  while (most.size() + 40 < kMaxLabBytes &&
         std::count(most.begin(), most.end(), '\n') < kMaxLabLines)
    most += "text of a line, and more text of it\n";
  EXPECT_TRUE(parse_lab(most, "m.md").ok()) << problems(parse_lab(most, "m.md"));

  test::TempDir dir;
  const auto sparse = dir.path() / "sparse.md";
  std::ofstream(sparse) << kHeader;
  std::filesystem::resize_file(sparse, std::uintmax_t(3) << 30);
  const auto start = std::chrono::steady_clock::now();
  const Lab huge = load_lab_file(sparse);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_EQ(huge.problems.size(), 1u) << problems(huge);
  EXPECT_EQ(huge.problems[0].to_string(),
            sparse.string() + ": the file has 3221225472 bytes" + limits);
}

TEST(Labs, MissingHardwareNamesWhatTheMachineLacks) {
  const Lab lab = parse(
      "```experiment\nname: cpu\n```\n```experiment\nname: gpu\ndevice: cuda:0\n```\n"
      "```experiment\nname: second gpu\ndevice: cuda:1\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  DeviceList none;
  none.no_gpu_reason = "no NVIDIA driver found";
  EXPECT_EQ(missing_hardware(lab.experiments[0], none), "");
  EXPECT_EQ(missing_hardware(lab.experiments[1], none),
            "cuda:0 needs a GPU, and this machine has none (no NVIDIA driver found)");
  DeviceList one;
  one.gpus.push_back(GpuInfo{});
  EXPECT_EQ(missing_hardware(lab.experiments[1], one), "");
  EXPECT_EQ(missing_hardware(lab.experiments[2], one),
            "cuda:1 needs GPU 1, and this machine has 1 GPU");
}

TEST(Labs, MatmulOnTheCpuAgreesWithANaiveProduct) {
  for (int n : {1, 7, 32, 65}) EXPECT_LT(matmul_error("cpu", n), 1e-5) << n;
  const auto timings = bench_matmul("cpu", {16, 32});
  ASSERT_EQ(timings.size(), 2u);
  EXPECT_EQ(timings[1].size, 32);
  EXPECT_GT(timings[1].ms, 0);
  EXPECT_EQ(timings[1].ms, timings[1].ms_with_copies);
}

// A cold first pass (48 ms, then 0.2 ms) is a warm-up, never the figure; the median is of at least
// the passes asked for, whatever the budget. Timings are given, not measured: no clock involved.
TEST(Timing, ColdPassesAreWarmUpAndTheMedianIsNeverOfOne) {
  std::vector<double> passes = {48.0, 30.0, 0.2, 0.21, 0.19, 0.2, 0.22, 0.2, 0.2, 0.2};
  size_t next = 0;
  auto once = [&] { return next < passes.size() ? passes[next++] : 0.2; };
  const RepeatedTiming timing = time_repeats(once, 5, 15, 0.0);  // no budget: the minimum only
  EXPECT_EQ(timing.passes, 5);
  EXPECT_EQ(next, 4u + 5u);  // 48, 30, 0.2 (none agrees with the one before), 0.21; five timed
  EXPECT_DOUBLE_EQ(timing.median_ms, 0.2);
  // The warm-up gives up after 5 passes that never settle, and the budget adds passes up to the
  // most asked for.
  next = 0;
  passes = {100, 160, 250, 400, 700, 1, 2, 3, 4, 5};
  const RepeatedTiming slow = time_repeats(once, 3, 7, 1e9);
  EXPECT_EQ(slow.passes, 7);
  EXPECT_DOUBLE_EQ(slow.median_ms, 2);  // of 1, 2, 3, 4, 5, 0.2, 0.2
  EXPECT_EQ(median_ms([] { return 2.0; }), 2.0);
}

// A lab file or a setup file that is a FIFO no one writes to is refused at once, saying what it
// is, through the one reader of input files: opening it for reading would wait forever (a
// remembered one at every start of the window).
TEST(Labs, ALabOrSetupFileThatIsAFifoIsRefusedNotWaitedOn) {
  test::TempDir dir;
  const auto lab_fifo = test::make_fifo(dir.path() / "lab.md");
  Lab lab;
  ASSERT_TRUE(test::ends_in_time(lab_fifo, [&] { lab = load_lab(lab_fifo.string()); }));
  ASSERT_EQ(lab.problems.size(), 1u);
  EXPECT_NE(lab.problems[0].problem.find("is a FIFO"), std::string::npos)
      << lab.problems[0].problem;
  const auto setup_fifo = test::make_fifo(dir.path() / "setup.json");
  std::string message;
  ASSERT_TRUE(test::ends_in_time(setup_fifo, [&] {
    try {
      load_experiment(setup_fifo);
    } catch (const ConfigError& e) {
      message = e.what();
    }
  }));
  EXPECT_NE(message.find("is a FIFO"), std::string::npos) << message;
  // A missing setup still says it cannot be opened.
  try {
    load_experiment(dir.path() / "none.json");
    ADD_FAILURE() << "a missing setup file was read";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be opened"), std::string::npos) << e.what();
  }
}

TEST(Labs, MatmulOnAGpuAgreesWithTheCpu) {
  if (list_devices().gpus.empty()) GTEST_SKIP() << "no GPU: " << list_devices().no_gpu_reason;
  for (int n : {1, 7, 64, 257}) EXPECT_LT(matmul_error("cuda:0", n), 1e-4) << n;
  const auto timings = bench_matmul("cuda:0", {64});
  ASSERT_EQ(timings.size(), 1u);
  EXPECT_GE(timings[0].ms_with_copies, timings[0].ms);
}

using Result = test::CliResult;

Result cli(const std::string& args) {
  return test::run_command(std::string(GPULAB_CLI_PATH) + " " + args);
}

// What the smaller messages say: a step budget of 0 was "--epochs must be at least 1"; a byte
// order mark was "a lab starts with a header"; `lab check FOLDER` said "no such file"; and a title
// with an escape sequence reached the terminal as it was.
TEST(LabCli, CheckSaysWhatIsWrongInTheLabsOwnWords) {
  test::TempDir dir;
  const auto none = dir.path() / "steps0.md";
  std::ofstream(none) << kHeader << "```experiment\nname: a\nmodel: mlp\nsteps: 0\n```\n";
  const Result zero = cli("lab check " + none.string());
  EXPECT_EQ(zero.exit_code, 1) << zero.output;
  EXPECT_NE(zero.output.find("nothing to train: the epochs and the steps are both 0"),
            std::string::npos)
      << zero.output;
  const auto bom = dir.path() / "bom.md";
  std::ofstream(bom) << "\xEF\xBB\xBF" << kHeader << "```experiment\nname: a\n```\n";
  const Result marked = cli("lab check " + bom.string());
  EXPECT_EQ(marked.exit_code, 1) << marked.output;
  EXPECT_NE(marked.output.find(bom.string() +
                               ":1: starts with a UTF-8 byte order mark (bytes EF BB BF); save "
                               "the file as UTF-8 without a BOM"),
            std::string::npos)
      << marked.output;
  const Result folder = cli("lab check " + dir.path().string());
  EXPECT_EQ(folder.exit_code, 1) << folder.output;
  EXPECT_NE(folder.output.find(dir.path().string() + ": is a folder, not a lab file"),
            std::string::npos)
      << folder.output;
  const auto escaped = dir.path() / "escaped.md";
  std::ofstream(escaped) << "---\ntitle: \x1b]0;owned\x07T\xc2\x9b"
                            "2J\nminutes: 5\nhardware: cpu\n---\n"
                         << "```experiment\nname: a\nmodel: mlp\n```\n";
  const Result shown = cli("lab check " + escaped.string());
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_EQ(shown.output.find('\x1b'), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("\"?]0;owned?T?2J\""), std::string::npos) << shown.output;
  // An experiment's name is bounded as a run's: refused by lab check at its line, before lab run
  // could write part of a hand-in.
  const auto long_name = dir.path() / "long-name.md";
  std::ofstream(long_name) << kHeader << "```experiment\nname: " << std::string(5000, 'x')
                           << "\nmodel: mlp\n```\n";
  const Result named = cli("lab check " + long_name.string());
  EXPECT_EQ(named.exit_code, 1) << named.output;
  EXPECT_NE(named.output.find("name is 5000 bytes long"), std::string::npos) << named.output;
}

TEST(LabCli, CheckExitsNonZeroNamingFileAndLine) {
  test::TempDir dir;
  const auto good = dir.path() / "good.md", bad = dir.path() / "bad.md";
  std::ofstream(good) << kHeader << "```experiment\nname: a\nmodel: mlp\n```\n";
  std::ofstream(bad) << kHeader << "```experiment\nname: a\nmodel: nosuch\n```\n";
  const Result ok = cli("lab check " + good.string());
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("ok"), std::string::npos) << ok.output;
  const Result wrong = cli("lab check " + bad.string());
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_NE(wrong.output.find(bad.string() + ":8: model: unknown model preset \"nosuch\""),
            std::string::npos)
      << wrong.output;
  EXPECT_EQ(cli("lab check " + good.string() + " " + bad.string()).exit_code, 1);
  const Result run_bad = cli("lab run " + bad.string() + " --out " + (dir.path() / "out").string());
  EXPECT_EQ(run_bad.exit_code, 1) << run_bad.output;
  EXPECT_NE(run_bad.output.find(bad.string() + ":8: "), std::string::npos) << run_bad.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));  // nothing ran
  EXPECT_NE(cli("lab check /nonexistent/lab.md").exit_code, 0);
  EXPECT_EQ(cli("lab check cnn-on-gpu gpu-vs-cpu-matmul").exit_code, 0);
  std::string every_lab;
  for (const auto& name : builtin_lab_names()) every_lab += " " + name;
  const Result all = cli("lab check" + every_lab);
  EXPECT_EQ(all.exit_code, 0) << all.output;
}

// `lab check` and `lab run` on a Latin-1 lab and an out-of-range setting: exit 1 naming the file
// and line, under a time limit, and nothing runs.
TEST(LabCli, CheckAndRunRefuseLatin1TextAndSettingsOutOfRange) {
  test::TempDir dir;
  const auto latin1 = dir.path() / "latin1.md", seed = dir.path() / "seed.md";
  std::ofstream(latin1) << kHeader << "```experiment\nname: caf\xe9\nmodel: mlp\n```\n";
  std::ofstream(seed) << kHeader << "```experiment\nname: a\nmodel: mlp\nseed: -1\n```\n";
  for (const auto& [file, said] : std::vector<std::pair<std::filesystem::path, std::string>>{
           {latin1, ":7: byte 0xE9 at column 10 is not UTF-8: save the file as UTF-8"},
           {seed,
            ":9: seed: -1 is out of range: give a whole number from 0 to "
            "9223372036854775807"}}) {
    for (const std::string& command :
         {"lab check " + file.string(),
          "lab run " + file.string() + " --out " + (dir.path() / "out").string()}) {
      const Result r =
          test::run_command("timeout 60 " + std::string(GPULAB_CLI_PATH) + " " + command);
      EXPECT_EQ(r.exit_code, 1) << command << r.output;
      EXPECT_NE(r.output.find(file.string() + said), std::string::npos) << r.output;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));  // nothing ran
}

TEST(LabCli, ListsTheBuiltInLabsOneALine) {
  const Result r = cli("lab list");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), int(builtin_labs().size()));
  EXPECT_NE(r.output.find("cnn-on-gpu"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("A CNN on the GPU"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("40 min  cpu, gpu"), std::string::npos) << r.output;
}

TEST(LabCli, QuickRunOfACpuLabWritesItsTable) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(128, 1), test::synthetic_set(32, 2));
  const auto lab = dir.path() / "cpu.md";
  std::ofstream(lab) << kHeader
                     << "```experiment\nname: mlp cpu\nmodel: mlp\nbatch: 16\nsteps: 500\n```\n"
                        "```experiment\nname: lenet5 cpu\nmodel: lenet5\nbatch: 16\nsteps: 500\n"
                        "threads: 1\n```\n"
                        "```experiment\nname: on a gpu\nmodel: mlp\ndevice: cuda:0\n```\n"
                        "```table\ncolumns: experiment, steps, images/s, speedup\n```\n";
  const auto out = dir.path() / "out";
  const Result r = cli("lab run " + lab.string() + " --quick --quiet --out " + out.string() +
                       " --data-dir " + (dir.path() / "data").string());
  const bool gpu = !list_devices().gpus.empty();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[1/3] mlp cpu (cpu)"), std::string::npos) << r.output;
  if (!gpu) {
    EXPECT_NE(r.output.find("[3/3] on a gpu (cuda:0): skipped: "), std::string::npos) << r.output;
  }
  const std::string csv = read(out / "results.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "experiment,steps,images/s,speedup,note") << csv;
  EXPECT_NE(csv.find("\nmlp cpu,3,"), std::string::npos) << csv;  // --quick: 3 steps
  EXPECT_NE(csv.find("\nlenet5 cpu,3,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",1.00,"), std::string::npos) << csv;  // the baseline over itself
  if (!gpu) {
    EXPECT_NE(csv.find("\non a gpu,,,,skipped: "), std::string::npos) << csv;
  }
  // --quick: every row is marked, in the table, the report and the run's own record, so a
  // speedup after 3 steps is never read as a measurement.
  EXPECT_NE(read(out / "results.md").find("| ⚠ mlp cpu | 3 |"), std::string::npos);
  EXPECT_NE(csv.find("⚠ quick: a few steps each, not for comparison"), std::string::npos) << csv;
  EXPECT_NE(read(out / "README.md").find("from gpulab-cli lab run --quick (quick: a few steps each, "
                                         "not for comparison)"),
            std::string::npos);
  const std::vector<std::string> flags = run_flags(load_run(out / "runs" / "mlp-cpu"));
  EXPECT_NE(std::find(flags.begin(), flags.end(), "quick: a few steps each, not for comparison"),
            flags.end());
  EXPECT_TRUE(std::filesystem::exists(out / "runs" / "mlp-cpu" / "run.json"));
  // The hand-in around the tables: the report, no answers from a headless run, the machine.
  const std::string readme = read(out / "README.md");
  EXPECT_NE(readme.find("from gpulab-cli lab run"), std::string::npos) << readme;
  EXPECT_NE(readme.find("mlp cpu | 3 |"), std::string::npos) << readme;
  EXPECT_EQ(nlohmann::json::parse(read(out / "answers.json"))["answered"], 0);
  EXPECT_EQ(nlohmann::json::parse(read(out / "machine.json"))["cpu"]["logical_cores"],
            list_devices().cpu.logical_cores);
  // Run again into the same folder: refused before anything runs, naming the earlier run.
  const Result again = cli("lab run " + lab.string() + " --quick --quiet --out " + out.string() +
                           " --data-dir " + (dir.path() / "data").string());
  EXPECT_EQ(again.exit_code, 2) << again.output;  // an output refused
  EXPECT_NE(again.output.find((out / "runs" / "mlp-cpu").string() + ": already holds a run"),
            std::string::npos)
      << again.output;
  EXPECT_EQ(again.output.find("[1/3]"), std::string::npos) << again.output;

  const Result missing = cli("lab run no-such-lab --out " + out.string());
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("not a built-in lab"), std::string::npos) << missing.output;
}

TEST(LabCli, QuickRunOfTheMatmulLabWritesItsTable) {
  test::TempDir dir;
  const Result r = cli("lab run gpu-vs-cpu-matmul --quick --out " + dir.path().string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = read(dir.path() / "results.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "experiment,device,size,ms,ms with copies,GFLOP/s,GFLOP/s with copies,copy ms,copy "
            "GB/s,speedup,note")
      << csv;
  EXPECT_NE(csv.find("\ncpu,cpu,256,"), std::string::npos) << csv;
  // The CPU copies nothing: its copy cells are empty, not 0. (Its note may say the machine was
  // loaded: the other tests run beside this one.)
  const size_t row = csv.find("\ncpu,cpu,32,");
  ASSERT_NE(row, std::string::npos) << csv;
  std::vector<std::string> cells;
  std::stringstream line(csv.substr(row + 1, csv.find('\n', row + 1) - row - 1));
  for (std::string cell; std::getline(line, cell, ',');) cells.push_back(cell);
  ASSERT_GE(cells.size(), 9u) << csv;
  EXPECT_EQ(cells[7], "") << csv;
  EXPECT_EQ(cells[8], "") << csv;
  EXPECT_EQ(csv.find("\ncpu,cpu,512,"), std::string::npos) << csv;  // --quick: small sizes only
  if (list_devices().gpus.empty()) {  // the H200's timings that ship, marked, a row per size
    EXPECT_NE(csv.find("\ngpu,cuda:0,32,0.015,0.043,"), std::string::npos) << csv;
    EXPECT_NE(csv.find("\ngpu,cuda:0,8192,21.445,36.009,51271.2,30534.4,14.564,55.29,,"
                       "\"recorded on NVIDIA H200, 2026-11-27 (a reference run, not measured on "
                       "this machine)"),
              std::string::npos)
        << csv;
    EXPECT_NE(r.output.find("not run here: --device cuda:0: no GPU"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("reference timings, recorded on NVIDIA H200, 2026-11-27 (not measured "
                            "on this machine): 9 sizes, n = 32 to 8192"),
              std::string::npos)
        << r.output;
  }
}

// A lab's inference benchmark runs from the command line as the matmul one does, with no MNIST.
TEST(LabCli, QuickRunOfAnInferenceBenchmarkWritesItsRows) {
  test::TempDir dir;
  const auto lab = dir.path() / "inference.md";
  std::ofstream(lab) << kHeader
                     << "```experiment\nname: one thread\nbench: inference\nmodel: mlp\n"
                        "threads: 1\nsizes: 1, 64\n```\n"
                        "```table\ncolumns: experiment, batch, ms, ms per image, images/s\n```\n";
  const auto out = dir.path() / "out";
  const Result r = cli("lab run " + lab.string() + " --quick --out " + out.string() +
                       " --data-dir " + (dir.path() / "no-data").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("inference of mlp at 2 batch sizes"), std::string::npos) << r.output;
  const std::string csv = read(out / "results.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "experiment,batch,ms,ms per image,images/s,note") << csv;
  EXPECT_NE(csv.find("\none thread,1,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\none thread,64,"), std::string::npos) << csv;
}

// The matrix-multiply lab draws its table as a log-log chart of time and GFLOP/s against the
// size, as PNG and SVG, through the chart export the other charts use: its axes say they are
// logarithmic, its series are the table's experiments (the GPU's with copies too, where one ran).
TEST(LabCli, QuickRunOfTheMatmulLabDrawsItsLogLogChart) {
  test::TempDir dir;
  const Result r = cli("lab run gpu-vs-cpu-matmul --quick --out " + dir.path().string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("chart: " + (dir.path() / "chart-matmul.svg").string()),
            std::string::npos)
      << r.output;
  const std::string png = read(dir.path() / "chart-matmul.png");
  ASSERT_GE(png.size(), 8u) << r.output;
  EXPECT_EQ(png.substr(1, 3), "PNG");
  const std::string svg = read(dir.path() / "chart-matmul.svg");
  for (const char* text :
       {"Matrix multiply: time and GFLOP/s against the size", "matrix size n (log scale)",
        "ms (log scale)", "GFLOP/s (log scale)", ">256<"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  // ⚠ after its name where other programs loaded the machine while it timed.
  EXPECT_TRUE(svg.find(">cpu<") != std::string::npos || svg.find(">cpu ⚠<") != std::string::npos);
  const bool gpu = !list_devices().gpus.empty();
  EXPECT_EQ(svg.find(">gpu with copies<") != std::string::npos, gpu);
  // Without a GPU, the H200's timings that ship are drawn, marked as recorded there.
  EXPECT_EQ(svg.find(">gpu with copies (reference, recorded on NVIDIA H200, 2026-11-27)<") !=
                std::string::npos,
            !gpu);
  // The report shows it.
  const std::string readme = read(dir.path() / "README.md");
  EXPECT_NE(readme.find("](chart-matmul.png)"), std::string::npos) << readme;
  EXPECT_NE(readme.find("[SVG](chart-matmul.svg)"), std::string::npos) << readme;
  // A second run into the same folder replaces its own chart (a hand-in's file, not a stranger).
  const Result again = cli("lab run gpu-vs-cpu-matmul --quick --out " + dir.path().string());
  EXPECT_EQ(again.exit_code, 0) << again.output;
}

// A benchmark of small sizes is over within one of the processor's clock ticks, the unit its busy
// time is counted in: the load beside it is still read, over half a second, and marks its rows.
TEST(LabResults, ABenchmarkShorterThanAClockTickIsStillJudgedByTheLoadBesideIt) {
  const Lab lab = parse("```experiment\nname: m\nbench: matmul\ndevice: cpu\nsizes: 8\n```\n");
  ASSERT_EQ(lab.experiments.size(), 1u);
  LabRunResult result;
  const auto start = std::chrono::steady_clock::now();
  {
    const test::OtherProgramsSpinning spinning(2);
    ASSERT_EQ(spinning.count(), 2u);
    result = run_lab_bench(lab.experiments[0], {8});
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  ASSERT_FALSE(result.outside_load.is_null());
  ASSERT_EQ(result.flags.size(), 1u) << result.outside_load.dump();
  EXPECT_EQ(result.flags[0].rfind("measured under outside load: other programs kept ", 0), 0u)
      << result.flags[0];
}

// Two other programs spinning on the CPU while `lab run` starts: it says so in one line before
// the first experiment, and the benchmark it timed meanwhile carries ⚠ on each of its rows.
TEST(LabCli, SaysTheMachineIsBusyBeforeStartingAndMarksTheBenchmark) {
  test::TempDir dir;
  Result r;
  {
    const test::OtherProgramsSpinning spinning(2);
    ASSERT_EQ(spinning.count(), 2u);
    r = cli("lab run gpu-vs-cpu-matmul --quick --out " + dir.path().string());
  }
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t busy = r.output.find("\nthe machine is busy: other programs keep ");
  ASSERT_NE(busy, std::string::npos) << r.output;
  const std::string line = r.output.substr(busy + 1, r.output.find('\n', busy + 1) - busy - 1);
  const std::string cores = std::to_string(sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_NE(line.find(" of " + cores +
                      " cores busy, so figures measured now will be marked ⚠ measured under "
                      "outside load; wait for them to finish for clean figures"),
            std::string::npos)
      << line;
  EXPECT_LT(busy, r.output.find("[1/2]")) << r.output;
  EXPECT_NE(r.output.find("  ⚠ measured under outside load: other programs kept "),
            std::string::npos)
      << r.output;
  const std::string markdown = read(dir.path() / "results.md");
  EXPECT_NE(markdown.find("| ⚠ cpu | cpu | 32 |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| ⚠ cpu | cpu | 256 |"), std::string::npos) << markdown;
}

// A lab worked in the window, handed in from a terminal: the runs folder's runs and the answers
// kept in its .gpulab-labs.json.
// An earlier hand-in whose file links out of its folder had the link's target overwritten. Such a
// folder is refused, naming the link; and a link that appears after the check is replaced
// itself, never written through.
TEST(LabHandIn, NoOutputFollowsALinkOutOfItsFolder) {
  test::TempDir dir;
  const Lab lab = parse(kHandInLab);
  const LabHandIn h = known_hand_in(dir.path() / "runs");
  const auto out = dir.path() / "hand-in";
  const auto outside = dir.path() / "outside";
  std::filesystem::create_directories(outside / "folder");
  std::ofstream(outside / "notes.md") << "mine";
  const std::vector<std::string> names = {"README.md",   "answers.json", "machine.json",
                                          "results.csv", "results.md",   "chart-1-loss.png"};
  for (const std::string& name : names) {
    std::filesystem::remove_all(out);
    write_hand_in(out, lab, h);
    std::filesystem::remove(out / name);
    std::filesystem::create_symlink(outside / "notes.md", out / name);
    try {
      check_hand_in_folder(out, lab, "--out");
      ADD_FAILURE() << name << " linked out of the folder was accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()),
                "--out " + out.string() + ": holds " + name + ", a link to " +
                    (outside / "notes.md").string() +
                    ", and a hand-in never writes through a link out of its folder; give an "
                    "empty or new folder for the hand-in");
    }
    write_hand_in(out, lab, h);  // as if the link came after the check
    EXPECT_EQ(read(outside / "notes.md"), "mine") << name;
  }
  std::filesystem::remove_all(out);
  write_hand_in(out, lab, h);
  std::filesystem::remove_all(out / "runs");  // the copies of the runs the hand-in holds
  std::filesystem::create_directory_symlink(outside / "folder", out / "runs");
  EXPECT_THROW(check_hand_in_folder(out, lab, "--out"), ConfigError);
  write_hand_in(out, lab, h);  // as if the link came after the check: replaced, not followed
  EXPECT_TRUE(std::filesystem::is_empty(outside / "folder"));
  EXPECT_FALSE(std::filesystem::is_symlink(out / "runs"));
}

// A run.json edited to claim 100 times the images and 99.9 % test accuracy: the hand-in shows the
// figures as the record gives them, marked with ⚠ and a note saying which disagree and with what.
TEST(LabHandIn, FiguresThatDisagreeWithEachOtherAreMarked) {
  test::TempDir dir;
  const Lab lab = parse(kHandInLab);
  LabHandIn h = known_hand_in(dir.path() / "runs");
  const auto clean = dir.path() / "runs" / "a";
  nlohmann::json info = nlohmann::json::parse(read(clean / "run.json"));
  info["summary"]["images"] = info["summary"]["images"].get<int64_t>() * 100;
  info["summary"]["test_accuracy"] = 0.999;
  write_file_atomically(clean / "run.json", info.dump());
  h.results[0] = lab_run_result("clean", load_run(clean));
  const auto out = dir.path() / "hand-in";
  write_hand_in(out, lab, h);
  const std::string readme = read(out / "README.md");
  for (const std::string& expected :
       {std::string("| ⚠ clean | 40 | 320000 | ⚠ figures disagree: its 128000 images are more "
                    "than its 40 steps of 32 hold; ⚠ figures disagree: 320000 images/s is faster "
                    "than any step metrics.csv holds (3200 at most); ⚠ figures disagree: test "
                    "accuracy 99.90 % is not its last test evaluation in eval.csv (94.00 %) |"),
        std::string("⚠ marks a run whose figures are not its own alone, were cut short or "
                    "disagree with each other")})
    EXPECT_NE(readme.find(expected), std::string::npos) << expected << "\n---\n" << readme;
  EXPECT_NE(read(out / "results.csv").find("\nclean,40,320000,⚠ figures disagree: its 128000"),
            std::string::npos)
      << read(out / "results.csv");
  // The record as written is not marked.
  EXPECT_EQ(readme.find("| ⚠ shared | 40 | 3200 | ⚠ figures disagree"), std::string::npos);
}

// The run the progress file names is found however either path is spelt, and after the runs
// folder was copied elsewhere (its folder name and run name); a record whose run is gone falls
// back to the newest run named for the experiment. (An exact match of the absolute path made a
// relative --runs-dir or a copied folder say "0 of 4 experiments".)
TEST(LabProgress, AnExperimentsRunIsFoundHoweverItsFolderIsNamed) {
  test::TempDir dir;
  const Lab lab = parse(kHandInLab);
  ASSERT_TRUE(lab.ok()) << problems(lab);
  const LabExperiment& clean = *lab.experiment("clean");
  const auto named = [&](const std::filesystem::path& where, const std::string& name) {
    RunData run = recorded_run(where, false);
    run.info["name"] = name;
    return run;
  };
  const RunData other = named(dir.path() / "runs" / "b", "something else");
  const RunData mine = named(dir.path() / "runs" / "a", lab_run_name(lab, clean));
  const std::vector<const RunData*> runs = {&other, &mine};
  LabRecord record;
  record.runs["clean"] = (dir.path() / "runs" / "sub" / ".." / "a").string();
  std::filesystem::create_directories(dir.path() / "runs" / "sub");
  EXPECT_EQ(experiment_run(lab, clean, &record, runs), 1);
  // Copied elsewhere: the record still names the old place.
  record.runs["clean"] = "/no/such/place/runs/a";
  const RunData copied = named(dir.path() / "copy" / "a", lab_run_name(lab, clean));
  const RunData same_folder_other_run = named(dir.path() / "copy2" / "a", "something else");
  EXPECT_EQ(experiment_run(lab, clean, &record, {&same_folder_other_run, &copied}), 1);
  // Its run deleted: the newest run named for the experiment.
  record.runs["clean"] = (dir.path() / "runs" / "deleted").string();
  EXPECT_EQ(experiment_run(lab, clean, &record, runs), 1);
  EXPECT_EQ(experiment_run(lab, clean, &record, {&other}), -1);
}

// `lab hand-in --runs-dir` given a `lab run`'s output folder rebuilds its hand-in from the runs
// and answers kept there.
TEST(LabCli, HandInRebuildsALabRunsFolder) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(128, 1), test::synthetic_set(32, 2));
  const auto lab = dir.path() / "x.md";
  std::ofstream(lab) << kHeader << kHandInLab;
  const auto answers = dir.path() / "given.json";
  std::ofstream(answers)
      << R"({"answers": [{"question": "What dominates training?", "answer": "Matrix products"}]})";
  const auto first = dir.path() / "first";
  const Result run = cli("lab run " + lab.string() + " --quick --quiet --out " + first.string() +
                         " --data-dir " + (dir.path() / "data").string() + " --answers " +
                         answers.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto again = dir.path() / "again";
  const Result r = cli("lab hand-in " + lab.string() + " --learner Ada --runs-dir " +
                       first.string() + " --out " + again.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(first.string() + ": a `lab run` folder: its runs/ and answers.json"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("2 of 3 experiments with results, quiz 1 of 2 right"), std::string::npos)
      << r.output;
  const std::string readme = read(again / "README.md");
  // The --quick marks come with the runs.
  EXPECT_NE(readme.find("| ⚠ clean | 3 |"), std::string::npos) << readme;
  EXPECT_NE(readme.find("| ⚠ shared | 3 |"), std::string::npos) << readme;
  EXPECT_NE(readme.find("Answer: Matrix products — **right**"), std::string::npos) << readme;
}

TEST(LabCli, HandInBuildsTheFolderFromTheWindowsRunsFolder) {
  test::TempDir dir;
  const auto lab = dir.path() / "x.md";
  std::ofstream(lab) << kHeader << kHandInLab;
  const auto runs = dir.path() / "runs";
  recorded_run(runs / "a", false);
  LabProgress progress;
  progress.labs[lab.string()].runs["clean"] = (runs / "a").string();
  progress.labs[lab.string()].answers["What dominates training?"] = "Matrix products";
  std::string problem;
  ASSERT_TRUE(save_lab_progress(runs, progress, &problem)) << problem;
  const auto out = dir.path() / "hand-in";
  // The lab named otherwise than the window named it: the same file.
  std::filesystem::create_directories(dir.path() / "sub");
  const auto same_lab = dir.path() / "sub" / ".." / "x.md";
  const Result r = cli("lab hand-in " + same_lab.string() + " --learner Ada --runs-dir " +
                       runs.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 of 3 experiments with results, quiz 1 of 2 right"), std::string::npos)
      << r.output;
  const std::string readme = read(out / "README.md");
  EXPECT_NE(readme.find("from gpulab-cli lab hand-in"), std::string::npos) << readme;
  EXPECT_NE(readme.find("| clean | 40 | 3200 |  |"), std::string::npos) << readme;
  EXPECT_NE(readme.find("| shared |  |  | not run yet |"), std::string::npos) << readme;
  EXPECT_NE(readme.find("## Quiz: 1 of 2 right (1 of 2 answered)"), std::string::npos) << readme;
  EXPECT_NE(readme.find("Answer: Matrix products — **right**"), std::string::npos) << readme;
  EXPECT_EQ(nlohmann::json::parse(read(out / "answers.json"))["score"], 1);
  EXPECT_TRUE(std::filesystem::exists(out / "machine.json"));
  if (GPULAB_GUI_ENABLED) {  // the chart, drawn as `gpulab-cli export` draws it
    EXPECT_NE(readme.find("![Its loss](chart-1-loss.png)"), std::string::npos) << readme;
    EXPECT_GT(std::filesystem::file_size(out / "chart-1-loss.png"), 1000u);
    EXPECT_GT(std::filesystem::file_size(out / "chart-1-loss.svg"), 1000u);
  }
  EXPECT_EQ(read(out / "results.csv").substr(0, 28), "experiment,steps,images/s,no");

  std::ofstream(dir.path() / "elsewhere.txt") << "x";
  const Result refused = cli("lab hand-in " + lab.string() + " --learner Ada --runs-dir " +
                             runs.string() + " --out " + dir.path().string());
  EXPECT_EQ(refused.exit_code, 2) << refused.output;  // an output refused
  EXPECT_NE(refused.output.find("which is not part of a hand-in"), std::string::npos)
      << refused.output;
}

// A headless run hands in no answers unless given: a hand-in's answers.json, matched by text.
TEST(LabCli, RunHandsInTheAnswersGivenAndRefusesOnesTheLabLacks) {
  test::TempDir dir;
  const auto answers = dir.path() / "answers.json";
  std::ofstream(answers) << R"({"answers": [
      {"question": "GPUs are faster than CPUs at loading small chunks of data.", "answer": "False"},
      {"question": "For small matrices, copying them to the GPU and back can take longer than the product itself.", "answer": null}]})";
  const auto out = dir.path() / "out";
  const Result r = cli("lab run gpu-vs-cpu-matmul --quick --out " + out.string() + " --answers " +
                       answers.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string readme = read(out / "README.md");
  EXPECT_NE(readme.find("## Quiz: 1 of 4 right (1 of 4 answered)"), std::string::npos) << readme;
  EXPECT_NE(readme.find("Answer: False — **right**"), std::string::npos) << readme;

  std::ofstream(answers) << R"({"answers": [{"question": "Is this asked?", "answer": "True"}]})";
  const auto elsewhere = dir.path() / "elsewhere";
  const Result wrong = cli("lab run gpu-vs-cpu-matmul --quick --out " + elsewhere.string() +
                           " --answers " + answers.string());
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_NE(wrong.output.find("--answers " + answers.string() +
                              ": the question \"Is this asked?\" is not in \"GPU vs CPU"),
            std::string::npos)
      << wrong.output;
  EXPECT_FALSE(std::filesystem::exists(elsewhere));  // nothing ran, nothing written
}

// The hardware lab on the CPU: its CPU rows get the utilization and memory of the run's record,
// and an energy that is measured or says why not, never 0 J.
TEST(LabCli, QuickRunOfTheHardwareLabFillsItsHardwareColumns) {
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(512, 1), test::synthetic_set(32, 2));
  const auto out = dir.path() / "out";
  const Result r = cli("lab run watching-the-hardware --quick --quiet --out " + out.string() +
                       " --data-dir " + (dir.path() / "data").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = read(out / "results.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "experiment,batch,images/s,speedup,utilization,memory busy,peak memory,power,SM MHz,"
            "SM MHz max,peak temperature,time to target,energy,images/J,note")
      << csv;
  for (const std::string name : {"cpu, batch 32", "cpu, batch 256"}) {
    const auto at = csv.find("\n\"" + name + "\",");  // a name with a comma is quoted
    ASSERT_NE(at, std::string::npos) << name << "\n" << csv;
    const std::string line = csv.substr(at + 1, csv.find('\n', at + 1) - at - 1);
    // No power, SM clock nor temperature: power, SM MHz, SM MHz max, peak temperature.
    EXPECT_NE(line.find(",—,—,—,—,"), std::string::npos) << line;
    // Measured (RAPL), or unavailable with the reason.
    EXPECT_TRUE(line.find(",unavailable: ") != std::string::npos ||
                line.find("unavailable") == std::string::npos)
        << line;
    EXPECT_EQ(line.find(",0.0,"), std::string::npos) << line;  // never 0 J
  }
}

TEST(LabCli, BenchMatmulPrintsARowPerSize) {
  // The CSV on stdout alone: a busy machine's notice and mark go to stderr, dropped here (the
  // helper's 2>&1 then applies to `exit`, which keeps the CLI's status).
  const Result r =
      cli("bench matmul --sizes 16,...,64 --device cpu --format csv 2>/dev/null; exit $?");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.substr(0, r.output.find('\n')),
            "device,size,ms,ms_with_copies,gflops,gflops_with_copies");
  EXPECT_NE(r.output.find("\ncpu,16,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\ncpu,32,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\ncpu,64,"), std::string::npos) << r.output;
  if (list_devices().gpus.empty()) {
    const Result gpu = cli("bench matmul --sizes 16 --device cpu,cuda:0");
    EXPECT_EQ(gpu.exit_code, 1);
    EXPECT_NE(gpu.output.find("--device cuda:0: no GPU"), std::string::npos) << gpu.output;
  }
}

TEST(LabCli, RunSaysFirstWhenTheDataIsMissing) {
  test::TempDir dir;
  const Result r = cli("lab run cnn-on-gpu --quick --out " + (dir.path() / "out").string() +
                       " --data-dir " + (dir.path() / "nothing").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find("[1/"), std::string::npos) << r.output;  // nothing ran
  EXPECT_NE(r.output.find("nothing"), std::string::npos) << r.output;
}

// Reference runs: a run recorded on a GPU elsewhere fills the row of a GPU experiment this machine
// cannot run, marked "recorded on <device>, <date>"; the learner's own run always wins.
const std::string kCpuAndGpuLab =
    "```experiment\nname: mlp cpu\nmodel: mlp\nbatch: 16\nsteps: 500\nthreads: 1\n```\n"
    "```experiment\nname: on a gpu\nmodel: mlp\ndevice: cuda:0\n```\n"
    "```table\ncolumns: experiment, steps, images/s, speedup\n```\n";
const std::string kFixtureMark = "recorded on NVIDIA H200 (fixture), 2026-11-20";
const std::string kReferenceRunsTail =
    ": not a folder; set it to a folder of reference runs (run folders recorded on a GPU), or "
    "unset it to use gpulab's own";

// A small MNIST folder and kCpuAndGpuLab as a lab file in `dir`: the reference-run tests' lab.
std::pair<std::filesystem::path, std::filesystem::path> write_cpu_and_gpu_lab(
    const std::filesystem::path& dir) {
  const auto data = dir / "data";
  test::write_mnist(data, test::synthetic_set(128, 1), test::synthetic_set(32, 2));
  const auto lab = dir / "ref.md";
  std::ofstream(lab) << kHeader << kCpuAndGpuLab;
  return {data, lab};
}

DeviceList no_gpu() {
  DeviceList devices;
  devices.cpu = cpu_info();
  devices.no_gpu_reason = "no NVIDIA driver found (test)";
  return devices;
}

bool has(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(ReferenceRuns, AreFoundWhereTheVariableSaysWhichMustNameAFolder) {
  test::TempDir dir;
  {
    test::ScopedEnv unset(kReferenceRunsVariable, "");  // empty: as if unset
    EXPECT_EQ(reference_runs_dir().filename(), "reference-runs");
    EXPECT_EQ(reference_runs_dir().parent_path().filename(), "resources");
  }
  {
    test::ScopedEnv named(kReferenceRunsVariable, dir.path().string());
    EXPECT_EQ(reference_runs_dir(), dir.path());
  }
  std::ofstream(dir.path() / "file.txt") << "not a folder\n";
  for (const auto& bad : {dir.path() / "missing", dir.path() / "file.txt"}) {
    test::ScopedEnv named(kReferenceRunsVariable, bad.string());
    try {
      reference_runs_dir();
      ADD_FAILURE() << bad << " was taken";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()),
                "GPULAB_REFERENCE_RUNS=" + bad.string() + kReferenceRunsTail);
    }
  }
  // gpulab's own folder, before any run ships in it: no reference runs, nothing to say.
  const ReferenceRuns none = load_reference_runs(dir.path() / "missing");
  EXPECT_TRUE(none.runs.empty());
  EXPECT_TRUE(none.problems.empty());
}

TEST(ReferenceRuns, OnlyAFinishedRunRecordedOnAGpuOnADayIsOne) {
  test::TempDir dir;
  const auto refs = dir.path() / "refs";
  test::write_reference_run(refs / "good", "on a gpu · x");
  test::write_reference_run(refs / "on-the-cpu", "on a gpu · x", "");  // its CPU, as it ran
  test::write_reference_run(refs / "no-date", "on a gpu · x", "NVIDIA H200", "yesterday");
  test::write_reference_run(refs / "cancelled", "on a gpu · x");
  nlohmann::json info = nlohmann::json::parse(read(refs / "cancelled" / "run.json"));
  info["status"] = "cancelled";
  std::ofstream(refs / "cancelled" / "run.json") << info.dump();
  std::filesystem::create_directories(refs / "damaged");
  std::ofstream(refs / "damaged" / "run.json") << "{ not json";
  const ReferenceRuns found = load_reference_runs(refs);
  ASSERT_EQ(found.runs.size(), 1u);
  EXPECT_EQ(found.runs[0].dir, refs / "good");
  EXPECT_EQ(recorded_on(found.runs[0]), "NVIDIA H200 (fixture), 2026-11-20");
  std::string all;
  for (const auto& p : found.problems) all += p + "\n";
  ASSERT_EQ(found.problems.size(), 4u) << all;
  const std::string only = "; only a finished run recorded on a GPU is shown in a lab";
  EXPECT_TRUE(has(found.problems, (refs / "on-the-cpu").string() +
                                      ": not a reference run: its run.json names no GPU among "
                                      "its \"devices\"" +
                                      only))
      << all;
  EXPECT_TRUE(has(found.problems, (refs / "no-date").string() +
                                      ": not a reference run: its run.json has no \"created\" "
                                      "date" +
                                      only))
      << all;
  EXPECT_TRUE(has(found.problems, (refs / "cancelled").string() +
                                      ": not a reference run: it did not finish (its status is "
                                      "\"cancelled\")" +
                                      only))
      << all;
  EXPECT_NE(all.find((refs / "damaged" / "run.json").string()), std::string::npos) << all;
  // Several GPUs of one kind are counted.
  RunData two;
  two.info = {{"created", "2026-11-21T08:00:00Z"},
              {"devices",
               {{{"id", "cuda:0"}, {"name", "NVIDIA H100"}},
                {{"id", "cuda:1"}, {"name", "NVIDIA H100"}},
                {{"id", "cpu"}, {"name", "EPYC"}}}}};
  EXPECT_EQ(recorded_on(two), "2× NVIDIA H100, 2026-11-21");
}

// The hand-in names each GPU experiment that was skipped with no reference run in its place, and
// why: a row left empty on a machine of one GPU is not read as a machine without a GPU.
TEST(ReferenceRuns, AHandInNamesTheSkippedGpuExperimentsAndWhy) {
  test::TempDir dir;
  const Lab lab = parse(kCpuAndGpuLab);
  ASSERT_TRUE(lab.ok()) << problems(lab);
  const std::vector<RunData> runs = {load_run(test::write_reference_run(
      dir.path() / "runs" / "cpu", lab_run_name(lab, *lab.experiment("mlp cpu")), ""))};
  LabHandIn h;
  h.results = lab_results_from(lab, nullptr, runs, no_gpu());
  h.machine = no_gpu();
  h.date = "2026-11-27T12:00:00Z";
  h.made_by = "the test";
  const std::string readme = hand_in_readme(lab, h);
  EXPECT_NE(readme.find("A GPU experiment was skipped on this machine, and no reference run "
                        "recorded on a GPU ships with gpulab for it: \"on a gpu\" (no GPU on "
                        "this machine). Run the lab on a machine with the GPUs they need to fill "
                        "those rows."),
            std::string::npos)
      << readme;
  // With its reference run, nothing is said to be skipped.
  test::write_reference_run(dir.path() / "refs" / "gpu", lab_run_name(lab, *lab.experiment("on a gpu")));
  h.results =
      lab_results_from(lab, nullptr, runs, no_gpu(), load_reference_runs(dir.path() / "refs"));
  EXPECT_EQ(hand_in_readme(lab, h).find("skipped on this machine"), std::string::npos);
}

TEST(ReferenceRuns, FillTheRowMarkedRecordedOnUntilTheLearnersOwnRun) {
  test::TempDir dir;
  const Lab lab = parse(kCpuAndGpuLab);
  ASSERT_TRUE(lab.ok()) << problems(lab);
  const LabExperiment& cpu = *lab.experiment("mlp cpu");
  const LabExperiment& gpu = *lab.experiment("on a gpu");
  test::write_reference_run(dir.path() / "refs" / "gpu", lab_run_name(lab, gpu));
  const ReferenceRuns refs = load_reference_runs(dir.path() / "refs");
  std::vector<RunData> runs = {
      load_run(test::write_reference_run(dir.path() / "runs" / "cpu", lab_run_name(lab, cpu), ""))};

  const std::vector<LabRunResult> results = lab_results_from(lab, nullptr, runs, no_gpu(), refs);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].recorded_on, "");
  EXPECT_EQ(results[1].recorded_on, "NVIDIA H200 (fixture), 2026-11-20");
  const LabResultsTable table = lab_results_table(lab, lab.tables[0], results);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[1][0], "on a gpu");
  EXPECT_EQ(table.rows[1][1], "4");        // its figures
  EXPECT_FALSE(table.rows[1][2].empty());  // images/s
  // The speedup is the reference GPU's over the learner's CPU, and the note says so: the cell's
  // two decimals against the ratio of the two images/s cells (whole numbers), so within half a
  // hundredth and the images/s cells' own rounding.
  const double gpu_images = std::atof(table.rows[1][2].c_str());
  const double cpu_images = std::atof(table.rows[0][2].c_str());
  const double over = gpu_images / cpu_images;
  EXPECT_NEAR(std::atof(table.rows[1][3].c_str()), over,
              0.005 + over * (0.5 / gpu_images + 0.5 / cpu_images) + 1e-9)
      << table.rows[1][3];
  EXPECT_NE(
      table.rows[1][4].find("; speedup: GPU (reference, NVIDIA H200 (fixture)) over your CPU"),
      std::string::npos)
      << table.rows[1][4];
  EXPECT_EQ(
      table.rows[1][4].rfind(kFixtureMark + " (a reference run, not measured on this machine)", 0),
      0u)
      << table.rows[1][4];
  EXPECT_EQ(table.rows[0][4].find("recorded on"), std::string::npos) << table.rows[0][4];
  // Without it, the row says why it is empty.
  EXPECT_EQ(lab_results_from(lab, nullptr, runs, no_gpu())[1].skipped, "no GPU on this machine");

  // The hand-in says so in the report, the tables and machine.json.
  LabHandIn h;
  h.results = results;
  h.machine = no_gpu();
  h.date = "2026-11-26T12:00:00Z";
  h.made_by = "the test";
  const auto out = dir.path() / "hand-in";
  write_hand_in(out, lab, h);
  const std::string readme = read(out / "README.md");
  EXPECT_NE(readme.find("measured on the machine named here, except reference runs, marked "
                        "\"recorded on ...\"; none is invented"),
            std::string::npos)
      << readme;
  EXPECT_NE(readme.find("| on a gpu | NVIDIA H200 (fixture), driver 570.86, CUDA 12.8 | "
                        "reference run, " +
                        kFixtureMark + " |"),
            std::string::npos)
      << readme;
  EXPECT_NE(readme.find("on a gpu | 4 | "), std::string::npos) << readme;
  EXPECT_NE(readme.find("Rows whose note says \"recorded on ...\" are reference runs"),
            std::string::npos)
      << readme;
  EXPECT_EQ(readme.find("GPU experiments were skipped"), std::string::npos) << readme;
  const std::string md = read(out / "results.md");
  EXPECT_NE(md.find("| " + kFixtureMark + " (a reference run"), std::string::npos) << md;
  EXPECT_NE(md.find("are reference runs"), std::string::npos) << md;
  EXPECT_NE(read(out / "results.csv").find(kFixtureMark), std::string::npos);
  const auto machine = nlohmann::json::parse(read(out / "machine.json"));
  EXPECT_EQ(machine["runs"][0]["recorded_on"], "");
  EXPECT_EQ(machine["runs"][1]["recorded_on"], "NVIDIA H200 (fixture), 2026-11-20");

  // The learner's own run of the experiment (recorded on their GPU, kept in their runs folder)
  // replaces the reference run.
  runs.push_back(
      load_run(test::write_reference_run(dir.path() / "runs" / "mine", lab_run_name(lab, gpu),
                                         "NVIDIA RTX 4090", "2026-11-25T10:00:00Z")));
  sort_newest_first(runs);
  const std::vector<LabRunResult> own = lab_results_from(lab, nullptr, runs, no_gpu(), refs);
  ASSERT_EQ(own.size(), 2u);
  EXPECT_EQ(own[1].recorded_on, "");
  EXPECT_EQ(own[1].run_dir, dir.path() / "runs" / "mine");
  EXPECT_EQ(lab_results_table(lab, lab.tables[0], own).rows[1][4].find("recorded on"),
            std::string::npos);
}

// A learner's run and a reference run in a small record each: 16 images a step, the CPU's median
// step 8 ms (2000 images/s), the reference GPU's 0.5 ms (32000 images/s).
LabRunResult paced(const std::string& experiment, double median_step_ms,
                   const std::string& recorded_on = "") {
  LabRunResult r;
  r.experiment = experiment;
  RunSummary s;
  s.status = RunStatus::Finished;
  s.steps = 100;
  s.images = 1600;
  s.train_seconds = 100 * median_step_ms / 1000;
  r.summary = s;
  r.readings.median_step_ms = median_step_ms;
  r.run_dir = "/runs/" + experiment;
  r.recorded_on = recorded_on;
  return r;
}

// Issue 41.7: without a GPU, the speedup of a GPU experiment is the reference run's images/s over
// the learner's CPU run's, named so in the note; a flagged CPU run carries its ⚠ into that row.
TEST(ReferenceRuns, TheSpeedupIsTheReferenceGpuOverYourCpuAndSaysSo) {
  const Lab lab = parse(kCpuAndGpuLab);
  ASSERT_TRUE(lab.ok()) << problems(lab);
  LabRunResult cpu = paced("mlp cpu", 8.0);
  const LabRunResult gpu = paced("on a gpu", 0.5, "NVIDIA H200, 2026-11-27");
  LabResultsTable table = lab_results_table(lab, lab.tables[0], {cpu, gpu});
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0][2], "2000");   // 16 images in 8 ms
  EXPECT_EQ(table.rows[1][2], "32000");  // 16 images in 0.5 ms
  EXPECT_EQ(table.rows[1][3], "16.00");  // 32000 / 2000
  EXPECT_EQ(table.rows[1][4],
            "recorded on NVIDIA H200, 2026-11-27 (a reference run, not measured on this machine); "
            "speedup: GPU (reference, NVIDIA H200) over your CPU");
  EXPECT_FALSE(table.flagged[1]);
  // The CPU row is the baseline: its speedup is over itself, never over a reference.
  EXPECT_EQ(table.rows[0][3], "1.00");
  EXPECT_EQ(table.rows[0][4], "");

  cpu.flags = {"shared its hardware with another run"};
  table = lab_results_table(lab, lab.tables[0], {cpu, gpu});
  EXPECT_EQ(table.rows[1][3], "16.00");
  EXPECT_NE(table.rows[1][4].find("; ⚠ the speedup is over \"mlp cpu\", which is flagged: shared "
                                  "its hardware with another run"),
            std::string::npos)
      << table.rows[1][4];
  EXPECT_TRUE(table.flagged[1]);
  EXPECT_NE(to_markdown(table).find("| ⚠ on a gpu |"), std::string::npos) << to_markdown(table);
}

// The reference run is drawn in the lab's charts beside the learner's, its name marked.
TEST(ReferenceRuns, AreDrawnInTheLabsChartsMarkedRecordedOn) {
  test::TempDir dir;
  const Lab lab = parse(kCpuAndGpuLab + "```chart\nkind: throughput\n```\n");
  ASSERT_TRUE(lab.ok()) << problems(lab);
  test::write_reference_run(dir.path() / "refs" / "gpu",
                            lab_run_name(lab, *lab.experiment("on a gpu")));
  const std::vector<RunData> runs = {load_run(test::write_reference_run(
      dir.path() / "runs" / "cpu", lab_run_name(lab, *lab.experiment("mlp cpu")), ""))};
  const ReferenceRuns refs = load_reference_runs(dir.path() / "refs");
  ASSERT_EQ(refs.runs.size(), 1u);
  EXPECT_EQ(refs.runs[0].recorded_on, "NVIDIA H200 (fixture), 2026-11-20");
  const std::vector<LabRunResult> results = lab_results_from(lab, nullptr, runs, no_gpu(), refs);
  const std::vector<size_t> drawn = lab_chart_results(lab, 0, results);
  ASSERT_EQ(drawn, (std::vector<size_t>{0, 1}));
  const Chart chart = lab_chart(lab, 0, {&runs[0], &refs.runs[0]});
  ASSERT_EQ(chart.runs.size(), 2u);
  EXPECT_EQ(chart.runs[0].find("reference"), std::string::npos) << chart.runs[0];
  EXPECT_NE(chart.runs[1].find(" (reference, recorded on NVIDIA H200 (fixture), 2026-11-20)"),
            std::string::npos)
      << chart.runs[1];
}

std::string bench_reference_json(const std::string& timings) {
  return R"({"format": "gpulab-bench-reference/1", "lab": "gpu-vs-cpu-matmul", "experiment": "gpu",
  "gpu": "NVIDIA H200", "driver": "580.159.04", "cuda": "13.0", "recorded": "2026-11-27",
  "commit": "c2cf0e0", "command": "gpulab-cli lab run gpu-vs-cpu-matmul --out x",
  "timings": )" +
         timings + "}";
}

// Issue 41.6: a benchmark's reference (a *.matmul.json beside the reference runs) fills the GPU
// rows of a machine without one, marked, with the speedup of the reference GPU over the learner's
// CPU at each size; the chart draws it marked too.
TEST(BenchReference, FillsTheGpuRowsAndTheChartMarkedRecordedOn) {
  test::TempDir dir;
  std::ofstream(dir.path() / "gpu-vs-cpu-matmul.gpu.matmul.json")
      << bench_reference_json(R"([{"size": 32, "ms": 0.015, "ms_with_copies": 0.043},
        {"size": 2048, "ms": 0.347, "ms_with_copies": 1.298}])");
  const ReferenceRuns refs = load_reference_runs(dir.path());
  ASSERT_TRUE(refs.problems.empty()) << refs.problems.front();
  ASSERT_EQ(refs.benchmarks.size(), 1u);
  const Lab lab = load_lab("gpu-vs-cpu-matmul");
  LabRecord record;
  record.matmul["cpu"] = {{32, 0.004, 0.004}, {2048, 125.4, 125.4}};
  const std::vector<LabRunResult> results = lab_results_from(lab, &record, {}, no_gpu(), refs);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].recorded_on, "NVIDIA H200, 2026-11-27");
  EXPECT_EQ(results[1].device, "NVIDIA H200, driver 580.159.04, CUDA 13.0");
  const LabResultsTable table = lab_results_table(lab, lab.tables[0], results);
  const auto cell = [&](size_t row, const std::string& column) {
    return table.rows.at(row).at(
        size_t(std::find(table.header.begin(), table.header.end(), column) - table.header.begin()));
  };
  ASSERT_EQ(table.rows.size(), 4u);
  EXPECT_EQ(cell(2, "size"), "32");
  EXPECT_EQ(cell(3, "GFLOP/s"), "49509.7");  // 2 x 2048³ in 0.347 ms
  EXPECT_EQ(cell(2, "speedup"), "0.09");     // the CPU's 0.004 ms over the H200's 0.043 with copies
  EXPECT_EQ(cell(3, "speedup"), "96.61");    // 125.4 / 1.298
  EXPECT_EQ(cell(0, "note"), "");
  EXPECT_EQ(cell(3, "note"),
            "recorded on NVIDIA H200, 2026-11-27 (a reference run, not measured on this machine); "
            "speedup: GPU (reference, NVIDIA H200) over your CPU");
  const Chart chart = matmul_chart(lab, results);
  EXPECT_EQ(chart.runs, (std::vector<std::string>{
                            "cpu", "gpu (reference, recorded on NVIDIA H200, 2026-11-27)",
                            "gpu with copies (reference, recorded on NVIDIA H200, 2026-11-27)"}));
  ASSERT_EQ(chart.panels.size(), 2u);
  EXPECT_EQ(chart.panels[0].lines[2].points.y, (std::vector<double>{0.043, 1.298}));
  // The learner's own timings, once there, win.
  record.matmul["gpu"] = {{32, 0.02, 0.09}};
  EXPECT_EQ(lab_results_from(lab, &record, {}, no_gpu(), refs)[1].recorded_on, "");
}

// What `lab run` writes for a benchmark it ran on a GPU: read back as it was written, under the
// name the run folders' naming gives ("inference gpu": inference-gpu), replacing only an earlier
// reference; the inference row of cnn-on-gpu then shows it, marked, on a machine without a GPU.
TEST(BenchReference, AWrittenReferenceReadsBackAndFillsAnInferenceRow) {
  test::TempDir dir;
  BenchReference r;
  r.lab = "cnn-on-gpu";
  r.experiment = "inference gpu";
  r.gpu = "NVIDIA H200";
  r.driver = "580.159.04";
  r.cuda = "13.0";
  r.recorded = "2026-11-30";
  r.command = "gpulab-cli lab run cnn-on-gpu --out labs/cnn-on-gpu";
  r.commit = "gpulab 0.1.0";
  r.timings = {{1, 0.05, 0.05}, {64, 0.25, 0.25}};
  const std::string name = bench_reference_file_name(r.lab, r.experiment);
  EXPECT_EQ(name, "cnn-on-gpu.inference-gpu.matmul.json");
  write_bench_reference(dir.path() / name, r, "gpulab-cli lab run cnn-on-gpu on NVIDIA H200");
  const BenchReference back = read_bench_reference(dir.path() / name);
  EXPECT_EQ(back.lab, r.lab);
  EXPECT_EQ(back.experiment, r.experiment);
  EXPECT_EQ(back.recorded_on(), "NVIDIA H200, 2026-11-30");
  EXPECT_EQ(back.command, r.command);
  ASSERT_EQ(back.timings.size(), 2u);
  EXPECT_EQ(back.timings[1].size, 64);
  EXPECT_DOUBLE_EQ(back.timings[1].ms, 0.25);
  // Written again over its own: replaced.
  r.timings[1].ms = r.timings[1].ms_with_copies = 0.5;
  write_bench_reference(dir.path() / name, r);
  EXPECT_DOUBLE_EQ(read_bench_reference(dir.path() / name).timings[1].ms, 0.5);
  // Never over a file that is not one.
  const auto other = dir.path() / "notes.matmul.json";
  std::ofstream(other) << "my notes";
  try {
    write_bench_reference(other, r);
    ADD_FAILURE() << "wrote over " << other;
  } catch (const OutputRefused& e) {
    EXPECT_NE(std::string(e.what()).find("notes.matmul.json: is "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(", not a benchmark reference that gpulab wrote, and is "
                                         "never replaced by one"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read(other), "my notes");
  std::filesystem::remove(other);

  // cnn-on-gpu's inference table on a machine without a GPU: the reference's row, marked; ms per
  // image is the batch's ms over its images (0.5 ms / 64).
  const ReferenceRuns refs = load_reference_runs(dir.path());
  ASSERT_TRUE(refs.problems.empty()) << refs.problems.front();
  const Lab lab = load_lab("cnn-on-gpu");
  const LabExperiment* gpu = lab.experiment("inference gpu");
  ASSERT_NE(gpu, nullptr);
  const std::optional<LabRunResult> shown = reference_result(lab, *gpu, refs);
  ASSERT_TRUE(shown.has_value());
  EXPECT_EQ(shown->recorded_on, "NVIDIA H200, 2026-11-30");
  const std::vector<LabRunResult> results = lab_results_from(lab, nullptr, {}, no_gpu(), refs);
  const LabResultsTable table = lab_results_table(lab, lab.tables[1], results);
  const auto column = [&](const std::string& name) {
    return size_t(std::find(table.header.begin(), table.header.end(), name) - table.header.begin());
  };
  int marked = 0;
  for (const auto& row : table.rows) {
    if (row.at(column("experiment")).find("inference gpu") == std::string::npos) continue;
    EXPECT_NE(row.at(column("note")).find("recorded on NVIDIA H200, 2026-11-30"), std::string::npos)
        << row.at(column("note"));
    if (row.at(column("batch")) == "64") EXPECT_EQ(row.at(column("ms per image")), "0.0078");
    ++marked;
  }
  EXPECT_EQ(marked, 2);
}

// The one that ships: the H200's table of bench/results, its figures recomputed from its times.
TEST(BenchReference, TheShippedOneIsTheH200sTable) {
  ASSERT_EQ(std::getenv(kReferenceRunsVariable), nullptr) << "the shipped folder is checked";
  const ReferenceRuns shipped = load_reference_runs(reference_runs_dir());
  ASSERT_EQ(shipped.benchmarks.size(), 1u);
  const BenchReference& h200 = shipped.benchmarks[0];
  EXPECT_EQ(h200.recorded_on(), "NVIDIA H200, 2026-11-27");
  EXPECT_EQ(h200.driver, "580.159.04");
  EXPECT_EQ(h200.commit, "c2cf0e086751b3072f60ae3c6df7e71e74a13f04");
  EXPECT_NE(h200.command.find("gpulab-cli lab run gpu-vs-cpu-matmul"), std::string::npos);
  ASSERT_EQ(h200.timings.size(), 9u);
  EXPECT_EQ(h200.timings.back().size, 8192);
  // 2 x 8192³ operations in 21.445 ms: 51271 GFLOP/s, the table's 51271.0.
  EXPECT_NEAR(matmul_gflops(8192, h200.timings.back().ms), 51271.0, 0.5);
  // 3 x 8192² x 4 bytes in 36.009 - 21.445 ms: the table's 55.30 GB/s.
  EXPECT_NEAR(matmul_copy_bytes(8192) /
                  ((h200.timings.back().ms_with_copies - h200.timings.back().ms) * 1e6),
              55.30, 0.01);
}

// A damaged benchmark reference is left out, named with what is wrong and what to do; the rest
// still load.
TEST(BenchReference, ADamagedFileIsNamedAndLeftOut) {
  test::TempDir dir;
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.path() / name) << text;
    return (dir.path() / name).string();
  };
  const std::string fix =
      "; fix the file (gpulab's own are in resources/reference-runs) or remove it";
  const std::string broken = write("a.matmul.json", "{ not json");
  const std::string no_gpu_named =
      write("b.matmul.json", R"({"format": "gpulab-bench-reference/1"})");
  const std::string bad_size = write(
      "c.matmul.json", bench_reference_json(R"([{"size": -3, "ms": 1, "ms_with_copies": 2}])"));
  const std::string slower_alone = write(
      "d.matmul.json", bench_reference_json(R"([{"size": 32, "ms": 2, "ms_with_copies": 1}])"));
  write("e.matmul.json", bench_reference_json(R"([{"size": 32, "ms": 1, "ms_with_copies": 2}])"));
  const ReferenceRuns found = load_reference_runs(dir.path());
  ASSERT_EQ(found.benchmarks.size(), 1u);
  std::string all;
  for (const auto& p : found.problems) all += p + "\n";
  ASSERT_EQ(found.problems.size(), 4u) << all;
  EXPECT_TRUE(
      has(found.problems, broken + ": not a benchmark reference: it is not a JSON object" + fix))
      << all;
  EXPECT_TRUE(has(found.problems, no_gpu_named +
                                      ": not a benchmark reference: its \"lab\" is missing or "
                                      "not a text" +
                                      fix))
      << all;
  const std::string timing =
      ": not a benchmark reference: timing 1 is not a size from 1 to 65536 with ms > 0 and "
      "ms_with_copies >= ms" +
      fix;
  EXPECT_TRUE(has(found.problems, bad_size + timing)) << all;
  EXPECT_TRUE(has(found.problems, slower_alone + timing)) << all;
  // A FIFO in its place is refused by its kind, never opened to block.
  const auto fifo = dir.path() / "f.matmul.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(load_reference_runs(dir.path()).problems.size(), 5u);
}

TEST(LabCli, RunWithoutAGpuShowsTheReferenceRunMarkedRecordedOn) {
  if (!list_devices().gpus.empty())
    GTEST_SKIP() << "this machine has a GPU: the experiment runs, no reference run stands in";
  test::TempDir dir;
  const auto [data, lab] = write_cpu_and_gpu_lab(dir.path());
  test::write_reference_run(dir.path() / "refs" / "on-a-gpu", "on a gpu · ref");
  auto lab_run = [&](const std::filesystem::path& refs, const std::filesystem::path& out) {
    return test::run_command(
        "GPULAB_REFERENCE_RUNS='" + refs.string() + "' " GPULAB_CLI_PATH " lab run " +
        lab.string() + " --quick --quiet --out " + out.string() + " --data-dir " + data.string());
  };
  const auto out = dir.path() / "out";
  const Result r = lab_run(dir.path() / "refs", out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[2/2] on a gpu (cuda:0): not run here: "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\n  reference run, " + kFixtureMark +
                          " (not measured on this machine): 4 steps in "),
            std::string::npos)
      << r.output;
  const std::string csv = read(out / "results.csv");
  EXPECT_NE(csv.find("\non a gpu,4,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",\"" + kFixtureMark + " (a reference run, not measured on this machine)"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("; speedup: GPU (reference, NVIDIA H200 (fixture)) over your CPU"),
            std::string::npos)
      << csv;
  EXPECT_NE(read(out / "README.md").find("are reference runs"), std::string::npos);
  // Its own runs are named as the window names a lab's runs, so a hand-in finds them.
  EXPECT_EQ(load_run(out / "runs" / "mlp-cpu").name(), "mlp cpu · ref");
  const Result hand_in = test::run_command(
      "GPULAB_REFERENCE_RUNS='" + (dir.path() / "refs").string() +
      "' " GPULAB_CLI_PATH " lab hand-in " + lab.string() + " --learner Ada --runs-dir " +
      (out / "runs").string() + " --out " + (dir.path() / "hand-in").string());
  ASSERT_EQ(hand_in.exit_code, 0) << hand_in.output;
  EXPECT_NE(hand_in.output.find("1 of 2 experiments with results"), std::string::npos)
      << hand_in.output;
  const std::string readme = read(dir.path() / "hand-in" / "README.md");
  EXPECT_NE(readme.find("mlp cpu | 3 |"), std::string::npos) << readme;
  EXPECT_NE(readme.find("on a gpu | 4 |"), std::string::npos) << readme;
  EXPECT_NE(readme.find(kFixtureMark), std::string::npos) << readme;
  // The reference run travels under its own name, marked, and the hand-in verifies.
  const auto handed = dir.path() / "hand-in";
  EXPECT_TRUE(std::filesystem::exists(handed / "reference-runs" / "on-a-gpu" / "run.json"));
  EXPECT_FALSE(std::filesystem::exists(handed / "runs" / "on-a-gpu"));
  const auto manifest = nlohmann::json::parse(read(handed / "manifest.json"));
  EXPECT_EQ(manifest["experiments"][1]["run"], "reference-runs/on-a-gpu");
  EXPECT_EQ(manifest["experiments"][1]["reference"], true);
  const Result verified = cli("lab verify " + handed.string() + " --lab " + lab.string());
  EXPECT_EQ(verified.exit_code, 0) << verified.output;

  // The variable naming no folder: one line, before anything runs.
  const auto missing = dir.path() / "no-such-folder";
  const Result bad = lab_run(missing, dir.path() / "out2");
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_EQ(bad.output,
            "gpulab-cli: GPULAB_REFERENCE_RUNS=" + missing.string() + kReferenceRunsTail + "\n");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out2"));
  // A run that is not a reference run is said and left out; the row says why it is empty.
  test::write_reference_run(dir.path() / "cpu-refs" / "cpu", "on a gpu · ref", "");
  const Result left_out = lab_run(dir.path() / "cpu-refs", dir.path() / "out3");
  ASSERT_EQ(left_out.exit_code, 0) << left_out.output;
  EXPECT_NE(
      left_out.output.find("reference run left out: " + (dir.path() / "cpu-refs" / "cpu").string() +
                           ": not a reference run: its run.json names no GPU"),
      std::string::npos)
      << left_out.output;
  EXPECT_NE(left_out.output.find("[2/2] on a gpu (cuda:0): skipped: "), std::string::npos)
      << left_out.output;
  EXPECT_EQ(read(dir.path() / "out3" / "results.csv").find("recorded on"), std::string::npos);
}

// Issue 41.3: the GPU experiments of the labs that read NVML (utilization and memory busy are a
// share of its sample period of up to a second) or measure the launches train long enough for a
// period or more. Their planned steps (plan_steps over MNIST's 60000 images, as train plans them)
// at the median step of the shipped reference run (its compare-to's, for a run that has none)
// come to 2 s or more: 1500 of 1534 steps of batch 1024 (59 a step's epoch, 26 epochs) at 1.91 ms
// is 2.9 s, where the 40 steps recorded were 0.08 s.
TEST(ReferenceRuns, TheGpuExperimentsThatReadNvmlTrainForSecondsAtTheShippedPace) {
  const ReferenceRuns references = load_reference_runs(reference_runs_dir());
  const Lab feeding = load_lab("feeding-the-gpu");
  const LabExperiment* large = feeding.experiment("batch 1024, data on host");
  ASSERT_NE(large, nullptr);
  const StepPlan plan = plan_steps(large->experiment.train, 60000);
  EXPECT_EQ(plan.steps_per_epoch, 59);
  EXPECT_EQ(plan.epochs, 26);
  EXPECT_EQ(plan.total_steps, 1500);
  const Lab hardware = load_lab("watching-the-hardware");
  EXPECT_EQ(plan_steps(hardware.experiment("gpu, batch 1024")->experiment.train, 60000).total_steps,
            59 * 25);
  EXPECT_EQ(hardware.experiment("gpu, batch 16")->experiment.train.stop_at_accuracy, 0)
      << "stopping at 97 % ends a GPU run before NVML's period";
  EXPECT_DOUBLE_EQ(hardware.experiment("cpu, batch 32")->experiment.train.stop_at_accuracy, 0.97)
      << "the CPU runs are as they were";
  int checked = 0;
  for (const char* name :
       {"watching-the-hardware", "feeding-the-gpu", "cnn-on-gpu", "mixed-precision"}) {
    const Lab lab = load_lab(name);
    for (const LabExperiment& e : lab.experiments) {
      if (!e.bench.empty() || e.experiment.backend.device.rfind("cuda", 0) != 0) continue;
      // A race to a target is judged by its time to it, not by NVML's columns; a step of images
      // augmented per batch is as long as the host's work, which no shipped run measures (400
      // steps of 1024 images at the 50 us an image took on a CPU here are about 20 s).
      if (e.experiment.train.stop_at_accuracy > 0 ||
          e.experiment.backend.preprocess == Preprocess::PerBatch)
        continue;
      std::optional<LabRunResult> shipped = reference_result(lab, e, references);
      if (!shipped && lab.experiment(e.compare_to))
        shipped = reference_result(lab, *lab.experiment(e.compare_to), references);
      // Else the fastest shipped run of the same model and batch (a bf16 run's, whose old
      // recordings were tf32 and do not ship: the tf32 run's pace).
      const bool found = shipped.has_value();
      for (const LabExperiment& other : lab.experiments) {
        if (found || &other == &e || other.model_name != e.model_name ||
            other.experiment.train.batch != e.experiment.train.batch)
          continue;
        std::optional<LabRunResult> same = reference_result(lab, other, references);
        if (same && (!shipped || same->readings.median_step_ms < shipped->readings.median_step_ms))
          shipped = same;
      }
      ASSERT_TRUE(shipped) << name << ": " << e.name;
      const double step_ms = shipped->readings.median_step_ms;
      ASSERT_GT(step_ms, 0) << name << ": " << e.name;
      const int64_t steps = plan_steps(e.experiment.train, 60000).total_steps;
      EXPECT_GE(double(steps) * step_ms / 1000.0, 2.0)
          << name << ": " << e.name << ", " << steps << " steps at " << step_ms << " ms";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4 + 5 + 4 + 5);
}

TEST(ReferenceRuns, AnInstalledProgramLooksBesideItself) {
  EXPECT_EQ(installed_data_dir("/opt/lab/bin/gpulab-cli"), "/opt/lab/share/gpulab");
  EXPECT_EQ(installed_data_dir("/usr/bin/gpulab"), "/usr/share/gpulab");
}

// A package installs gpulab-cli in <prefix>/bin and the reference runs in
// <prefix>/share/gpulab/reference-runs: the installed program reads those, not the checkout it
// was built from (which a lab machine does not have).
TEST(LabCli, AnInstalledProgramReadsTheReferenceRunsInstalledBesideIt) {
  if (!list_devices().gpus.empty())
    GTEST_SKIP() << "this machine has a GPU: the experiment runs, no reference run stands in";
  test::TempDir dir;
  const auto [data, lab] = write_cpu_and_gpu_lab(dir.path());
  const auto prefix = dir.path() / "prefix";
  std::filesystem::create_directories(prefix / "bin");
  std::filesystem::copy_file(GPULAB_CLI_PATH, prefix / "bin" / "gpulab-cli");
  test::write_reference_run(prefix / "share" / "gpulab" / "reference-runs" / "on-a-gpu",
                            "on a gpu · ref");
  test::ScopedEnv unset(kReferenceRunsVariable, "");  // empty: as if unset
  const Result r = test::run_command(
      (prefix / "bin" / "gpulab-cli").string() + " lab run " + lab.string() +
      " --quick --quiet --out " + (dir.path() / "out").string() + " --data-dir " + data.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\n  reference run, " + kFixtureMark +
                          " (not measured on this machine): 4 steps in "),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace gpulab
