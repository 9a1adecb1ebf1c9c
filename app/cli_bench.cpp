// gpulab-cli bench allreduce, bench matmul and bench inference.
#include "app/cli_bench.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "app/cli_bounds.hpp"
#include "engine/backend/backend.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/files.hpp"
#include "engine/devices/devices.hpp"
#include "engine/devices/matmul_bench.hpp"
#include "engine/inside/inference_timing.hpp"
#include "engine/parallel/allreduce_bench.hpp"
#include "engine/parallel/process_group.hpp"
#include "engine/records/output_paths.hpp"
#include "engine/records/outside_load.hpp"
#include "engine/session/outside_load.hpp"

namespace gpulab::cli {

CLI::App* add_bench_command(CLI::App& app, BenchFlags& f) {
  CLI::App* bench = app.add_subcommand("bench", "measure one part of training on its own");
  bench->require_subcommand(1);
  CLI::App* allreduce = bench->add_subcommand(
      "allreduce",
      "time the gradient all-reduce per size: time, algbw = bytes/time, busbw = algbw*2(n-1)/n");
  allreduce->add_option("--device", f.device, "cpu (replicas on threads of this process)")
      ->capture_default_str();
  allreduce->add_option("--replicas", f.replicas, "replica counts, comma-separated")
      ->capture_default_str();
  allreduce
      ->add_option("--sizes", f.sizes,
                   "buffer sizes, comma-separated (4K, 1M, ...); A,...,B doubles from A to B")
      ->capture_default_str();
  allreduce->add_option("--dist", f.dist, "none|mpi: one replica per process, under mpirun -np N")
      ->capture_default_str();
  allreduce->add_option("--bucket-mb", f.bucket_mb, "reduce in buckets of this many MiB (0: one)")
      ->check(cli::not_negative());
  allreduce
      ->add_option("--collective-timeout", f.collective_timeout_s,
                   "seconds a reduction waits for a replica or rank")
      ->check(cli::positive());
  allreduce->add_option("--json", f.json, "also write the results to FILE.json");
  allreduce->add_flag("--force", f.force,
                      "let --json replace a file that is no all-reduce benchmark JSON of gpulab's");
  return allreduce;
}

int run_bench_allreduce(const BenchFlags& f) {
  // Everything is checked before anything is timed.
  if (f.device != "cpu")
    throw ConfigError("--device: bench allreduce times CPU replicas (cpu); GPU all-reduce "
                      "through NCCL is not built into this benchmark yet");
  if (f.dist != "none" && f.dist != "mpi")
    throw ConfigError("--dist must be none or mpi, not \"" + f.dist + "\"");
  const std::vector<size_t> sizes = parse_byte_sizes(f.sizes);
  const std::vector<int> replicas = f.dist == "mpi" ? std::vector<int>{} : parse_replica_counts(f.replicas);
  AllreduceBenchOptions options;
  options.bucket_bytes = f.bucket_mb * 1024 * 1024;
  options.timeout_s = f.collective_timeout_s;
  if (!f.json.empty()) check_output_file(f.json, "--json", allreduce_json_kind(), f.force);

  std::vector<AllreduceTiming> rows;
  std::string reducer = "threads";
  bool print = true;
  if (f.dist == "mpi") {
    if (const std::string why = mpi_unavailable_reason(); !why.empty()) throw ConfigError(why);
    MpiEnvironment mpi;
    const std::shared_ptr<ProcessGroup> world = mpi_world(options.timeout_s);
    reducer = "mpi";
    print = world->rank() == 0;
    if (print)
      std::printf("all-reduce over %d MPI processes (%s), one replica each\n", world->size(),
                  world->host().c_str());
    for (size_t bytes : sizes) {
      rows.push_back(time_mpi_allreduce(world, bytes, options));
      const std::string table = format_allreduce_table({rows.back()});
      if (print)
        std::printf("%s", rows.size() == 1 ? table.c_str() : table.substr(table.find('\n') + 1).c_str());
      std::fflush(stdout);
    }
  } else {
    std::printf("all-reduce of replicas on threads of this process (the reducer --replicas R uses)\n");
    bool header = true;
    for (int r : replicas)
      for (size_t bytes : sizes) {
        rows.push_back(time_thread_allreduce(r, bytes, options));
        const std::string table = format_allreduce_table({rows.back()});
        std::printf("%s", header ? table.c_str() : table.substr(table.find('\n') + 1).c_str());
        std::fflush(stdout);
        header = false;
      }
  }
  if (print && !f.json.empty()) {
    write_file_atomically(f.json, allreduce_json(rows, f.device, reducer));
  }
  return 0;
}

CLI::App* add_bench_matmul_command(CLI::App& app, MatmulFlags& f) {
  CLI::App* matmul = app.get_subcommand("bench")->add_subcommand(
      "matmul",
      "time single-precision n x n matrix products (OpenBLAS, cuBLAS), with and without the "
      "copies to the GPU and back");
  matmul
      ->add_option("--sizes", f.sizes, "matrix sizes, comma-separated; A,...,B doubles from A to B")
      ->capture_default_str();
  matmul->add_option("--device", f.device, "devices, comma-separated: cpu,cuda:0")
      ->capture_default_str();
  matmul->add_option("--format", f.format, "csv|table")
      ->check(CLI::IsMember({"csv", "table"}))
      ->capture_default_str();
  return matmul;
}

int run_bench_matmul(const MatmulFlags& f) {
  // Everything is checked before anything is timed.
  const std::vector<int> sizes = parse_matrix_sizes(f.sizes);
  std::vector<std::string> devices;
  std::stringstream in(f.device);
  for (std::string device; std::getline(in, device, ',');) {
    if (cuda_device_index(device) >= 0) require_gpu(device);
    devices.push_back(device);
  }
  if (devices.empty()) throw ConfigError("--device: give cpu, cuda:0 or both (cpu,cuda:0)");
  const bool csv = f.format == "csv";
  // Timings beside other programs' work are not this machine's: said before (on stderr, so a
  // CSV stays a table) and marked after, as a lab's benchmark rows are.
  if (const std::string busy = busy_machine_notice(outside_load_now()); !busy.empty())
    std::fprintf(stderr, "%s\n", busy.c_str());
  OutsideLoadMeter meter;
  if (csv)
    std::printf("device,size,ms,ms_with_copies,gflops,gflops_with_copies\n");
  else
    std::printf("%-8s %6s %12s %16s %10s %20s\n", "device", "size", "ms", "ms with copies",
                "GFLOP/s", "GFLOP/s with copies");
  for (const auto& device : devices)
    for (int n : sizes) {
      const MatmulTiming t = bench_matmul(device, {n}).front();
      const double gflops = matmul_gflops(n, t.ms),
                   gflops_copies = matmul_gflops(n, t.ms_with_copies);
      std::printf(csv ? "%s,%d,%.4f,%.4f,%.2f,%.2f\n" : "%-8s %6d %12.4f %16.4f %10.2f %20.2f\n",
                  device.c_str(), n, t.ms, t.ms_with_copies, gflops, gflops_copies);
      std::fflush(stdout);
    }
  if (const std::string caveat = outside_load_caveat(meter.measure()); !caveat.empty())
    std::fprintf(csv ? stderr : stdout, "⚠ %s\n", caveat.c_str());
  return 0;
}

CLI::App* add_bench_inference_command(CLI::App& app, InferenceFlags& f) {
  CLI::App* inference = app.get_subcommand("bench")->add_subcommand(
      "inference",
      "time a trained model's inference per batch size: latency per batch and per image, "
      "images/s (on a GPU with the copies of the images there and the logits back)");
  inference->add_option("--weights", f.weights, "FILE.safetensors")
      ->required()
      ->check(CLI::ExistingFile);
  inference->add_option("--model", f.model,
                        "preset or FILE.json (default: the config in the file)");
  inference->add_option("--device", f.device, "devices, comma-separated: cpu,cuda:0")
      ->capture_default_str();
  inference->add_option("--batch", f.batch, "batch sizes, comma-separated")->capture_default_str();
  inference->add_option("--threads", f.threads, "CPU threads (0: all cores)")
      ->check(cli::not_negative());
  inference->add_option("--format", f.format, "text|csv|json")
      ->check(CLI::IsMember({"text", "csv", "json"}))
      ->capture_default_str();
  inference->add_option("--conv", f.conv,
                        "im2col|implicit: how a GPU computes convolutions (the CPU in the list "
                        "uses its own kernels)")
      ->capture_default_str();
  return inference;
}

int run_bench_inference(const InferenceFlags& f) {
  // Everything is checked before anything is timed.
  const std::vector<int> batches = parse_inference_batches(f.batch);
  const std::vector<std::string> devices = parse_inference_devices(f.device);
  const ConvAlgorithm conv = parse_conv(f.conv);
  if (conv != ConvAlgorithm::Im2col &&
      std::none_of(devices.begin(), devices.end(), [](const std::string& d) { return d != "cpu"; }))
    throw ConfigError("--conv " + f.conv +
                      ": chooses how a GPU computes its convolutions, and --device names none; "
                      "the CPU has its own kernels (use --device cuda:0, or cpu,cuda:0)");
  const ModelWeights model = load_model_weights(f.weights, f.model);
  check_inference_memory(model, batches);
  if (f.format == "text")
    std::printf(
        "inference of %s (%lld parameters, fp32%s), the median of repeats\n%-8s %6s %14s "
        "%14s %12s\n",
        model.config.name.c_str(), static_cast<long long>(model.plan.parameter_count),
        conv == ConvAlgorithm::Implicit ? "; a GPU's convolutions by implicit GEMM" : "",
        "device", "batch", "ms per batch", "ms per image", "images/s");
  else if (f.format == "csv")
    std::printf("device,batch,ms_per_batch,ms_per_image,images_per_second,conv\n");
  nlohmann::json rows = nlohmann::json::array();
  for (const std::string& device : devices)
    for (const InferenceTiming& t :
         time_inference(model, device, batches, f.threads,
                        device == "cpu" ? ConvAlgorithm::Im2col : conv)) {
      if (f.format == "json") {
        rows.push_back({{"device", t.device},
                        {"batch", t.batch},
                        {"ms_per_batch", t.batch_ms},
                        {"ms_per_image", t.ms_per_image()},
                        {"images_per_second", t.images_per_second()}});
        if (!t.conv.empty()) rows.back()["conv"] = t.conv;
      } else if (f.format == "csv") {
        std::printf("%s,%d,%.4f,%.5f,%.1f,%s\n", t.device.c_str(), t.batch, t.batch_ms,
                    t.ms_per_image(), t.images_per_second(), t.conv.c_str());
      } else {
        std::printf("%-8s %6d %14.4f %14.5f %12.1f\n", t.device.c_str(), t.batch, t.batch_ms,
                    t.ms_per_image(), t.images_per_second());
      }
      std::fflush(stdout);
    }
  if (f.format == "json")
    std::printf("%s\n",
                nlohmann::json{{"model", model.config.name}, {"timings", rows}}.dump(2).c_str());
  return 0;
}

}  // namespace gpulab::cli
