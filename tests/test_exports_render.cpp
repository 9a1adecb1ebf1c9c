// Every exported chart format rendered and read back: a PDF's words (poppler's pdftotext -bbox)
// are of a readable size, do not overlap and are the SVG's words; PDFs render (pdftoppm), SVGs
// render (rsvg-convert) and PNGs load, each with ink on it. Over a lab report of three runs (one
// on two replicas, so the replica timeline comes too) and `gpulab-cli export`.
#include <gtest/gtest.h>

#include <QApplication>
#include <QImage>
#include <QString>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "engine/records/run_record.hpp"
#include "recorded_runs.hpp"
#include "temp_dir.hpp"
#include "ui/charts/chart_export.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;

// What a command printed on its standard output, and whether it exited 0.
struct Output {
  std::string text;
  bool ok = false;
};

Output run_command(const std::string& command) {
  Output out;
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (!pipe) return out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.text.append(buffer, n);
  out.ok = pclose(pipe) == 0;
  return out;
}

bool have_tool(const std::string& name) {
  return run_command("command -v " + name + " >/dev/null").ok;
}

std::string quoted(const fs::path& path) { return "'" + path.string() + "'"; }

std::string decode_entities(std::string text) {
  static const std::vector<std::pair<std::string, std::string>> entities = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&#39;", "'"},
      {"&amp;", "&"}};
  for (const auto& [entity, character] : entities)
    for (size_t at; (at = text.find(entity)) != std::string::npos;)
      text.replace(at, entity.size(), character);
  return text;
}

// The PDF's fonts join "ffi" into one glyph, which pdftotext gives back as U+FB03.
std::string without_ligatures(std::string text) {
  static const std::vector<std::pair<std::string, std::string>> ligatures = {
      {"\uFB00", "ff"}, {"\uFB01", "fi"}, {"\uFB02", "fl"}, {"\uFB03", "ffi"}, {"\uFB04", "ffl"}};
  for (const auto& [ligature, letters] : ligatures)
    for (size_t at; (at = text.find(ligature)) != std::string::npos;)
      text.replace(at, ligature.size(), letters);
  return text;
}

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

struct Word {
  std::string text;
  double x0, y0, x1, y1;
};

struct PdfPage {
  double width = 0, height = 0;
  std::vector<Word> words;
};

// pdftotext -bbox: an XHTML page of <word xMin= yMin= xMax= yMax=>text</word>, in points.
PdfPage pdf_words(const fs::path& pdf) {
  PdfPage page;
  const Output out = run_command("pdftotext -bbox " + quoted(pdf) + " -");
  if (!out.ok) return page;
  std::smatch m;
  if (std::regex_search(out.text, m,
                        std::regex(R"re(<page width="([0-9.]+)" height="([0-9.]+)")re")))
    page.width = std::stod(m[1]), page.height = std::stod(m[2]);
  const std::regex word(
      R"re(<word xMin="([-0-9.]+)" yMin="([-0-9.]+)" xMax="([-0-9.]+)" yMax="([-0-9.]+)">([^<]*)</word>)re");
  for (auto it = std::sregex_iterator(out.text.begin(), out.text.end(), word);
       it != std::sregex_iterator(); ++it)
    page.words.push_back({without_ligatures(decode_entities((*it)[5])), std::stod((*it)[1]), std::stod((*it)[2]),
                          std::stod((*it)[3]), std::stod((*it)[4])});
  return page;
}

// The words of an SVG's <text> elements (QSvgGenerator writes one element a drawn text).
std::vector<std::string> svg_words(const fs::path& svg) {
  std::ifstream in(svg);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::string> words;
  const std::regex element(R"re(<text[^>]*>([^<]*)</text>)re");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), element);
       it != std::sregex_iterator(); ++it)
    for (const std::string& w : split_words(decode_entities((*it)[1]))) words.push_back(w);
  return words;
}

// The share of an image's pixels that are not (nearly) white: a page that rendered blank has none.
double ink(const QImage& image) {
  if (image.isNull()) return 0;
  int64_t inked = 0;
  for (int y = 0; y < image.height(); y += 2)
    for (int x = 0; x < image.width(); x += 2)
      if (qGray(image.pixel(x, y)) < 200) ++inked;
  return double(inked) / (double(image.width() / 2 + 1) * double(image.height() / 2 + 1));
}

