// A runs folder of damaged run records beside good ones: every field of run.json with a wrong
// JSON type, folders and symbolic link loops where files belong, FIFOs, devices, huge counts and
// steps. Shared by the record, CLI and window suites: whatever is in it, the runs are listed or
// skipped with the file named, and nothing hangs.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpulab::test {

// A run.json as gpulab writes it, with every field a record can have.
inline nlohmann::json complete_run_info() {
  return nlohmann::json::parse(R"({
    "format": "gpulab-run/1", "status": "finished", "name": "good", "message": "",
    "created": "2026-11-22T19:08:15Z",
    "model": {"name": "lenet5", "input": [1, 28, 28], "classes": 10,
              "layers": [{"type": "conv2d", "name": "conv1", "out_channels": 6, "kernel": 5,
                          "stride": 1, "padding": 2, "bias": true},
                         {"type": "dropout", "name": "drop1", "p": 0.5},
                         {"type": "linear", "name": "fc1", "out_features": 10, "bias": true}]},
    "config": {"epochs": 1, "max_steps": 0, "batch": 64, "optimizer": "sgd", "lr": 0.05,
               "momentum": 0.9, "weight_decay": 0.0, "schedule": "constant", "gamma": 0.1,
               "seed": 1, "shuffle": true, "eval_every": 0, "target_accuracy": 0.0,
               "device": "cpu", "threads": 2, "precision": "fp32", "cuda_graph": false,
               "replicas": 2, "sync": "allreduce", "bucket_mb": 25.0,
               "collective_timeout_s": 60.0, "dist": "threads", "validation": 0, "ranks": 1},
    "versions": {"gpulab": "1.0", "blas": "openblas", "compiler": "13.2"},
    "process": {"host": "here", "pid": 1},
    "shared_hardware": {"concurrent_with": ["other"], "note": "ran beside"},
    "parameters": 61706,
    "transport": {"reducer": "threads", "reason": "one process"},
    "devices": [{"id": "cpu", "description": "CPU", "name": "x86", "cores": 4, "simd": "avx2",
                 "memory_bytes": 1024, "compute_capability": "9.0", "driver": "550",
                 "cuda_runtime": "12.4", "pci_bus_id": "0000:01:00.0", "rank": 0,
                 "host": "here"}],
    "data": {"dir": "/data", "train_images": 256, "test_images": 64},
    "plan": {"epochs": 1, "steps_per_epoch": 4, "total_steps": 4},
    "telemetry_note": "no GPU telemetry: none",
    "cuda_graphs": "off after capture failed: backward phase: cudaErrorStreamCaptureUnsupported",
    "weights": "/tmp/w.safetensors",
    "reduction": {"reducer": "threads", "replicas": 2, "bucket_mean_ms": [0.5]},
    "outside_load": {"mean_percent": 1.0, "max_percent": 2.0, "mean_cores": 0.1, "cores": 4,
                     "samples": 3, "under_load": false},
    "summary": {"steps": 4, "images": 256, "train_seconds": 1.0, "wall_seconds": 1.5,
                "images_per_second": 256.0, "test_loss": 0.5, "test_accuracy": 0.9,
                "target_accuracy": null, "time_to_target_s": null, "step_to_target": null,
                "diverged": false, "divergence": "",
                "epochs": [{"epoch": 1, "seconds": 1.0, "images_per_second": 256.0,
                            "train_loss": 0.6, "test_loss": 0.5, "test_accuracy": 0.9}]}
  })");
}

inline const char* kGoodMetrics =
    "step,epoch,time_s,loss,accuracy,images_per_second,lr,step_ms,data_ms,copy_ms,forward_ms,"
    "backward_ms,allreduce_ms,optimizer_ms,allreduce_hidden_ms\n"
    "1,1,0.1,2.3,0.1,640,0.05,10,1,0,4,4,0,1,0\n"
    "2,1,0.2,2.1,0.2,640,0.05,10,1,0,4,4,0,1,0\n";

struct DamagedRun {
  std::string folder;  // its name under the runs folder
  std::string file;    // the file its problem must name
  std::string detail;  // more of the message it must carry ("" when only the file)
};

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline void write_run(const std::filesystem::path& dir, const nlohmann::json& info,
                      const std::string& metrics = kGoodMetrics) {
  std::filesystem::create_directories(dir);
  write_text(dir / "run.json", info.dump(2) + "\n");
  write_text(dir / "metrics.csv", metrics);
}

// A value of another JSON type than `value`'s.
inline nlohmann::json wrong_type(const nlohmann::json& value) {
  if (value.is_string()) return 42;
  if (value.is_number()) return "fast";
  if (value.is_boolean()) return "yes";
  if (value.is_object()) return 7;
  if (value.is_array()) return "list";
  return nlohmann::json::object();  // null
}

// Every field's path in `j` ("model.layers[0].type"), containers before what they hold.
inline void field_paths(const nlohmann::json& j, const std::string& prefix,
                        std::vector<nlohmann::json::json_pointer>* pointers,
                        std::vector<std::string>* names, const nlohmann::json::json_pointer& at) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
      pointers->push_back(at / it.key());
      names->push_back(name);
      field_paths(it.value(), name, pointers, names, at / it.key());
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      const std::string name = prefix + "[" + std::to_string(i) + "]";
      pointers->push_back(at / i);
      names->push_back(name);
      field_paths(j[i], name, pointers, names, at / i);
    }
  }
}

