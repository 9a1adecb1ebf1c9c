// The comma lists that flags take ("1,64,1000", "cpu,cuda:0", "4K,...,64M"), split one way for
// every flag: spaces around an entry are dropped, and an empty entry ("1,,2", "cpu,") is kept, so
// that the flag's reader refuses it by name rather than a typo passing unseen.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

inline std::vector<std::string> split_flag_list(std::string_view text) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    std::string_view part =
        text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    const size_t first = part.find_first_not_of(" \t");
    part = first == std::string_view::npos
               ? std::string_view()
               : part.substr(first, part.find_last_not_of(" \t") - first + 1);
    parts.emplace_back(part);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (parts.size() == 1 && parts[0].empty()) parts.clear();  // "" is a list of nothing
  return parts;
}

}  // namespace gpulab