// What is wrong with a PDF against its SVG twin, one line a problem; empty when it reads well.
std::vector<std::string> pdf_problems(const fs::path& pdf, const fs::path& svg,
                                      const fs::path& scratch) {
  std::vector<std::string> problems;
  const std::string name = pdf.filename().string();
  const PdfPage page = pdf_words(pdf);
  if (page.width <= 0 || page.words.empty()) return {name + ": pdftotext found no words"};
  // A chart's largest text is its title, about 2 % of an export's 750 px; 5 % is unreadable.
  // A word's size is the smaller side of its box: an axis label turned upright is as tall as it is
  // long.
  const double tallest = 0.05 * page.height;
  for (const Word& w : page.words)
    if (const double size = std::min(w.x1 - w.x0, w.y1 - w.y0); size > tallest)
      problems.push_back(name + ": \"" + w.text + "\" is " + std::to_string(size) +
                         " pt high on a page " + std::to_string(page.height) + " pt high");
  for (size_t i = 0; i < page.words.size(); ++i)
    for (size_t k = i + 1; k < page.words.size(); ++k) {
      const Word &a = page.words[i], &b = page.words[k];
      const double w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
      const double h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
      if (w <= 0 || h <= 0) continue;
      const double smaller =
          std::min((a.x1 - a.x0) * (a.y1 - a.y0), (b.x1 - b.x0) * (b.y1 - b.y0));
      // Glyph boxes include the font's ascent and descent: lines of a wrapped text touch.
      if (w * h > 0.25 * smaller)
        problems.push_back(name + ": \"" + a.text + "\" and \"" + b.text + "\" overlap");
    }
  std::vector<std::string> from_pdf, from_svg = svg_words(svg);
  for (const Word& w : page.words) from_pdf.push_back(w.text);
  std::sort(from_pdf.begin(), from_pdf.end());
  std::sort(from_svg.begin(), from_svg.end());
  if (from_pdf != from_svg) {
    std::vector<std::string> only_pdf, only_svg;
    std::set_difference(from_pdf.begin(), from_pdf.end(), from_svg.begin(), from_svg.end(),
                        std::back_inserter(only_pdf));
    std::set_difference(from_svg.begin(), from_svg.end(), from_pdf.begin(), from_pdf.end(),
                        std::back_inserter(only_svg));
    std::string text = name + ": its words differ from the SVG's; only in the PDF:";
    for (const auto& w : only_pdf) text += " " + w;
    text += "; only in the SVG:";
    for (const auto& w : only_svg) text += " " + w;
    problems.push_back(text);
  }
  const fs::path rendered = scratch / (pdf.stem().string() + "-pdf");
  if (!run_command("pdftoppm -png -r 48 -singlefile " + quoted(pdf) + " " + quoted(rendered)).ok)
    problems.push_back(name + ": pdftoppm could not render it");
  else if (ink(QImage(QString::fromStdString(rendered.string() + ".png"))) < 0.002)
    problems.push_back(name + ": rendered blank");
  return problems;
}

class ExportsRender : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"pdftotext", "pdftoppm"})
      if (!have_tool(tool))
        GTEST_SKIP() << tool << " is not installed (Debian: poppler-utils; scripts/setup --tests "
                     << "installs it)";
    // Three runs a learner might compare: 1 and 2 threads, and 2 replicas (the replica timeline).
    runs_.push_back(load_run(test::write_run(dir_.path() / "a", 1, 64, 60, 40.0,
                                             "2026-11-24T08:00:00Z")));
    runs_.push_back(load_run(test::write_run(dir_.path() / "b", 2, 64, 60, 25.0,
                                             "2026-11-24T08:01:00Z")));
    runs_.push_back(load_run(test::write_run(dir_.path() / "c", 2, 64, 60, 22.0,
                                             "2026-11-24T08:02:00Z", 2)));
  }
  test::TempDir dir_;
  std::vector<RunData> runs_;
};

