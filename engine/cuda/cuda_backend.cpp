// The GPU backend: the replicated backend with CUDA replicas, one per entry of --device
// ("cuda:0" is one replica and no reduction, "cuda:0x4" four on one GPU, "cuda:0,1" one on each
// of two; with --sync parameter-server a server in host memory takes the step), the data sets
// uploaded once per GPU, and the reset of the GPUs after a fault, once every replica has let go
// (the policy of when to let go is ReplicatedBackend's, the same for every backend;
// engine/cuda/cuda_failure.hpp). Under --dist mpi each process is one rank on one GPU
// (engine/parallel/gpu_ranks.hpp chooses how the ranks' gradients meet).
#include "engine/cuda/cuda_backend.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <exception>

#include "engine/base/errors.hpp"
#include "engine/cuda/cuda_failure.hpp"
#include "engine/cuda/cuda_graph_cache.hpp"
#include "engine/cuda/cuda_reducer.hpp"
#include "engine/cuda/cuda_replica.hpp"
#include "engine/cuda/cuda_staging.hpp"
#include "engine/devices/devices.hpp"
#include "engine/parallel/gpu_ranks.hpp"
#include "engine/parallel/process_group.hpp"
#include "engine/parallel/replicated_backend.hpp"

namespace gpulab {
namespace {

namespace kc = kernels::cuda;

class CudaBackend final : public ReplicatedBackend {
 public:
  CudaBackend(const ModelPlan& plan, const OptimizerConfig& optimizer, const DataSets& data,
              const BackendOptions& options);
  CudaGraphCounts graph_counts() const {
    CudaGraphCounts total;
    for (const CudaReplica* replica : replicas_) {
      const CudaGraphCounts counts = replica->graph_counts();
      total.captures += counts.captures;
      total.launches += counts.launches;
      if (total.refused.empty()) total.refused = counts.refused;
    }
    return total;
  }
  std::string cuda_graphs() const override {
    return cuda_graphs_text(graphs_asked_, int(replicas_.size()), graph_counts(), server_);
  }

 private:
  // Every replica and the reducer have let go of their GPUs (ReplicatedBackend::guarded): a
  // fault's broken contexts can be reset now.
  std::string after_release(const std::exception_ptr& error) override {
    return reset_after_fault(devices_, device_error_kind(error).value_or(kc::ErrorKind::Other));
  }

