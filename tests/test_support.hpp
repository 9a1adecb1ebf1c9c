// Shared by the engine tests: tiny synthetic image sets, MNIST-format folders, temp folders,
// running a command line.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "datasets/mnist.hpp"
#include "temp_dir.hpp"

namespace gpulab::test {

// Noise plus a bright square whose place depends on the label: learnable in a few steps.
inline data::ImageSet synthetic_set(int count, uint32_t seed) {
  data::ImageSet set;
  set.count = count;
  set.rows = set.cols = 28;
  set.pixels.resize(size_t(count) * 784);
  set.labels.resize(count);
  std::mt19937 rng(seed);
  for (int i = 0; i < count; ++i) {
    const int label = int(rng() % 10);
    set.labels[i] = uint8_t(label);
    uint8_t* image = set.pixels.data() + size_t(i) * 784;
    for (int p = 0; p < 784; ++p) image[p] = uint8_t(rng() % 60);
    const int row = 3 + (label / 5) * 12, col = 2 + (label % 5) * 5;
    for (int r = row; r < row + 6; ++r)
      for (int c = col; c < col + 6; ++c) image[r * 28 + c] = 220;
  }
  return set;
}

inline void write_idx(const std::filesystem::path& path, const std::vector<uint8_t>& bytes,
                      std::vector<uint32_t> dims) {
  std::ofstream out(path, std::ios::binary);
  const unsigned char magic[4] = {0, 0, 0x08, static_cast<unsigned char>(dims.size())};
  out.write(reinterpret_cast<const char*>(magic), 4);
  for (uint32_t d : dims) {
    const unsigned char be[4] = {uint8_t(d >> 24), uint8_t(d >> 16), uint8_t(d >> 8), uint8_t(d)};
    out.write(reinterpret_cast<const char*>(be), 4);
  }
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// Writes the four MNIST files for the given sets into dir.
inline void write_mnist(const std::filesystem::path& dir, const data::ImageSet& train,
                        const data::ImageSet& test) {
  std::filesystem::create_directories(dir);
  for (auto [prefix, set] : {std::pair{"train", &train}, std::pair{"t10k", &test}}) {
    write_idx(dir / (std::string(prefix) + "-images-idx3-ubyte"), set->pixels,
              {uint32_t(set->count), 28, 28});
    write_idx(dir / (std::string(prefix) + "-labels-idx1-ubyte"), set->labels, {uint32_t(set->count)});
  }
}

inline std::filesystem::path golden_dir() {
  return std::filesystem::path(GPULAB_TEST_DATA_DIR) / "golden";
}

// ||a - b|| / ||b||: how far weights trained one way are from weights trained another.
inline double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

struct CliResult {
  int exit_code = -1;
  std::string output;      // stdout and stderr together
  bool timed_out = false;  // run_command_for stopped it
};

// Runs a shell command line as a user would, and keeps what it printed.
inline CliResult run_command(const std::string& command) {
  CliResult result;
  std::FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe))
    result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// The same under a time limit: a program still running after `seconds` is sent SIGTERM, and
// SIGKILL 10 s later (coreutils timeout), so a hang fails its test instead of holding CI; its exit
// code is then 124. `command` is one program and its arguments (wrap a shell line in sh -c '...').
inline CliResult run_command(const std::string& command, int seconds) {
  return run_command("timeout --kill-after=10 " + std::to_string(seconds) + " " + command);
}

// run_command under a limit that also says whether it was hit (mpirun and everything it started,
// say): a hang then fails its test saying so, well before the suite's limit stops the whole test
// program with nothing said.
inline CliResult run_command_for(const std::string& command, int seconds) {
  CliResult result = run_command(command, seconds);
  result.timed_out = result.exit_code == 124 || result.exit_code == 128 + 9;
  return result;
}

// Other programs keeping the CPU busy while it lives: `count` child processes that spin until
// they are killed (outside load, as a run's or a benchmark's sampler sees it).
class OtherProgramsSpinning {
 public:
  explicit OtherProgramsSpinning(int count) {
    for (int i = 0; i < count; ++i) {
      const pid_t child = fork();
      if (child == 0)
        for (volatile unsigned long spin = 0;;) spin = spin + 1;
      if (child > 0) children_.push_back(child);
    }
  }
  ~OtherProgramsSpinning() {
    for (pid_t child : children_) {
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
    }
  }
  OtherProgramsSpinning(const OtherProgramsSpinning&) = delete;
  OtherProgramsSpinning& operator=(const OtherProgramsSpinning&) = delete;
  size_t count() const { return children_.size(); }

 private:
  std::vector<pid_t> children_;
};

}  // namespace gpulab::test
