// resources/cluster/gpulab.slurm under a real Slurm: a one-node cluster of Debian's slurm-wlm and
// munge started for the test alone (tests/slurm_job.sh), the script submitted through both of its
// launchers, the run record each job left read back and the cores each rank was bound to. Skips,
// saying why, where Slurm cannot run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/records/run_record.hpp"
#include "gpulab/build_config.hpp"
#include "test_support.hpp"

namespace gpulab {
namespace {

using test::CliResult;

const std::string kSourceDir = GPULAB_SOURCE_DIR;

// The ids of the jobs that slurm_job.sh says ended with 0, in order.
std::vector<std::string> finished_jobs(const std::string& output) {
  static const std::regex ended("slurm_job: job ([0-9]+) ended with 0");
  std::vector<std::string> jobs;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), ended);
       it != std::sregex_iterator(); ++it)
    jobs.push_back((*it)[1]);
  return jobs;
}

// The mean loss of `count` steps from `first`.
double mean_loss(const RunData& run, size_t first, size_t count) {
  double sum = 0;
  for (size_t i = first; i < first + count; ++i) sum += run.steps[i].loss;
  return sum / double(count);
}

// A gpulab-cli that first writes, for a training rank, the CPUs it may run on (its affinity, which
// its threads inherit) to DIR/binding.JOB.RANK, then is the real one.
std::string write_binding_recorder(const std::filesystem::path& dir) {
  const auto path = dir / "gpulab-cli-recording-binding";
  std::ofstream(path) << "#!/bin/bash\n"
                      << "if [[ ${1:-} == train ]]; then\n"
                      << "  rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${SLURM_PROCID:-0}}}\n"
                      << "  grep Cpus_allowed_list /proc/self/status | cut -f2 > " << dir.string()
                      << "/binding.${SLURM_JOB_ID:-none}.$rank\n"
                      << "fi\n"
                      << "exec " << GPULAB_CLI_PATH << " \"$@\"\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

// The physical cores (package, core) of the CPUs in a list such as "0-3,8"; a CPU whose topology
// cannot be read counts as a core of its own.
std::set<std::pair<int, int>> cores_of(const std::string& cpu_list) {
  std::set<std::pair<int, int>> cores;
  std::stringstream ranges(cpu_list);
  std::string range;
  while (std::getline(ranges, range, ',')) {
    const size_t dash = range.find('-');
    const int first = std::stoi(range),
              last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
    for (int cpu = first; cpu <= last; ++cpu) {
      const std::string topology =
          "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
      int package = -1, core = -1;
      std::ifstream(topology + "physical_package_id") >> package;
      std::ifstream(topology + "core_id") >> core;
      cores.insert(core < 0 ? std::pair(-1, cpu) : std::pair(package, core));
    }
  }
  return cores;
}

// The cores each rank of a job was bound to, by rank, from write_binding_recorder's files.
std::map<int, std::set<std::pair<int, int>>> rank_cores(const std::filesystem::path& dir,
                                                        const std::string& job) {
  std::map<int, std::set<std::pair<int, int>>> cores;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string(), prefix = "binding." + job + ".";
    if (name.rfind(prefix, 0) != 0) continue;
    std::string list;
    std::ifstream(entry.path()) >> list;
    cores[std::stoi(name.substr(prefix.size()))] = cores_of(list);
  }
  return cores;
}

// The machine's physical cores.
size_t machine_cores() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Cpus_allowed_list:", 0) == 0)
      return cores_of(line.substr(line.find_first_not_of(" \t", 18))).size();
  return 1;
}

// tests/slurm_job.sh's command for one job of the batch script submitted twice with `sizing`
// (sbatch's options): first with `first_export` (the launcher the script picks where empty), then
// through mpirun. `steps` steps of 32 images each, the binding recorded (write_binding_recorder).
std::string both_launchers_job(const std::filesystem::path& dir, const std::string& sizing,
                               int steps, const std::string& first_export) {
  const std::string script = kSourceDir + "/resources/cluster/gpulab.slurm";
  // The test runs as root, which mpirun refuses unless told (a cluster's users are not root).
  const std::string mpirun_env =
      "--export=ALL,GPULAB_LAUNCHER=mpirun,OMPI_ALLOW_RUN_AS_ROOT=1,"
      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";
  return "env GPULAB=" + write_binding_recorder(dir) + " GPULAB_RUNS=" + (dir / "runs").string() +
         " GPULAB_DATA=" + (dir / "data").string() +
         " GPULAB_BATCH=32 'GPULAB_TRAIN_ARGS=--steps " + std::to_string(steps) + "' bash " +
         kSourceDir + "/tests/slurm_job.sh " + (dir / "slurm").string() + " 45 " + sizing +
         first_export + script + " --- " + sizing + mpirun_env + script;
}