  std::vector<CudaReplica*> replicas_;  // owned by ReplicatedBackend
  bool graphs_asked_ = false;           // --cuda-graph on
  bool server_ = false;                 // --sync parameter-server
  std::vector<int> devices_;            // each GPU once
};

CudaBackend::CudaBackend(const ModelPlan& plan, const OptimizerConfig& optimizer,
                         const DataSets& data, const BackendOptions& options) {
  if (options.batch < 1) throw ConfigError("--batch must be at least 1");
  graphs_asked_ = options.cuda_graph;
  server_ = options.sync == SyncMode::ParameterServer;
  // Under MPI options.device is already this rank's GPU (rank_device).
  std::shared_ptr<ProcessGroup> group;
  if (options.dist == Distribution::Mpi) group = mpi_world(options.collective_timeout_s);
  const bool ranks = group && group->size() > 1;
  const std::vector<GpuInfo> gpus = require_gpus(options.device);  // one per local replica
  const int local = int(gpus.size());
  const int total = local * (group ? group->size() : 1);
  if (total > options.batch)
    throw ConfigError("--device " + options.device + ": " + std::to_string(total) +
                      " replicas but only " + std::to_string(options.batch) +
                      " images in a batch (--batch)");
  for (const GpuInfo& gpu : gpus)
    if (std::find(devices_.begin(), devices_.end(), gpu.index) == devices_.end())
      devices_.push_back(gpu.index);
  // The parameter server meets in host memory: several GPUs need no NCCL for it.
  if (const std::string why = cuda_reducer_unavailable_reason(options.device, int(devices_.size()));
      !why.empty() && !server_)
    throw ConfigError(why);
  CudaRanks cross;
  if (ranks) {
    if (const std::string why = mpi_device_problem(options.device); !why.empty())
      throw ConfigError(why);
    // Every rank learns every rank's GPU, so that all choose the same transport.
    const RankGpu mine{group->host(), gpus.front().index, gpus.front().pci_bus_id,
                       gpus.front().name, nccl_unavailable_reason()};
    cross.group = group;
    cross.transport = choose_rank_transport(gather_rank_gpus(*group, mine));
  }
  const std::string rank_name = ranks ? "rank " + std::to_string(group->rank()) + " " : "";
  check_images_fit(plan.layers.front().input, data);
  const int image_size = static_cast<int>(plan.layers.front().input.size());
  const int classes = plan.layers.back().output.channels;
  const int max_shard = (options.batch + total - 1) / total;
  // Graphs for one replica in this process; several replicas run eagerly for now (each would
  // capture its own stream on its own thread, which has not run on a GPU yet), and so does the
  // parameter server, whose step goes through host memory between the device's phases.
  const bool graphs = options.cuda_graph && local == 1 && !server_;

  std::vector<std::unique_ptr<Replica>> replicas;
  std::unique_ptr<CudaReducer> reducer;
  try {
    std::vector<std::shared_ptr<DeviceDataSets>> uploaded(devices_.size());
    for (size_t d = 0; d < devices_.size(); ++d) {
      try {
        GPULAB_CUDA_CHECK(cudaSetDevice(devices_[d]));
        uploaded[d] = upload_data_sets(data, image_size, classes);
      } catch (const kc::CudaError& e) {
        throw describe_cuda_failure(e, rank_name + "cuda:" + std::to_string(devices_[d]),
                                    options.batch);
      }
    }
    for (int r = 0; r < local; ++r) {
      const int device = gpus[size_t(r)].index;
      CudaReplicaOptions o;
      o.device = device;
      if (local == 1)
        o.name = ranks ? rank_name + "(cuda:" + std::to_string(device) + ")" : options.device;
      else
        o.name =
            rank_name + "replica " + std::to_string(r) + " (cuda:" + std::to_string(device) + ")";
      o.max_batch = max_shard;
      o.requested_batch = options.batch;
      o.seed = options.seed;
      o.precision = options.precision;
      o.conv = options.conv;
      o.cuda_graph = graphs;
      // Batches augmented per batch are made on the host, whatever --data-on leaves to choose.
      o.augment_per_batch = options.preprocess == Preprocess::PerBatch;
      o.batches_from_host = options.data_on == DataOn::Host || o.augment_per_batch;
      o.with_optimizer = !server_;
      const size_t d =
          size_t(std::find(devices_.begin(), devices_.end(), device) - devices_.begin());
      auto replica = std::make_unique<CudaReplica>(plan, optimizer, uploaded[d], o);
      replicas_.push_back(replica.get());
      replicas.push_back(std::move(replica));
    }
    std::vector<int> replica_devices;
    for (const GpuInfo& gpu : gpus) replica_devices.push_back(gpu.index);
    const double bucket_bytes = options.bucket_mb * 1024.0 * 1024.0;
    // The server even for one replica, as on the CPU: the recipe's round trip is what is asked.
    if (server_)
      reducer = make_cuda_parameter_server(replica_devices, size_t(plan.parameter_count), optimizer,
                                           bucket_bytes, options.collective_timeout_s);
    else if (total > 1)
      reducer = make_cuda_reducer(replica_devices, size_t(plan.parameter_count), bucket_bytes,
                                  options.collective_timeout_s, cross);
  } catch (...) {
    reducer.reset();
    replicas.clear();  // frees their memory before any reset
    replicas_.clear();
    const std::exception_ptr error = std::current_exception();
    add_to_message(error, reset_after_fault(
                              devices_, device_error_kind(error).value_or(kc::ErrorKind::Other)));
    std::rethrow_exception(error);
  }

  std::string description;
  const std::string mode =
      std::string(precision_name(options.precision)) +
      (options.conv == ConvAlgorithm::Implicit ? ", implicit-GEMM convolutions" : "") +
      (graphs ? ", CUDA graphs" : (options.cuda_graph ? ", no graphs" : "")) +
      (options.preprocess == Preprocess::PerBatch ? ", batches from the host augmented per batch"
       : options.data_on == DataOn::Host          ? ", batches from the host"
                                                  : "");
  if (ranks) {
    // Rank 0's start line says how the ranks' gradients meet, and why.
    description = options.device + " " + gpus.front().name + " (" + mode + ")" +
                  (local > 1 ? ", " + std::to_string(local) + " replicas" : "") + ", MPI rank " +
                  std::to_string(group->rank()) + " of " + std::to_string(group->size()) + ", " +
                  reducer->name() + " all-reduce: " + cross.transport.reason;
  } else if (server_) {
    description = options.device + ", " + std::to_string(total) +
                  (total == 1 ? " replica" : " replicas") + " on " +
                  std::to_string(devices_.size()) + (devices_.size() == 1 ? " GPU" : " GPUs") +
                  " (" + gpus.front().name + "), parameter server in host memory (" + mode + ")";
  } else if (total == 1) {
    description = options.device + " " + gpus.front().name + " (" + mode + ")";
  } else {
    description = options.device + ", " + std::to_string(total) + " replicas on " +
                  std::to_string(devices_.size()) + (devices_.size() == 1 ? " GPU" : " GPUs") +
                  " (" + gpus.front().name + "), " + reducer->name() + " all-reduce (" + mode + ")";
  }
  std::unique_ptr<GradientReducer> owned_reducer =
      reducer ? std::unique_ptr<GradientReducer>(std::move(reducer)) : make_no_reducer();
  assemble(std::move(replicas), std::move(owned_reducer), std::move(group), data,
           size_t(plan.parameter_count), 1, std::move(description));
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const ModelPlan& plan, const OptimizerConfig& optimizer,
                                           const DataSets& data, const BackendOptions& options) {
  return std::make_unique<CudaBackend>(plan, optimizer, data, options);
}

CudaGraphCounts cuda_graph_counts(const Backend& backend) {
  const auto* cuda = dynamic_cast<const CudaBackend*>(&backend);
  return cuda ? cuda->graph_counts() : CudaGraphCounts{};
}

}  // namespace gpulab
