// The range a numeric setting may take, said the same way wherever it is checked: a flag, a
// setup file, a lab file or a run record ("a whole number from 1 to 65536").
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace gpulab {

// 1000, 0.9999, 1e+39, inf: integers in full, others as %g.
std::string readable_number(double value);

struct Bound {
  bool whole = false;  // a count or a seed: exact, as an int64_t
  int64_t least = 0, most = std::numeric_limits<int64_t>::max();  // whole: both included
  // Any other number: always finite; `low` and `high` included unless said open.
  double low = 0, high = std::numeric_limits<double>::infinity();
  bool low_open = false, high_open = false;

  static Bound whole_from(int64_t least, int64_t most) { return {true, least, most}; }
  static Bound number(double low, double high, bool low_open = false, bool high_open = false) {
    return {false, 0, 0, low, high, low_open, high_open};
  }

  // "a whole number from 0 to 2147483647", "a number above 0", "a number from 0 to below 1".
  std::string range_text() const;
  // "" when `value` (a JSON number) is in range; else what it is and what to give:
  // "4294967360 is out of range: give a whole number from 1 to 65536",
  // "64.5 is not a whole number: give a whole number from 1 to 65536". A value that is no
  // number at all is the caller's to name (its type is wrong).
  std::string problem(const nlohmann::json& value) const;
  // The same for text as typed (a flag's value, a lab file's): also "\"ten\" is not a number".
  std::string problem(std::string_view text) const;
};

}  // namespace gpulab
