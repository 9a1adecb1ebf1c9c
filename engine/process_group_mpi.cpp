// The MPI process group: MPI_COMM_WORLD's ranks, every collective non-blocking and polled
// against a deadline, since MPI's own collectives never time out. The only engine file with
// mpi.h; without MPI in the build it says why --dist mpi cannot run.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "engine/errors.hpp"
#include "engine/gradient_reducer.hpp"
#include "engine/process_group.hpp"
#include "gpulab/build_config.hpp"

#if GPULAB_MPI_ENABLED
#include <mpi.h>
#endif

namespace gpulab {

bool mpi_built() { return GPULAB_MPI_ENABLED; }

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (const char* value = std::getenv(name); value && *value) return true;
  return false;
}

std::string mpi_unavailable_reason() {
  if (!mpi_built())
    return "--dist mpi: this build has no MPI (libopenmpi-dev was not found when it was "
           "configured, or GPULAB_MPI=OFF)";
  if (!launched_by_mpi())
    return "--dist mpi: not started by mpirun (no OMPI_COMM_WORLD_SIZE or PMI variables); run "
           "mpirun -np N gpulab-cli train --dist mpi ...";
  return "";
}

#if GPULAB_MPI_ENABLED
namespace {

bool g_initialized = false;

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

class MpiGroup final : public ProcessGroup {
 public:
  explicit MpiGroup(double timeout_s) : timeout_s_(timeout_s), host_(this_host()) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string host() const override { return host_; }

  void sum(std::span<float> values, const std::string& what) override {
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, values.data(), int(values.size()), MPI_FLOAT, MPI_SUM,
                   MPI_COMM_WORLD, &request);
    wait(request, what);
  }
  void sum(std::span<double> values, const std::string& what) override {
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, values.data(), int(values.size()), MPI_DOUBLE, MPI_SUM,
                   MPI_COMM_WORLD, &request);
    wait(request, what);
  }
  void broadcast(std::span<float> values, const std::string& what) override {
    MPI_Request request;
    MPI_Ibcast(values.data(), int(values.size()), MPI_FLOAT, 0, MPI_COMM_WORLD, &request);
    wait(request, what);
  }
  void barrier(const std::string& what) override {
    MPI_Request request;
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    wait(request, what);
  }
  std::vector<std::string> hosts() override {
    constexpr int kLength = 256;
    std::vector<char> mine(kLength, 0), all(size_t(kLength) * size_t(size_), 0);
    host_.copy(mine.data(), kLength - 1);
    MPI_Request request;
    MPI_Iallgather(mine.data(), kLength, MPI_CHAR, all.data(), kLength, MPI_CHAR, MPI_COMM_WORLD,
                   &request);
    wait(request, "the exchange of host names");
    std::vector<std::string> names;
    for (int r = 0; r < size_; ++r) names.emplace_back(all.data() + size_t(r) * kLength);
    return names;
  }
  std::vector<std::string> all_gather(const std::string& mine, const std::string& what) override {
    // The lengths first, then the bytes at the offsets they give.
    int length = int(mine.size());
    std::vector<int> lengths(size_t(size_), 0);
    MPI_Request request;
    MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD, &request);
    wait(request, what + " (their lengths)");
    std::vector<int> offsets(size_t(size_), 0);
    for (size_t r = 1; r < offsets.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
    std::vector<char> all(size_t(offsets.back()) + size_t(lengths.back()) + 1, 0);
    MPI_Iallgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                    MPI_CHAR, MPI_COMM_WORLD, &request);
    wait(request, what);
    std::vector<std::string> gathered;
    for (int r = 0; r < size_; ++r)
      gathered.emplace_back(all.data() + offsets[size_t(r)], size_t(lengths[size_t(r)]));
    return gathered;
  }
  void broadcast_bytes(std::span<std::byte> bytes, const std::string& what) override {
    MPI_Request request;
    MPI_Ibcast(bytes.data(), int(bytes.size()), MPI_BYTE, 0, MPI_COMM_WORLD, &request);
    wait(request, what);
  }

 private:
  // Polls until the collective completes or the deadline passes. A collective left pending
  // cannot be cancelled in MPI: the caller ends the job (mpi_abort) after reporting.
  void wait(MPI_Request& request, const std::string& what) {
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(timeout_s_));
    int done = 0;
    for (int polls = 0;; ++polls) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done) return;
      if (std::chrono::steady_clock::now() > deadline) {
        std::ostringstream message;
        message << "rank " << rank_ << " of " << size_ << " (" << host_ << "): " << what
                << " timed out after " << timeout_s_
                << " s: another rank never arrived (--collective-timeout)";
        throw CollectiveError(message.str());
      }
      // Spin briefly (collectives of a step take microseconds), then yield the core.
      if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  double timeout_s_;
  std::string host_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

MpiEnvironment::MpiEnvironment() {
  if (const std::string why = mpi_unavailable_reason(); !why.empty()) throw ConfigError(why);
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw ConfigError(
        "--dist mpi: this MPI library does not allow calls from a worker thread "
        "(MPI_THREAD_SERIALIZED)");
  }
  g_initialized = true;
}

MpiEnvironment::~MpiEnvironment() {
  g_initialized = false;
  MPI_Finalize();
}

std::shared_ptr<ProcessGroup> mpi_world(double timeout_s) {
  if (!g_initialized) throw ConfigError("--dist mpi: MPI is not initialized in this program");
  return std::make_shared<MpiGroup>(timeout_s);
}

void mpi_abort(const std::string& message, int code) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

#else

MpiEnvironment::MpiEnvironment() { throw ConfigError(mpi_unavailable_reason()); }
MpiEnvironment::~MpiEnvironment() = default;

std::shared_ptr<ProcessGroup> mpi_world(double) { throw ConfigError(mpi_unavailable_reason()); }

void mpi_abort(const std::string& message, int code) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::_Exit(code);
}

#endif

}  // namespace gpulab
