// Run names from run settings.
#include "engine/records/run_names.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "engine/backend/backend.hpp"
#include "engine/base/errors.hpp"

namespace gpulab {
namespace {

// Settings always in a shown name; the others only where the runs shown differ.
const std::set<std::string> kAlwaysShown = {"model",    "device", "threads",
                                            "replicas", "ranks",  "batch"};

const nlohmann::json* member(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) ? &j[key] : nullptr;
}

std::string join(const std::vector<NamePart>& parts, const std::set<std::string>* keep) {
  std::string head, tail;
  for (const NamePart& part : parts) {
    if (keep && !keep->count(part.key)) continue;
    if (part.key == "model" || part.key == "device")
      head += (head.empty() ? "" : " ") + part.text;
    else
      tail += ", " + part.text;
  }
  return head + tail;
}

}  // namespace

std::vector<NamePart> run_name_parts(const nlohmann::json& info) {
  std::vector<NamePart> parts;
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json* model = member(info, "model");
  const nlohmann::json* config = member(info, "config");
  if (!config) config = &empty;
  if (model && member(*model, "name") && (*model)["name"].is_string())
    parts.push_back({"model", (*model)["name"].get<std::string>()});
  std::string device = "cpu";
  if (const auto* d = member(*config, "device"); d && d->is_string())
    device = d->get<std::string>();
  parts.push_back({"device", device});
  if (const auto* t = member(*config, "threads"); t && t->is_number() && device == "cpu") {
    int threads = t->get<int>();
    // 0 asks for every core: say how many that was, where the record knows.
    const auto* devices = member(info, "devices");
    if (threads <= 0 && devices && devices->is_array() && !devices->empty() &&
        member((*devices)[0], "cores") && (*devices)[0]["cores"].is_number())
      threads = (*devices)[0]["cores"].get<int>();
    parts.push_back(
        {"threads", threads > 0 ? std::to_string(threads) + (threads == 1 ? " thread" : " threads")
                                : "all cores"});
  }
  int replicas = 1;
  if (const auto* r = member(*config, "replicas"); r && r->is_number()) replicas = r->get<int>();
  if (device.rfind("cuda", 0) == 0) {
    // GPU replicas are named in the device: cuda:0,1 and cuda:0x2 are two.
    try {
      const int named = int(parse_cuda_devices(device).replicas.size());
      if (named > 1) replicas = named;
    } catch (const ConfigError&) {
    }
  }
  if (replicas > 1) parts.push_back({"replicas", std::to_string(replicas) + " replicas"});
  // An MPI job's processes (each with the replicas above).
  if (const auto* r = member(*config, "ranks"); r && r->is_number() && r->get<int>() > 1)
    parts.push_back({"ranks", std::to_string(r->get<int>()) + " MPI ranks"});
  if (const auto* b = member(*config, "batch"); b && b->is_number()) {
    std::string batch = "b";  // built up: GCC 12 warns wrongly (-Wrestrict) at "b" + string
    batch += std::to_string(b->get<int>());
    parts.push_back({"batch", batch});
  }
  if (const auto* o = member(*config, "optimizer"); o && o->is_string())
    parts.push_back({"optimizer", o->get<std::string>()});
  if (const auto* lr = member(*config, "lr"); lr && lr->is_number()) {
    // Stored as a float: print it as it was typed, not as 0.00100000005.
    const double value = lr->get<double>();
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", double(float(value)));
    parts.push_back({"lr", std::string("lr ") + text});
  }
  if (const auto* p = member(*config, "precision"); p && p->is_string())
    parts.push_back({"precision", p->get<std::string>()});
  // --conv implicit; absent from records of the im2col path.
  if (const auto* c = member(*config, "conv"); c && c->is_string() && *c == "implicit")
    parts.push_back({"conv", "implicit conv"});
  // --data-on host (a GPU fed batch by batch); absent from records of the usual path.
  if (const auto* d = member(*config, "data_on");
      d && d->is_string() && *d == "host" && device.rfind("cuda", 0) == 0)
    parts.push_back({"data_on", "batches from the host"});
  // --preprocess once or per-batch; absent from records of the usual path.
  if (const auto* p = member(*config, "preprocess"); p && p->is_string() && *p != "none")
    parts.push_back({"preprocess", *p == "once" ? "augmented once" : "augmented per batch"});
  return parts;
}

