// One run from request to record.
#include "engine/session/session.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "datasets/augment.hpp"
#include "datasets/idx.hpp"
#include "datasets/mnist_files.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/text.hpp"
#include "engine/devices/devices.hpp"
#include "engine/model/checkpoint.hpp"
#include "engine/model/init.hpp"
#include "engine/parallel/gpu_ranks.hpp"
#include "engine/parallel/gradient_reducer.hpp"
#include "engine/parallel/process_group.hpp"
#include "engine/parallel/replicated_backend.hpp"
#include "engine/records/output_paths.hpp"
#include "engine/records/run_names.hpp"
#include "engine/records/run_record.hpp"
#include "engine/telemetry/energy.hpp"
#include "engine/telemetry/nvml.hpp"
#include "engine/telemetry/telemetry.hpp"
#include "engine/training/backend_factory.hpp"
#include "engine/training/experiment.hpp"
#include "gpulab/build_config.hpp"

namespace gpulab {
using json = nlohmann::json;

namespace {

// Passes every event to the run record first, then to the outside observer, and keeps the
// summary so far: a backend error ends train() with a throw, and the record keeps what was
// measured up to it.
class Fanout final : public TrainObserver {
 public:
  Fanout(TrainObserver& recorder, RunObserver& observer)
      : recorder_(recorder), observer_(observer) {}
  void on_step(const StepMetrics& m) override {
    recorder_.on_step(m);
    observer_.on_step(m);
    so_far_.steps = m.step;
    so_far_.images += std::llround(m.images_per_second * m.step_ms / 1000.0);
    so_far_.wall_seconds = m.time_s;
    so_far_.train_seconds = m.time_s - eval_seconds_;
  }
  void on_eval(const EvalMetrics& e) override {
    recorder_.on_eval(e);
    observer_.on_eval(e);
    so_far_.test_loss = e.loss;
    so_far_.test_accuracy = e.accuracy;
    if (std::isfinite(e.train_s)) eval_seconds_ = e.time_s - e.train_s;
  }
  void on_epoch(const EpochSummary& e) override {
    recorder_.on_epoch(e);
    observer_.on_epoch(e);
    so_far_.epochs.push_back(e);
  }
  void on_lr_change(const LrChange& change) override {
    recorder_.on_lr_change(change);
    observer_.on_lr_change(change);
  }
  const RunSummary& so_far() const { return so_far_; }

 private:
  TrainObserver& recorder_;
  RunObserver& observer_;
  RunSummary so_far_;
  double eval_seconds_ = 0;  // evaluations so far, off the training clock
};

json run_config_json(const RunRequest& request) {
  json config = train_config_to_json(request.train, request.backend);
  config["validation"] = request.validation;
  return config;
}

// What a run measures besides its steps: its processes on this machine's CPU (this one and
// `peers`), every GPU the run uses through NVML when it is there (its absence only costs the GPU
// rows of telemetry.csv), and the energy of the run's devices.
struct RunTelemetry {
  std::vector<std::unique_ptr<TelemetrySource>> sources;
  std::unique_ptr<EnergyMeter> energy;
};

RunTelemetry run_telemetry(const std::vector<GpuInfo>& gpus, std::vector<int> peers,
                           std::string* nvml_problem) {
  RunTelemetry t;
  t.sources.push_back(std::make_unique<CpuTelemetry>(std::move(peers)));
  std::vector<std::string> compute;
  std::map<std::string, std::unique_ptr<EnergyCounter>> counters;
  std::map<std::string, std::string> missing;
  std::string why;
  if (auto rapl = rapl_counter("/sys/class/powercap", &why))
    counters["cpu"] = std::move(rapl);
  else
    missing["cpu"] = why;
  if (gpus.empty()) compute.push_back("cpu");
  for (const GpuInfo& gpu : gpus)
    if (const std::string label = "cuda:" + std::to_string(gpu.index);
        std::find(compute.begin(), compute.end(), label) == compute.end())
      compute.push_back(label);
  if (!gpus.empty())
    if (const std::shared_ptr<Nvml> nvml = Nvml::load(nvml_problem))
      if (auto gpu = gpu_telemetry(nvml, gpus, nvml_problem)) {
        for (const GpuTelemetry::Watched& watched : gpu->watched())
          if (auto counter = nvml_energy_counter(nvml, watched.device, &why))
            counters[watched.label] = std::move(counter);
          else
            missing[watched.label] = why;
        t.sources.push_back(std::move(gpu));
      }
  for (const std::string& device : compute)
    if (!counters.count(device) && !missing.count(device))
      missing[device] = "no GPU telemetry: " + *nvml_problem;
  t.energy = std::make_unique<EnergyMeter>(compute, std::move(counters), std::move(missing));
  return t;
}

std::string gib_text(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(int64_t(1) << 30));
  return text;
}

// Before anything is allocated: a model whose training cannot fit in the memory free now is
// refused with what it needs (a convolution of 100,000 channels ended in std::bad_alloc after
// 14 s, or in the kernel's out-of-memory killer).
void check_host_memory(const RunRequest& request, const ModelPlan& plan) {
  const int64_t available = available_memory_bytes();
  const int64_t needed =
      training_memory_bytes(plan, request.train.batch, std::max(1, request.backend.replicas));
  if (available <= 0 || needed <= available) return;
  throw ConfigError("model \"" + request.model.name + "\" needs at least " + gib_text(needed) +
                    " to train on a batch of " + std::to_string(request.train.batch) +
                    ", and this machine has " + gib_text(available) +
                    " free; use fewer channels or features, or a smaller --batch");
}

}  // namespace

