// The instructor's side of the class kit: `lab hand-in --zip`, and `lab grade` over a class of
// real hand-ins (folders, zips, a course platform's download of them) where each damaged,
// forged or hostile one is a row naming its reason and grading goes on; nothing is ever
// written outside the output folder.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "class_hand_ins.hpp"
#include "engine/base/text.hpp"
#include "engine/classkit/class_grade.hpp"
#include "engine/classkit/hand_in_zip.hpp"

namespace gpulab {
namespace {

using json = nlohmann::json;

struct ZipEntry {
  ZipEntry(std::string n, std::string d, unsigned t = AE_IFREG, std::string l = "")
      : name(std::move(n)), data(std::move(d)), type(t), symlink(std::move(l)) {}
  std::string name;
  std::string data;
  unsigned type;
  std::string symlink;  // AE_IFLNK's target
};

// A zip as a hostile or careless hand-in would be, written by libarchive with no checks.
void write_zip(const fs::path& zip, const std::vector<ZipEntry>& entries) {
  archive* a = archive_write_new();
  archive_write_set_format_zip(a);
  ASSERT_EQ(archive_write_open_filename(a, zip.c_str()), ARCHIVE_OK);
  for (const ZipEntry& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.name.c_str());
    archive_entry_set_filetype(entry, e.type);
    archive_entry_set_perm(entry, 0644);
    if (!e.symlink.empty()) archive_entry_set_symlink(entry, e.symlink.c_str());
    archive_entry_set_size(entry, la_int64_t(e.data.size()));
    ASSERT_EQ(archive_write_header(a, entry), ARCHIVE_OK) << archive_error_string(a);
    if (!e.data.empty()) archive_write_data(a, e.data.data(), e.data.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
}

// The line of class.csv whose first cell is `learner`, its doubled quotes read back as one; ""
// when there is none.
std::string row_of(const std::string& csv, const std::string& learner) {
  std::istringstream lines(csv);
  std::string line, found;
  while (std::getline(lines, line))
    if (line.rfind(learner + ",", 0) == 0 || line.rfind("\"" + learner + "\",", 0) == 0) {
      EXPECT_TRUE(found.empty()) << "two rows of " << learner << ":\n" << csv;
      found = line;
    }
  for (size_t at = found.find("\"\""); at != std::string::npos; at = found.find("\"\"", at + 1))
    found.erase(at, 1);
  return found;
}

size_t lines_in(const std::string& text) {
  return size_t(std::count(text.begin(), text.end(), '\n'));
}

class Grading : public ClassKit {
 protected:
  // `lab hand-in --zip` from a learner's `lab run` folder: the zip beside the new folder.
  fs::path zip_of(const std::string& learner, const fs::path& where) {
    fs::create_directories(where);
    const test::CliResult r = cli("lab hand-in " + lab().string() + " --learner " + learner +
                                  " --runs-dir " + (root() / learner).string() + " --zip --out " +
                                  (where / (learner + "-hand-in")).string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return where / (learner + "-two-cpus.zip");
  }
  test::CliResult grade(const std::string& paths, const fs::path& out,
                        const std::string& more = "") {
    return cli("lab grade " + paths + " --out " + out.string() + " --lab " + lab().string() + more);
  }
};

// Issue 40.4: a --quick hand-in was the tallest bar of the class chart, unmarked. Its runs' ⚠ is
// in class.csv's flagged_runs and on its bars (the chart's run names, class-*.csv's too).
TEST_F(Grading, AQuickHandInCarriesItsWarningIntoClassCsvAndTheClassChart) {
  const fs::path quick = dir_.path() / "quick";
  const test::CliResult run =
      cli("lab run " + lab().string() + " --quick --quiet --learner zed --out " + quick.string() +
          " --data-dir " + (root() / "data").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const fs::path out = dir_.path() / "graded";
  const test::CliResult r = grade((root() / "ada").string() + " " + quick.string(), out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = read(out / "class.csv");
  const std::string zed = row_of(csv, "zed"), ada = row_of(csv, "ada");
  EXPECT_NE(zed.find("⚠ mlp cpu: quick"), std::string::npos) << zed;
  // ada's runs are not quick (they carry ⚠ only where this machine was busy while they ran).
  EXPECT_EQ(ada.find("quick"), std::string::npos) << ada;
  std::string chart;  // class-LAB.csv: the class chart's points, by learner
  for (const auto& entry : fs::directory_iterator(out))
    if (const std::string name = entry.path().filename().string();
        name.rfind("class-", 0) == 0 && entry.path().extension() == ".csv")
      chart = read(entry.path());
  EXPECT_NE(chart.find("zed · "), std::string::npos) << chart;
  std::istringstream lines(chart);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("zed · ") != std::string::npos) {
      EXPECT_NE(line.find(" ⚠"), std::string::npos) << line;
    }
  }
}

TEST_F(Grading, HandInZipHoldsTheFolderAsItsOneEntryAndVerifiesUnpacked) {
  const fs::path zip = zip_of("ada", dir_.path() / "out");
  ASSERT_TRUE(fs::is_regular_file(zip));
  // Only the folder and the zip beside it: no temporary file left.
  size_t beside = 0;
  for (const auto& entry : fs::directory_iterator(dir_.path() / "out")) (void)entry, ++beside;
  EXPECT_EQ(beside, 2u);
  const fs::path unpacked = dir_.path() / "unpacked";
  EXPECT_EQ(unpack_hand_in_zip(zip, unpacked), "");
  size_t top = 0;
  for (const auto& entry : fs::directory_iterator(unpacked)) {
    EXPECT_EQ(entry.path().filename(), "ada-hand-in");
    ++top;
  }
  EXPECT_EQ(top, 1u);
  EXPECT_EQ(read(unpacked / "ada-hand-in" / "manifest.json"),
            read(dir_.path() / "out" / "ada-hand-in" / "manifest.json"));
  const test::CliResult r = verify(unpacked / "ada-hand-in");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(hand_in_zip_name("Ada Lovelace", "cnn-on-gpu"), "Ada-Lovelace-cnn-on-gpu.zip");
  EXPECT_EQ(hand_in_zip_name("a/b\\c\nd", "x"), "a-b-c-d-x.zip");
}

// Two learners' `lab hand-in --zip` into one --out at once, many times over: neither crashes,
// each writes its whole hand-in or is refused because the other holds the folder, and what
// stands (the folder and each zip written) verifies: never one learner's answers with the other's
// manifest.
TEST_F(Grading, HandInsToOneOutAtOnceAreWholeOrRefused) {
  const fs::path where = dir_.path() / "race";
  fs::create_directories(where);
  const fs::path out = where / "hand-in";
  const auto hand_in = [&](const std::string& learner) {
    return cli("lab hand-in " + lab().string() + " --learner " + learner + " --runs-dir " +
               (root() / learner).string() + " --zip --out " + out.string());
  };
  int refused = 0;
  for (int round = 0; round < 12; ++round) {
    auto ada = std::async(std::launch::async, hand_in, "ada");
    const test::CliResult bob = hand_in("bob");
    const test::CliResult ada_result = ada.get();
    for (const auto& [learner, r] : {std::pair{"ada", &ada_result}, std::pair{"bob", &bob}}) {
      if (r->exit_code == 1 &&
          r->output.find("--out " + out.string() + ": another program is writing into it now") !=
              std::string::npos) {
        ++refused;
        continue;
      }
      ASSERT_EQ(r->exit_code, 0) << learner << " in round " << round << ":\n" << r->output;
      const fs::path unpacked = dir_.path() / ("unpacked-" + std::to_string(round) + learner);
      ASSERT_EQ(unpack_hand_in_zip(where / (std::string(learner) + "-two-cpus.zip"), unpacked), "");
      const test::CliResult zipped = verify(unpacked / "hand-in");
      EXPECT_EQ(zipped.exit_code, 0) << learner << "'s zip in round " << round << ":\n"
                                     << zipped.output;
    }
    const test::CliResult folder = verify(out);
    ASSERT_EQ(folder.exit_code, 0) << "round " << round << ":\n" << folder.output;
  }
  RecordProperty("refused", refused);
  // Nothing of the writers is left beside the folder: no lock, no half-made set.
  for (const auto& entry : fs::directory_iterator(where)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "hand-in" || name.ends_with(".zip")) << name;
  }
}

// Names outside ASCII, Latin and not, through hand-in, its zip, verify, grade and class.csv,
// under each locale a shell may start the program in: libarchive gave no name for an entry of
// "Zoë Ñandú-two-cpus.zip" without a UTF-8 locale, and grading refused the zip.
TEST_F(Grading, NamesOutsideAsciiAreHandedInVerifiedAndGradedInAnyLocale) {
  const std::vector<std::string> learners = {"Zoë Ñandú", "Алёна Щукина", "李小龍"};
  const std::vector<std::string> runs_of = {"ada", "bob", "cy"};  // each their own runs
  for (const char* locale : {"C", "C.UTF-8", "POSIX"}) {
    const std::string program = std::string("env -u LANGUAGE LC_ALL=") + locale +
                                " LANG=" + locale + " " + GPULAB_CLI_PATH + " ";
    const fs::path where = dir_.path() / locale;
    std::string zips;
    for (size_t i = 0; i < learners.size(); ++i) {
      const std::string& learner = learners[i];
      const fs::path folder = where / learner;  // the zip's entries named with it
      const test::CliResult made = test::run_command(
          program + "lab hand-in " + lab().string() + " --learner '" + learner + "' --runs-dir " +
          (root() / runs_of[i]).string() + " --zip --out '" + folder.string() + "'");
      ASSERT_EQ(made.exit_code, 0) << locale << ": " << made.output;
      const fs::path zip = where / hand_in_zip_name(learner, "two-cpus");
      ASSERT_TRUE(fs::is_regular_file(zip)) << locale << ": " << zip;
      zips += " " + zip.string();
      const test::CliResult verified =
          test::run_command(program + "lab verify '" + folder.string() + "' --lab " + lab().string());
      EXPECT_EQ(verified.exit_code, 0) << locale << ": " << verified.output;
      EXPECT_NE(verified.output.find("verified: the hand-in of \"" + learner + "\""),
                std::string::npos)
          << locale << ": " << verified.output;
    }
    const fs::path out = where / "graded";
    const test::CliResult r = test::run_command(program + "lab grade" + zips + " --out " +
                                                out.string() + " --lab " + lab().string());
    ASSERT_EQ(r.exit_code, 0) << locale << ": " << r.output;
    EXPECT_NE(r.output.find("graded 3 hand-ins: 3 learner-lab rows, 3 verified, 0 with problems"),
              std::string::npos)
        << locale << ": " << r.output;
    const std::string csv = read(out / "class.csv");
    for (const std::string& learner : learners)
      EXPECT_NE(row_of(csv, learner).find(",two-cpus,"), std::string::npos)
          << locale << ": " << learner << "\n"
          << csv;
  }
}

// A learner's name of 12 MB in the manifest and answers.json (re-hashed, as a forger would): a
// problem naming the bound, shown cut to it, and the class graded in seconds (it took 172 s to
// draw the name into the class chart).
TEST_F(Grading, AHugeLearnerNameIsBoundedWhereItIsRead) {
  const fs::path h = copy_of("ada");
  const std::string huge(size_t(12) << 20, 'z');
  edit(h / "answers.json", "\"learner\": \"ada\"", "\"learner\": \"" + huge + "\"");
  rehash(h, "answers.json");
  json manifest = json::parse(read(h / "manifest.json"));
  manifest["learner"] = huge;
  write(h / "manifest.json", manifest.dump(2));
  const fs::path out = dir_.path() / "graded";
  const test::CliResult r =
      test::run_command_for(std::string(GPULAB_CLI_PATH) + " lab grade " + h.string() + " --out " +
                                out.string() + " --lab " + lab().string(),
                            90);
  ASSERT_FALSE(r.timed_out) << "grading a hand-in took more than 90 s";
  ASSERT_EQ(r.exit_code, 0) << r.output.substr(0, 4000);
  EXPECT_LT(r.output.size(), size_t(64) << 10) << r.output.substr(0, 4000);
  const std::string csv = read(out / "class.csv");
  EXPECT_LT(csv.size(), size_t(64) << 10);
  const std::string cut = huge.substr(0, kMaxNameBytes - 3) + "…";
  const std::string row = row_of(csv, cut);
  EXPECT_NE(row.find("its learner's name is 12582912 bytes long; give a UTF-8 name of at most 256 "
                     "bytes"),
            std::string::npos)
      << row.substr(0, 4000);
  EXPECT_EQ(bounded_name("ZoëZoë", 6), "Zo…") << "a character cut through is left out";
  EXPECT_EQ(bounded_name("Zoë", 4), "Zoë");
  EXPECT_EQ(bounded_name("Zo\xffë"), "Zo?ë");
}

// Outputs inside inputs: lab grade's --out in a hand-in it grades (class.csv added there broke
// the hand-in), and lab hand-in's --out inside (or around) the --runs-dir it reads. Each is one
// line, and nothing of the input changes.
TEST_F(Grading, AnOutputInsideItsInputIsRefused) {
  const fs::path h = copy_of("ada");
  const auto before = read(h / "manifest.json");
  size_t files_before = 0;
  for (const auto& entry : fs::recursive_directory_iterator(h)) (void)entry, ++files_before;
  for (const fs::path& out : {h, h / "graded"}) {
    const test::CliResult r = grade(h.string(), out);
    EXPECT_EQ(r.exit_code, 2) << r.output;  // an output refused
    EXPECT_NE(r.output.find("--out " + out.string() + ": is inside the hand-in " + h.string() +
                            ", and files added there break it; give a folder outside every "
                            "hand-in"),
              std::string::npos)
        << r.output;
  }
  size_t files_after = 0;
  for (const auto& entry : fs::recursive_directory_iterator(h)) (void)entry, ++files_after;
  EXPECT_EQ(files_after, files_before);
  EXPECT_EQ(verify(h).exit_code, 0);
  const fs::path runs = copy_of("bob"), around = copy_of("bob");
  for (const auto& [runs_dir, out, said] :
       {std::tuple{runs, runs / "runs" / "hand-in", ": is inside --runs-dir "},
        std::tuple{runs, runs, ": is inside --runs-dir "},
        std::tuple{around / "runs", around, ": holds --runs-dir "}}) {
    const test::CliResult r = cli("lab hand-in " + lab().string() + " --learner bob --runs-dir " +
                                  runs_dir.string() + " --out " + out.string());
    EXPECT_EQ(r.exit_code, 2) << r.output;  // an output refused
    EXPECT_NE(r.output.find("--out " + out.string() + said + runs_dir.string()), std::string::npos)
        << r.output;
  }
  EXPECT_EQ(verify(around).exit_code, 0);
  EXPECT_EQ(verify(runs).exit_code, 0);
}

TEST_F(Grading, AGenuineClassIsGradedWithItsFiguresAndChart) {
  const fs::path zip = zip_of("bob", dir_.path() / "bob");
  const fs::path out = dir_.path() / "graded";
  const test::CliResult r = grade((root() / "ada").string() + " " + zip.string(), out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("graded 2 of 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("graded 2 hand-ins: 2 learner-lab rows, 2 verified, 0 with problems"),
            std::string::npos)
      << r.output;
  const std::string csv = read(out / "class.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "learner,lab,submitted,first_attempt_score,final_score,quiz_questions,"
            "written_answered,written_questions,verified,problems,cpu,gpu,source,flagged_runs,"
            "roster_id,points,percent,lab_checked,"
            "mlp cpu images/s,mlp cpu speedup,mlp again images/s,mlp again speedup");
  EXPECT_EQ(lines_in(csv), 3u) << csv;
  for (const char* learner : {"ada", "bob"}) {
    const std::string row = row_of(csv, learner);
    EXPECT_NE(row.find(",two-cpus,"), std::string::npos) << row;
    EXPECT_NE(row.find(",0,0,1,0,2,yes,,"), std::string::npos)
        << row;  // quiz 0 of 1, 0 of 2 written
  }
  const json manifest = json::parse(read(root() / "ada" / "manifest.json"));
  EXPECT_NE(row_of(csv, "ada").find(manifest["handed_in"].get<std::string>()), std::string::npos);
  const std::string md = read(out / "class.md");
  EXPECT_NE(md.find("2 hand-ins graded (2 verified, 0 with problems)"), std::string::npos) << md;
  // The class chart's points: one bar per learner and figure, labelled with the hardware.
  const std::string chart = read(out / "class-two-cpus.csv");
  EXPECT_NE(chart.find("ada · "), std::string::npos) << chart;
  EXPECT_NE(chart.find("mlp again speedup"), std::string::npos) << chart;
  EXPECT_EQ(chart.find("mlp cpu speedup"), std::string::npos) << "the baseline over itself\n"
                                                              << chart;
  // The zip was unpacked inside --out and nothing of it is left there.
  for (const auto& entry : fs::directory_iterator(out))
    EXPECT_NE(entry.path().filename().string().rfind(".grading", 0), 0u) << entry.path();
}

// A course platform's download: folders per submission, one level down, holding genuine,
// damaged, forged and hostile hand-ins. Every one is a row with its reason; grading goes on.
TEST_F(Grading, EachBadHandInIsARowNamingItsReasonAndGradingGoesOn) {
  const fs::path course = dir_.path() / "course";
  const auto submission = [&](const std::string& who) {
    const fs::path folder = course / (who + "_1234_assignsubmission_file");
    fs::create_directories(folder);
    return folder;
  };
  const auto copy_as = [&](const std::string& learner, const std::string& as) {
    const fs::path to = submission(as) / as;
    fs::copy(root() / learner, to, fs::copy_options::recursive);
    return to;
  };
  // Genuine: Ada as a zip one level down; Bob as a folder; Cy in a folder whose name is not UTF-8.
  fs::copy(zip_of("ada", dir_.path() / "zips"), submission("Ada Lovelace") / "ada.zip");
  copy_as("bob", "bob");
  fs::copy(root() / "cy", course / "c\xffy", fs::copy_options::recursive);
  // Ada handed in twice: the earlier one is listed, not graded as hers.
  {
    const fs::path h = copy_as("ada", "ada-early");
    json manifest = json::parse(read(h / "manifest.json"));
    manifest["handed_in"] = "2000-01-01T00:00:00Z";
    write(h / "manifest.json", manifest.dump(2));
  }
  {  // half-copied: a run's metrics cut off
    const fs::path metrics = copy_as("cut", "cut") / "runs" / "mlp-cpu" / "metrics.csv";
    const std::string text = read(metrics);
    write(metrics, text.substr(0, text.size() / 2));
  }
  fs::remove(copy_as("nofile", "nofile") / "results.csv");  // a missing file
  edit(copy_as("hash", "hash") / "manifest.json", "\"README.md\": \"", "\"README.md\": \"0");
  {  // a number edited in a run.json
    const fs::path run_json = copy_as("forger", "forger") / "runs" / "mlp-cpu" / "run.json";
    json info = json::parse(read(run_json));
    info["summary"]["images"] = info["summary"]["images"].get<int64_t>() - 16;
    write(run_json, info.dump(2));
  }
  {  // another lab's hand-in, or another version of it: the lab's hash is not --lab's
    const fs::path h = copy_as("otherlab", "otherlab");
    json manifest = json::parse(read(h / "manifest.json"));
    manifest["lab_sha256"] = std::string(64, '0');
    write(h / "manifest.json", manifest.dump(2));
  }
  {  // Eve hands in Bob's runs as her own (every file agrees with itself): both rows flagged.
    const fs::path h = copy_as("bob", "eve");
    json manifest = json::parse(read(h / "manifest.json"));
    manifest["learner"] = "eve";
    write(h / "manifest.json", manifest.dump(2));
    edit(h / "answers.json", "\"learner\": \"bob\"", "\"learner\": \"eve\"");
    rehash(h, "answers.json");
  }
  // Hostile and broken zips.
  write_zip(submission("climber") / "climber.zip",
            {{"climber/../../../escaped.txt", "out of the folder"}});
  write_zip(submission("rooted") / "rooted.zip", {{"/tmp/gpulab-rooted.txt", "absolute"}});
  write_zip(submission("linker") / "linker.zip",
            {{"linker/", "", AE_IFDIR}, {"linker/passwd", "", AE_IFLNK, "/etc/passwd"}});
  write_zip(submission("bomber") / "bomber.zip", {{"bomber/zeros", std::string(4 << 20, '\0')}});
  write_zip(submission("latin") / "latin.zip", {{"latin/caf\xe9.txt", "x"}});
  write(submission("notzip") / "notzip.zip", "this is not a zip\n");
  write(submission("empty") / "notes.txt", "I forgot to attach it\n");

  const fs::path out = dir_.path() / "graded";
  const test::CliResult r = grade(course.string(), out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("graded 17 hand-ins: 16 learner-lab rows, 2 verified, 14 with problems, "
                          "1 earlier hand-ins replaced by a later one"),
            std::string::npos)
      << r.output;
  const std::string csv = read(out / "class.csv");
  EXPECT_EQ(lines_in(csv), 17u) << csv;
  const auto expect_row = [&](const std::string& learner, const std::string& reason) {
    const std::string row = row_of(csv, learner);
    EXPECT_NE(row.find(reason), std::string::npos) << learner << ": " << row;
    return row;
  };
  EXPECT_NE(expect_row("ada", ",yes,,").find("ada.zip"), std::string::npos);
  EXPECT_NE(expect_row("cy", ",yes,,").find("c?y"), std::string::npos);
  expect_row("cut", "runs/mlp-cpu/metrics.csv: changed after the hand-in was written");
  expect_row("nofile", "results.csv: listed in manifest.json but missing");
  expect_row("hash", "README.md: changed after the hand-in was written: its SHA-256 is ");
  expect_row("forger", "runs/mlp-cpu/run.json: changed after the hand-in was written");
  expect_row("otherlab", "another version of the lab, or another lab");
  expect_row("eve", "holds the same run as the hand-in of bob (");
  expect_row("bob", "holds the same run as the hand-in of eve (");
  expect_row("climber",
             "climber.zip: the entry \"climber/../../../escaped.txt\" points outside "
             "the zip's folder (\"..\")");
  expect_row("rooted", "rooted.zip: the entry \"/tmp/gpulab-rooted.txt\" has an absolute path");
  expect_row("linker", "linker.zip: the entry \"linker/passwd\" is a link");
  expect_row("bomber",
             "bomber.zip: unpacks to more than 200 times its size: refused as a zip bomb");
  expect_row("latin", "latin.zip: an entry's name is not UTF-8 (byte 0xE9 at column 10)");
  expect_row("notzip", "notzip.zip: not a zip file (");
  expect_row("empty_1234_assignsubmission_file", "holds no hand-in (no manifest.json, no .zip)");
  const std::string md = read(out / "class.md");
  EXPECT_NE(md.find("- ada, two-cpus, submitted 2000-01-01T00:00:00Z: "), std::string::npos) << md;
  EXPECT_NE(md.find("### forger (two-cpus)\n\n- runs/mlp-cpu/run.json: changed"), std::string::npos)
      << md;
  // Nothing was written outside --out, and nothing unpacked is left in it.
  EXPECT_FALSE(fs::exists(out / "escaped.txt"));
  EXPECT_FALSE(fs::exists(dir_.path() / "escaped.txt"));
  EXPECT_FALSE(fs::exists("/tmp/gpulab-rooted.txt"));
  for (const auto& entry : fs::directory_iterator(out))
    EXPECT_NE(entry.path().filename().string().rfind(".grading", 0), 0u) << entry.path();
}

// Losses typed into a run pass every check but a replay: `--replay STEPS` goes through to verify.
TEST_F(Grading, ReplayPassesThroughToVerify) {
  const fs::path h = copy_of("ada");
  forge_first_loss(h);
  const test::CliResult plain = grade(h.string(), dir_.path() / "plain");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_NE(row_of(read(dir_.path() / "plain" / "class.csv"), "ada").find(",yes,,"),
            std::string::npos);
  const test::CliResult replayed = grade(h.string(), dir_.path() / "replayed",
                                         " --replay 3 --data-dir " + (root() / "data").string());
  ASSERT_EQ(replayed.exit_code, 0) << replayed.output;
  const std::string row = row_of(read(dir_.path() / "replayed" / "class.csv"), "ada");
  EXPECT_NE(row.find(",no,\"runs/mlp-cpu/metrics.csv: replay disagrees: 3 steps replayed"),
            std::string::npos)
      << row;
}

TEST_F(Grading, ZipLimitsBoundSizeAndEntries) {
  const fs::path zip = zip_of("ada", dir_.path() / "zips");
  ZipLimits small;
  small.max_total_bytes = 1000;
  EXPECT_EQ(unpack_hand_in_zip(zip, dir_.path() / "a", small),
            "unpacks to more than 0 MiB: refused as a zip bomb");
  ZipLimits few;
  few.max_entries = 3;
  EXPECT_EQ(unpack_hand_in_zip(zip, dir_.path() / "b", few),
            "holds more than 3 entries: refused as a zip bomb");
  // A zip of something else, and one of two hand-ins: no hand-in to grade, said in the row.
  write_zip(dir_.path() / "notes.zip", {{"notes/todo.txt", "hand in the lab"}});
  const fs::path two = dir_.path() / "two";
  fs::create_directories(two);
  fs::copy(root() / "ada", two / "ada", fs::copy_options::recursive);
  fs::copy(root() / "bob", two / "bob", fs::copy_options::recursive);
  write_hand_in_zip(two, dir_.path() / "two.zip");
  for (const char* zip : {"notes.zip", "two.zip"}) {
    const ClassRow row = grade_hand_in(dir_.path() / zip, dir_.path() / "work", GradeOptions{});
    ASSERT_EQ(row.problems.size(), 1u) << zip;
    EXPECT_EQ(row.problems[0], std::string(zip) +
                                   ": holds no hand-in: no manifest.json at its top or in one "
                                   "folder there (as gpulab-cli lab hand-in --zip packs it)");
    EXPECT_FALSE(fs::exists(dir_.path() / "work"));
  }
  write_zip(dir_.path() / "twice.zip", {{"x/a", "1"}, {"x/a", "2"}});
  EXPECT_EQ(unpack_hand_in_zip(dir_.path() / "twice.zip", dir_.path() / "c"),
            "the entry \"x/a\" is there twice, or clashes with a folder of the zip");
}

// Hard links. libarchive's zip writer cannot make one, so two real archives that say "hard link"
// stand in. A tar holding a hard-link entry (written by libarchive's tar writer, and read back
// to show the entry is there) and named .zip: the unpacker reads zips only, so it is refused as
// no zip before any entry is looked at, and nothing is unpacked.
TEST(ZipLinks, ATarWithAHardLinkNamedZipIsRefusedAsNoZip) {
  test::TempDir dir;
  const fs::path tar = dir.path() / "linked.zip";
  {
    archive* a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    ASSERT_EQ(archive_write_open_filename(a, tar.c_str()), ARCHIVE_OK);
    const std::string manifest = "{}\n";
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, "linked/manifest.json");
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_entry_set_size(entry, la_int64_t(manifest.size()));
    ASSERT_EQ(archive_write_header(a, entry), ARCHIVE_OK) << archive_error_string(a);
    archive_write_data(a, manifest.data(), manifest.size());
    archive_entry_clear(entry);
    archive_entry_set_pathname(entry, "linked/answers.json");
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_entry_set_hardlink(entry, "/etc/passwd");
    archive_entry_set_size(entry, 0);
    ASSERT_EQ(archive_write_header(a, entry), ARCHIVE_OK) << archive_error_string(a);
    archive_entry_free(entry);
    archive_write_close(a);
    archive_write_free(a);
  }
  {  // The archive does hold a hard link: libarchive's tar reader says so.
    archive* a = archive_read_new();
    archive_read_support_format_tar(a);
    ASSERT_EQ(archive_read_open_filename(a, tar.c_str(), 1 << 16), ARCHIVE_OK);
    std::vector<std::string> links;
    archive_entry* entry = nullptr;
    while (archive_read_next_header(a, &entry) == ARCHIVE_OK)
      if (const char* link = archive_entry_hardlink(entry)) links.push_back(link);
    archive_read_free(a);
    ASSERT_EQ(links, std::vector<std::string>{"/etc/passwd"});
  }
  EXPECT_EQ(unpack_hand_in_zip(tar, dir.path() / "into"),
            "not a zip file (Unrecognized archive format)");
  EXPECT_TRUE(fs::is_empty(dir.path() / "into"));
  const ClassRow row = grade_hand_in(tar, dir.path() / "work", GradeOptions{});
  ASSERT_EQ(row.problems.size(), 1u);
  EXPECT_EQ(row.problems[0], "linked.zip: not a zip file (Unrecognized archive format)");
  EXPECT_FALSE(fs::exists(dir.path() / "work"));
}

// The zip bytes of one stored entry, with `extra` as its extra field in both headers and `mode`
// (a Unix st_mode) in its external attributes, as a Unix zip tool writes them.
std::string zip_with_extra(const std::string& name, const std::string& data,
                           const std::string& extra, uint32_t mode) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  crc = ~crc;
  std::string out;
  const auto u16 = [&](uint32_t v) { out += char(v & 0xFF), out += char((v >> 8) & 0xFF); };
  const auto u32 = [&](uint32_t v) { u16(v & 0xFFFF), u16(v >> 16); };
  const auto common = [&] {
    u16(10), u16(0), u16(0), u16(0), u16(0x21);  // version, flags, stored, time, date
    u32(crc), u32(uint32_t(data.size())), u32(uint32_t(data.size()));
    u16(uint32_t(name.size())), u16(uint32_t(extra.size()));
  };
  u32(0x04034b50);
  common();
  out += name + extra + data;
  const uint32_t central = uint32_t(out.size());
  u32(0x02014b50), u16((3u << 8) | 30u);  // made by Unix
  common();
  u16(0), u16(0), u16(0), u32(mode << 16), u32(0);
  out += name + extra;
  const uint32_t central_size = uint32_t(out.size()) - central;
  u32(0x06054b50), u16(0), u16(0), u16(1), u16(1), u32(central_size), u32(central), u16(0);
  return out;
}

// A zip cannot say "hard link" to libarchive: PKWARE's Unix extra field (0x000d) carries a hard
// link's target after its fixed part, which libarchive's zip reader passes over, so the entry
// unpacks as the plain file it also is, never a link to the target. (A symbolic link, which zips
// do express, is refused: Grading.EachBadHandInIsARowNamingItsReasonAndGradingGoesOn's linker.)
TEST(ZipLinks, AHardLinkInPkwaresUnixFieldUnpacksAsAPlainFile) {
  test::TempDir dir;
  const std::string target = "/etc/passwd";
  std::string extra = {'\x0d', '\x00', char(12 + target.size()), '\x00'};
  extra += std::string(12, '\0') + target;  // atime, mtime, uid, gid, then the link's target
  const fs::path zip = dir.path() / "pk.zip";
  write(zip, zip_with_extra("pk/answers.json", "{}\n", extra, 0100644));
  const fs::path into = dir.path() / "into";
  ASSERT_EQ(unpack_hand_in_zip(zip, into), "");
  const fs::path file = into / "pk" / "answers.json";
  EXPECT_FALSE(fs::is_symlink(file));
  ASSERT_TRUE(fs::is_regular_file(file));
  EXPECT_EQ(fs::hard_link_count(file), 1u);
  EXPECT_EQ(read(file), "{}\n");
  EXPECT_NE(read("/etc/passwd"), "{}\n");
}

TEST_F(Grading, BadUsageAndAnUnwritableOutStopWithOneLine) {
  const test::CliResult missing = grade((dir_.path() / "nothing").string(), dir_.path() / "o");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("gpulab-cli: " + (dir_.path() / "nothing").string() +
                                ": no such file or folder; give hand-in folders, .zip files or "
                                "a folder holding them"),
            std::string::npos)
      << missing.output;
  write(dir_.path() / "file", "x");
  const test::CliResult unwritable = grade((root() / "ada").string(), dir_.path() / "file");
  EXPECT_EQ(unwritable.exit_code, 2);  // an output refused before grading
  EXPECT_NE(unwritable.output.find("gpulab-cli: --out " + (dir_.path() / "file").string() +
                                   ": is a text file, not a folder"),
            std::string::npos)
      << unwritable.output;
  EXPECT_EQ(read(dir_.path() / "file"), "x");
  fs::create_directories(dir_.path() / "bare");
  const test::CliResult none = grade((dir_.path() / "bare").string(), dir_.path() / "o2");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.output.find("no hand-in found in "), std::string::npos) << none.output;
  const test::CliResult usage = cli("lab grade " + (root() / "ada").string());
  EXPECT_NE(usage.exit_code, 0);
  EXPECT_NE(usage.output.find("--out is required"), std::string::npos) << usage.output;
}

}  // namespace
}  // namespace gpulab
