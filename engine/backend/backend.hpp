// engine/backend: the Backend interface that the training loop drives, its options (device
// names, precision, sync, distribution), the phases of a step and the metrics a run reports.
// It knows none of its implementations: they live in engine/cpu and engine/cuda, and
// engine/training's factory picks one. Over engine/model and datasets/.
//
// The one interface every way of running a model implements (the CPU with one or several
// replicas, one GPU), so a single training loop drives them all.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "datasets/mnist.hpp"
#include "engine/backend/step_phases.hpp"
#include "engine/model/model_config.hpp"
#include "engine/model/optimizer.hpp"

namespace gpulab {

struct BatchStats {
  double loss_sum = 0;  // summed over the images of the batch
  int correct = 0;
  int count = 0;
  double mean_loss() const { return count ? loss_sum / count : 0.0; }
  double accuracy() const { return count ? double(correct) / count : 0.0; }
};

// Where a forward's images sit in the whole batch of the step, when a replica holds a shard of
// it: dropout is keyed on each image's global position and the loss gradient is normalized by
// the whole batch, so the shards' gradients sum to the batch's. The default is a whole batch.
struct Shard {
  int first_image = 0;   // position of the first image in the whole batch
  int global_batch = 0;  // images in the whole batch; 0: this forward's batch
};

enum class Split { Train, Validation, Test };
const char* split_name(Split split);

// The data a backend trains and evaluates on; a GPU backend uploads it once.
struct DataSets {
  const data::ImageSet* train = nullptr;
  const data::ImageSet* validation = nullptr;  // may be null
  const data::ImageSet* test = nullptr;
  const data::ImageSet& get(Split split) const;
};

// Throws ConfigError unless `set` holds what a model taking `input` images reads: one channel of
// input.height x input.width pixels, naming both ("the test set's images are 56x56 pixels, and
// the model takes 1x28x28 images; ..."). `name` is "the test set". Every backend checks its sets
// here before it reads an image, and eval, predict and the window go through it too.
void check_images_fit(const ActivationShape& input, const data::ImageSet& set,
                      const std::string& name);
// The same for every set given.
void check_images_fit(const ActivationShape& input, const DataSets& data);

class Backend {
 public:
  virtual ~Backend() = default;
  // "cpu (2 threads)", "cuda:0 NVIDIA H100 80GB HBM3"
  virtual std::string description() const = 0;
  virtual size_t parameter_count() const = 0;
  virtual void set_parameters(std::span<const float> params) = 0;
  virtual void get_parameters(std::span<float> params) = 0;
  // One optimizer step on the images `indices` of the training set: gather, forward, loss,
  // backward, gradient reduction, update. `step` counts from 1 and seeds dropout.
  virtual BatchStats train_step(std::span<const int32_t> indices, float lr, int64_t step,
                                StepTimes& times) = 0;
  // Loss and accuracy, no dropout, no update.
  virtual BatchStats evaluate(Split split, std::span<const int32_t> indices) = 0;
  // From now on an evaluation ends at its next batch once `*stop` is set (a run's cancel flag),
  // returning what it counted so far, so a signal never waits for a whole test set; null: every
  // evaluation runs to its end. A backend that cannot stop inside one ignores it.
  virtual void stop_evaluations_on(const std::atomic<bool>* stop) { (void)stop; }
  // Waits for all queued device work and throws the device's error if any: train_step returns
  // before its backward and update are done, so a fault there shows only here.
  virtual void synchronize() {}
  // Every replica's share of the last train_step (every process's, on rank 0 of an MPI job);
  // empty where the backend does not measure it.
  virtual std::vector<ReplicaTimes> replica_times() const { return {}; }
  // How the run uses CUDA graphs, as run.json's cuda_graphs says it: "on", "off", "off after
  // capture failed: <phase> phase: <error>"; empty for a backend that has none.
  virtual std::string cuda_graphs() const { return {}; }
};

// The math of the matrix products. fp32 everywhere; tf32 and bf16 (CUDA only) round the GEMM
// inputs to TF32 or bfloat16 on the tensor cores and accumulate in fp32, with fp32 master
// weights and fp32 activations.
enum class Precision { Fp32, Tf32, Bf16 };
Precision parse_precision(const std::string& name);  // throws ConfigError
const char* precision_name(Precision precision);

// How a GPU computes its convolutions: im2col (the input unfolded into a matrix in GPU memory,
// multiplied by cuBLAS, the result permuted into the activation layout: the reference, and the
// lesson) or implicit (implicit GEMM: tiles of the input multiplied where they are loaded, bias
// and the ReLU after a convolution in the same kernel; kernels/cuda/conv2d_implicit.cuh).
enum class ConvAlgorithm { Im2col, Implicit };
ConvAlgorithm parse_conv(const std::string& name);  // throws ConfigError naming --conv
const char* conv_name(ConvAlgorithm conv);          // "im2col", "implicit"

// How replicas agree on the update: every replica takes the same optimizer step on the summed
// gradients (all-reduce), or a server holds the parameters, takes the step once and sends them
// back (parameter server).
enum class SyncMode { AllReduce, ParameterServer };
SyncMode parse_sync(const std::string& name);  // throws ConfigError naming --sync
const char* sync_name(SyncMode sync);          // "allreduce", "parameter-server"

// Replicas in other processes: none, or MPI (one replica per process, launched by mpirun).
enum class Distribution { None, Mpi };
Distribution parse_dist(const std::string& name);  // throws ConfigError naming --dist
const char* dist_name(Distribution dist);          // "none", "mpi"

// Where a GPU's training batches are prepared: auto (the device's own way: a GPU keeps the data
// sets in its memory and gathers each batch there; the CPU's data is in host memory anyway),
// device (the same on a GPU), host (a GPU's batches gathered and normalized on the host and
// copied to it every step, as a framework's data loader feeds it).
enum class DataOn { Auto, Device, Host };
DataOn parse_data_on(const std::string& name);  // throws ConfigError naming --data-on
const char* data_on_name(DataOn data_on);       // "auto", "device", "host"

// The input pipeline's work on the training images (datasets/augment.hpp): none (each batch's
// bytes normalized as they are gathered, as before), once (every training image rotated and
// shifted at random once, before training, and kept as bytes; batches then as with none),
// per-batch (every batch decoded, rotated and shifted afresh and normalized on one host thread,
// as a data loader's worker does: the time is the step's data phase; on a GPU the batches come
// from the host).
enum class Preprocess { None, Once, PerBatch };
Preprocess parse_preprocess(const std::string& name);  // throws ConfigError naming --preprocess
const char* preprocess_name(Preprocess preprocess);    // "none", "once", "per-batch"

struct BackendOptions {
  std::string device = "cpu";  // cpu, cuda:N, cuda:0,1, cuda:all, cuda:0x4, cuda:0x2,1x2
  int threads = 0;             // CPU threads; 0: all cores
  int batch = 64;
  uint64_t seed = 1;
  bool reference_kernels = false;  // CPU: the plain reference kernels (slow; for checking)
  Precision precision = Precision::Fp32;
  bool cuda_graph = true;  // CUDA: replay the training step from CUDA graphs after warm-up
  ConvAlgorithm conv = ConvAlgorithm::Im2col;  // CUDA: how convolutions are computed
  DataOn data_on = DataOn::Auto;
  Preprocess preprocess = Preprocess::None;
  // Data parallelism: replicas in this process, each on its own thread with threads / replicas
  // of the CPU threads (at least 1); the batch is split evenly, the first replicas taking one
  // image more where it does not divide.
  int replicas = 1;
  SyncMode sync = SyncMode::AllReduce;
  double bucket_mb = 25;             // gradients are reduced in buckets of this size
  double collective_timeout_s = 60;  // a reduction whose peers do not arrive fails after this
  Distribution dist = Distribution::None;
};

// The GPUs a device name asks for, one entry per replica in replica order: "cuda" and "cuda:0"
// {0}; "cuda:0,1" {0, 1} (one replica per GPU, reduced with NCCL); "cuda:0x4" {0, 0, 0, 0}
// (four replicas on one GPU, reduced there); "cuda:0x2,1x2" {0, 0, 1, 1}. "cuda:all" is every
// GPU there is: `all` is set and `replicas` left empty. Throws ConfigError naming --device.
struct CudaDevices {
  bool all = false;
  std::vector<int> replicas;
};
CudaDevices parse_cuda_devices(const std::string& device);
// The first GPU a device name asks for ("cuda:all": 0), -1 for "cpu"; throws ConfigError
// otherwise.
int cuda_device_index(const std::string& device);
// CPU threads (and CPU replicas, a thread each) beyond a few per core only oversubscribe, and far
// beyond that OpenMP fails to create them (--threads 100000) or crashes (1000000): refused.
inline constexpr int kThreadsPerCore = 4;
int max_cpu_threads();  // kThreadsPerCore × this machine's logical cores
// 30 days: far beyond any reduction, and far inside what a clock's deadline can hold (1e10 s
// overflowed it and failed at once).
inline constexpr double kMaxCollectiveTimeoutS = 30 * 24 * 3600.0;

}  // namespace gpulab
