// Hardware shared between runs, and fair race order.
#include "engine/session/hardware_share.hpp"

#include <algorithm>
#include <set>

namespace gpulab {
namespace {

constexpr int kAllGpus = -1;

// The GPU indices of "cuda:0,1" / "cuda:0x2,1x2" / "cuda" / "cuda:all"; empty for the CPU.
std::set<int> gpus_of(const std::string& device) {
  std::set<int> gpus;
  if (device.rfind("cuda", 0) != 0) return gpus;
  const size_t colon = device.find(':');
  if (colon == std::string::npos) return {0};
  const std::string list = device.substr(colon + 1);
  if (list == "all") return {kAllGpus};
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find(',', begin), list.size());
    const std::string part = list.substr(begin, end - begin);
    try {
      gpus.insert(std::stoi(part));  // "0x2" reads as 0
    } catch (const std::exception&) {
      gpus.insert(kAllGpus);  // unknown: assume it may be any GPU
    }
    begin = end + 1;
  }
  return gpus;
}

}  // namespace

bool share_hardware(const std::string& a, const std::string& b) {
  const std::set<int> gpus_a = gpus_of(a), gpus_b = gpus_of(b);
  if (gpus_a.empty() || gpus_b.empty()) return true;  // a CPU run shares the CPU with any run
  if (gpus_a.count(kAllGpus) || gpus_b.count(kAllGpus)) return true;
  return std::any_of(gpus_a.begin(), gpus_a.end(), [&](int g) { return gpus_b.count(g) > 0; });
}

std::vector<std::vector<size_t>> race_waves(const std::vector<std::string>& devices,
                                            bool concurrent) {
  std::vector<std::vector<size_t>> waves;
  if (devices.empty()) return waves;
  if (concurrent) {
    waves.emplace_back();
    for (size_t i = 0; i < devices.size(); ++i) waves[0].push_back(i);
    return waves;
  }
  std::vector<size_t> wave_of(devices.size(), 0);
  for (size_t i = 0; i < devices.size(); ++i) {
    size_t wave = 0;
    for (size_t j = 0; j < i; ++j)
      if (share_hardware(devices[i], devices[j])) wave = std::max(wave, wave_of[j] + 1);
    wave_of[i] = wave;
    if (waves.size() <= wave) waves.resize(wave + 1);
    waves[wave].push_back(i);
  }
  return waves;
}

}  // namespace gpulab
