// The name of the machine this process runs on, as run records and process groups give it.
#pragma once

#include <unistd.h>

#include <string>

namespace gpulab {

inline std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace gpulab
