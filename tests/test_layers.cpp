// The layering of the tree: layers.txt says which room may include which, and this suite reads
// every #include of the tree and fails on one that breaks it, naming the file and line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace {
namespace fs = std::filesystem;

struct LayerRules {
  std::vector<std::string> rooms;                            // in the order layers.txt names them
  std::map<std::string, std::set<std::string>> may_include;  // with what those include in turn
  std::vector<std::pair<std::string, std::vector<std::string>>> forbidden;  // folder, prefixes
};

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool starts_with_path(const std::string& path, const std::string& folder) {
  return path == folder || path.rfind(folder + "/", 0) == 0;
}

// Throws std::runtime_error naming the file and line of a line it cannot read.
LayerRules read_rules(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot be read");
  LayerRules rules;
  std::map<std::string, std::vector<std::string>> direct;
  std::map<std::string, int> line_of;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string where = file.string() + ":" + std::to_string(number) + ": ";
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    if (words(line).empty()) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos)
      throw std::runtime_error(where + "expected \"ROOM: ROOMS\" or \"forbid FOLDER: PREFIXES\"");
    const std::vector<std::string> head = words(line.substr(0, colon));
    const std::vector<std::string> tail = words(line.substr(colon + 1));
    if (head.size() == 2 && head[0] == "forbid") {
      rules.forbidden.push_back({head[1], tail});
      continue;
    }
    if (head.size() != 1) throw std::runtime_error(where + "one room before the colon");
    if (direct.count(head[0])) throw std::runtime_error(where + head[0] + " is named twice");
    for (const std::string& lower : tail)
      if (!direct.count(lower))
        throw std::runtime_error(where + head[0] + " may include " + lower +
                                 ", which is not a room named above it");
    rules.rooms.push_back(head[0]);
    direct[head[0]] = tail;
    line_of[head[0]] = number;
  }
  // Every room names only rooms above it in the file, so one pass in order closes the arrows.
  for (const std::string& room : rules.rooms) {
    std::set<std::string>& all = rules.may_include[room];
    all.insert(room);
    for (const std::string& lower : direct[room]) {
      const std::set<std::string>& below = rules.may_include[lower];
      all.insert(below.begin(), below.end());
    }
  }
  return rules;
}

// The longest room `path` (relative to the tree) starts with; empty when none.
std::string room_of(const LayerRules& rules, const std::string& path) {
  std::string best;
  for (const std::string& room : rules.rooms)
    if (starts_with_path(path, room) && room.size() > best.size()) best = room;
  return best;
}

bool is_source(const fs::path& path) {
  static const std::set<std::string> kinds = {".cpp", ".hpp", ".cu", ".cuh", ".h", ".c", ".in"};
  return kinds.count(path.extension().string()) > 0;
}

// Every problem of the tree at `root`: "FILE:LINE: what is wrong", sorted by file and line.
std::vector<std::string> check_layers(const fs::path& root, const LayerRules& rules) {
  std::set<std::string> folders;  // the top folders that hold rooms
  for (const std::string& room : rules.rooms) folders.insert(room.substr(0, room.find('/')));
  std::vector<std::string> problems;
  for (const std::string& folder : folders) {
    if (!fs::is_directory(root / folder)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(root / folder))
      if (entry.is_regular_file() && is_source(entry.path())) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& path : files) {
      const std::string name = fs::relative(path, root).generic_string();
      const std::string room = room_of(rules, name);
      if (room.empty()) {
        problems.push_back(name + ":1: is in no room of layers.txt; move it into one");
        continue;
      }
      std::ifstream in(path);
      int number = 0;
      for (std::string line; std::getline(in, line);) {
        ++number;
        const size_t start = line.find_first_not_of(" \t");
        if (start == std::string::npos || line.compare(start, 8, "#include") != 0) continue;
        const size_t open = line.find_first_of("\"<", start + 8);
        const size_t close = open == std::string::npos
                                 ? std::string::npos
                                 : line.find(line[open] == '"' ? '"' : '>', open + 1);
        if (close == std::string::npos) continue;
        std::string target = line.substr(open + 1, close - open - 1);
        // A quoted include of a file beside this one is that file.
        if (line[open] == '"' && fs::exists(path.parent_path() / target))
          target =
              fs::relative(path.parent_path() / target, root).lexically_normal().generic_string();
        const std::string where = name + ":" + std::to_string(number) + ": includes \"" +
                                  line.substr(open + 1, close - open - 1) + "\": ";
        for (const auto& [forbid_folder, prefixes] : rules.forbidden)
          if (starts_with_path(name, forbid_folder))
            for (const std::string& prefix : prefixes)
              if (target.rfind(prefix, 0) == 0)
                problems.push_back(where + "no file under " + forbid_folder + "/ may include " +
                                   prefix + "...");
        const std::string target_room = room_of(rules, target);
        if (target_room.empty() || rules.may_include.at(room).count(target_room)) continue;
        problems.push_back(where + room + " may not include " + target_room +
                           " (layers.txt: arrows run down only)");
      }
    }
  }
  return problems;
}

