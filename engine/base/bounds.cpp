// Checking numbers against their range, from JSON or from text, without wrapping or truncating.
#include "engine/base/bounds.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace gpulab {

std::string readable_number(double value) {
  char text[64];
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15)
    std::snprintf(text, sizeof text, "%.0f", value);
  else
    std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string Bound::range_text() const {
  if (whole) return "a whole number from " + std::to_string(least) + " to " + std::to_string(most);
  const std::string from = (low_open ? "above " : "from ") + readable_number(low);
  if (std::isinf(high))
    return "a number " + (low_open ? from : "not below " + readable_number(low));
  if (low_open) return "a number " + from + ", at most " + readable_number(high);
  return "a number " + from + " to " + (high_open ? "below " : "") + readable_number(high);
}

std::string Bound::problem(const nlohmann::json& value) const {
  if (!value.is_number()) return {};
  const std::string give = ": give " + range_text();
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    const bool in = whole ? v <= uint64_t(std::numeric_limits<int64_t>::max()) &&
                                int64_t(v) >= least && int64_t(v) <= most
                          : Bound::problem(nlohmann::json(double(v))).empty();
    return in ? std::string() : value.dump() + " is out of range" + give;
  }
  if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (whole)
      return v >= least && v <= most ? std::string() : value.dump() + " is out of range" + give;
    return Bound::problem(nlohmann::json(double(v)));
  }
  const double v = value.get<double>();
  const std::string shown = readable_number(v);
  if (!std::isfinite(v)) return shown + " is out of range" + give;
  if (whole) {
    if (std::floor(v) != v) return shown + " is not a whole number" + give;
    // Compared as doubles: exact for every range a count or a step takes (below 2^53).
    return v >= double(least) && v <= double(most) ? std::string()
                                                   : shown + " is out of range" + give;
  }
  const bool above = low_open ? v > low : v >= low;
  const bool below = high_open ? v < high : v <= high;
  return above && below ? std::string() : shown + " is out of range" + give;
}

std::string Bound::problem(std::string_view text) const {
  const std::string give = ": give " + range_text();
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (whole) {
    int64_t v = 0;
    const auto [end, error] = std::from_chars(first, last, v);
    if (error == std::errc() && end == last) return problem(nlohmann::json(v));
    if (error == std::errc::result_out_of_range && end == last)
      return std::string(text) + " is out of range" + give;
  }
  double v = 0;
  const auto [end, error] = std::from_chars(first, last, v);
  if (error == std::errc::result_out_of_range && end == last)
    return std::string(text) + " is out of range" + give;
  if (error != std::errc() || end != last || text.empty()) {
    // Appended, not "\"" + text: GCC 12 warns of an overlap there that cannot happen.
    std::string said(1, '"');
    said.append(text).append(whole ? "\" is not a whole number" : "\" is not a number");
    return said + give;
  }
  if (whole && std::isfinite(v) && std::floor(v) != v)
    return std::string(text) + " is not a whole number" + give;
  const std::string found = problem(nlohmann::json(v));
  // Said as typed: "1e39", not "1e+39".
  return found.empty() ? found : std::string(text) + found.substr(found.find(' '));
}

}  // namespace gpulab
