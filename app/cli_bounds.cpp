// Numeric flag checks with readable bounds.
#include "app/cli_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "engine/base/bounds.hpp"
#include "engine/base/text.hpp"
#include "engine/training/setting_bounds.hpp"

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

CLI::Validator setting(const char* key, int64_t least) {
  Bound bound = setting_bound(key);
  if (bound.whole) bound.least = std::max(bound.least, least);
  const std::string range = bound.range_text();
  return CLI::Validator(
      [bound, range](std::string& text) -> std::string {
        if (bound.problem(std::string_view(text)).empty()) return {};
        return "must be " + range + " (not " + text + ")";
      },
      range);
}

CLI::Validator name_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::string problem = name_problem(text);
        return problem.empty() ? problem : "the name " + problem;
      },
      "NAME");
}

}  // namespace gpulab::cli
