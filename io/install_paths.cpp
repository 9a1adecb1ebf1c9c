// Finding the data an installed gpulab ships, relative to the program's own path.
#include "io/install_paths.hpp"

#include <system_error>

namespace gpulab {
namespace fs = std::filesystem;

fs::path installed_data_dir(const fs::path& program) {
  // The path relative to the prefix, as configured (share), so a package built for another
  // layout still finds its files.
  return program.parent_path().parent_path() / GPULAB_INSTALL_DATADIR / "gpulab";
}

fs::path running_program() {
  std::error_code error;
  fs::path program = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : program;
}

fs::path installed_or_source(const fs::path& name, const fs::path& source_tree) {
  const fs::path program = running_program();
  if (program.empty()) return source_tree;
  const fs::path installed = installed_data_dir(program) / name;
  std::error_code error;
  return fs::is_directory(installed, error) ? installed : source_tree;
}

}  // namespace gpulab
