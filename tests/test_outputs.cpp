// Every file gpulab writes, under the events that used to lose one: a full disk (a small tmpfs),
// a kill half way, a link standing where the file goes, an output named over an input. Each case
// runs under a time limit and must end in one clear line with nothing that existed before changed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "damaged_runs.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/records/run_record.hpp"
#include "output_checks.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::snapshot;

#define SKIP_WITHOUT_SMALL_DISK(disk) \
  if (!(disk).skip_reason().empty()) GTEST_SKIP() << (disk).skip_reason()

// gpulab-cli under a minute's limit: a hang fails the test (timeout exits 124) instead of CI.
test::CliResult cli(const std::string& args) {
  return test::run_command("timeout 60 " + std::string(GPULAB_CLI_PATH) + " " + args);
}

size_t lines(const std::string& text) { return size_t(std::count(text.begin(), text.end(), '\n')); }

// The refusal every case asks for: a failure exit that is not a crash or a timeout, one line.
void expect_one_line_failure(const test::CliResult& r, const std::string& mention,
                             const std::string& what) {
  EXPECT_NE(r.exit_code, 0) << what << "\n" << r.output;
  EXPECT_NE(r.exit_code, 124) << what << ": timed out";
  EXPECT_LT(r.exit_code, 128) << what << ": killed by a signal\n" << r.output;
  EXPECT_NE(r.output.find(mention), std::string::npos) << what << "\n" << r.output;
  EXPECT_EQ(lines(r.output), 1u) << what << "\n" << r.output;
}

// In a forked child about to run gpulab-cli: its lines would land in the test's output.
void silence() {
  const int null = open("/dev/null", O_WRONLY);
  dup2(null, STDOUT_FILENO);
  dup2(null, STDERR_FILENO);
}

void expect_no_temporaries(const fs::path& dir) {
  for (const auto& [name, bytes] : snapshot(dir))
    EXPECT_FALSE(name.ends_with(".tmp") || name.find(".new-") != std::string::npos) << name;
}

// --- The writer every output goes through --------------------------------------------------

