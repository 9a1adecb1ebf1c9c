// Timing the gradient all-reduce alone, as nccl-tests does, so a scaling lab can predict what a
// data-parallel step will spend communicating: `gpulab-cli bench allreduce`.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/output_kind.hpp"

namespace gpulab {

class ProcessGroup;

// One size at one replica count. Bandwidths as nccl-tests defines them: algbw = bytes / time;
// busbw = algbw * 2(n-1)/n, what each link carries in a ring all-reduce, comparable across n.
struct AllreduceTiming {
  int replicas = 0;
  size_t bytes = 0;
  double time_us = 0;     // per all-reduce, the mean over the timed iterations
  double algbw_gbs = 0;   // GB/s (1e9 bytes)
  double busbw_gbs = 0;
};

double bus_bandwidth(double algbw, int replicas);

// "4K,64K,1M", or "4K,...,64M" for every doubling from 4K to 64M; K, M, G are powers of 1024 and
// sizes are rounded down to whole floats. Throws ConfigError naming --sizes.
std::vector<size_t> parse_byte_sizes(const std::string& text);
// "2,4" -> {2, 4}; each at least 1. Throws ConfigError naming --replicas.
std::vector<int> parse_replica_counts(const std::string& text);

struct AllreduceBenchOptions {
  int warmup = 3;
  int iterations = 20;    // at least; small sizes get more, up to about min_seconds of timing
  double min_seconds = 0.2;
  double bucket_bytes = 0;  // 0: one bucket, the whole buffer
  double timeout_s = 60;
};

// R replica threads in this process meeting at the threads reducer (what --replicas R uses).
AllreduceTiming time_thread_allreduce(int replicas, size_t bytes, const AllreduceBenchOptions& options);
// One replica in each process of `group` (what --dist mpi uses); every rank must call it with the
// same arguments. The time is rank 0's.
AllreduceTiming time_mpi_allreduce(const std::shared_ptr<ProcessGroup>& group, size_t bytes,
                                   const AllreduceBenchOptions& options);

// A table with a header line: replicas, size, time (us), algbw and busbw (GB/s).
std::string format_allreduce_table(const std::vector<AllreduceTiming>& rows);
// The JSON allreduce_json writes ("benchmark": "allreduce" and its "results"): what
// bench allreduce --json may replace.
const OutputKind& allreduce_json_kind();

std::string allreduce_json(const std::vector<AllreduceTiming>& rows, const std::string& device,
                           const std::string& reducer);

}  // namespace gpulab
