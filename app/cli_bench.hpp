// gpulab-cli bench allreduce: the gradient all-reduce alone, timed per size and replica count
// with nccl-tests' bandwidth definitions, so a scaling lab can predict what it will measure; and
// bench matmul: single-precision matrix products on the CPU and GPUs, with and without copies;
// bench inference: a trained model's forward pass per batch size, with the copies a GPU needs.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace gpulab::cli {

struct BenchFlags {
  std::string device = "cpu";
  std::string replicas = "2,4";
  std::string sizes = "4K,...,64M";
  std::string dist = "none";
  double bucket_mb = 0;  // 0: one bucket per buffer
  double collective_timeout_s = 60;
  std::string json;      // also write the results here
  bool force = false;    // --force: --json may replace a file that is not such a JSON
};

// Adds `bench` with its `allreduce` subcommand to `app`; returns the allreduce subcommand.
CLI::App* add_bench_command(CLI::App& app, BenchFlags& flags);
// Returns the exit code; prints one line on stderr naming what was wrong.
int run_bench_allreduce(const BenchFlags& flags);

struct MatmulFlags {
  std::string sizes = "32,...,2048";
  std::string device = "cpu";  // a comma-separated list: cpu,cuda:0
  std::string format = "table";
};
// Adds `matmul` under the `bench` command add_bench_command made.
CLI::App* add_bench_matmul_command(CLI::App& app, MatmulFlags& flags);
int run_bench_matmul(const MatmulFlags& flags);

struct InferenceFlags {
  std::string weights, model;  // FILE.safetensors; a preset or FILE.json (default: the file's)
  std::string device = "cpu";  // a comma-separated list: cpu,cuda:0
  std::string batch = "1,64,1000";
  std::string format = "text";  // text|csv|json
  int threads = 0;              // CPU threads (0: every core)
  std::string conv = "im2col";  // a GPU's convolutions: im2col|implicit (the CPU has its own)
};
// Adds `inference` under the `bench` command: a trained model's latency and images/s per batch.
CLI::App* add_bench_inference_command(CLI::App& app, InferenceFlags& flags);
int run_bench_inference(const InferenceFlags& flags);

}  // namespace gpulab::cli
