// The engine's one clock for timing steps, phases and collectives: the steady clock, the
// milliseconds or seconds between two of its points, and a deadline some seconds after one.
#pragma once

#include <chrono>

namespace gpulab {

using Clock = std::chrono::steady_clock;

// From `begin` to `end`; 0 when end is not after begin.
inline double ms_between(Clock::time_point begin, Clock::time_point end) {
  return end > begin ? std::chrono::duration<double, std::milli>(end - begin).count() : 0.0;
}
inline double seconds_between(Clock::time_point begin, Clock::time_point end) {
  return end > begin ? std::chrono::duration<double>(end - begin).count() : 0.0;
}
inline double ms_since(Clock::time_point start) { return ms_between(start, Clock::now()); }
inline double seconds_since(Clock::time_point start) {
  return seconds_between(start, Clock::now());
}

// `seconds` (a timeout, say) after `start`.
inline Clock::time_point seconds_after(Clock::time_point start, double seconds) {
  return start +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace gpulab