TEST(AtomicFiles, AFullDiskLeavesTheEarlierFileWholeAndNoTemporary) {
  test::SmallDisk disk(64 * 1024);
  SKIP_WITHOUT_SMALL_DISK(disk);
  const fs::path file = disk.path() / "chart.svg";
  write_file_atomically(file, "earlier");
  disk.fill();
  for (AtLink at_link : {AtLink::follow, AtLink::replace}) {
    try {
      write_file_atomically(file, std::string(64 * 1024, 'x'), at_link);
      ADD_FAILURE() << "a write on a full disk reported success";
    } catch (const RecordError& e) {
      EXPECT_NE(std::string(e.what()).find(file.string() + ": write failed"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(read_text(file), "earlier");
  }
  EXPECT_FALSE(create_file_atomically(file, "x"));  // it exists: not replaced
  EXPECT_THROW(create_file_atomically(disk.path() / "new.json", std::string(8192, 'x')),
               RecordError);
  EXPECT_FALSE(fs::exists(disk.path() / "new.json"));  // never an empty file in its place
  expect_no_temporaries(disk.path());
}

// A link where a hand-in file goes is replaced itself; where a user links an export, its target.
TEST(AtomicFiles, ALinkIsReplacedOrFollowedAsAsked) {
  test::TempDir dir;
  fs::create_directory(dir.path() / "elsewhere");
  const fs::path target = dir.path() / "elsewhere" / "notes.md";
  test::write_text(target, "mine");
  fs::create_symlink(target, dir.path() / "README.md");
  write_file_atomically(dir.path() / "README.md", "hand-in", AtLink::replace);
  EXPECT_EQ(read_text(target), "mine");
  EXPECT_FALSE(fs::is_symlink(dir.path() / "README.md"));
  EXPECT_EQ(read_text(dir.path() / "README.md"), "hand-in");
  fs::create_symlink(target, dir.path() / "chart.csv");
  write_file_atomically(dir.path() / "chart.csv", "chart");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "chart.csv"));
  EXPECT_EQ(read_text(target), "chart");
}

// The new set is made beside the old one: a set that cannot be finished leaves the old one as it
// was, and what a killed replacement left beside it is cleared by the next one.
TEST(AtomicFiles, AFolderIsReplacedWholeOrNotAtAll) {
  test::TempDir dir;
  const fs::path set = dir.path() / "mistakes";
  replace_folder_atomically(set, [](const fs::path& staging) {
    test::write_text(staging / "a.png", "old a");
    test::write_text(staging / "index.csv", "a.png\n");
  });
  const auto before = snapshot(set);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_THROW(replace_folder_atomically(set,
                                         [](const fs::path& staging) {
                                           write_file_atomically(staging / "b.png", "new b");
                                           throw RecordError("cut short");
                                         }),
               RecordError);
  EXPECT_EQ(snapshot(set), before);
  // A dead process's new set beside the folder.
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const fs::path left = dir.path() / (".mistakes.new-" + std::to_string(dead));
  fs::create_directory(left);
  test::write_text(left / "c.png", "half");
  replace_folder_atomically(
      set, [](const fs::path& staging) { test::write_text(staging / "index.csv", "\n"); });
  EXPECT_EQ(snapshot(set), (std::map<std::string, std::string>{{"index.csv", "\n"}}));
  EXPECT_FALSE(fs::exists(left));
  expect_no_temporaries(dir.path());
}

// --- gpulab-cli's outputs ----------------------------------------------------------------------

// A small data set, two recorded runs and a checkpoint, made once for the suite.
class Outputs : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    root_ = new test::TempDir;
    // Qt's note that it has no runtime folder would be a second line of every export's output.
    fs::create_directory(root_->path() / "xdg-runtime", error_);
    fs::permissions(root_->path() / "xdg-runtime", fs::perms::owner_all, error_);
    setenv("XDG_RUNTIME_DIR", (root_->path() / "xdg-runtime").c_str(), 1);
    test::write_mnist(data_dir(), test::synthetic_set(128, 1), test::synthetic_set(96, 2));
    // Run a, of one step, leaves weights that get many test images wrong: mistakes to write.
    for (const char* name : {"a", "b"}) {
      const auto r =
          cli(std::string("train --model mlp --batch 16 --quiet --eval-every 3") +
              (name[0] == 'a' ? " --steps 1 --save " + weights().string() : " --steps 6") + data() +
              " --name " + name + " --out " + (runs_dir() / name).string());
      ASSERT_EQ(r.exit_code, 0) << r.output;
    }
  }
  static void TearDownTestSuite() {
    delete root_;
    root_ = nullptr;
  }
  static fs::path data_dir() { return root_->path() / "data"; }
  static std::string data() { return " --data-dir " + data_dir().string(); }
  static fs::path runs_dir() { return root_->path() / "runs"; }
  static fs::path weights() { return root_->path() / "w.safetensors"; }
  static std::string export_args(const std::string& out) {
    return "export --runs " + runs_dir().string() + " --chart loss --out " + out;
  }

  static test::TempDir* root_;
  static std::error_code error_;
};
test::TempDir* Outputs::root_ = nullptr;
std::error_code Outputs::error_;

// The claim on a full disk used to leave a 0-byte run.json that no reader loads, listed nowhere
// and refused as --out forever after.
TEST_F(Outputs, TrainingOnAFullDiskLeavesNoEmptyRecord) {
  test::SmallDisk disk(64 * 1024);
  SKIP_WITHOUT_SMALL_DISK(disk);
  disk.fill();
  const fs::path out = disk.path() / "run";
  const auto r =
      cli("train --model mlp --steps 2 --batch 16 --quiet" + data() + " --out " + out.string());
  expect_one_line_failure(r, "No space left on device", "train on a full disk");
  EXPECT_FALSE(fs::exists(out / "run.json")) << fs::file_size(out / "run.json") << " bytes";
  // With the space back, the same folder takes the run.
  disk.free();
  const auto again =
      cli("train --model mlp --steps 2 --batch 16 --quiet" + data() + " --out " + out.string());
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(load_run(out).status(), "finished");
}

