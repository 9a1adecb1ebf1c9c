// What a run is called when nobody named it: the settings it was made with (model, device, CPU
// threads, replicas, batch, optimizer, learning rate, precision), and, for charts and lists of
// several runs, only the settings by which the runs shown differ.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/records/run_record.hpp"

namespace gpulab {

// One setting of a run's name. `key` names the setting ("threads"); `text` is how the name says
// it ("4 threads"). A new setting (data-parallel replicas, say) is one more part here.
struct NamePart {
  std::string key, text;
};

// The parts of a run.json-shaped record ({"model": {...}, "config": {...}, "devices": [...]}),
// in the order the name reads: model, device, threads (CPU), replicas (more than one), batch,
// optimizer, lr, precision. Settings the record lacks are left out.
std::vector<NamePart> run_name_parts(const nlohmann::json& info);

// Every part: "lenet5 cpu, 4 threads, b64, adam, lr 0.001, fp32". What a run started without a
// name is called, by the window and by gpulab-cli.
std::string auto_run_name(const nlohmann::json& info);

// Whether the run still has an automatic name (this one, an older one such as "lenet5_cpu_b64",
// or its folder's name), rather than one a person gave it.
bool has_auto_name(const RunData& run);

// Names for runs shown together, made unique: runs whose names repeat are numbered by when they
// were made ("x (1)" the oldest, "x (2)"), whatever order they are given in. A named run keeps
// its name; an automatically named one says its model, device, threads, replicas and batch, and
// the other settings only where the runs differ in them. Where every run has a display_name
// (name_runs named it among all the runs it belongs to), those are the names: a chart, table or
// list of some of the runs then names each as the list of all of them does.
std::vector<std::string> display_run_names(const std::vector<const RunData*>& runs);

// Names every run of a whole set (the window's store, the runs one export or report reads) at
// once, into its display_name, so that every view of any of them says the same name.
void name_runs(const std::vector<RunData*>& runs);

}  // namespace gpulab
