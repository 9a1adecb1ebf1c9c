// The all-reduce benchmark: the reducers of a data-parallel run, timed on buffers of given sizes.
#include "engine/parallel/allreduce_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "engine/base/clock.hpp"
#include "engine/base/errors.hpp"
#include "engine/base/flag_list.hpp"
#include "engine/base/size_list.hpp"
#include "engine/base/threads.hpp"
#include "engine/parallel/gradient_reducer.hpp"
#include "engine/parallel/process_group.hpp"

namespace gpulab {
namespace {

size_t parse_one_size(const std::string& text) {
  size_t end = 0;
  double value = 0;
  try {
    value = std::stod(text, &end);
  } catch (const std::exception&) {
    throw ConfigError("--sizes: \"" + text + "\" is not a size (like 4K, 1M or 4096)");
  }
  double unit = 1;
  const std::string suffix = text.substr(end);
  if (suffix == "K" || suffix == "k") unit = 1024.0;
  else if (suffix == "M" || suffix == "m") unit = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g") unit = 1024.0 * 1024 * 1024;
  else if (!suffix.empty() && suffix != "B" && suffix != "b")
    throw ConfigError("--sizes: \"" + text + "\" has an unknown unit (K, M or G)");
  const double bytes = value * unit;
  if (!(bytes >= 4) || bytes > 4.0 * 1024 * 1024 * 1024)
    throw ConfigError("--sizes: " + text + " is outside 4 bytes to 4G");
  return size_t(bytes) / sizeof(float) * sizeof(float);
}

AllreduceTiming timing(int replicas, size_t bytes, double seconds, int iterations) {
  AllreduceTiming t;
  t.replicas = replicas;
  t.bytes = bytes;
  t.time_us = 1e6 * seconds / iterations;
  t.algbw_gbs = double(bytes) / (t.time_us * 1e-6) / 1e9;
  t.busbw_gbs = bus_bandwidth(t.algbw_gbs, replicas);
  return t;
}

// How many timed iterations make about min_seconds, from the warm-up's pace.
int iterations_for(double warmup_seconds, const AllreduceBenchOptions& options) {
  const double per = warmup_seconds / std::max(1, options.warmup);
  const int wanted = per > 0 ? int(options.min_seconds / per) : options.iterations;
  return std::clamp(wanted, options.iterations, 100000);
}

}  // namespace

double bus_bandwidth(double algbw, int replicas) {
  return replicas > 1 ? algbw * 2.0 * (replicas - 1) / replicas : 0.0;
}

std::vector<size_t> parse_byte_sizes(const std::string& text) {
  return expand_size_list<size_t>(split_flag_list(text), parse_one_size, "4K,...,64M");
}

std::vector<int> parse_replica_counts(const std::string& text) {
  std::vector<int> counts;
  for (const std::string& part : split_flag_list(text)) {
    size_t end = 0;
    int count = 0;
    try {
      count = std::stoi(part, &end);
    } catch (const std::exception&) {
      end = 0;
    }
    if (end != part.size() || count < 1 || count > 1024)
      throw ConfigError("--replicas: \"" + part + "\" is not a replica count from 1 to 1024");
    counts.push_back(count);
  }
  if (counts.empty()) throw ConfigError("--replicas: give at least one count, like 2,4");
  return counts;
}

AllreduceTiming time_thread_allreduce(int replicas, size_t bytes,
                                      const AllreduceBenchOptions& options) {
  const size_t count = bytes / sizeof(float);
  const double bucket_bytes = options.bucket_bytes > 0 ? options.bucket_bytes : double(bytes);
  std::unique_ptr<GradientReducer> reducer =
      replicas == 1 ? make_no_reducer()
                    : make_threads_reducer(replicas, count, bucket_bytes, options.timeout_s);
  std::vector<std::vector<float>> grads(replicas, std::vector<float>(count, 0.0f));
  std::vector<std::vector<float>> params(replicas, std::vector<float>(1, 0.0f));
  // Every replica reduces `iterations` times after one reduction that lines them up; replica 0
  // times the loop. Returns its seconds.
  auto phase = [&](int iterations) {
    double seconds = 0;
    std::vector<std::exception_ptr> errors(replicas);
    auto run = [&](int r) {
      try {
        BufferView g{grads[r].data(), count};
        BufferView p{params[r].data(), 1};
        ReduceTimes times;
        reducer->reduce(r, g, p, {0, 0}, times);
        const Clock::time_point start = Clock::now();
        for (int i = 0; i < iterations; ++i) reducer->reduce(r, g, p, {0, i + 1}, times);
        if (r == 0) seconds = seconds_since(start);
      } catch (...) {
        errors[r] = std::current_exception();
        reducer->abort("replica " + std::to_string(r) + " of the benchmark failed");
      }
    };
    std::vector<std::thread> threads;
    threads.reserve(size_t(replicas));  // so that no push_back throws with a thread in hand
    try {
      for (int r = 1; r < replicas; ++r)
        threads.push_back(start_thread("the benchmark's thread for replica " + std::to_string(r) +
                                           " of " + std::to_string(replicas),
                                       [&run, r] { run(r); }));
    } catch (const ResourceError& e) {
      // The replicas started wait for the others: told, they stop, and are joined.
      reducer->abort(e.what());
      for (auto& thread : threads) thread.join();
      throw;
    }
    run(0);
    for (auto& thread : threads) thread.join();
    for (const auto& error : errors)
      if (error) std::rethrow_exception(error);
    return seconds;
  };
  const int iterations = iterations_for(phase(options.warmup), options);
  return timing(replicas, bytes, phase(iterations), iterations);
}

AllreduceTiming time_mpi_allreduce(const std::shared_ptr<ProcessGroup>& group, size_t bytes,
                                   const AllreduceBenchOptions& options) {
  const size_t count = bytes / sizeof(float);
  const double bucket_bytes = options.bucket_bytes > 0 ? options.bucket_bytes : double(bytes);
  std::unique_ptr<GradientReducer> reducer = make_mpi_reducer(group, count, bucket_bytes);
  std::vector<float> grads(count, 0.0f), params(1, 0.0f);
  BufferView g{grads.data(), count};
  BufferView p{params.data(), 1};
  ReduceTimes times;
  Clock::time_point start = Clock::now();
  for (int i = 0; i < options.warmup; ++i) reducer->reduce(0, g, p, {0, i + 1}, times);
  // Rank 0's pace decides the count for all: broadcast it so every rank reduces as often.
  std::vector<float> iterations = {float(iterations_for(seconds_since(start), options))};
  group->broadcast(iterations, "the benchmark's iteration count");
  const int timed = int(iterations[0]);
  group->barrier("the start of the timed all-reduces");
  start = Clock::now();
  for (int i = 0; i < timed; ++i) reducer->reduce(0, g, p, {0, i + 1}, times);
  const double seconds = seconds_since(start);
  return timing(group->size(), bytes, seconds, timed);
}

std::string format_allreduce_table(const std::vector<AllreduceTiming>& rows) {
  std::ostringstream out;
  char line[160];
  std::snprintf(line, sizeof line, "%8s %12s %12s %12s %12s\n", "replicas", "size (B)",
                "time (us)", "algbw (GB/s)", "busbw (GB/s)");
  out << line;
  for (const AllreduceTiming& r : rows) {
    std::snprintf(line, sizeof line, "%8d %12zu %12.2f %12.3f %12.3f\n", r.replicas, r.bytes,
                  r.time_us, r.algbw_gbs, r.busbw_gbs);
    out << line;
  }
  return out.str();
}

const OutputKind& allreduce_json_kind() {
  static const OutputKind kind =
      json_kind("an all-reduce benchmark's JSON", [](const nlohmann::json& j) {
        return j.is_object() && j.contains("benchmark") && j["benchmark"] == "allreduce" &&
               j.contains("results");
      });
  return kind;
}

std::string allreduce_json(const std::vector<AllreduceTiming>& rows, const std::string& device,
                           const std::string& reducer) {
  nlohmann::json j = {{"benchmark", "allreduce"},
                      {"device", device},
                      {"reducer", reducer},
                      {"definitions",
                       {{"algbw_gbs", "bytes / time / 1e9"},
                        {"busbw_gbs", "algbw * 2(n-1)/n (nccl-tests)"}}},
                      {"results", nlohmann::json::array()}};
  for (const AllreduceTiming& r : rows)
    j["results"].push_back({{"replicas", r.replicas},
                            {"bytes", r.bytes},
                            {"time_us", r.time_us},
                            {"algbw_gbs", r.algbw_gbs},
                            {"busbw_gbs", r.busbw_gbs}});
  return j.dump(2) + "\n";
}

}  // namespace gpulab
