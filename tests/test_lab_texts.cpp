// The shipped labs say only what is true and what the runs show: no sentence a measurement
// contradicted, outcomes a learner's machine may not show asked about conditionally, every column
// the text names in its table, what the course teaches covered; and the matrix-multiply chart's
// series and points are the results table's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "engine/labs/lab.hpp"
#include "engine/labs/lab_results.hpp"
#include "engine/labs/matmul_chart.hpp"

namespace gpulab {
namespace {

// The one place a lab may quote a figure it did not measure: a source's own, as a Markdown
// quotation (consecutive "> " lines) reading "**Source**: WHO. **Hardware**: WHAT. **Figures**:
// ...", the source and the hardware named before the figures. The figures are the source's, so
// they are left out of the figure check; its source and hardware parts are still checked, and a
// quotation of another form is checked whole.
std::string without_sourced_figures(const std::string& block) {
  static const std::regex sourced(
      R"(^\*\*Source\*\*: ([^*]*\w[^*]*) \*\*Hardware\*\*: ([^*]*\w[^*]*) \*\*Figures\*\*: .+$)");
  std::istringstream lines(block);
  std::string out, line, quote, quote_lines;
  auto end_quote = [&] {
    std::smatch m;
    if (!quote.empty() && std::regex_match(quote, m, sourced))
      out += "> **Source**: " + m[1].str() + " **Hardware**: " + m[2].str() + "\n";
    else
      out += quote_lines;
    quote.clear();
    quote_lines.clear();
  };
  while (std::getline(lines, line)) {
    if (line.rfind("> ", 0) == 0) {
      quote += (quote.empty() ? "" : " ") + line.substr(2);
      quote_lines += line + "\n";
      continue;
    }
    end_quote();
    out += line + "\n";
  }
  end_quote();
  return out;
}

// Everything a learner reads of a lab: its text and its quiz (questions, choices and reasons),
// with the lines joined, since a sentence may run over two; a source's own figures, quoted with
// the source and its hardware, left out.
std::string words(const Lab& lab) {
  std::string text;
  for (const LabBlock& block : lab.blocks)
    if (block.kind == LabBlock::Kind::Text) text += without_sourced_figures(block.text) + "\n";
  for (const QuizQuestion& q : lab.quiz) {
    text += q.question + "\n";
    for (const QuizChoice& c : q.choices) text += c.text + "\n" + c.why + "\n";
  }
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

bool says(const std::string& text, const std::string& phrase) {
  return text.find(phrase) != std::string::npos;
}

// Sentences the course texts or the runs contradicted: none is in any shipped lab.
TEST(LabTexts, NoSentenceTheRunsOrTheCourseContradict) {
  const std::vector<std::string> wrong = {
      "Only a data-parallel job",         // model and pipeline parallelism speed one model too
      "the course recommends",            // the course only says one might explore it
      "paid once",                        // every step still copies its batch's index list
      "on n² numbers",                    // 2n² inputs, as the quiz says
      "Why do they stop rising",          // a quiet machine's CPU rose to 137 GFLOP/s at 2048
      "the CPU has no such reading",      // the energy column uses the CPU's RAPL counters
      "recipe in seven steps. Each one",  // the steps listed are not the course's seven
      "time shrink, and why",             // measured, small buckets' all-reduce grew
      "ideally they are *no faster*",     // under load 4 replicas came out 6.57x faster
  };
  for (const Lab& lab : builtin_labs()) {
    const std::string text = words(lab);
    for (const std::string& phrase : wrong)
      EXPECT_FALSE(says(text, phrase)) << lab.name << ": " << phrase;
  }
}

// Issue 41.4: a lab states a measured figure only from the learner's own table or a run that
// ships, which its table shows marked as recorded elsewhere; never in its prose. A measured ratio
// ("4.22x"), time ("2.84 ms") or rate ("4806 images/s", "51 TFLOP/s") in a lab's text or quiz
// has no source a learner can see, and fails here. Ideals ("2x and 4x") and settings ("0.05 MB
// buckets", "batch 64") are not measurements and pass.
// The measured figures a lab's text and quiz state with no source: each with its context.
std::vector<std::string> unsourced_figures(const Lab& lab) {
  const std::regex measured(
      R"((\d+\.\d+\s?(x|×)(?!\w))|(\b\d+(\.\d+)?\s?(ms|µs|s|images/s|GB/s|[GMT]FLOP/s)\b))");
  const std::string text = words(lab);
  std::vector<std::string> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), measured);
       it != std::sregex_iterator(); ++it) {
    const size_t at = size_t(it->position());
    found.push_back("\"" + it->str() + "\" with no source, in \"..." +
                    text.substr(at > 60 ? at - 60 : 0, 120) + "...\"");
  }
  return found;
}

