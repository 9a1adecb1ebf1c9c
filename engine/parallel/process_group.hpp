// The processes of a job: one (plain runs) or an MPI job's ranks. The MPI side lives in
// engine/parallel/process_group_mpi.cpp, the only engine file that includes mpi.h; without MPI in the
// build these functions say why not.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gpulab {

// A collective started and not yet waited for. Every rank must start the same collectives in
// the same order.
class PendingCollective {
 public:
  virtual ~PendingCollective() = default;
  // Whether it has completed; drives the library's progress.
  virtual bool test() = 0;
  // Returns when it has completed; throws CollectiveError (naming `what`) after the group's
  // timeout, counted from this call.
  virtual void wait(const std::string& what) = 0;
};

// Collectives over the job's processes. Each waits at most the group's timeout for the others,
// then throws CollectiveError naming this rank and the collective; it throws at once, with the
// note's text, when another rank has told the job it failed (tell_failure) or was cancelled
// (tell_cancel, as CollectiveCancelled).
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string host() const = 0;
  // In place: every rank ends with the element-wise sum over the ranks.
  virtual void sum(std::span<float> values, const std::string& what) = 0;
  virtual void sum(std::span<double> values, const std::string& what) = 0;
  // The same sum, started: `values` must stay untouched until it has completed.
  virtual std::unique_ptr<PendingCollective> start_sum(std::span<float> values) = 0;
  // Every rank ends with rank 0's values.
  virtual void broadcast(std::span<float> values, const std::string& what) = 0;
  // Returns when every rank has arrived.
  virtual void barrier(const std::string& what) = 0;
  // Every rank's host name, in rank order (on every rank).
  virtual std::vector<std::string> hosts() = 0;
  // This rank cannot go on: every other rank's collectives, the one it waits in or its next,
  // throw CollectiveError("rank R of N (host): message"), so rank 0 can record why the job ends.
  // Sends nothing when this rank is stopping because another rank's note reached it.
  virtual void tell_failure(const std::string& message) = 0;
  // This rank was cancelled between two steps: as tell_failure, but the others' collectives throw
  // CollectiveCancelled, so rank 0 records the run as cancelled, not failed.
  virtual void tell_cancel(const std::string& message) = 0;
  // Every rank's `mine` (any bytes, any length), in rank order, on every rank.
  virtual std::vector<std::string> all_gather(const std::string& mine, const std::string& what) = 0;
  // Every rank ends with rank 0's bytes; every rank passes the same size.
  virtual void broadcast_bytes(std::span<std::byte> bytes, const std::string& what) = 0;
};

// Whether this build has MPI, and whether this process was started by mpirun (or srun): the
// launcher's variables (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK) are set.
bool mpi_built();
bool launched_by_mpi();
// "" when `--dist mpi` can run here; else why not, naming --dist.
std::string mpi_unavailable_reason();

// Initializes MPI for the life of the object (MPI_Init_thread, serialized calls from one thread
// at a time; MPI_Finalize at the end). Throws ConfigError where mpi_unavailable_reason() says.
class MpiEnvironment {
 public:
  MpiEnvironment();
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;
};

// The job's processes (MPI_COMM_WORLD), once an MpiEnvironment exists; throws ConfigError else.
std::shared_ptr<ProcessGroup> mpi_world(double timeout_s);
// Ends every process of the job after printing `message` to stderr (MPI_Abort): what a rank
// does when it cannot go on and its peers would otherwise wait for it.
[[noreturn]] void mpi_abort(const std::string& message, int code = 1);
// For a SIGTERM or SIGINT handler (async-signal-safe): mpirun signals every rank when it ends a
// job, as it does when a rank dies, and kills them a second later. A collective waiting then
// gives its peers a moment (live ones arrive) and throws CollectiveError saying it was
// interrupted, so that rank 0 can record how the run ended before the kill.
void interrupt_collectives();
// What a rank other than 0 does after tell_failure or tell_cancel: waits for rank 0 to end the
// job (mpi_abort, once its record is written), for at most `timeout_s`; then ends it itself as
// mpi_abort does.
[[noreturn]] void mpi_wait_for_abort(const std::string& message, double timeout_s, int code = 1);

}  // namespace gpulab
