// Which GPU each rank of an MPI job takes and how the ranks' gradients meet; every rank decides
// from the same gathered list, so all reach the same answer.
#include "engine/parallel/gpu_ranks.hpp"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "engine/backend/backend.hpp"
#include "engine/base/errors.hpp"
#include "engine/parallel/process_group.hpp"

namespace gpulab {
namespace {

// Two ranks use one GPU when their hosts agree and so do their bus ids (their indices, where a
// bus id is unknown: the same index may then be two GPUs, which only costs the faster path).
bool same_gpu(const RankGpu& a, const RankGpu& b) {
  if (a.host != b.host) return false;
  if (!a.bus_id.empty() && !b.bus_id.empty()) return a.bus_id == b.bus_id;
  return a.index == b.index;
}

// {0, 1, 2} -> "0, 1 and 2"
std::string list_text(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += i + 1 == ranks.size() ? " and " : ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

constexpr const char* kThroughHost = "gradients go through host memory over MPI";

}  // namespace

const char* rank_transport_name(RankTransport transport) {
  switch (transport) {
    case RankTransport::None:
      return "none";
    case RankTransport::Nccl:
      return "nccl";
    case RankTransport::HostMpi:
      return "mpi-host";
  }
  return "?";
}

TransportChoice choose_rank_transport(const std::vector<RankGpu>& ranks) {
  if (ranks.size() < 2) return {RankTransport::None, "one rank: nothing to exchange"};
  for (size_t first = 0; first < ranks.size(); ++first) {
    std::vector<int> sharing{int(first)};
    for (size_t other = first + 1; other < ranks.size(); ++other)
      if (same_gpu(ranks[first], ranks[other])) sharing.push_back(int(other));
    if (sharing.size() < 2) continue;
    const RankGpu& gpu = ranks[first];
    return {RankTransport::HostMpi,
            "ranks " + list_text(sharing) + " share GPU " + std::to_string(gpu.index) +
                (gpu.bus_id.empty() ? "" : " (" + gpu.bus_id + ")") + " on host " + gpu.host +
                ": NCCL needs one rank per GPU; " + kThroughHost};
  }
  for (size_t r = 0; r < ranks.size(); ++r)
    if (!ranks[r].nccl_problem.empty())
      return {RankTransport::HostMpi, "rank " + std::to_string(r) + " (host " + ranks[r].host +
                                          ") cannot use NCCL: " + ranks[r].nccl_problem + "; " +
                                          kThroughHost};
  return {RankTransport::Nccl,
          "every rank has a GPU of its own: gradients are all-reduced between the GPUs by NCCL"};
}

std::vector<RankGpu> gather_rank_gpus(ProcessGroup& group, const RankGpu& mine) {
  const nlohmann::json text = {{"host", mine.host},
                               {"index", mine.index},
                               {"bus_id", mine.bus_id},
                               {"name", mine.name},
                               {"nccl_problem", mine.nccl_problem}};
  std::vector<RankGpu> ranks;
  for (const std::string& each : group.all_gather(text.dump(), "the exchange of the ranks' GPUs")) {
    const nlohmann::json j = nlohmann::json::parse(each);
    ranks.push_back({j.at("host").get<std::string>(), j.at("index").get<int>(),
                     j.at("bus_id").get<std::string>(), j.at("name").get<std::string>(),
                     j.at("nccl_problem").get<std::string>()});
  }
  return ranks;
}

int launcher_local_rank() {
  // Open MPI's first: under mpirun in a Slurm job every rank also has SLURM_LOCALID=0, its
  // daemon's (tests/test_slurm.cpp's cluster shows it); under srun only SLURM_LOCALID is set.
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* value = std::getenv(name);
    if (!value || !*value) continue;
    char* end = nullptr;
    const long rank = std::strtol(value, &end, 10);
    if (*end == '\0' && rank >= 0 && rank < 1 << 20) return int(rank);
  }
  return -1;
}

int local_rank_from_hosts(const std::vector<std::string>& hosts, int rank) {
  const std::string& mine = hosts.at(size_t(rank));
  return int(std::count(hosts.begin(), hosts.begin() + rank, mine));
}

int job_local_rank(ProcessGroup& group) {
  // Every rank gathers the names, launcher variable or not, so that none waits alone.
  const std::vector<std::string> hosts = group.hosts();
  const int from_launcher = launcher_local_rank();
  return from_launcher >= 0 ? from_launcher : local_rank_from_hosts(hosts, group.rank());
}

std::string rank_device(const std::string& device, int local_rank, int gpus) {
  if (device != "cuda" && device != "cuda:auto") return device;
  if (gpus < 1) return "cuda:0";
  return "cuda:" + std::to_string(local_rank % gpus);
}

std::string mpi_device_problem(const std::string& device) {
  const CudaDevices devices = parse_cuda_devices(device);
  const std::string advice =
      ": with --dist mpi each rank drives one GPU; use --device cuda (each rank takes a GPU of "
      "its host) and start one rank per GPU (mpirun -np N)";
  if (devices.all) return "--device " + device + advice;
  for (const int gpu : devices.replicas)
    if (gpu != devices.replicas.front()) return "--device " + device + advice;
  return {};
}

}  // namespace gpulab
