// The size lists the benchmarks' --sizes flag takes, "4K,8K" or "32,...,4096": a "..." between
// two sizes stands for the doublings from the one before it up to the one after.
#pragma once

#include <string>
#include <vector>

#include "engine/base/errors.hpp"

namespace gpulab {

// The sizes of a list already split at its commas. `one` reads one size (throwing ConfigError
// naming it); `example` is a list the messages show ("4K,...,64M").
template <class Size, class ReadOne>
std::vector<Size> expand_size_list(const std::vector<std::string>& parts, ReadOne one,
                                   const std::string& example) {
  std::vector<Size> sizes;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == "...") {
      if (sizes.empty() || i + 1 >= parts.size())
        throw ConfigError("--sizes: \"...\" goes between two sizes, as in " + example);
      const Size last = one(parts[++i]);
      for (Size size = sizes.back() * 2; size < last; size *= 2) sizes.push_back(size);
      sizes.push_back(last);
      continue;
    }
    sizes.push_back(one(parts[i]));
  }
  if (sizes.empty()) throw ConfigError("--sizes: give at least one size, like " + example);
  return sizes;
}

}  // namespace gpulab
