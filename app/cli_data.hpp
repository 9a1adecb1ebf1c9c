// gpulab-cli data fetch: MNIST into the data folder for a machine with no display, with the
// window's own downloader (ui/fetch), so both fetch from the same sources into the same folder.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace gpulab::cli {

struct DataFlags {
  std::string data_dir;  // empty: the folder training reads (default_data_dir)
  bool shared = false;   // into the machine's shared copy (system_data_dir), for every user
  bool quiet = false;
};

// Adds `data` with its `fetch` subcommand to `app`; returns the fetch subcommand.
CLI::App* add_data_command(CLI::App& app, DataFlags& flags);
// Returns the exit code; says on stderr, in one line, what was wrong and what to do.
int run_data_fetch(const DataFlags& flags, int argc, char** argv);

}  // namespace gpulab::cli