// A disk that fills while the run trains: the run fails in one line, and its record is its last
// whole state, loadable, with every step it had flushed.
TEST_F(Outputs, ADiskFillingDuringTrainingKeepsALoadableRecord) {
  test::SmallDisk disk(64 * 1024);
  SKIP_WITHOUT_SMALL_DISK(disk);
  const fs::path out = disk.path() / "run";
  const auto r =
      cli("train --model mlp --steps 5000 --batch 16 --quiet" + data() + " --out " + out.string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_LT(r.exit_code, 124) << r.output;
  EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
  ASSERT_GT(fs::file_size(out / "run.json"), 0u);
  const RunData run = load_run(out);
  EXPECT_NE(run.status(), "finished");
  EXPECT_GT(run.steps.size(), 0u);
  expect_no_temporaries(disk.path());
}

// PNG, SVG and PDF were written in place: a full disk truncated SVG and PDF while export printed
// "wrote", and destroyed the earlier PNG. Now each is drawn in memory and replaced atomically.
TEST_F(Outputs, ExportsOnAFullDiskFailAndKeepTheEarlierFile) {
  test::SmallDisk disk(1024 * 1024);
  SKIP_WITHOUT_SMALL_DISK(disk);
  const std::vector<std::string> formats = {"png", "svg", "pdf", "csv"};
  for (const std::string& format : formats) {
    const auto r = cli(export_args((disk.path() / ("chart." + format)).string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const auto before = snapshot(disk.path());
  disk.fill();
  for (const std::string& format : formats) {
    const fs::path file = disk.path() / ("chart." + format);
    const auto r = cli(export_args(file.string()));
    expect_one_line_failure(r, file.string() + ": write failed", "export " + format);
    EXPECT_EQ(r.output.find("wrote"), std::string::npos) << r.output;
  }
  disk.free();
  EXPECT_EQ(snapshot(disk.path()), before);
}

// kill -9 during an export destroyed the earlier PNG in 15 of 15 tries: now the file is the
// earlier chart or the new one, whole, wherever the kill lands.
TEST_F(Outputs, AKilledExportLeavesTheEarlierOrTheNewFileWhole) {
  test::TempDir dir;
  const fs::path file = dir.path() / "chart.png";
  ASSERT_EQ(cli(export_args(file.string())).exit_code, 0);
  const std::string whole = read_text(file);
  ASSERT_GT(whole.size(), 1000u);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const pid_t pid = fork();
    if (pid == 0) {
      const std::string out = file.string();
      silence();
      execl(GPULAB_CLI_PATH, GPULAB_CLI_PATH, "export", "--runs", runs_dir().c_str(), "--chart",
            "loss", "--out", out.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(40 * attempt));
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    EXPECT_EQ(read_text(file), whole) << "after a kill at " << 40 * attempt << " ms";
  }
}

// A link named as the output is written through: a link to a run's record is refused, as the
// record itself is.
TEST_F(Outputs, AnExportThroughALinkToARunsRecordIsRefused) {
  test::TempDir dir;
  const auto before = snapshot(runs_dir());
  for (const char* file : {"run.json", "metrics.csv", "eval.csv"}) {
    const fs::path link = dir.path() / (std::string("chart-") + file + ".csv");
    fs::create_symlink(runs_dir() / "a" / file, link);
    expect_one_line_failure(cli(export_args(link.string())),
                            "--out " + link.string() + ": is a link to ", file);
  }
  EXPECT_EQ(snapshot(runs_dir()), before);
}

// --save over the MNIST data said "weights saved", and every later run failed.
TEST_F(Outputs, SaveNeverNamesTheDataFiles) {
  test::TempDir dir;
  const auto before = snapshot(data_dir());
  std::vector<fs::path> targets;
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
    targets.push_back(data_dir() / name);
  targets.push_back(data_dir() / "t10k-labels-idx1-ubyte.gz");  // the compressed name is theirs too
  fs::create_symlink(data_dir() / "train-labels-idx1-ubyte", dir.path() / "labels.safetensors");
  targets.push_back(dir.path() / "labels.safetensors");
  for (const fs::path& target : targets)
    expect_one_line_failure(
        cli("train --model mlp --steps 1 --batch 16 --quiet" + data() + " --out " +
            (dir.path() / "run").string() + " --save " + target.string()),
        "--save " + target.string() + ": is also an input", target.filename().string());
  // eval --confusion guards the same four files (it guarded only the two it reads).
  for (const fs::path& target : targets)
    expect_one_line_failure(
        cli("eval --weights " + weights().string() + data() + " --confusion " + target.string()),
        "--confusion " + target.string() + ": is also an input", target.filename().string());
  EXPECT_EQ(snapshot(data_dir()), before);
  EXPECT_FALSE(fs::exists(dir.path() / "run"));
  // --save over the weights --init-weights reads, as eval refuses its --weights.
  const fs::path start = dir.path() / "start.safetensors";
  fs::copy_file(weights(), start);
  const std::string start_bytes = read_text(start);
  expect_one_line_failure(cli("train --model mlp --steps 1 --batch 16 --quiet" + data() +
                              " --out " + (dir.path() / "run").string() + " --init-weights " +
                              start.string() + " --save " + start.string()),
                          "--save " + start.string() + ": is also an input",
                          start.filename().string());
  EXPECT_EQ(read_text(start), start_bytes);
  EXPECT_FALSE(fs::exists(dir.path() / "run"));
}

// --- Every flag that writes, pointed at what it was not made for ------------------------------

// Files of other kinds, made in `dir` (copies: never the suite's own inputs), as a typo or a
// hostile script would name them: each is refused by every flag that writes a file, with exit
// status 2 and one line naming it, and left byte for byte as it was.
struct Hostile {
  fs::path path;
  std::string said;  // what the refusal calls it
};

std::vector<Hostile> hostile_files(const fs::path& dir) {
  std::vector<Hostile> files;
  auto add = [&](const std::string& name, const std::string& bytes, const std::string& said) {
    test::write_text(dir / name, bytes);
    files.push_back({dir / name, said});
  };
  add("train-images-idx3-ubyte", read_text(Outputs::data_dir() / "train-images-idx3-ubyte"),
      "is an MNIST IDX file");
  // A run.json makes its folder a run's: the file is refused as a file of that run's record.
  add("run.json", read_text(Outputs::runs_dir() / "a" / "run.json"), "is a file of the run folder");
  add("lab.md", "# A lab\n\nRead this first.\n", "is a Markdown file");
  add("README.md", "# Hand-in of Ada\n", "is a Markdown file");
  add("photo.png", std::string("\x89PNG\r\n\x1a\n", 8) + std::string(64, '\x01'), "is a PNG image");
  add("grades.csv", "name,grade\nAda,A\n", "is a CSV file");
  add("settings.json", "{\"theme\": \"dark\"}\n", "is a JSON file");
  add("empty.csv", "", "is an empty file");
  fs::create_directory(dir / "folder");
  files.push_back({dir / "folder", "is a folder"});
  const fs::path fifo = dir / "fifo";
  if (mkfifo(fifo.c_str(), 0600) == 0) files.push_back({fifo, "is not a regular file"});
  files.push_back({"/dev/null", "is not a regular file"});
  fs::create_symlink(dir / "lab.md", dir / "link-to-lab.csv");  // written through: the lab
  files.push_back({dir / "link-to-lab.csv", "is a Markdown file"});
  return files;
}

void expect_refused_untouched(const std::string& args, const Hostile& target, const fs::path& dir) {
  const auto before = snapshot(dir);
  const auto r = cli(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(target.path.string() + ": " + target.said), std::string::npos)
      << args << "\n"
      << r.output;
  EXPECT_EQ(lines(r.output), 1u) << args << "\n" << r.output;
  EXPECT_EQ(snapshot(dir), before) << "changed by: " << args;
}

// Each flag that writes one file, as a command line given its target.
std::vector<std::pair<std::string, std::function<std::string(const fs::path&)>>> file_flags(
    const fs::path& dir) {
  std::vector<std::pair<std::string, std::function<std::string(const fs::path&)>>> flags = {
      {"train --save",
       [dir](const fs::path& target) {
         static int run = 0;
         return "train --model mlp --steps 1 --batch 16 --quiet" + Outputs::data() + " --out " +
                (dir / ("run-" + std::to_string(run++))).string() + " --save " + target.string();
       }},
      {"eval --confusion",
       [](const fs::path& target) {
         return "eval --weights " + Outputs::weights().string() + Outputs::data() +
                " --confusion " + target.string();
       }},
      {"export --out (csv)",
       [](const fs::path& target) {
         return Outputs::export_args(target.string()) + " --format csv";
       }},
      {"bench allreduce --json", [](const fs::path& target) {
         return "bench allreduce --replicas 2 --sizes 4K --json " + target.string();
       }}};
#ifdef GPULAB_TEST_HAVE_CHARTS
  for (const char* format : {"png", "svg", "pdf"})
    flags.push_back({std::string("export --out (") + format + ")", [format](const fs::path& t) {
                       return Outputs::export_args(t.string()) + " --format " + format;
                     }});
#endif
  return flags;
}

TEST_F(Outputs, EveryFlagThatWritesAFileRefusesFilesOfOtherKindsAndReplacesItsOwn) {
  test::TempDir dir;
  const std::vector<Hostile> files = hostile_files(dir.path());
  for (const auto& [flag, command] : file_flags(dir.path())) {
    // The picture formats share their way through the window's writer: PNG meets every file.
    const bool shared_path = flag == "export --out (svg)" || flag == "export --out (pdf)";
    for (size_t i = 0; i < (shared_path ? 3 : files.size()); ++i)
      expect_refused_untouched(command(files[i].path), files[i], dir.path());
    // Its own earlier output of the same kind is replaced; --force replaces a file of another.
    const fs::path own = dir.path() / "own-output";
    for (int time = 0; time < 2; ++time) {
      const auto r = cli(command(own));
      EXPECT_EQ(r.exit_code, 0) << flag << ", time " << time << "\n" << r.output;
    }
    fs::remove(own);
    test::write_text(dir.path() / "meant.md", "# replace me\n");
    const auto forced = cli(command(dir.path() / "meant.md") + " --force");
    EXPECT_EQ(forced.exit_code, 0) << flag << " --force\n" << forced.output;
    EXPECT_NE(read_text(dir.path() / "meant.md"), "# replace me\n") << flag << " --force";
    fs::remove(dir.path() / "meant.md");
  }
  // --force never makes a folder, a device or a FIFO a file.
  for (const Hostile& file : files)
    if (!fs::is_regular_file(file.path))
      expect_refused_untouched(file_flags(dir.path())[2].second(file.path) + " --force", file,
                               dir.path());
}

// The flags that write a folder: a file of any kind is no folder, and the folders a run must
// never write into (MNIST's data, a runs folder, a hand-in, /) are refused whatever --force says.
TEST_F(Outputs, EveryFlagThatWritesAFolderRefusesFilesAndFoldersNotItsOwn) {
  test::TempDir dir;
  std::vector<Hostile> files = hostile_files(dir.path());
  files.erase(std::remove_if(files.begin(), files.end(),
                             [](const Hostile& f) { return f.said == "is a folder"; }),
              files.end());
  for (Hostile& file : files)
    if (file.said == "is not a regular file")
      file.said = "is a ";  // "a FIFO", "a device"
    else if (file.said == "is a file of the run folder")
      file.said = "is a run's run.json";
  const std::string hand_in =
      "lab hand-in cnn-on-gpu --learner Ada --runs-dir " + runs_dir().string() + " --out ";
  const std::vector<std::pair<std::string, std::function<std::string(const fs::path&)>>> flags = {
      {"train --out",
       [](const fs::path& t) {
         return "train --model mlp --steps 1 --batch 16 --quiet" + data() + " --out " + t.string();
       }},
      {"lab hand-in --out", [&](const fs::path& t) { return hand_in + t.string(); }},
      {"lab grade --out", [&](const fs::path& t) {
         return "lab grade " + runs_dir().string() + " --out " + t.string();
       }}};
  for (const auto& [flag, command] : flags)
    for (const Hostile& file : files)
      expect_refused_untouched(command(file.path), file, dir.path());
  // Folders no run goes into, even with --force.
  fs::create_directory(dir.path() / "hand-in");
  test::write_text(dir.path() / "hand-in" / "manifest.json", "{\"lab_sha256\": \"x\"}\n");
  const auto data_before = snapshot(data_dir()), runs_before = snapshot(runs_dir());
  for (const auto& [folder, said] :
       std::vector<std::pair<fs::path, std::string>>{{data_dir(), "is a data folder"},
                                                     {runs_dir(), "is a runs folder"},
                                                     {dir.path() / "hand-in", "is a hand-in"},
                                                     {"/", "is the root of the file system"}})
    for (const char* force : {"", " --force"})
      expect_refused_untouched(flags[0].second(folder) + force, {folder, said}, dir.path());
  EXPECT_EQ(snapshot(data_dir()), data_before);
  EXPECT_EQ(snapshot(runs_dir()), runs_before);
  // A folder of the user's files is refused, unless --force says the run goes beside them.
  fs::create_directory(dir.path() / "mine");
  test::write_text(dir.path() / "mine" / "notes.md", "# mine\n");
  expect_refused_untouched(flags[0].second(dir.path() / "mine"),
                           {dir.path() / "mine", "holds notes.md (a Markdown file)"}, dir.path());
  EXPECT_EQ(cli(flags[0].second(dir.path() / "mine") + " --force").exit_code, 0);
  EXPECT_EQ(read_text(dir.path() / "mine" / "notes.md"), "# mine\n");
  // The hand-in's zip beside its folder: a file of another kind there is refused.
  test::write_text(dir.path() / "Ada-cnn-on-gpu.zip", "# not a zip\n");
  expect_refused_untouched(hand_in + (dir.path() / "hand-in-2").string() + " --zip",
                           {dir.path() / "Ada-cnn-on-gpu.zip", "is a text file"}, dir.path());
}

#ifdef GPULAB_TEST_HAVE_CHARTS
std::string eval_mistakes(const fs::path& dir) {
  return "eval --weights " + Outputs::weights().string() + Outputs::data() + " --mistakes " +
         dir.string();
}

// The files index.csv names, and every file of the folder: equal for a whole set.
void expect_whole_set(const fs::path& dir, const std::string& when) {
  std::vector<std::string> named = {"index.csv"}, present;
  std::istringstream index(read_text(dir / "index.csv"));
  std::string line;
  std::getline(index, line);
  while (std::getline(index, line)) named.push_back(line.substr(0, line.find(',')));
  for (const auto& [name, bytes] : snapshot(dir)) present.push_back(name);
  std::sort(named.begin(), named.end());
  EXPECT_EQ(present, named) << when;
}

// A full disk half way through a new set: the earlier set stays as it was (it used to be
// deleted first), and the next evaluation with room works.
TEST_F(Outputs, MistakesOnAFullDiskKeepTheEarlierSet) {
  test::SmallDisk disk(1024 * 1024);
  SKIP_WITHOUT_SMALL_DISK(disk);
  const fs::path mistakes = disk.path() / "mistakes";
  ASSERT_EQ(cli(eval_mistakes(mistakes)).exit_code, 0);
  const auto before = snapshot(mistakes);
  ASSERT_GT(before.size(), 2u);
  disk.fill();
  const auto r = cli(eval_mistakes(mistakes));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_LT(r.exit_code, 124) << r.output;
  EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
  EXPECT_EQ(snapshot(mistakes), before);
  disk.free();
  expect_no_temporaries(disk.path());
  EXPECT_EQ(cli(eval_mistakes(mistakes)).exit_code, 0);
  expect_whole_set(mistakes, "after the disk had room again");
}

// A kill anywhere leaves a whole set (the old or the new) and never blocks the folder: what an
// older gpulab's kill left inside it (a .tmp file), and a killed new set beside it, are cleared.
TEST_F(Outputs, AKilledEvalNeverBlocksItsMistakesFolder) {
  test::TempDir dir;
  const fs::path mistakes = dir.path() / "mistakes";
  ASSERT_EQ(cli(eval_mistakes(mistakes)).exit_code, 0);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const pid_t pid = fork();
    if (pid == 0) {
      const std::string w = weights().string(), d = data_dir().string(), m = mistakes.string();
      silence();
      execl(GPULAB_CLI_PATH, GPULAB_CLI_PATH, "eval", "--weights", w.c_str(), "--data-dir",
            d.c_str(), "--mistakes", m.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30 * attempt));
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    expect_whole_set(mistakes, "after a kill at " + std::to_string(30 * attempt) + " ms");
  }
  test::write_text(mistakes / "00001_true1_pred2.png.4242-0.tmp", "half");
  fs::create_directory(dir.path() / ".mistakes.new-999999999");
  test::write_text(dir.path() / ".mistakes.new-999999999" / "00002_true1_pred2.png", "half");
  const auto r = cli(eval_mistakes(mistakes));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_whole_set(mistakes, "after the leftovers of a kill");
  expect_no_temporaries(dir.path());
}
#endif

}  // namespace
}  // namespace gpulab
