// Times gpulab's training step (gather, forward, backward, optimizer) for one model and batch
// size, and prints the per-step times as JSON for bench/cpu_vs_pytorch to compare.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/blas_select.hpp"
#include "engine/backend/backend.hpp"
#include "engine/model/init.hpp"
#include "engine/model/model_config.hpp"
#include "engine/training/backend_factory.hpp"
#include "kernels/cpu/ops.hpp"

int main(int argc, char** argv) {
  gpulab::select_blas_kernels(argc, argv);
  using namespace gpulab;
  CLI::App app{"time gpulab training steps"};
  std::string model = "pytorch-example", device = "cpu", optimizer = "adam";
  int batch = 64, threads = 2, warmup = 10, steps = 60;
  app.add_option("--model", model);
  app.add_option("--device", device);
  app.add_option("--optimizer", optimizer);
  app.add_option("--batch", batch);
  app.add_option("--threads", threads);
  app.add_option("--warmup", warmup);
  app.add_option("--steps", steps);
  CLI11_PARSE(app, argc, argv);

  const ModelConfig config = load_model(model);
  const ModelPlan plan = plan_model(config);
  // Random pixels: the step's cost does not depend on them.
  data::ImageSet train;
  train.count = batch * 16;
  train.rows = train.cols = 28;
  train.pixels.resize(size_t(train.count) * 784);
  train.labels.resize(train.count);
  SplitMix64 rng(1);
  for (auto& p : train.pixels) p = uint8_t(rng.next());
  for (auto& l : train.labels) l = uint8_t(rng.next() % 10);
  OptimizerConfig optim;
  optim.kind = parse_optimizer(optimizer);
  BackendOptions options;
  options.device = device;
  options.threads = threads;
  options.batch = batch;
  const DataSets sets{&train, nullptr, nullptr};
  auto backend = make_backend(plan, optim, sets, options);
  std::vector<float> params(plan.parameter_count);
  init_parameters(params, plan, 1);
  backend->set_parameters(params);

  std::vector<int32_t> order(train.count);
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> step_ms;
  StepTimes times;
  for (int s = 0; s < warmup + steps; ++s) {
    const auto indices = std::span<const int32_t>(order).subspan(size_t(s % 16) * batch, batch);
    const auto start = std::chrono::steady_clock::now();
    backend->train_step(indices, optim.lr, s + 1, times);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (s >= warmup) step_ms.push_back(ms);
  }
  std::vector<double> sorted = step_ms;
  std::sort(sorted.begin(), sorted.end());
  // The kernel set decides the GEMM speed, so every result names it.
  std::printf(
      "{\"framework\": \"gpulab\", \"blas_kernels\": \"%s\", \"device\": \"%s\", "
      "\"model\": \"%s\", \"batch\": %d, "
      "\"threads\": %d, \"steps\": %d, \"median_ms\": %.4f, \"p10_ms\": %.4f, "
      "\"p90_ms\": %.4f, \"forward_ms\": %.4f, \"backward_ms\": %.4f, \"optimizer_ms\": %.4f}\n",
      kernels::cpu::blas_kernels(), backend->description().c_str(), model.c_str(), batch, threads,
      steps, sorted[sorted.size() / 2], sorted[sorted.size() / 10], sorted[sorted.size() * 9 / 10],
      times.forward_ms, times.backward_ms, times.optimizer_ms);
  return 0;
}
