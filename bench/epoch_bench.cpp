// Times whole training epochs of gpulab on MNIST (the data set uploaded to the device once, as
// the app trains) through the app's own training loop, and prints one JSON line for
// bench/gpu_vs_pytorch: the last epoch's seconds and images/s (the first epochs are warm-up:
// CUDA graph capture, cuBLAS set-up), and the median step time.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "app/blas_select.hpp"
#include "datasets/mnist.hpp"
#include "engine/backend/backend.hpp"
#include "engine/model/init.hpp"
#include "engine/model/model_config.hpp"
#include "engine/training/backend_factory.hpp"
#include "engine/training/trainer.hpp"

namespace {

struct StepTimer : gpulab::TrainObserver {
  int epoch = 0;
  std::vector<double> step_ms;  // of the last epoch seen
  void on_step(const gpulab::StepMetrics& m) override {
    if (m.epoch != epoch) step_ms.clear();
    epoch = m.epoch;
    step_ms.push_back(m.step_ms);
  }
};

}  // namespace

int main(int argc, char** argv) {
  gpulab::select_blas_kernels(argc, argv);
  using namespace gpulab;
  CLI::App app{"time gpulab training epochs on MNIST"};
  std::string model = "pytorch-example", device = "cuda:0", precision = "fp32", graph = "on";
  std::string conv = "im2col";
  std::string data_dir;
  int batch = 64, epochs = 2;
  app.add_option("--model", model);
  app.add_option("--device", device);
  app.add_option("--precision", precision);
  app.add_option("--cuda-graph", graph);
  app.add_option("--conv", conv, "im2col|implicit: how the GPU computes convolutions");
  app.add_option("--batch", batch);
  app.add_option("--epochs", epochs, "the last one is timed");
  app.add_option("--data-dir", data_dir);
  CLI11_PARSE(app, argc, argv);

  try {
    const data::MnistData mnist = data::load_mnist(data::default_data_dir(
        data_dir.empty() ? std::nullopt : std::optional<std::filesystem::path>(data_dir)));
    const ModelPlan plan = plan_model(load_model(model));
    TrainOptions options;
    options.batch = batch;
    options.epochs = epochs;
    options.seed = 1;
    options.eval_at_epoch_end = false;
    BackendOptions backend_options;
    backend_options.device = device;
    backend_options.batch = batch;
    backend_options.seed = 1;
    backend_options.precision = parse_precision(precision);
    backend_options.cuda_graph = graph == "on";
    backend_options.conv = parse_conv(conv);
    const DataSets sets{&mnist.train, nullptr, &mnist.test};
    auto backend = make_backend(plan, options.optimizer, sets, backend_options);
    std::vector<float> params(plan.parameter_count);
    init_parameters(params, plan, options.seed);
    backend->set_parameters(params);
    StepTimer timer;
    RunControl control;
    const RunSummary summary = train(*backend, sets, options, timer, control);
    if (summary.status != RunStatus::Finished || summary.epochs.empty()) {
      std::fprintf(stderr, "gpulab-bench-epoch: %s\n", summary.message.c_str());
      return 1;
    }
    const EpochSummary& last = summary.epochs.back();
    std::vector<double> sorted = timer.step_ms;
    std::sort(sorted.begin(), sorted.end());
    std::printf(
        "{\"framework\": \"gpulab\", \"device\": \"%s\", \"model\": \"%s\", \"batch\": %d, "
        "\"precision\": \"%s\", \"cuda_graph\": \"%s\", \"conv\": \"%s\", \"epoch_s\": %.4f, "
        "\"images_per_second\": %.1f, \"median_step_ms\": %.4f, \"train_loss\": %.4f}\n",
        backend->description().c_str(), model.c_str(), batch, precision.c_str(), graph.c_str(),
        conv.c_str(), last.seconds, last.images_per_second, sorted[sorted.size() / 2],
        last.train_loss);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpulab-bench-epoch: %s\n", e.what());
    return 1;
  }
  return 0;
}
