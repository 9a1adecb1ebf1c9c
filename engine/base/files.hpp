// Writing files so that a reader never sees half of one.
#pragma once

#include <filesystem>
#include <string>

namespace gpulab {

// Replaces `path` with `text` atomically: write a temporary file beside it, flush, rename. Never
// replaces anything but a regular file (a symbolic link's target is replaced, the link kept), and
// leaves no temporary file behind when it fails.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace gpulab
