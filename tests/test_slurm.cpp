// resources/cluster/gpulab.slurm under a real Slurm: a one-node cluster of Debian's slurm-wlm and
// munge started for the test alone (tests/slurm_job.sh), the script submitted through both of its
// launchers, and the run record each job left read back. Skips, saying why, where Slurm cannot run.
#include <gtest/gtest.h>

#include <regex>
#include <string>
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

// Two tasks on one node, one CPU each (the CI machine has two cores and no GPU), 16 steps of 32
// images: once with the launcher the script picks (srun --mpi=pmix, Debian's Slurm has PMIx), once
// through mpirun, which reads the allocation from Slurm. Each leaves a finished run of two ranks
// whose loss went down.
TEST(Slurm, TheBatchScriptTrainsTwoRanksThroughBothLaunchers) {
  if (!GPULAB_MPI_ENABLED)
    GTEST_SKIP() << "this build has no MPI (GPULAB_MPI): --dist mpi cannot run";
  test::TempDir dir;
  test::write_mnist(dir.path() / "data", test::synthetic_set(512, 1), test::synthetic_set(64, 2));
  const std::string sizing = "--nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=2 ";
  const std::string script = kSourceDir + "/resources/cluster/gpulab.slurm";
  // The test runs as root, which mpirun refuses unless told (a cluster's users are not root).
  const std::string mpirun_env =
      "--export=ALL,GPULAB_LAUNCHER=mpirun,OMPI_ALLOW_RUN_AS_ROOT=1,"
      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";
  const std::string command = "env GPULAB=" + std::string(GPULAB_CLI_PATH) +
                              " GPULAB_RUNS=" + (dir.path() / "runs").string() +
                              " GPULAB_DATA=" + (dir.path() / "data").string() +
                              " GPULAB_BATCH=32 'GPULAB_TRAIN_ARGS=--steps 16' bash " + kSourceDir +
                              "/tests/slurm_job.sh " + (dir.path() / "slurm").string() + " 45 " +
                              sizing + script + " --- " + sizing + mpirun_env + script;
  const CliResult job = test::run_command_for(command, 100);
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
  }
  // Nothing of the cluster is left running: each daemon had the cluster's folder in its command.
  // ("[/]..." so that the pattern does not match pgrep's own shell.)
  const CliResult left =
      test::run_command("pgrep -a -f '[/]" + (dir.path() / "slurm").string().substr(1) + "'");
  EXPECT_NE(left.exit_code, 0) << left.output;
}

// The script's own checks, before anything is started (no Slurm needed): a gpulab-cli that is not
// there and a launcher it does not know are refused in one line saying what to set, exit 2.
TEST(Slurm, TheBatchScriptRefusesWhatItCannotRun) {
  const std::string script = " bash " + kSourceDir + "/resources/cluster/gpulab.slurm";
  const struct {
    std::string environment, message;
  } cases[] = {
      {"GPULAB=/nonexistent/gpulab-cli",
       "gpulab.slurm: no gpulab-cli at /nonexistent/gpulab-cli: submit from the folder holding "
       "build/, install gpulab, or set GPULAB\n"},
      {"GPULAB=" + std::string(GPULAB_CLI_PATH) + " GPULAB_LAUNCHER=pmi",
       "gpulab.slurm: GPULAB_LAUNCHER=pmi: give auto, srun or mpirun\n"},
  };
  for (const auto& c : cases) {
    const CliResult r = test::run_command("env " + c.environment + script);
    EXPECT_EQ(r.exit_code, 2) << c.environment << ": " << r.output;
    EXPECT_EQ(r.output, c.message) << c.environment;
  }
}

}  // namespace
}  // namespace gpulab