TEST(LabTexts, NoMeasuredFigureInTheProseOnlyInTheTables) {
  for (const Lab& lab : builtin_labs())
    for (const std::string& figure : unsourced_figures(lab))
      ADD_FAILURE() << lab.name << ": " << figure;
}

// Issue 41.8: the course texts' own figures may stand beside the learner's, quoted as the
// sources': a "> **Source**: ... **Hardware**: ... **Figures**: ..." quotation. The same figures
// in prose, in a quotation that names no source or no hardware, or with a figure in its source or
// hardware part, are unsourced.
TEST(LabTexts, ASourcesFiguresPassOnlyQuotedWithTheSourceAndItsHardware) {
  const std::string header = "---\ntitle: t\nminutes: 5\nhardware: cpu\n---\n\n";
  const auto figures = [&](const std::string& body) {
    const Lab lab = parse_lab(header + body, "t.md");
    EXPECT_TRUE(lab.problems.empty()) << body;
    return unsourced_figures(lab).size();
  };
  EXPECT_EQ(figures("> **Source**: a blog post \"CPU vs GPU\". **Hardware**: the author's CPU\n"
                    "> and GPU. **Figures**: 198.2 s against 14.4 s: 13.76x.\n"),
            0u);
  EXPECT_EQ(figures("The blog measured 198.2 s against 14.4 s: 13.76x.\n"), 3u);
  EXPECT_EQ(figures("> The blog measured 13.76x.\n"), 1u);
  EXPECT_EQ(figures("> **Source**: a blog. **Figures**: 13.76x.\n"), 1u);  // no hardware
  EXPECT_EQ(figures("> **Source**: **Hardware**: a GPU. **Figures**: 13.76x.\n"), 1u);
  EXPECT_EQ(figures("> **Source**: a blog, 2.5x faster. **Hardware**: a GPU. **Figures**: 9 s.\n"),
            1u);  // the source part is prose, checked
  // A quotation ends at the first line that is not one: what follows is checked again.
  EXPECT_EQ(figures("> **Source**: a blog. **Hardware**: a GPU. **Figures**: 9 s.\n\nIt took "
                    "4.5 ms.\n"),
            1u);
  // The shipped lab quotes both course texts so, and asks why their ratios differ from yours.
  const Lab cnn = load_lab("cnn-on-gpu");
  std::string text;
  for (const LabBlock& block : cnn.blocks)
    if (block.kind == LabBlock::Kind::Text) text += block.text + "\n";
  for (const char* phrase :
       {"**Source**: the blog post \"CPU vs GPU\"", "MirroredStrategy", "13.76x", "198.2 s",
        "14.4 s", "**Source**: IBM's module \"Hardware Accelerated Deep Learning\"",
        "0.35 to 1.05 s a batch", "0.018 s", "9 hours", "13 minutes"})
    EXPECT_TRUE(says(text, phrase)) << phrase;
  bool asks_why = false;
  for (const std::string& q : cnn.questions) asks_why |= says(q, "Why do they differ?");
  EXPECT_TRUE(asks_why);
}