// Two tasks on one node, one CPU each (the CI machine has two cores and no GPU), 16 steps of 32
// images: once with the launcher the script picks (srun --mpi=pmix, Debian's Slurm has PMIx), once
// through mpirun, which reads the allocation from Slurm. Each leaves a finished run of two ranks
// whose loss went down.
TEST(Slurm, TheBatchScriptTrainsTwoRanksThroughBothLaunchers) {
  if (!GPULAB_MPI_ENABLED)
    GTEST_SKIP() << "this build has no MPI (GPULAB_MPI): --dist mpi cannot run";
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(512, 1), test::synthetic_set(64, 2));
  const CliResult job = test::run_command_for(
      both_launchers_job(dir.path(), "--nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=2 ",
                         16, ""),
      100);
  if (job.exit_code == 77) GTEST_SKIP() << job.output.substr(job.output.rfind("SKIP: "));
  ASSERT_FALSE(job.timed_out) << job.output;
  ASSERT_EQ(job.exit_code, 0) << job.output;
  const std::vector<std::string> jobs = finished_jobs(job.output);
  ASSERT_EQ(jobs.size(), 2u) << job.output;
  // Both launchers ran the job's steps: srun with PMIx (a step of two tasks) and mpirun.
  for (const std::string& id : jobs) {
    const RunData run = load_run(dir.path() / "runs" / ("slurm-" + id));
    SCOPED_TRACE("job " + id);
    EXPECT_EQ(run.status(), "finished");
    ASSERT_EQ(run.info["devices"].size(), 2u);
    for (int rank = 0; rank < 2; ++rank) {
      const std::string description = run.info["devices"][rank]["description"];
      EXPECT_EQ(description.rfind("MPI rank " + std::to_string(rank) + " of 2: cpu", 0), 0u)
          << description;
    }
    ASSERT_EQ(run.steps.size(), 16u);
    EXPECT_LT(mean_loss(run, 12, 4), 0.8 * mean_loss(run, 0, 4));
    EXPECT_EQ(run.replica_steps.size(), 32u);  // both ranks, every step
    // Each rank bound to a core of its own (the test's Slurm binds tasks: task/affinity).
    const auto cores = rank_cores(dir.path(), id);
    ASSERT_EQ(cores.size(), 2u) << "no binding recorded for both ranks";
    EXPECT_EQ(cores.at(0).size(), 1u);
    EXPECT_EQ(cores.at(1).size(), 1u);
    EXPECT_NE(cores.at(0), cores.at(1)) << "both ranks were bound to the same core";
  }
  // Nothing of the cluster is left running: each daemon had the cluster's folder in its command.
  // ("[/]..." so that the pattern does not match pgrep's own shell.)
  const CliResult left =
      test::run_command("pgrep -a -f '[/]" + (dir.path() / "slurm").string().substr(1) + "'");
  EXPECT_NE(left.exit_code, 0) << left.output;
}

// One task of two CPUs, trained with two threads: through srun (which since Slurm 22.05 takes
// the task's CPUs only from -c, not from the job) and through mpirun (which binds a rank to one
// core unless told PE=2), the rank may run on two cores, one for each thread.
TEST(Slurm, ARanksThreadsEachHaveACoreThroughBothLaunchers) {
  if (!GPULAB_MPI_ENABLED)
    GTEST_SKIP() << "this build has no MPI (GPULAB_MPI): --dist mpi cannot run";
  if (machine_cores() < 2)
    GTEST_SKIP() << "this machine has one core: a rank of two threads cannot have two";
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(128, 1), test::synthetic_set(32, 2));
  const CliResult job = test::run_command_for(
      both_launchers_job(dir.path(), "--nodes=1 --ntasks-per-node=1 --cpus-per-task=2 --time=2 ", 2,
                         "--export=ALL,GPULAB_LAUNCHER=srun "),
      100);
  if (job.exit_code == 77) GTEST_SKIP() << job.output.substr(job.output.rfind("SKIP: "));
  ASSERT_FALSE(job.timed_out) << job.output;
  ASSERT_EQ(job.exit_code, 0) << job.output;
  const std::vector<std::string> jobs = finished_jobs(job.output);
  ASSERT_EQ(jobs.size(), 2u) << job.output;
  for (const std::string& id : jobs) {
    SCOPED_TRACE("job " + id);
    const RunData run = load_run(dir.path() / "runs" / ("slurm-" + id));
    EXPECT_EQ(run.status(), "finished");
    EXPECT_EQ(run.info["config"]["threads"], 2);
    const auto cores = rank_cores(dir.path(), id);
    ASSERT_EQ(cores.size(), 1u) << "no binding recorded for the rank";
    EXPECT_EQ(cores.at(0).size(), 2u)
        << "the rank's two threads had " << cores.at(0).size() << " core(s) to run on";
  }
}

// The script's own checks, before anything is started (no Slurm needed): a gpulab-cli that is not
// there, a launcher it does not know and a node without MNIST are refused in one line saying what
// to do, exit 2.
TEST(Slurm, TheBatchScriptRefusesWhatItCannotRun) {
  const std::string script = " bash " + kSourceDir + "/resources/cluster/gpulab.slurm";
  std::string host = test::run_command("hostname -s").output;
  host.erase(host.find_last_not_of('\n') + 1);
  const struct {
    std::string environment, message;
  } cases[] = {
      {"GPULAB=/nonexistent/gpulab-cli",
       "gpulab.slurm: no gpulab-cli at /nonexistent/gpulab-cli: submit from the folder holding "
       "build/, install gpulab, or set GPULAB\n"},
      {"GPULAB=" + std::string(GPULAB_CLI_PATH) + " GPULAB_LAUNCHER=pmi",
       "gpulab.slurm: GPULAB_LAUNCHER=pmi: give auto, srun or mpirun\n"},
      {"GPULAB=" + std::string(GPULAB_CLI_PATH) + " GPULAB_DATA=/nonexistent/mnist",
       "gpulab.slurm: node " + host +
           ": no MNIST in /nonexistent/mnist: run gpulab-cli data "
           "fetch --shared there, or set GPULAB_DATA to a folder every node reads\n"},
  };
  for (const auto& c : cases) {
    const CliResult r = test::run_command("env " + c.environment + script);
    EXPECT_EQ(r.exit_code, 2) << c.environment << ": " << r.output;
    EXPECT_EQ(r.output, c.message) << c.environment;
  }
}

}  // namespace
}  // namespace gpulab
