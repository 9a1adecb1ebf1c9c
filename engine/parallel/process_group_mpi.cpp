// The MPI process group: MPI_COMM_WORLD's ranks, every collective non-blocking and polled
// against a deadline, since MPI's own collectives never time out, and against other ranks'
// failure notes. The only engine file with mpi.h; without MPI in the build it says why --dist mpi
// cannot run.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "engine/base/clock.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/host.hpp"
#include "engine/parallel/gradient_reducer.hpp"
#include "engine/parallel/process_group.hpp"
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

std::atomic<bool> g_interrupted{false};  // set from a signal handler
static_assert(std::atomic<bool>::is_always_lock_free);

// A rank that cannot go on sends every other rank a note with this tag (point-to-point messages
// never match a collective). Each rank keeps a receive for it posted from MPI_Init to
// MPI_Finalize, and every wait tests it, so a failure ends the others' waits at once. A note's
// first byte is its kind (kFailureNote, kCancelNote), the text follows.
constexpr int kFailureTag = 7411;
constexpr char kFailureNote = 'F', kCancelNote = 'C';
constexpr int kNoteLength = 2048;
// How long an interrupted collective still waits: live peers, signalled at the same moment, are
// a step away at most; mpirun's kill follows a second after its signal.
constexpr std::chrono::milliseconds kInterruptGrace{300};

struct FailureNotes {
  MPI_Request receive = MPI_REQUEST_NULL;
  std::array<char, kNoteLength> incoming{};
  std::optional<std::string> arrived;  // the first note another rank sent, its kind dropped
  bool arrived_cancel = false;         // that note said its rank was cancelled
  std::string outgoing;                // this rank's note, alive until its sends complete
  std::vector<MPI_Request> sends;
};
FailureNotes g_notes;

// True once another rank's note has arrived; its text is then in g_notes.arrived.
bool note_arrived() {
  if (g_notes.receive != MPI_REQUEST_NULL) {
    int done = 0;
    MPI_Test(&g_notes.receive, &done, MPI_STATUS_IGNORE);
    if (done) {
      g_notes.incoming.back() = '\0';
      const char* note = g_notes.incoming.data();
      g_notes.arrived_cancel = note[0] == kCancelNote;
      g_notes.arrived = std::string(note[0] == '\0' ? note : note + 1);
    }
  }
  return g_notes.arrived.has_value();
}

class MpiGroup;

class MpiPending final : public PendingCollective {
 public:
  MpiPending(MpiGroup& group, MPI_Request request) : group_(group), request_(request) {}
  bool test() override {
    if (!done_) MPI_Test(&request_, &done_, MPI_STATUS_IGNORE);
    return done_ != 0;
  }
  void wait(const std::string& what) override;

 private:
  MpiGroup& group_;
  MPI_Request request_;
  int done_ = 0;
};

class MpiGroup final : public ProcessGroup {
 public:
  explicit MpiGroup(double timeout_s) : timeout_s_(timeout_s), host_(host_name()) {
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
  std::unique_ptr<PendingCollective> start_sum(std::span<float> values) override {
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, values.data(), int(values.size()), MPI_FLOAT, MPI_SUM,
                   MPI_COMM_WORLD, &request);
    return std::make_unique<MpiPending>(*this, request);
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
  void tell_failure(const std::string& message) override { tell(kFailureNote, message); }
  void tell_cancel(const std::string& message) override { tell(kCancelNote, message); }

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

  // Polls until the collective completes or the deadline passes. A collective left pending
  // cannot be cancelled in MPI: the caller ends the job (mpi_abort) after reporting.
  void wait(MPI_Request& request, const std::string& what) {
    const auto start = Clock::now();
    const auto deadline = seconds_after(start, timeout_s_);
    int done = 0;
    std::optional<std::chrono::steady_clock::time_point> interrupted;
    for (int polls = 0;; ++polls) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done) return;
      // A rank that failed or was cancelled never arrives; its note is why this run ends.
      if (note_arrived()) {
        if (g_notes.arrived_cancel) throw CollectiveCancelled(*g_notes.arrived);
        throw CollectiveError(*g_notes.arrived);
      }
      if (g_interrupted.load() && !interrupted) interrupted = std::chrono::steady_clock::now();
      if (interrupted && std::chrono::steady_clock::now() - *interrupted > kInterruptGrace) {
        std::ostringstream message;
        message << "rank " << rank_ << " of " << size_ << " (" << host_ << "): " << what
                << " was interrupted: mpirun is ending the job, as it does when a rank dies or "
                   "on Ctrl-C (its own message says which)";
        throw CollectiveError(message.str());
      }
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

 private:
  // Sends every other rank this rank's note: `kind`, then the message naming this rank.
  void tell(char kind, const std::string& message) {
    if (note_arrived() || !g_notes.sends.empty()) return;
    const std::string name =
        "rank " + std::to_string(rank_) + " of " + std::to_string(size_) + " (" + host_ + "): ";
    g_notes.outgoing = kind + (message.rfind(name, 0) == 0 ? message : name + message);
    g_notes.outgoing.resize(std::min(g_notes.outgoing.size(), size_t(kNoteLength - 1)));
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      MPI_Request request;
      MPI_Isend(g_notes.outgoing.c_str(), int(g_notes.outgoing.size() + 1), MPI_CHAR, r,
                kFailureTag, MPI_COMM_WORLD, &request);
      g_notes.sends.push_back(request);
    }
  }

  double timeout_s_;
  std::string host_;
  int rank_ = 0, size_ = 1;
};

void MpiPending::wait(const std::string& what) {
  if (!done_) group_.wait(request_, what);
  done_ = 1;
}

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
  MPI_Irecv(g_notes.incoming.data(), kNoteLength, MPI_CHAR, MPI_ANY_SOURCE, kFailureTag,
            MPI_COMM_WORLD, &g_notes.receive);
}

MpiEnvironment::~MpiEnvironment() {
  g_initialized = false;
  if (g_notes.receive != MPI_REQUEST_NULL) {
    MPI_Cancel(&g_notes.receive);
    MPI_Wait(&g_notes.receive, MPI_STATUS_IGNORE);
  }
  for (MPI_Request& request : g_notes.sends)
    if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
  g_notes = FailureNotes{};
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

void interrupt_collectives() { g_interrupted.store(true); }

void mpi_wait_for_abort(const std::string& message, double timeout_s, int code) {
  const auto deadline = seconds_after(Clock::now(), timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    // Keeps this rank's notes moving until rank 0 has them.
    int sent = 0;
    if (!g_notes.sends.empty())
      MPI_Testall(int(g_notes.sends.size()), g_notes.sends.data(), &sent, MPI_STATUSES_IGNORE);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::ostringstream ending;
  ending << message << " (rank 0 did not end the job within " << timeout_s << " s)";
  mpi_abort(ending.str(), code);
}

#else

MpiEnvironment::MpiEnvironment() { throw ConfigError(mpi_unavailable_reason()); }
MpiEnvironment::~MpiEnvironment() = default;

std::shared_ptr<ProcessGroup> mpi_world(double) { throw ConfigError(mpi_unavailable_reason()); }

void mpi_abort(const std::string& message, int code) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::_Exit(code);
}

void interrupt_collectives() {}

void mpi_wait_for_abort(const std::string& message, double, int code) { mpi_abort(message, code); }

#endif

}  // namespace gpulab
