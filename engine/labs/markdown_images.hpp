// The images a lab's or a hand-in's Markdown refers to, judged before anything shows it: a page
// may load only a regular file in its own folder, of a bounded size. ![chart](/dev/zero) took the
// class board to 11 GB, and a FIFO held it for ever.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

// The largest image a lab page or a hand-in's report loads (a chart PNG is some 100 KB).
inline constexpr std::uintmax_t kMaxMarkdownImageBytes = std::uintmax_t(16) << 20;

struct MarkdownImage {
  int line = 0;        // from 1, in the text given
  std::string target;  // as written: "chart-1-loss.png", "/dev/zero", "https://..."
};

// Every image of `markdown`: ![alt](target) and <img src="target">, outside ``` code blocks.
std::vector<MarkdownImage> markdown_images(std::string_view markdown);

// "" when `target` is a relative path to a regular file inside `folder` (links followed and
// held to it) of at most kMaxMarkdownImageBytes; else why it is never loaded: a URL, an absolute
// path, a path out of the folder, a device, FIFO or folder, a file too large, or none there.
// Nothing is opened: only its status is read.
std::string markdown_image_problem(const std::string& target, const std::filesystem::path& folder);

}  // namespace gpulab