// Issue 40.1: PDFs were drawn about 16 times too large (a 173 pt font on a 1200 pt page).
TEST_F(ExportsRender, EveryFormatOfALabReportRendersAndItsPdfsReadAsItsSvgs) {
  const fs::path report = dir_.path() / "report";
  std::vector<const RunData*> runs;
  for (const RunData& run : runs_) runs.push_back(&run);
  ChartOptions options;
  options.target_accuracy = 0.95;
  QString error;
  QStringList written;
  ASSERT_TRUE(ui::write_lab_report(QString::fromStdString(report.string()), runs, {}, options,
                                   &error, &written))
      << error.toStdString();
  const bool rsvg = have_tool("rsvg-convert");
  const fs::path scratch = dir_.path() / "rendered";
  fs::create_directories(scratch);
  int pdfs = 0, svgs = 0, pngs = 0;
  for (const QString& file : written) {
    const fs::path path = file.toStdString();
    if (path.extension() == ".pdf") {
      ++pdfs;
      fs::path svg = path;
      svg.replace_extension(".svg");
      for (const std::string& problem : pdf_problems(path, svg, scratch)) ADD_FAILURE() << problem;
    } else if (path.extension() == ".svg") {
      ++svgs;
      if (!rsvg) continue;
      const fs::path png = scratch / (path.stem().string() + "-svg.png");
      ASSERT_TRUE(run_command("rsvg-convert -o " + quoted(png) + " " + quoted(path)).ok)
          << path;
      EXPECT_GT(ink(QImage(QString::fromStdString(png.string()))), 0.002) << path;
    } else if (path.extension() == ".png") {
      ++pngs;
      const QImage image(file);
      EXPECT_EQ(image.size(), (path.stem() == "replica-timeline"
                                   ? QSize(ui::kExportWidth, ui::kExportHeight / 2)
                                   : QSize(ui::kExportWidth, ui::kExportHeight)))
          << path;
      EXPECT_GT(ink(image), 0.002) << path;
    }
  }
  // Issue 40.7: the replica timeline's file says what the window says above it: the run, its
  // key and the time axis.
  const std::vector<std::string> timeline = svg_words(report / "replica-timeline.svg");
  for (const char* word :
       {"replicas,", "compute", "communication", "waiting", "neither", "clock", "(s)", "lenet5"})
    EXPECT_NE(std::find(timeline.begin(), timeline.end(), word), timeline.end()) << word;
  // ... and the step-time chart's lines have a key: its runs' names (its bars are by phase).
  const std::vector<std::string> step_time = svg_words(report / "step-time.svg");
  EXPECT_GE(std::count(step_time.begin(), step_time.end(), "lenet5"), 6);
  // With GPULAB_SCREENSHOTS=DIR the PDFs' renders are kept there, to be looked at.
  if (const char* shots = std::getenv("GPULAB_SCREENSHOTS"); shots && *shots)
    for (const auto& entry : fs::directory_iterator(scratch))
      fs::copy_file(entry.path(), fs::path(shots) / ("export-" + entry.path().filename().string()),
                    fs::copy_options::overwrite_existing);
  // Every chart kind, the scaling chart (1 against 2 replicas) and the replica timeline.
  EXPECT_GE(pdfs, 6);
  EXPECT_EQ(pdfs, svgs);
  EXPECT_EQ(pdfs, pngs);
}

// The same check over `gpulab-cli export --format pdf`, which a lab report's script would call.
TEST_F(ExportsRender, TheCommandLinesPdfReadsAsItsSvg) {
  const fs::path out = dir_.path() / "cli";
  fs::create_directories(out);
  std::string runs;
  for (const char* run : {"a", "b", "c"}) runs += " --runs " + quoted(dir_.path() / run);
  for (const char* format : {"pdf", "svg"}) {
    const Output r = run_command(std::string(GPULAB_CLI_PATH) + " export" + runs +
                                 " --chart step-time --format " + format + " --out " +
                                 quoted(out / (std::string("step-time.") + format)));
    ASSERT_TRUE(r.ok) << format << ": " << r.text;
  }
  for (const std::string& problem :
       pdf_problems(out / "step-time.pdf", out / "step-time.svg", out))
    ADD_FAILURE() << problem;
}

}  // namespace
}  // namespace gpulab

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
