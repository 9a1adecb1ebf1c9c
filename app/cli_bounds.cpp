// Numeric flag checks with readable bounds.
#include "app/cli_bounds.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace gpulab::cli {
namespace {

// A check of the parsed number; `rule` is the sentence after "must ", `accept` the test.
CLI::Validator bound(const std::string& rule, std::function<bool(double)> accept,
                     const std::string& help) {
  return CLI::Validator(
      [rule, accept](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') return "\"" + text + "\" is not a number";
        if (accept(value)) return {};
        return "must " + rule + " (not " + text + ")";
      },
      help);
}

}  // namespace

std::string readable_number(double value) {
  char text[64];
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15)
    std::snprintf(text, sizeof text, "%.0f", value);
  else
    std::snprintf(text, sizeof text, "%g", value);
  return text;
}

CLI::Validator positive() {
  return bound(
      "be a positive number", [](double v) { return v > 0 && std::isfinite(v); }, "POSITIVE");
}

CLI::Validator not_negative() {
  return bound(
      "be a number not below 0", [](double v) { return v >= 0 && std::isfinite(v); },
      "NONNEGATIVE");
}

CLI::Validator at_least(double least) {
  return bound(
      "be at least " + readable_number(least),
      [least](double v) { return v >= least && std::isfinite(v); },
      "AT LEAST " + readable_number(least));
}

CLI::Validator between(double low, double high) {
  const std::string range = readable_number(low) + " to " + readable_number(high);
  return bound(
      "be from " + range, [low, high](double v) { return v >= low && v <= high; },
      "FROM " + readable_number(low) + " TO " + readable_number(high));
}

}  // namespace gpulab::cli
