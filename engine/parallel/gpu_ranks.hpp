// GPU ranks of an MPI job: which GPU each rank takes, and how their gradients meet: NCCL when
// every rank has a GPU of its own, MPI through host memory when two share one (NCCL refuses two
// ranks on one GPU). The decisions are plain functions of what every rank reports, so every rank
// reaches the same one; no CUDA, NCCL or MPI here.
#pragma once

#include <string>
#include <vector>

namespace gpulab {

class ProcessGroup;

// One rank's GPU, as the other ranks learn of it.
struct RankGpu {
  std::string host;          // the rank's host name
  int index = 0;             // the CUDA device index in that process
  std::string bus_id;        // PCI bus id ("0000:65:00.0"); empty where unknown
  std::string name;          // "NVIDIA H100 80GB HBM3"
  std::string nccl_problem;  // why NCCL cannot run in that process; empty when it can
};

// How the ranks' gradients meet: not at all (one rank), NCCL between GPUs, or MPI through host
// memory (each rank copies its sum to pinned memory, MPI adds them, the sum goes back).
enum class RankTransport { None, Nccl, HostMpi };
const char* rank_transport_name(RankTransport transport);  // "none", "nccl", "mpi-host"

struct TransportChoice {
  RankTransport transport = RankTransport::None;
  std::string reason;  // one sentence, for the console and run.json
};

// NCCL when no two ranks share a GPU (the same PCI bus id on the same host, or the same index
// where a bus id is unknown) and every rank can load NCCL; else MPI through host memory, saying
// why: "ranks 0 and 1 share GPU 0 (0000:65:00.0) on host a: NCCL needs one rank per GPU; ...".
TransportChoice choose_rank_transport(const std::vector<RankGpu>& ranks);

// Every rank's GPU, in rank order, on every rank (a collective of `group`).
std::vector<RankGpu> gather_rank_gpus(ProcessGroup& group, const RankGpu& mine);

// A rank's place among the ranks on its host. The launcher's word when it gives one
// (OMPI_COMM_WORLD_LOCAL_RANK from Open MPI, MPI_LOCALRANKID from MPICH, SLURM_LOCALID from
// srun): it knows the node even where two nodes carry the same host name. Else the number of
// lower ranks with the same host name, which is what those launchers give for the usual mapping.
int launcher_local_rank();  // -1 when no launcher variable is set
int local_rank_from_hosts(const std::vector<std::string>& hosts, int rank);
// This process's local rank (a collective: every rank gathers the host names).
int job_local_rank(ProcessGroup& group);

// The GPU one rank's --device means: "cuda" and "cuda:auto" take GPU (local_rank mod gpus),
// gpus being the GPUs this process sees; any other name means the same GPU on every rank (so
// ranks on one host share it). With no GPU the name is left for require_gpus to refuse.
std::string rank_device(const std::string& device, int local_rank, int gpus);

// Empty when `device` can be each rank's device under --dist mpi, else why not, in one line
// naming --device: a rank drives one GPU (several replicas on it are fine, cuda:0x2).
std::string mpi_device_problem(const std::string& device);

}  // namespace gpulab