std::string run_label(const RunRequest& request) {
  std::string device = request.backend.device;
  for (char& c : device)
    if (c == ':') c = '-';
  return request.model.name + "_" + device;
}

std::string auto_run_name(const RunRequest& request, int ranks) {
  json info = {{"model", model_to_json(request.model)}, {"config", run_config_json(request)}};
  if (ranks > 1) info["config"]["ranks"] = ranks;
  if (request.backend.device == "cpu")
    info["devices"] = json::array({{{"id", "cpu"}, {"cores", cpu_info().logical_cores}}});
  return auto_run_name(info);
}

void check_outputs(const RunRequest& request, const std::vector<std::filesystem::path>& inputs) {
  check_new_run_folder(request.out_dir, "--out", request.force_outputs);
  if (!request.save_weights) return;
  // The MNIST files the run reads are inputs too: weights saved over one broke every later run.
  std::vector<std::filesystem::path> read = inputs;
  if (request.init_weights) read.push_back(*request.init_weights);  // replaced while it is read
  std::optional<std::filesystem::path> data_dir;
  try {
    data_dir = data::default_data_dir(request.data_dir);
  } catch (const data::DataError&) {  // no data folder at all: reported when the data is read
  }
  if (data_dir)
    for (const data::MnistFile& file : data::mnist_files())
      for (const char* ending : {"", ".gz"})
        read.push_back(*data_dir / (file.name + std::string(ending)));
  check_output_file(*request.save_weights, "--save", checkpoint_kind(), request.force_outputs, read,
                    request.out_dir);
}