// Outcomes that depend on the learner's machine are asked about as their table shows them.
TEST(LabTexts, OutcomesALearnerMayNotSeeAreAskedAboutConditionally) {
  const std::vector<std::pair<std::string, std::string>> unconditional = {
      {"feeding-the-gpu", "Why does keeping the data on the GPU matter less"},
      {"feeding-the-gpu", "gives a smaller speedup than at batch 32. Why?"},
      {"mixed-precision", "Why does lower precision speed up vgg-small more than LeNet-5?"},
      {"cnn-on-gpu", "Why is the speedup larger for the bigger model?"},
  };
  for (const auto& [name, phrase] : unconditional)
    EXPECT_FALSE(says(words(load_lab(name)), phrase)) << name << ": " << phrase;
  for (const char* name : {"feeding-the-gpu", "mixed-precision", "cnn-on-gpu"})
    EXPECT_TRUE(says(words(load_lab(name)), "If your table shows") ||
                says(words(load_lab(name)), "in your table? If it is"))
        << name;
}

// The matrix-multiply lab counts the inputs as its quiz does, and says what the copy time of a
// small and a large transfer measures.
TEST(LabTexts, TheMatmulLabCountsAsItsQuizAndMeasuresLatencyAgainstBandwidth) {
  const Lab lab = load_lab("gpu-vs-cpu-matmul");
  const std::string text = words(lab);
  EXPECT_TRUE(says(text, "2n³ floating-point operations on 2n² input numbers")) << text;
  bool quiz_counts_2n2 = false;
  for (const QuizQuestion& q : lab.quiz) quiz_counts_2n2 |= says(q.question, "2n² numbers");
  EXPECT_TRUE(quiz_counts_2n2);
  for (const char* phrase :
       {"A CPU is MIMD", "A GPU is SIMD", "latency", "bandwidth", "\"ms with copies\" less \"ms\"",
        "12 KiB at n = 32", "768 MiB at n = 8192", "chart-matmul.svg"})
    EXPECT_TRUE(says(text, phrase)) << phrase;
  // The sizes named are ones the GPU experiment times.
  const LabExperiment* gpu = lab.experiment("gpu");
  ASSERT_NE(gpu, nullptr);
  for (int n : {32, 8192})
    EXPECT_NE(std::find(gpu->sizes.begin(), gpu->sizes.end(), n), gpu->sizes.end()) << n;
}

// Issue 41, items 11, 12 and 10: the matrix-multiply lab reads the learner's own hardware (CUDA,
// what frameworks hide, the tiers of GPU); the CNN lab measures how much of a step is matrix
// products and times inference at batch 1 and 64 on one and every CPU thread and on the GPU,
// beside its training run.
TEST(LabTexts, TheMatmulLabReadsTheLearnersOwnHardware) {
  const Lab lab = load_lab("gpu-vs-cpu-matmul");
  const std::string text = words(lab);
  for (const char* phrase :
       {"**CUDA**", "Frameworks such as PyTorch and TensorFlow hide it", "A **consumer** card",
        "A **data-centre** GPU", "A **multi-GPU server**", "`hardware:`"})
    EXPECT_TRUE(says(text, phrase)) << phrase;
  bool shows_devices = false;
  for (const LabBlock& block : lab.blocks)
    shows_devices |= block.kind == LabBlock::Kind::Code && block.text == "gpulab-cli devices\n";
  EXPECT_TRUE(shows_devices);
}