// Writes two good runs ("good-a", "good-b") and every damaged one under `root`; returns the
// damaged ones with what their problem must name.
inline std::vector<DamagedRun> write_damaged_runs(const std::filesystem::path& root,
                                                  bool with_fifos = true) {
  namespace fs = std::filesystem;
  std::vector<DamagedRun> damaged;
  nlohmann::json good = complete_run_info();
  good["name"] = "good-a";
  write_run(root / "good-a", good);
  good["name"] = "good-b";
  good["created"] = "2026-11-23T10:00:00Z";
  write_run(root / "good-b", good);

  // Every field of the record, with a wrong type.
  std::vector<nlohmann::json::json_pointer> pointers;
  std::vector<std::string> names;
  field_paths(complete_run_info(), "", &pointers, &names, nlohmann::json::json_pointer());
  for (size_t i = 0; i < pointers.size(); ++i) {
    nlohmann::json info = complete_run_info();
    info[pointers[i]] = wrong_type(info[pointers[i]]);
    const std::string folder = "type-" + std::to_string(i);
    write_run(root / folder, info);
    damaged.push_back({folder, "run.json", "field \"" + names[i] + "\""});
  }
  // Counts no engine allows.
  for (const auto& [pointer, value] :
       std::vector<std::pair<std::string, nlohmann::json>>{{"/config/replicas", 100000000},
                                                           {"/config/ranks", 1e12},
                                                           {"/config/threads", 1e30},
                                                           {"/plan/total_steps", -5}}) {
    nlohmann::json info = complete_run_info();
    info[nlohmann::json::json_pointer(pointer)] = value;
    std::string folder = "count" + pointer;
    for (char& c : folder)
      if (c == '/') c = '-';
    write_run(root / folder, info);
    damaged.push_back({folder, "run.json", ""});
  }
  // Steps and replica indices no run reaches.
  const std::string header =
      std::string(kGoodMetrics).substr(0, std::string(kGoodMetrics).find('\n') + 1);
  write_run(root / "step-huge", complete_run_info(),
            header +
                "1,1,0.1,2.3,0.1,640,0.05,10,1,0,4,4,0,1,0\n"
                "9223372036854775807,1,0.2,2.1,0.2,640,0.05,10,1,0,4,4,0,1,0\n");
  damaged.push_back({"step-huge", "metrics.csv:3", ""});
  write_run(root / "step-1e30", complete_run_info(),
            header + "1e30,1,0.2,2.1,0.2,640,0.05,10,1,0,4,4,0,1,0\n");
  damaged.push_back({"step-1e30", "metrics.csv:2", ""});
  write_run(root / "replica-index-huge", complete_run_info());
  write_text(
      root / "replica-index-huge" / "replicas.csv",
      "step,replica,compute_ms,communication_ms,waiting_ms,hidden_ms\n1,100000000,1,1,1,0\n");
  damaged.push_back({"replica-index-huge", "replicas.csv:2", ""});

  // Folders where files belong.
  for (const char* file :
       {"run.json", "metrics.csv", "replicas.csv", "eval.csv", "telemetry.csv"}) {
    const std::string folder = std::string("folder-as-") + file;
    write_run(root / folder, complete_run_info());
    fs::remove(root / folder / file);
    fs::create_directories(root / folder / file);
    damaged.push_back({folder, file, ""});
  }
  // Symbolic link loops: as run.json, as metrics.csv, as an entry of the runs folder.
  for (const char* file : {"run.json", "metrics.csv"}) {
    const std::string folder = std::string("loop-as-") + file;
    write_run(root / folder, complete_run_info());
    fs::remove(root / folder / file);
    fs::create_symlink(file, root / folder / file);
    damaged.push_back({folder, file, ""});
  }
  fs::create_symlink("loop-entry", root / "loop-entry");
  damaged.push_back({"loop-entry", "loop-entry", ""});
  // /dev/zero as metrics.csv reads for ever.
  write_run(root / "zero-as-metrics.csv", complete_run_info());
  fs::remove(root / "zero-as-metrics.csv" / "metrics.csv");
  fs::create_symlink("/dev/zero", root / "zero-as-metrics.csv" / "metrics.csv");
  damaged.push_back({"zero-as-metrics.csv", "metrics.csv", ""});
  // FIFOs block a reader that opens them.
  if (with_fifos)
    for (const char* file : {"run.json", "metrics.csv"}) {
      const std::string folder = std::string("fifo-as-") + file;
      write_run(root / folder, complete_run_info());
      fs::remove(root / folder / file);
      ::mkfifo((root / folder / file).c_str(), 0600);
      damaged.push_back({folder, file, ""});
    }
  // The window's own files in the runs folder: a folder and a FIFO.
  fs::create_directories(root / ".gpulab-window.json");
  if (with_fifos) ::mkfifo((root / ".gpulab-setup.json").c_str(), 0600);
  // NUL bytes where a crash or a full disk never wrote metrics.csv: it read as a run of no steps.
  write_run(root / "nul-metrics.csv", complete_run_info(), std::string(4096, '\0'));
  damaged.push_back({"nul-metrics.csv", "metrics.csv", "holds NUL bytes where its header belongs"});
  // A file larger than any record (sparse: it takes no disk).
  write_run(root / "huge-metrics.csv", complete_run_info());
  fs::resize_file(root / "huge-metrics.csv" / "metrics.csv", uintmax_t(1) << 40);
  damaged.push_back({"huge-metrics.csv", "metrics.csv", ""});
  return damaged;
}

}  // namespace gpulab::test