// A small tree in a temporary folder: layers.txt and the files given (path, text).
struct Tree {
  gpulab::test::TempDir dir;
  const fs::path& root = dir.path();
  Tree(const std::string& layers, const std::vector<std::pair<std::string, std::string>>& files) {
    std::ofstream(root / "layers.txt") << layers;
    for (const auto& [name, text] : files) {
      fs::create_directories((root / name).parent_path());
      std::ofstream(root / name) << text;
    }
  }
};

const char* kSmallRules =
    "kernels:\n"
    "engine/base:\n"
    "engine/records: engine/base kernels\n"
    "engine/labs: engine/records\n"
    "ui: engine/labs\n"
    "forbid kernels: engine/\n"
    "forbid engine: Q qcustomplot ui/\n"
    "forbid ui: cuda kernels/cuda/\n";

std::vector<std::string> check_small(
    const std::vector<std::pair<std::string, std::string>>& files) {
  const Tree tree(kSmallRules, files);
  return check_layers(tree.root, read_rules(tree.root / "layers.txt"));
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

TEST(Layers, TheTreeKeepsItsLayers) {
  const fs::path root = GPULAB_SOURCE_DIR;
  const LayerRules rules = read_rules(root / "layers.txt");
  const std::vector<std::string> problems = check_layers(root, rules);
  EXPECT_TRUE(problems.empty()) << joined(problems);
  // The engine is in rooms: no source file sits in engine/ itself.
  for (const auto& entry : fs::directory_iterator(root / "engine"))
    EXPECT_FALSE(entry.is_regular_file() && is_source(entry.path())) << entry.path();
}

TEST(Layers, AnIncludeThatRunsUpIsNamedWithItsLine) {
  const auto problems = check_small(
      {{"engine/base/errors.hpp", "// errors\n#pragma once\n#include \"engine/records/run.hpp\"\n"},
       {"engine/records/run.hpp", "#pragma once\n"}});
  ASSERT_EQ(problems.size(), 1u) << joined(problems);
  EXPECT_EQ(problems[0],
            "engine/base/errors.hpp:3: includes \"engine/records/run.hpp\": engine/base may not "
            "include engine/records (layers.txt: arrows run down only)");
}

TEST(Layers, ArrowsDownReachEveryLowerRoom) {
  // labs names only records, and records names base and kernels: labs reaches all three.
  const auto problems = check_small({{"engine/labs/lab.cpp",
                                      "#include \"engine/base/errors.hpp\"\n"
                                      "#include \"kernels/ops.hpp\"\n"
                                      "#include \"engine/records/run.hpp\"\n#include <vector>\n"},
                                     {"engine/base/errors.hpp", ""},
                                     {"engine/records/run.hpp", ""},
                                     {"kernels/ops.hpp", ""}});
  EXPECT_TRUE(problems.empty()) << joined(problems);
}

TEST(Layers, QtInTheEngineAndCudaInTheWindowAreRefused) {
  const auto problems = check_small(
      {{"engine/records/run.cpp", "#include <vector>\n#include <QString>\n"},
       {"ui/window.cpp", "#include <cuda_runtime.h>\n#include \"kernels/cuda/gemm.cuh\"\n"}});
  ASSERT_EQ(problems.size(), 3u) << joined(problems);
  EXPECT_EQ(problems[0].rfind("engine/records/run.cpp:2: includes \"QString\"", 0), 0u)
      << problems[0];
  EXPECT_EQ(problems[1].rfind("ui/window.cpp:1: includes \"cuda_runtime.h\"", 0), 0u)
      << problems[1];
  EXPECT_EQ(problems[2].rfind("ui/window.cpp:2: includes \"kernels/cuda/gemm.cuh\"", 0), 0u)
      << problems[2];
}

TEST(Layers, KernelsIncludingTheEngineIsRefused) {
  const auto problems = check_small({{"kernels/ops.cpp", "#include \"engine/base/errors.hpp\"\n"},
                                     {"engine/base/errors.hpp", ""}});
  ASSERT_EQ(problems.size(), 2u) << joined(problems);  // the forbid line and the arrow
  EXPECT_NE(problems[1].find("kernels may not include engine/base"), std::string::npos);
}

TEST(Layers, AFileInNoRoomIsNamed) {
  const auto problems = check_small({{"engine/loose.cpp", "int x;\n"}});
  ASSERT_EQ(problems.size(), 1u) << joined(problems);
  EXPECT_EQ(problems[0], "engine/loose.cpp:1: is in no room of layers.txt; move it into one");
}

TEST(Layers, ARuleNamingARoomNotAboveItIsReportedWithItsLine) {
  const Tree tree("engine/base: engine/labs\nengine/labs:\n", {});
  try {
    read_rules(tree.root / "layers.txt");
    FAIL() << "an arrow up was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("layers.txt:1: engine/base may include engine/labs"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