TEST(LabTexts, TheCnnLabMeasuresMatrixProductsAndTimesInferenceAgainstTraining) {
  const Lab lab = load_lab("cnn-on-gpu");
  ASSERT_EQ(lab.tables.size(), 2u);
  const auto has = [](const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
  };
  EXPECT_TRUE(has(lab.tables[0].columns, "matmul share"));
  EXPECT_FALSE(has(lab.tables[0].experiments, "inference 1 thread"));
  const LabTable& inference = lab.tables[1];
  for (const char* column : {"batch", "ms", "ms per image", "images/s", "speedup"})
    EXPECT_TRUE(has(inference.columns, column)) << column;
  EXPECT_EQ(inference.experiments,
            (std::vector<std::string>{"lenet5 cpu", "inference 1 thread", "inference all threads",
                                      "inference gpu"}));
  const struct {
    const char* name;
    const char* device;
    int threads;  // 0: every core
  } expected[] = {{"inference 1 thread", "cpu", 1},
                  {"inference all threads", "cpu", 0},
                  {"inference gpu", "cuda:0", 0}};
  for (const auto& want : expected) {
    const LabExperiment* e = lab.experiment(want.name);
    ASSERT_NE(e, nullptr) << want.name;
    EXPECT_EQ(e->bench, "inference");
    EXPECT_EQ(e->model_name, "lenet5");
    EXPECT_EQ(e->sizes, (std::vector<int>{1, 64})) << want.name;
    EXPECT_EQ(e->experiment.backend.device, want.device);
    EXPECT_EQ(e->experiment.backend.threads, want.threads) << want.name;
  }
}

// The data-parallel lab says what small buckets may cost and why a busy machine can show replicas
// that share its cores faster than one, leaving the figures to the learner's table (issue 41.4:
// the ones it quoted came from no run that ships), and says its steps are not the course's list.
TEST(LabTexts, TheDataParallelLabSaysWhatTheRunsMeasured) {
  const std::string text = words(load_lab("single-vs-multi-gpu"));
  for (const char* phrase : {"not the course's seven", "more than 2x and 4x faster than one",
                             "Your table shows which it is on yours", "the team's slowest thread",
                             "on a quiet machine they are *no faster*"})
    EXPECT_TRUE(says(text, phrase)) << phrase;
}

// The course's pipeline (preprocess, train, inference) is in the lab about feeding the GPU.
TEST(LabTexts, ThePipelineOfPreprocessTrainAndInferenceIsTaught) {
  const std::string text = words(load_lab("feeding-the-gpu"));
  for (const char* phrase : {"preprocess", "train", "inference"})
    EXPECT_TRUE(says(text, phrase)) << phrase;
}

// Every results column a lab's text names, in `backticks` or "quotes", is in one of its tables:
// a question about a column the learner's table lacks cannot be answered.
TEST(LabTexts, EveryColumnTheTextNamesIsInItsTable) {
  for (const Lab& lab : builtin_labs()) {
    const std::string text = words(lab);
    std::vector<std::string> shown;
    for (const LabTable& table : lab.tables)
      shown.insert(shown.end(), table.columns.begin(), table.columns.end());
    for (const std::string& column : lab_columns())
      if (says(text, "`" + column + "`") || says(text, "\"" + column + "\"")) {
        EXPECT_NE(std::find(shown.begin(), shown.end(), column), shown.end())
            << lab.name << ": the text names " << column;
      }
  }
}

LabRunResult timings(const std::string& experiment, std::vector<MatmulTiming> matmul) {
  LabRunResult r;
  r.experiment = experiment;
  r.matmul = std::move(matmul);
  return r;
}

