// Starting the engine's threads: a start the system refuses (a limit on threads, or no memory
// for a stack) becomes a ResourceError saying what the thread was for, never std::terminate.
#pragma once

#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "engine/base/errors.hpp"

namespace gpulab {

// A thread running `body`; throws ResourceError: "cannot start <what>: Resource temporarily
// unavailable; ...". A caller that started others first stops and joins them before it lets
// the error go (a joinable std::thread destroyed ends the program).
template <typename Body>
std::thread start_thread(const std::string& what, Body&& body) {
  try {
    return std::thread(std::forward<Body>(body));
  } catch (const std::system_error& e) {
    throw ResourceError("cannot start " + what + ": " + e.code().message() +
                        "; ask for fewer replicas or threads, or free memory (the system gives "
                        "each thread a stack)");
  }
}

}  // namespace gpulab