std::string auto_run_name(const nlohmann::json& info) {
  return join(run_name_parts(info), nullptr);
}

bool has_auto_name(const RunData& run) {
  if (!run.info.contains("name") || !run.info["name"].is_string()) return true;
  const std::string name = run.info["name"].get<std::string>();
  std::vector<NamePart> parts = run_name_parts(run.info);
  if (name.empty() || name == run.dir.filename().string() || name == join(parts, nullptr))
    return true;
  // Older automatic names: model_device, then model_device_bBATCH (':' in a device as '-').
  std::string model, device = "cpu", batch;
  for (const NamePart& part : parts) {
    if (part.key == "model") model = part.text;
    if (part.key == "device") device = part.text;
    if (part.key == "batch") batch = part.text;
  }
  for (char& c : device)
    if (c == ':') c = '-';
  const std::string label = model + "_" + device;
  if (name == label || name == label + "_" + batch) return true;
  // MPI jobs recorded before their names said how many ranks.
  std::erase_if(parts, [](const NamePart& part) { return part.key == "ranks"; });
  return name == join(parts, nullptr);
}

namespace {

// When the run started (run.json's "created", an ISO time that sorts as text), or "".
std::string created(const RunData& run) {
  const nlohmann::json* at = member(run.info, "created");
  return at && at->is_string() ? at->get<std::string>() : std::string();
}

// The names of `runs` among themselves, ignoring any display_name they carry.
std::vector<std::string> names_among(const std::vector<const RunData*>& runs) {
  // The settings in which the automatically named runs differ.
  std::map<std::string, std::set<std::string>> values;
  std::vector<std::vector<NamePart>> parts(runs.size());
  size_t automatic = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    if (!has_auto_name(*runs[r])) continue;
    ++automatic;
    parts[r] = run_name_parts(runs[r]->info);
    for (const NamePart& part : parts[r]) values[part.key].insert(part.text);
  }
  std::set<std::string> keep = kAlwaysShown;
  for (const auto& [key, seen] : values) {
    // A setting some runs lack differs too (an older record beside a newer one).
    size_t having = 0;
    for (const auto& p : parts)
      for (const NamePart& part : p) having += part.key == key;
    if (seen.size() > 1 || (having > 0 && having < automatic)) keep.insert(key);
  }
  std::vector<std::string> names;
  std::map<std::string, std::vector<size_t>> repeats;  // a name, and the runs that have it
  for (size_t r = 0; r < runs.size(); ++r) {
    names.push_back(has_auto_name(*runs[r]) ? join(parts[r], &keep) : runs[r]->name());
    repeats[names.back()].push_back(r);
  }
  // Repeated names numbered oldest first: by start time, then folder, then the order given.
  for (auto& [name, which] : repeats) {
    if (which.size() < 2) continue;
    std::stable_sort(which.begin(), which.end(), [&](size_t a, size_t b) {
      const std::string ta = created(*runs[a]), tb = created(*runs[b]);
      if (ta != tb) return ta < tb;
      return runs[a]->dir < runs[b]->dir;
    });
    for (size_t n = 0; n < which.size(); ++n)
      names[which[n]] = name + " (" + std::to_string(n + 1) + ")";
  }
  return names;
}

}  // namespace

std::vector<std::string> display_run_names(const std::vector<const RunData*>& runs) {
  const bool named = std::all_of(runs.begin(), runs.end(),
                                 [](const RunData* run) { return !run->display_name.empty(); });
  if (!named || runs.empty()) return names_among(runs);
  std::vector<std::string> names;
  for (const RunData* run : runs) names.push_back(run->display_name);
  return names;
}

void name_runs(const std::vector<RunData*>& runs) {
  const std::vector<const RunData*> all(runs.begin(), runs.end());
  const std::vector<std::string> names = names_among(all);
  for (size_t r = 0; r < runs.size(); ++r) runs[r]->display_name = names[r];
}

}  // namespace gpulab
