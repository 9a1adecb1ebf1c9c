// The kinds of file gpulab writes, known by their content, and what any other file is in words:
// an output may replace only a file of its own kind that gpulab wrote (engine/records/output_paths
// holds the one check every writing flag and the window's file dialogs go through).
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace gpulab {

// A kind of file gpulab writes: its name in words, and whether a file holds one gpulab wrote,
// judged by its content (magic bytes, a header line, a field gpulab writes), never by its name.
struct OutputKind {
  std::string what;                                          // "a checkpoint", "a chart's CSV"
  std::function<bool(const std::filesystem::path&)> is_own;  // given an existing regular file
};

// Up to `bytes` of the start of the regular file `path`; empty when it cannot be read. Never
// waits on a FIFO or a device (only a regular file is read).
std::string file_start(const std::filesystem::path& path, size_t bytes);

// What the file at `path` is, in words, from its first bytes and, where they say nothing more,
// its name: "an MNIST IDX file", "a run's run.json", "a PNG image", "a Markdown file", "an empty
// file". Used to name a file an output refuses to replace.
std::string describe_file(const std::filesystem::path& path);

// A text file whose first line (without its line end) `first_line` accepts: gpulab's CSVs.
OutputKind first_line_kind(std::string what,
                           std::function<bool(std::string_view first_line)> first_line);

// A JSON file (of at most 16 MiB) whose value `accepts` takes.
OutputKind json_kind(std::string what, std::function<bool(const nlohmann::json&)> accepts);

// Charts and pictures as gpulab draws them, each marked as gpulab's: a PNG with the text
// "Software" "gpulab", an SVG titled "gpulab ...", a PDF whose creator is gpulab.
const OutputKind& png_picture_kind();
const OutputKind& svg_picture_kind();
const OutputKind& pdf_picture_kind();

// The mark a PNG that gpulab writes carries (a tEXt chunk): key and value.
inline constexpr const char* kPngSoftwareKey = "Software";
inline constexpr const char* kPngSoftwareValue = "gpulab";

}  // namespace gpulab
