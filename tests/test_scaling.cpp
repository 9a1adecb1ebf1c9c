// The data-parallel views' numbers: recent steps per replica from live and recorded runs, the
// overlap of communication with computation, and the scaling study with its ideal and prediction.
#include <cmath>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/analysis/replica_timeline.hpp"
#include "engine/analysis/scaling.hpp"
#include "engine/training/experiment.hpp"

namespace gpulab {
namespace {

StepMetrics step_with(int64_t step, double time_s, double step_ms,
                      std::vector<ReplicaTimes> replicas) {
  StepMetrics m;
  m.step = step;
  m.time_s = time_s;
  m.step_ms = step_ms;
  m.replicas = std::move(replicas);
  return m;
}

TEST(ReplicaTimeline, TakesTheLastStepsFromALiveRunInReplicaOrder) {
  RunData run;
  for (int s = 1; s <= 10; ++s)
    run.steps.push_back(step_with(s, s * 0.1, 100, {{1, 60, 30, 10}, {0, 70, 30, 0}}));
  const auto spans = recent_replica_steps(run, 4);
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans.front().step, 7);
  EXPECT_EQ(spans.back().step, 10);
  EXPECT_DOUBLE_EQ(spans.back().end_s, 1.0);
  EXPECT_DOUBLE_EQ(spans.back().start_s, 0.9);
  ASSERT_EQ(spans.back().replicas.size(), 2u);
  EXPECT_EQ(spans.back().replicas[0].replica, 0);
  EXPECT_EQ(spans.back().replicas[1].replica, 1);
  EXPECT_EQ(replica_count(run), 2);
}

// The title says which steps the timeline draws: consecutive ones as "last N", sampled ones with
// their first and last step (not "last 3 steps" for steps 23 to 59).
TEST(ReplicaTimeline, TheCaptionNamesSampledStepsByTheirRange) {
  RunData run;
  for (int s : {23, 41, 59}) run.steps.push_back(step_with(s, s * 0.1, 100, {{0, 60, 30, 10}}));
  EXPECT_EQ(replica_steps_caption(recent_replica_steps(run, 10)), "3 of steps 23 to 59");
  run.steps.clear();
  for (int s = 7; s <= 11; ++s) run.steps.push_back(step_with(s, s * 0.1, 100, {{0, 60, 30, 10}}));
  EXPECT_EQ(replica_steps_caption(recent_replica_steps(run, 10)), "last 5 steps");
  EXPECT_EQ(replica_steps_caption(recent_replica_steps(run, 1)), "last step");
}

TEST(ReplicaTimeline, ReadsARecordedRunFromItsReplicaRows) {
  RunData run;
  run.info = {{"config", {{"replicas", 3}}}};
  for (int s = 1; s <= 5; ++s) {
    run.steps.push_back(step_with(s, s * 0.2, 200, {}));
    for (int r = 0; r < 3; ++r) run.replica_steps.push_back({s, {r, 100.0 + r, 50, 10}});
  }
  const auto spans = recent_replica_steps(run, 50);
  ASSERT_EQ(spans.size(), 5u);
  EXPECT_EQ(spans[0].step, 1);
  ASSERT_EQ(spans[4].replicas.size(), 3u);
  EXPECT_DOUBLE_EQ(spans[4].replicas[2].compute_ms, 102);
  EXPECT_EQ(replica_count(run), 3);
  EXPECT_EQ(replica_count(RunData{}), 1);
  // A count in run.json that the rows do not bear out is not believed.
  run.info["config"]["replicas"] = 60000;
  run.info["config"]["ranks"] = 60000;
  EXPECT_EQ(replica_count(run), 3);
  run.replica_steps.clear();
  EXPECT_EQ(replica_count(run), kMaxBatch);
}

TEST(ReplicaTimeline, OverlapIsTheShareOfCommunicationHiddenUnderComputation) {
  // {replica, compute, communication (exposed), waiting, hidden}
  // Nothing hidden: every bucket was reduced after the backward pass.
  std::vector<ReplicaStepSpan> serial(1);
  serial[0].step_ms = 100;
  serial[0].replicas = {{0, 80, 20, 0, 0}, {1, 70, 20, 10, 0}};
  EXPECT_NEAR(communication_overlap_percent(serial), 0.0, 1e-9);
  // All hidden.
  std::vector<ReplicaStepSpan> hidden(1);
  hidden[0].step_ms = 80;
  hidden[0].replicas = {{0, 80, 0, 0, 20}, {1, 70, 0, 10, 20}};
  EXPECT_NEAR(communication_overlap_percent(hidden), 100.0, 1e-9);
  // Summed over replicas and steps before dividing: (10 + 10 + 20 + 20) / (40 + 40) = 75 %.
  std::vector<ReplicaStepSpan> both = hidden;
  both.push_back(hidden[0]);
  both[1].replicas = {{0, 80, 10, 0, 10}, {1, 70, 10, 10, 10}};
  EXPECT_NEAR(communication_overlap_percent(both), 75.0, 1e-9);
  // No communication at all: no figure.
  std::vector<ReplicaStepSpan> none(1);
  none[0].step_ms = 10;
  none[0].replicas = {{0, 10, 0, 0, 0}};
  EXPECT_TRUE(std::isnan(communication_overlap_percent(none)));
}

// A run of `replicas` replicas whose every step takes shard_ms / replicas + fixed + all-reduce.
RunData scaling_run(int replicas, double shard_ms, double fixed_ms, double allreduce_ms,
                    const std::string& sync = "allreduce", int batch = 64) {
  RunData run;
  Experiment e;
  e.model = preset("mlp");
  e.train.batch = batch;
  e.backend.replicas = replicas;
  e.backend.sync = parse_sync(sync);
  run.info = {{"model", model_to_json(e.model)},
              {"config", train_config_to_json(e.train, e.backend)},
              {"parameters", 1000}};
  for (int s = 1; s <= 9; ++s) {
    StepMetrics m;
    m.step = s;
    m.times.forward_ms = shard_ms / replicas * 0.4;
    m.times.backward_ms = shard_ms / replicas * 0.6;
    m.times.optimizer_ms = fixed_ms;
    m.times.allreduce_ms = allreduce_ms;
    m.step_ms = m.times.total_ms();
    m.images_per_second = 1000.0 * batch / m.step_ms;
    run.steps.push_back(m);
  }
  return run;
}

TEST(Scaling, GroupsRunsThatDifferOnlyInReplicas) {
  const RunData one = scaling_run(1, 80, 10, 0), two = scaling_run(2, 80, 10, 10),
                four = scaling_run(4, 80, 10, 15),
                server = scaling_run(2, 80, 10, 10, "parameter-server"),
                other_batch = scaling_run(2, 80, 10, 10, "allreduce", 32);
  const auto studies = scaling_studies({&one, &two, &server, &four, &other_batch});
  ASSERT_EQ(studies.size(), 1u);  // the parameter-server and batch-32 runs have no partner
  const ScalingStudy& study = studies[0];
  ASSERT_EQ(study.points.size(), 3u);
  EXPECT_EQ(study.points[0].replicas, 1);
  EXPECT_EQ(study.points[1].replicas, 2);
  EXPECT_EQ(study.points[2].replicas, 4);
  EXPECT_EQ(study.points[2].run, 3);
  EXPECT_NE(study.label.find("batch 64"), std::string::npos) << study.label;
  // Measured: 64 images in 90 ms at R = 1, in 40 + 10 + 10 = 60 ms at R = 2.
  EXPECT_NEAR(study.points[0].images_per_second, 64000.0 / 90, 1e-6);
  EXPECT_NEAR(study.points[0].efficiency, 1.0, 1e-12);
  EXPECT_NEAR(study.points[1].efficiency, (64000.0 / 60) / (2 * 64000.0 / 90), 1e-9);
  EXPECT_NEAR(study.model.ideal_images_per_second(4), 4 * 64000.0 / 90, 1e-6);
}

TEST(Scaling, PredictsFromTheBaseComputeAndTheFittedAllReduce) {
  // All-reduce times that follow the ring's 2 (R - 1) / R exactly, with 20 ms of transfer.
  const RunData one = scaling_run(1, 80, 10, 0), two = scaling_run(2, 80, 10, 20),
                four = scaling_run(4, 80, 10, 30);
  const auto studies = scaling_studies({&one, &two, &four});
  ASSERT_EQ(studies.size(), 1u);
  const ScalingModel& model = studies[0].model;
  EXPECT_NEAR(model.transfer_ms, 20, 1e-9);
  EXPECT_NEAR(model.shard_ms, 80, 1e-9);
  EXPECT_NEAR(model.fixed_ms, 10, 1e-9);
  // The model reproduces runs that follow it, and extrapolates: R = 8 is 10 + 10 + 35 ms.
  EXPECT_NEAR(model.predicted_step_ms(1), 90, 1e-9);
  EXPECT_NEAR(model.predicted_step_ms(4), 20 + 10 + 30, 1e-9);
  EXPECT_NEAR(model.predicted_step_ms(8), 10 + 10 + 35, 1e-9);
  EXPECT_NEAR(model.predicted_images_per_second(8), 64000.0 / 55, 1e-6);
  EXPECT_NEAR(model.predicted_efficiency(8), (64000.0 / 55) / (8 * 64000.0 / 90), 1e-9);
  // 1000 parameters, 4000 bytes in 20 ms: 0.0002 GB/s.
  EXPECT_NEAR(model.bandwidth_gb_per_s(), 4000.0 / 0.020 / 1e9, 1e-15);

  std::ostringstream csv;
  write_scaling_csv(studies[0], {"one", "two", "four"}, csv);
  const std::string text = csv.str();
  EXPECT_EQ(text.rfind("replicas,run,images_per_second,efficiency,", 0), 0u) << text;
  EXPECT_NE(text.find("\n4,four,"), std::string::npos) << text;
}

// Replicas that share the same cores or GPU are ideally no faster, and are predicted to do the
// same work in the same time; replicas that bring their own hardware divide it.
TEST(Scaling, TheIdealAndThePredictionFollowTheHardwareTheReplicasHave) {
  // `ranks` processes of the run's replicas over them, on one machine of `cores` cores.
  auto on_cpu = [](RunData run, int threads, int ranks, int cores) {
    run.info["config"]["threads"] = threads;
    if (ranks > 1) {
      run.info["config"]["replicas"] = run.info["config"]["replicas"].get<int>() / ranks;
      run.info["config"]["ranks"] = ranks;
    }
    run.info["devices"] = nlohmann::json::array();
    for (int r = 0; r < ranks; ++r)
      run.info["devices"].push_back({{"id", "cpu"}, {"cores", cores}, {"host", "node"}});
    return run;
  };
  // --threads 2 --replicas 1, 2, 4 on a 2-core machine: the same two cores every time.
  const RunData one = on_cpu(scaling_run(1, 80, 10, 0), 2, 1, 2),
                two = on_cpu(scaling_run(2, 80, 10, 20), 2, 1, 2),
                four = on_cpu(scaling_run(4, 80, 10, 30), 2, 1, 2);
  EXPECT_DOUBLE_EQ(hardware_units(four), 2);
  // One thread split over two replicas is still a thread each: two cores.
  EXPECT_DOUBLE_EQ(hardware_units(on_cpu(scaling_run(2, 80, 10, 20), 1, 1, 2)), 2);
  EXPECT_DOUBLE_EQ(hardware_units(on_cpu(scaling_run(2, 80, 10, 20), 1, 1, 8)), 2);
  auto studies = scaling_studies({&one, &two, &four});
  ASSERT_EQ(studies.size(), 1u);
  const ScalingModel& shared = studies[0].model;
  EXPECT_TRUE(shared.shares_hardware());
  EXPECT_EQ(shared.hardware_growth(), ScalingModel::HardwareGrowth::Shared);
  EXPECT_DOUBLE_EQ(shared.hardware_ratio(4), 1);
  EXPECT_DOUBLE_EQ(shared.hardware_ratio(8), 1);
  EXPECT_NEAR(shared.ideal_images_per_second(4), 64000.0 / 90, 1e-6);
  EXPECT_NEAR(shared.predicted_step_ms(4), 80 + 10 + 30, 1e-9);  // no shrinking shard
  // Measured: 64 images in 20 + 10 + 30 ms at R = 4 against an ideal of the base's 90 ms.
  EXPECT_NEAR(studies[0].points[2].efficiency, 90.0 / 60, 1e-9);

  // MPI ranks with a thread each on the same 2 cores: 1, 2, then still 2 cores.
  const RunData rank1 = on_cpu(scaling_run(1, 80, 10, 0), 1, 1, 2),
                ranks2 = on_cpu(scaling_run(2, 80, 10, 20), 1, 2, 2),
                ranks4 = on_cpu(scaling_run(4, 80, 10, 30), 1, 4, 2);
  EXPECT_DOUBLE_EQ(hardware_units(ranks4), 2);
  studies = scaling_studies({&rank1, &ranks2, &ranks4});
  ASSERT_EQ(studies.size(), 1u);
  const ScalingModel& ranks = studies[0].model;
  EXPECT_FALSE(ranks.shares_hardware());
  EXPECT_EQ(ranks.hardware_growth(), ScalingModel::HardwareGrowth::Measured);
  EXPECT_DOUBLE_EQ(ranks.hardware_ratio(2), 2);
  EXPECT_DOUBLE_EQ(ranks.hardware_ratio(3), 2);  // between 2 and 4 replicas, both on 2 cores
  EXPECT_DOUBLE_EQ(ranks.hardware_ratio(8), 2);  // the largest run had no core of its own each
  EXPECT_NEAR(ranks.predicted_step_ms(2), 40 + 10 + 20, 1e-9);

  // GPUs: logical replicas on one card are one GPU; two cards are two.
  RunData logical = scaling_run(4, 80, 10, 30), cards = scaling_run(2, 80, 10, 20);
  logical.info["config"]["device"] = "cuda:0x4";
  logical.info["devices"] = {{{"id", "cuda:0"}, {"pci_bus_id", "0000:65:00.0"}}};
  cards.info["config"]["device"] = "cuda:0,1";
  cards.info["devices"] = {{{"id", "cuda:0"}, {"pci_bus_id", "0000:65:00.0"}},
                           {{"id", "cuda:1"}, {"pci_bus_id", "0000:66:00.0"}}};
  EXPECT_DOUBLE_EQ(hardware_units(logical), 1);
  EXPECT_DOUBLE_EQ(hardware_units(cards), 2);
  // Records without devices: each replica is taken to bring its own hardware, as before.
  EXPECT_FALSE(std::isfinite(hardware_units(scaling_run(2, 80, 10, 20))));
}

// Of two runs at one replica count the finished clean one is taken, whatever their order; the
// user may pick the other; a flagged baseline is said.
TEST(Scaling, TakesAFinishedRunNotUnderLoadAndSaysWhenTheBaselineIsFlagged) {
  RunData one = scaling_run(1, 80, 10, 0), clean = scaling_run(2, 80, 10, 10),
          loaded = scaling_run(2, 80, 10, 10);
  one.info["outside_load"] = {{"under_load", true}, {"mean_cores", 1.5}, {"cores", 2}};
  clean.info["status"] = "finished";
  loaded.info["status"] = "cancelled";
  loaded.steps.resize(4);
  loaded.info["outside_load"] = one.info["outside_load"];
  // The loaded, cancelled run is the newest (given last).
  auto studies = scaling_studies({&one, &clean, &loaded});
  ASSERT_EQ(studies.size(), 1u);
  const ScalingPoint& two = studies[0].points[1];
  EXPECT_EQ(two.run, 1);
  EXPECT_TRUE(two.flags.empty());
  EXPECT_EQ(two.others, std::vector<int>{2});
  const std::string warning = studies[0].baseline_warning();
  EXPECT_EQ(warning,
            "⚠ baseline (1 replica) measured under outside load\nevery efficiency and "
            "the ideal are measured against it");
  // Picked by the user: the other one, with its flags for the chart to mark.
  studies = scaling_studies({&one, &clean, &loaded}, {2});
  const ScalingPoint& picked = studies[0].points[1];
  EXPECT_EQ(picked.run, 2);
  EXPECT_TRUE(picked.picked);
  ASSERT_EQ(picked.flags.size(), 2u);
  EXPECT_EQ(picked.flags[0], "cancelled after 4 steps");
  std::ostringstream csv;
  write_scaling_csv(studies[0], {"one", "clean", "loaded"}, csv);
  EXPECT_NE(csv.str().find("\n2,loaded,"), std::string::npos) << csv.str();
  EXPECT_NE(csv.str().find("cancelled after 4 steps; measured under outside load"),
            std::string::npos)
      << csv.str();
}

// Of two one-replica runs, both finished and neither picked: the unflagged one is the base even
// when the flagged one is faster and listed first; among runs alike in flags and status, the
// fastest; and the study says which and why.
TEST(Scaling, TheBaseIsTheCleanestOneReplicaRunAndTheStudySaysWhy) {
  // The pace is the median step's (run_images_per_second): 64 images in 70, 90 and 110 ms steps.
  RunData loaded = scaling_run(1, 60, 10, 0), fair = scaling_run(1, 80, 10, 0),
          two = scaling_run(2, 80, 10, 10);
  for (RunData* run : {&loaded, &fair, &two}) run->info["status"] = "finished";
  loaded.info["outside_load"] = {{"under_load", true}, {"mean_cores", 1.5}, {"cores", 2}};
  auto studies = scaling_studies({&loaded, &fair, &two});
  ASSERT_EQ(studies.size(), 1u);
  EXPECT_EQ(studies[0].points[0].run, 1);
  EXPECT_EQ(studies[0].points[0].others, std::vector<int>{0});
  EXPECT_EQ(studies[0].points[0].chosen_because, "the only one without a ⚠");
  EXPECT_NEAR(studies[0].model.base_images_per_second, 64000.0 / 90, 1e-9);
  EXPECT_TRUE(studies[0].baseline_warning().empty());
  EXPECT_TRUE(studies[0].points[1].chosen_because.empty());  // one run: nothing to choose

  // Both clean: the faster, whatever the order; both flagged alike: the faster too.
  RunData slow = scaling_run(1, 100, 10, 0), fast = fair;
  slow.info["status"] = "finished";
  studies = scaling_studies({&fast, &slow, &two});
  EXPECT_EQ(studies[0].points[0].run, 0);
  EXPECT_EQ(studies[0].points[0].chosen_because, "the fastest: 711 images/s against 582");
  studies = scaling_studies({&slow, &fast, &two});
  EXPECT_EQ(studies[0].points[0].run, 1);
  slow.info["outside_load"] = fast.info["outside_load"] = loaded.info["outside_load"];
  studies = scaling_studies({&slow, &fast, &two});
  EXPECT_EQ(studies[0].points[0].run, 1);
  EXPECT_EQ(studies[0].points[0].chosen_because, "the fastest: 711 images/s against 582");

  // Finished before cancelled, among unflagged runs... a cancelled run is flagged, so it is the
  // flags that decide; and a pick by the user is said as such.
  studies = scaling_studies({&slow, &fast, &two}, {0});
  EXPECT_EQ(studies[0].points[0].run, 0);
  EXPECT_EQ(studies[0].points[0].chosen_because, "picked");
}

// The prediction starts at the base's measured images/s, its median step's pace: a summary's
// whole-run figure (600 here, below the steps' 64000 / 90 = 711) is not what any view shows, and
// the prediction stays under the ideal.
TEST(Scaling, ThePredictionStartsAtTheMeasuredBaseAndStaysUnderTheIdeal) {
  RunData one = scaling_run(1, 80, 10, 0), two = scaling_run(2, 80, 10, 20),
          four = scaling_run(4, 80, 10, 30);
  one.info["summary"] = {{"images_per_second", 600.0}};
  const auto studies = scaling_studies({&one, &two, &four});
  ASSERT_EQ(studies.size(), 1u);
  const ScalingModel& model = studies[0].model;
  // By hand: steps of 90, 40 + 10 + 20 = 70 and 20 + 10 + 30 = 60 ms; 8 replicas 10 + 10 + 35.
  const double base = 64000.0 / 90;
  EXPECT_NEAR(model.predicted_images_per_second(1), base, 1e-9);
  EXPECT_NEAR(model.predicted_images_per_second(2), base * 90 / 70, 1e-9);
  EXPECT_NEAR(model.predicted_images_per_second(4), base * 90 / 60, 1e-9);
  EXPECT_NEAR(model.predicted_images_per_second(8), base * 90 / 55, 1e-9);
  EXPECT_NEAR(model.ideal_images_per_second(4), 4 * base, 1e-9);
  EXPECT_NEAR(model.predicted_efficiency(4), 900.0 / 2400.0, 1e-12);
  for (int r : {1, 2, 3, 4, 6, 8}) EXPECT_LE(model.predicted_efficiency(r), 1.0 + 1e-12) << r;
}

TEST(Scaling, OneReplicaCountOrAnEmptyRunIsNoStudy) {
  const RunData one = scaling_run(1, 80, 10, 0), also_one = scaling_run(1, 80, 10, 0);
  EXPECT_TRUE(scaling_studies({&one, &also_one}).empty());  // one replica count is no study
  const RunData two = scaling_run(2, 80, 10, 0);
  const auto studies = scaling_studies({&one, &two});
  ASSERT_EQ(studies.size(), 1u);
  EXPECT_NEAR(studies[0].model.transfer_ms, 0, 1e-12);  // measured as none: predicted as none
  RunData empty_two = two;
  empty_two.steps.clear();
  EXPECT_TRUE(scaling_studies({&one, &empty_two}).empty());
}

}  // namespace
}  // namespace gpulab