// The matrix-multiply table measures latency against bandwidth: the GPU's copy time at each size
// (its time with the copies less its time alone) and the copies' 3n² x 4 bytes over it; the CPU,
// which copies nothing, has empty copy cells rather than 0.
TEST(MatmulTable, CopyColumnsMeasureLatencyAgainstBandwidth) {
  const Lab lab = load_lab("gpu-vs-cpu-matmul");
  const LabResultsTable table =
      lab_results_table(lab, lab.tables[0],
                        {timings("cpu", {{32, 0.004, 0.004}}),
                         timings("gpu", {{32, 0.011, 0.093}, {8192, 1100.0, 1230.0}})});
  const auto column = [&](const std::string& name) {
    return size_t(std::find(table.header.begin(), table.header.end(), name) - table.header.begin());
  };
  const size_t copy_ms = column("copy ms"), copy_rate = column("copy GB/s");
  ASSERT_LT(copy_rate, table.header.size());
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.rows[0][copy_ms], "");
  EXPECT_EQ(table.rows[0][copy_rate], "");
  EXPECT_EQ(table.rows[1][copy_ms], "0.082");    // 12 KiB: latency
  EXPECT_EQ(table.rows[1][copy_rate], "0.15");   // 12288 bytes in 0.082 ms
  EXPECT_EQ(table.rows[2][copy_ms], "130.000");  // 768 MiB: bandwidth
  EXPECT_EQ(table.rows[2][copy_rate], "6.19");   // 805306368 bytes in 130 ms
}

// The chart's series are the table's experiments (and the GPU's copies), its points the table's
// ms and GFLOP/s, both axes logarithmic.
TEST(MatmulChart, SeriesAndPointsAreTheTablesOnLogAxes) {
  const Lab lab = load_lab("gpu-vs-cpu-matmul");
  const std::vector<LabRunResult> results = {
      timings("cpu", {{32, 0.004, 0.004}, {64, 0.02, 0.02}, {2048, 125.4, 125.4}}),
      timings("gpu", {{32, 0.011, 0.093}, {64, 0.012, 0.131}, {2048, 0.9, 7.4}})};
  const Chart chart = matmul_chart(lab, results);
  EXPECT_EQ(chart.runs, (std::vector<std::string>{"cpu", "gpu", "gpu with copies"}));
  EXPECT_TRUE(chart.log_x);
  EXPECT_EQ(chart.x_label, "matrix size n (log scale)");
  ASSERT_EQ(chart.panels.size(), 2u);
  EXPECT_EQ(chart.panels[0].y_label, "ms (log scale)");
  EXPECT_EQ(chart.panels[1].y_label, "GFLOP/s (log scale)");
  EXPECT_TRUE(chart.panels[0].log_y && chart.panels[1].log_y);

  // Each point against its table cell: ms to 3 decimals, GFLOP/s to 1.
  const LabResultsTable table = lab_results_table(lab, lab.tables[0], results);
  auto cell = [&](const std::string& experiment, int size, const std::string& column) {
    const auto col =
        std::find(table.header.begin(), table.header.end(), column) - table.header.begin();
    for (const auto& row : table.rows)
      if (row[0] == experiment && row[2] == std::to_string(size))
        return std::atof(row[col].c_str());
    ADD_FAILURE() << experiment << " " << size << " " << column;
    return -1.0;
  };
  for (size_t l = 0; l < chart.runs.size(); ++l) {
    const std::string& name = chart.runs[l];
    const bool copies = name == "gpu with copies";
    const std::string experiment = copies ? "gpu" : name;
    const Points& ms = chart.panels[0].lines[l].points;
    const Points& rate = chart.panels[1].lines[l].points;
    ASSERT_EQ(ms.size(), 3u) << name;
    ASSERT_EQ(rate.size(), 3u) << name;
    for (size_t k = 0; k < ms.size(); ++k) {
      const int size = int(ms.x[k]);
      EXPECT_EQ(rate.x[k], ms.x[k]);
      EXPECT_NEAR(ms.y[k], cell(experiment, size, copies ? "ms with copies" : "ms"), 0.0005)
          << name << " " << size;
      EXPECT_NEAR(rate.y[k], cell(experiment, size, copies ? "GFLOP/s with copies" : "GFLOP/s"),
                  0.05)
          << name << " " << size;
    }
  }
  // A lab whose benchmarks have not run has nothing to draw.
  EXPECT_TRUE(matmul_chart(lab, {}).runs.empty());
  EXPECT_TRUE(matmul_chart(lab, {timings("cpu", {})}).panels.empty());
}

}  // namespace
}  // namespace gpulab
