// A reference run made by the test: a real CPU run of a few steps on synthetic images, its
// run.json then edited to claim a GPU and a day, named as a lab's experiment, as a run recorded on
// a GPU and shipped under resources/reference-runs would be.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/base/files.hpp"
#include "engine/model/model_config.hpp"
#include "engine/session/session.hpp"
#include "test_support.hpp"

namespace gpulab::test {

// The run folder `dir`, named `name` ("lenet5 gpu · cnn-on-gpu"), recorded (it says) on `gpu`
// ("" leaves the CPU it ran on) at `created`.
inline std::filesystem::path write_reference_run(
    const std::filesystem::path& dir, const std::string& name,
    const std::string& gpu = "NVIDIA H200 (fixture)",
    const std::string& created = "2026-11-20T09:30:00Z") {
  const data::MnistData mnist{synthetic_set(64, 1), synthetic_set(32, 2), dir.parent_path()};
  RunRequest request;
  request.name = name;
  request.model = preset("mlp");
  request.train.batch = 16;
  request.train.epochs = 1;
  request.backend.threads = 1;
  request.out_dir = dir;
  RunObserver observer;
  RunControl control;
  execute_run(request, observer, control, &mnist);
  std::ifstream in(dir / "run.json");
  nlohmann::json info = nlohmann::json::parse(in);
  in.close();
  if (!gpu.empty()) {
    info["config"]["device"] = "cuda:0";
    info["devices"] = {{{"id", "cuda:0"},
                        {"name", gpu},
                        {"driver", "570.86"},
                        {"cuda_runtime", "12.8"},
                        {"memory_bytes", int64_t(150) << 30}}};
  }
  info["created"] = created;
  write_file_atomically(dir / "run.json", info.dump(2) + "\n");
  return dir;
}

// Sets an environment variable for a test's scope, and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace gpulab::test
