// The training settings' ranges, and why each is where it is.
#include "engine/training/setting_bounds.hpp"

#include <cfloat>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/backend/backend.hpp"
#include "engine/training/trainer.hpp"

namespace gpulab {

const std::vector<SettingBound>& setting_bounds() {
  // Counts an int holds are capped there; a step budget too, so that the epochs it needs (at
  // least one step each) fit the trainer's int. Numbers the optimizer keeps as floats stop at
  // FLT_MAX: a weight decay of 1e39 was infinity in the run and null in run.json.
  static const std::vector<SettingBound> bounds = {
      {"epochs", "--epochs", Bound::whole_from(0, INT_MAX)},    // 0: as many as --steps needs
      {"max_steps", "--steps", Bound::whole_from(0, INT_MAX)},  // 0: no step budget
      {"batch", "--batch", Bound::whole_from(1, kMaxBatch)},
      {"lr", "--lr", Bound::number(0, FLT_MAX, true)},
      {"momentum", "--momentum", Bound::number(0, 1, false, true)},
      {"weight_decay", "--weight-decay", Bound::number(0, FLT_MAX)},
      {"gamma", "--gamma", Bound::number(0, 1)},
      {"seed", "--seed", Bound::whole_from(0, INT64_MAX)},  // run.json's integers are signed
      {"eval_every", "--eval-every", Bound::whole_from(0, INT64_MAX)},
      {"target_accuracy", "--target-accuracy", Bound::number(0, 1)},
      {"stop_at_accuracy", "--stop-at-accuracy", Bound::number(0, 1)},
      {"threads", "--threads", Bound::whole_from(0, INT_MAX)},
      {"replicas", "--replicas", Bound::whole_from(1, kMaxBatch)},  // an image each at least
      {"bucket_mb", "--bucket-mb", Bound::number(0, INFINITY, true)},
      {"collective_timeout_s", "--collective-timeout",
       Bound::number(0, kMaxCollectiveTimeoutS, true)},
      {"validation", "--validation", Bound::whole_from(0, INT_MAX)},
  };
  return bounds;
}

const SettingBound* find_setting_bound(std::string_view key_or_flag) {
  if (key_or_flag.starts_with("--")) key_or_flag.remove_prefix(2);
  for (const SettingBound& s : setting_bounds())
    if (key_or_flag == s.key || key_or_flag == std::string_view(s.flag).substr(2)) return &s;
  return nullptr;
}

const Bound& setting_bound(std::string_view key_or_flag) {
  if (const SettingBound* found = find_setting_bound(key_or_flag)) return found->bound;
  throw std::logic_error("no bound for the setting " + std::string(key_or_flag));
}

}  // namespace gpulab
