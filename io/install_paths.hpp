// Where an installed gpulab finds the data it ships (reference runs, labs, demos): a folder
// beside the running program (<prefix>/share/gpulab for <prefix>/bin/gpulab), so a package works
// wherever it is unpacked and a build folder, which has none, keeps reading the source tree.
#pragma once

#include <filesystem>

namespace gpulab {

// <prefix>/share/gpulab for a program at <prefix>/bin/NAME (the share folder as CMake's
// CMAKE_INSTALL_DATADIR names it); whether it exists is the caller's question.
std::filesystem::path installed_data_dir(const std::filesystem::path& program);

// The running program's own path (/proc/self/exe), or empty where it cannot be read.
std::filesystem::path running_program();

// `name` under the running program's installed data folder when that folder holds it, else
// `source_tree` (the checkout the program was built from, for a program run from its build).
std::filesystem::path installed_or_source(const std::filesystem::path& name,
                                          const std::filesystem::path& source_tree);

}  // namespace gpulab