RunSummary execute_run(const RunRequest& request, RunObserver& observer, RunControl& control,
                       const data::MnistData* preloaded) {
  // In an MPI job only rank 0 keeps the record; the other ranks train beside it.
  std::shared_ptr<ProcessGroup> group;
  if (request.backend.dist == Distribution::Mpi)
    group = mpi_world(request.backend.collective_timeout_s);
  const bool records = !group || group->rank() == 0;
  // run.json holds UTF-8 only: a name that is not, from any front end, would leave a record no
  // reader loads (dumping it throws), so it is refused before the folder is made.
  for (const auto& [label, name] : {std::pair{"the run's name", &request.name},
                                    std::pair{"the model's name", &request.model.name}})
    if (const std::string problem = name_problem(*name); !problem.empty())
      throw ConfigError(std::string(label) + " " + problem);
  if (records) check_outputs(request);
  std::filesystem::path dir;
  if (records)
    dir = request.out_dir.empty() ? new_run_dir(default_runs_dir(), run_label(request))
                                  : request.out_dir;
  const CpuInfo cpu = cpu_info();
  json info = {
      {"created", iso_time_now()},
      {"model", model_to_json(request.model)},
      {"config", run_config_json(request)},
      {"versions", {{"gpulab", GPULAB_VERSION}, {"blas", cpu.blas}, {"compiler", __VERSION__}}}};
  if (group) info["config"]["ranks"] = group->size();
  // Only rank 0 would hear of a new learning rate, and the ranks must take the same one at the
  // same step: an MPI job keeps the one it started with.
  if (group && group->size() > 1)
    control.lr_fixed_because =
        "the learning rate of an MPI job cannot change while it trains (its ranks would have to "
        "take rank 0's new value at the same step); start a new run with --lr";
  info["name"] =
      request.name.empty() ? auto_run_name(request, group ? group->size() : 1) : request.name;
  if (!request.concurrent_with.empty())
    info["shared_hardware"] = {
        {"concurrent_with", request.concurrent_with},
        {"note", "ran at the same time as other runs on the same hardware: its times include "
                 "their load"}};
  if (!request.not_for_comparison.empty())
    info["not_for_comparison"] = request.not_for_comparison;
  std::optional<RunRecorder> record;
  if (records) record.emplace(dir, info);  // throws only when the folder cannot be made
  // A cancel that cannot wait for the step to end records through this while the record is open.
  struct RecordCancelHook {
    RunControl& control;
    ~RecordCancelHook() { control.set_record_cancel(nullptr); }
  } hook{control};
  if (record)
    control.set_record_cancel(
        [&record](const std::string& message) { return record->end_cancelled_now(message); });
  TrainObserver no_record;
  TrainObserver& recorder_observer = record ? static_cast<TrainObserver&>(*record) : no_record;
  auto update_info = [&](const json& fields) {
    if (record) record->update_info(fields);
  };

  RunSummary summary;
  Fanout fanout(recorder_observer, observer);
  std::unique_ptr<EnergyMeter> energy;  // outlives the sampler, which feeds it until stopped
  std::optional<TelemetrySampler> sampler;
  try {
    validate(request.train);
    const ModelPlan plan = plan_model(request.model);
    update_info({{"parameters", plan.parameter_count}});
    if (request.backend.device == "cpu") check_host_memory(request, plan);

    data::MnistData loaded;
    if (!preloaded) loaded = data::load_mnist(data::default_data_dir(request.data_dir));
    const data::MnistData& mnist = preloaded ? *preloaded : loaded;
    data::ImageSet train_set = mnist.train;
    data::ImageSet validation_set;
    training_images_left(train_set.count, request.validation);
    if (request.validation > 0) validation_set = data::split_off(train_set, request.validation);
    // --preprocess once: the training images augmented before the run, as a copy of the data set
    // made offline would be; its time is no step's.
    if (request.backend.preprocess == Preprocess::Once)
      data::augment_set(train_set, request.train.seed);
    DataSets data{&train_set, request.validation > 0 ? &validation_set : nullptr, &mnist.test};

    std::vector<float> params(plan.parameter_count);
    init_parameters(params, plan, request.train.seed);
    if (request.init_weights) {
      apply_checkpoint(load_checkpoint(*request.init_weights), plan, params,
                       request.init_weights->string());
    }
    BackendOptions backend_options = request.backend;
    backend_options.batch = request.train.batch;
    backend_options.seed = request.train.seed;
    // Each GPU rank of an MPI job takes its own GPU where --device leaves the choice to it.
    if (group && cuda_device_index(request.backend.device) >= 0)
      backend_options.device = rank_device(request.backend.device, job_local_rank(*group),
                                           int(list_devices().gpus.size()));
    std::unique_ptr<Backend> backend = make_backend(plan, request.train.optimizer, data, backend_options);
    backend->set_parameters(params);

    json device = {{"id", backend_options.device}, {"description", backend->description()}};
    std::optional<GpuInfo> gpu;
    std::vector<GpuInfo> gpus;  // one per replica
    std::vector<int> peers;     // the other ranks' processes on this machine
    json devices = json::array();
    if (request.backend.device == "cpu") {
      device.update({{"name", cpu.model}, {"cores", cpu.logical_cores}, {"simd", cpu.simd}});
      devices.push_back(device);
    } else {
      gpus = require_gpus(backend_options.device);  // under MPI, this rank's GPU
      gpu = gpus.front();
      // Every GPU the run uses, once; the first also carries the run's device and description.
      std::vector<int> listed;
      for (const GpuInfo& g : gpus) {
        if (std::find(listed.begin(), listed.end(), g.index) != listed.end()) continue;
        listed.push_back(g.index);
        json entry = listed.size() == 1 ? device : json{{"id", "cuda:" + std::to_string(g.index)}};
        entry.update(gpu_info_json(g));
        devices.push_back(entry);
      }
      device = devices.front();
    }
    if (group) {
      // Every rank's own host and device (a multi-node run names every node and GPU), gathered
      // on every rank (a collective: all ranks call it).
      device["rank"] = group->rank();
      device["host"] = group->host();
      device["description"] = "MPI rank " + std::to_string(group->rank()) + " of " +
                              std::to_string(group->size()) + ": " + backend->description();
      devices = json::array();
      for (const std::string& entry : group->all_gather(device.dump(), "the exchange of devices"))
        devices.push_back(json::parse(entry));
      // The ranks on this machine are the run too, not outside load on its CPU.
      const std::vector<std::string> processes = group->all_gather(
          group->host() + " " + std::to_string(getpid()), "the exchange of process ids");
      for (int r = 0; r < int(processes.size()); ++r) {
        const size_t space = processes[r].rfind(' ');
        if (r != group->rank() && processes[r].substr(0, space) == group->host())
          peers.push_back(std::stoi(processes[r].substr(space + 1)));
      }
    }
    if (auto* replicated = dynamic_cast<ReplicatedBackend*>(backend.get());
        replicated && !replicated->reducer().transport_reason().empty())
      update_info({{"transport",
                    {{"reducer", replicated->reducer().name()},
                     {"reason", replicated->reducer().transport_reason()}}}});
    // How the run uses CUDA graphs, said again after training: a refused capture turns them off.
    if (const std::string graphs = backend->cuda_graphs(); !graphs.empty())
      update_info({{"cuda_graphs", graphs}});
    update_info({{"devices", devices},
                 {"data",
                  {{"dir", mnist.dir.string()},
                   {"train_images", train_set.count},
                   {"test_images", mnist.test.count}}}});

    const StepPlan steps = plan_steps(request.train, train_set.count);
    update_info({{"plan",
                  {{"epochs", steps.epochs},
                   {"steps_per_epoch", steps.steps_per_epoch},
                   {"total_steps", steps.total_steps}}}});
    observer.on_start(dir, backend->description(), steps);

    std::string nvml_problem;
    RunTelemetry telemetry = run_telemetry(gpus, std::move(peers), &nvml_problem);
    if (!nvml_problem.empty())
      update_info({{"telemetry_note", "no GPU telemetry: " + nvml_problem}});
    energy = std::move(telemetry.energy);
    sampler.emplace(std::move(telemetry.sources), request.telemetry_hz,
                    std::chrono::steady_clock::now(), [&](const DeviceSample& s) {
                      if (record) record->on_sample(s);
                      energy->add_sample(s);
                      observer.on_sample(s);
                    });

    // Another rank of the job was cancelled (its note names it and its step): this run ends
    // cancelled where it stood, and keeps its energy and weights as a cancel of its own does.
    // The collective broke off before the step's update, so the weights are whole.
    bool cancelled_by_peer = false;
    try {
      summary = train(*backend, data, request.train, fanout, control);
    } catch (const CollectiveCancelled& e) {
      summary = fanout.so_far();
      summary.status = RunStatus::Cancelled;
      summary.message = e.what();
      cancelled_by_peer = true;
    }
    sampler->stop();
    if (const std::string graphs = backend->cuda_graphs(); !graphs.empty())
      update_info({{"cuda_graphs", graphs}});
    if (summary.status != RunStatus::Failed)
      update_info({{"energy", energy->finish(summary.images)}});
    // In an MPI job the record names the rank that was cancelled.
    if (group && summary.status == RunStatus::Cancelled && !cancelled_by_peer)
      summary.message = "rank " + std::to_string(group->rank()) + " of " +
                        std::to_string(group->size()) + " (" + group->host() +
                        "): " + summary.message;

    if (request.save_weights && summary.status != RunStatus::Failed && records) {
      backend->synchronize();  // no checkpoint of weights that a device fault has spoiled
      backend->get_parameters(params);
      save_checkpoint(*request.save_weights, plan, request.model, params);
      update_info({{"weights", request.save_weights->string()}});
    }
    if (auto* replicated = dynamic_cast<ReplicatedBackend*>(backend.get())) {
      json buckets = json::array();
      for (double ms : replicated->reducer().bucket_ms()) buckets.push_back(ms);
      update_info({{"reduction",
                    {{"reducer", replicated->reducer().name()},
                     {"replicas", replicated->total_replicas()},
                     {"bucket_mean_ms", buckets}}}});
    }
  } catch (const std::exception& e) {
    if (sampler) sampler->stop();
    if (summary.status == RunStatus::Running) summary = fanout.so_far();  // train() threw
    // A note of another rank's cancel that arrives in a collective after training (saving the
    // weights, the last statistics) still ends this run as cancelled.
    summary.status =
        dynamic_cast<const CollectiveCancelled*>(&e) ? RunStatus::Cancelled : RunStatus::Failed;
    summary.message = e.what();
  }
  try {
    if (record) record->finish(summary);
  } catch (const std::exception& e) {
    // A finished run's message (where it stopped) does not say why it failed now.
    if (summary.message.empty() || summary.status == RunStatus::Finished)
      summary.message = e.what();
    summary.status = RunStatus::Failed;
  }
  return summary;
}

}  // namespace gpulab
